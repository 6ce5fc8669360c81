use super::*;
use std::path::PathBuf;

/// A checkout with `files`, and its canonical root.
fn checkout(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    (dir, root)
}

fn rows(found: Vec<DeclaredVersion>) -> Vec<(Tool, String, String, Rule)> {
    found
        .into_iter()
        .map(|d| (d.tool, d.file, d.value, d.rule))
        .collect()
}

fn row(tool: Tool, file: &str, value: &str, rule: Rule) -> (Tool, String, String, Rule) {
    (tool, file.into(), value.into(), rule)
}

#[test]
fn go_mod_declares_a_minimum_and_a_preferred_toolchain() {
    let (_d, root) = checkout(&[(
        "go.mod",
        "module example.com/app\n\ngo 1.21\n\ntoolchain go1.22.3\n",
    )]);
    assert_eq!(
        rows(read(&root, &root, &[Tool::Go]).unwrap()),
        vec![
            row(Tool::Go, "go.mod", "1.21", Rule::Minimum),
            row(Tool::Go, "go.mod", "1.22.3", Rule::Exact),
        ]
    );
    assert!(read(&root, &root, &[Tool::Rustc]).unwrap().is_empty());
}

#[test]
fn node_files_engines_and_package_manager() {
    let (_d, root) = checkout(&[
        (".nvmrc", "# node\nv20.11.1\n"),
        (
            "web/package.json",
            r#"{"engines": {"node": ">=18", "pnpm": "^9", "npm": ">=10"}, "packageManager": "pnpm@9.15.0+sha512.abc"}"#,
        ),
    ]);
    let tools = [Tool::Node, Tool::Pnpm];
    assert_eq!(
        rows(read(&root, &root.join("web"), &tools).unwrap()),
        vec![
            row(Tool::Node, ".nvmrc", "v20.11.1", Rule::Prefix),
            row(Tool::Node, "web/package.json", ">=18", Rule::Range),
            row(Tool::Pnpm, "web/package.json", "^9", Rule::Range),
            row(Tool::Pnpm, "web/package.json", "9.15.0", Rule::Exact),
        ]
    );
    // npm's unit does not read pnpm's packageManager.
    let npm = read(&root, &root.join("web"), &[Tool::Node, Tool::Npm]).unwrap();
    assert_eq!(rows(npm).last().unwrap().1, "web/package.json");
}

#[test]
fn the_nearest_node_version_file_wins() {
    let (_d, root) = checkout(&[(".nvmrc", "18\n"), ("app/.node-version", "lts/*\n")]);
    assert_eq!(
        rows(read(&root, &root.join("app"), &[Tool::Node]).unwrap()),
        vec![row(Tool::Node, "app/.node-version", "lts/*", Rule::Prefix)]
    );
}

#[test]
fn rust_toolchain_files_new_and_legacy() {
    let (_d, root) = checkout(&[(
        "rust-toolchain.toml",
        "[toolchain]\nchannel = \"1.78.0\"\ncomponents = [\"clippy\"]\n",
    )]);
    assert_eq!(
        rows(read(&root, &root, &[Tool::Rustc]).unwrap()),
        vec![row(
            Tool::Rustc,
            "rust-toolchain.toml",
            "1.78.0",
            Rule::Prefix
        )]
    );
    let (_d, root) = checkout(&[("rust-toolchain", "1.78\n")]);
    assert_eq!(
        rows(read(&root, &root, &[Tool::Rustc]).unwrap()),
        vec![row(Tool::Rustc, "rust-toolchain", "1.78", Rule::Prefix)]
    );
    let (_d, root) = checkout(&[("rust-toolchain.toml", "[toolchain\n")]);
    assert!(
        read(&root, &root, &[Tool::Rustc])
            .unwrap_err()
            .to_string()
            .starts_with("cannot parse rust-toolchain.toml: "),
    );
}

#[test]
fn python_files_and_pyproject_specifiers() {
    let (_d, root) = checkout(&[
        (".python-version", "3.12\n"),
        (
            "pyproject.toml",
            "[project]\nrequires-python = \">=3.10\"\n\n[tool.poetry]\nrequires-poetry = \">=2.0\"\n\n[tool.uv]\nrequired-version = \">=0.5\"\n",
        ),
    ]);
    assert_eq!(
        rows(read(&root, &root, &[Tool::Python, Tool::Poetry]).unwrap()),
        vec![
            row(Tool::Python, ".python-version", "3.12", Rule::Prefix),
            row(Tool::Python, "pyproject.toml", ">=3.10", Rule::Specifier),
            row(Tool::Poetry, "pyproject.toml", ">=2.0", Rule::Specifier),
        ]
    );
}

#[test]
fn ruby_version_and_bundled_with() {
    let (_d, root) = checkout(&[
        (".ruby-version", "ruby-3.3.0\n"),
        (
            "Gemfile.lock",
            "GEM\n  specs:\n\nPLATFORMS\n  ruby\n\nBUNDLED WITH\n   2.5.6\n",
        ),
    ]);
    assert_eq!(
        rows(read(&root, &root, &[Tool::Ruby, Tool::Bundler]).unwrap()),
        vec![
            row(Tool::Ruby, ".ruby-version", "3.3.0", Rule::Prefix),
            row(Tool::Bundler, "Gemfile.lock", "2.5.6", Rule::Major),
        ]
    );
}

#[test]
fn tool_versions_lines_for_the_unit_s_tools() {
    let (_d, root) = checkout(&[(
        ".tool-versions",
        "nodejs 20.11.1 18.19.0\ngolang 1.22.3 # pinned\nterraform 1.8.0\n",
    )]);
    assert_eq!(
        rows(read(&root, &root, &[Tool::Go]).unwrap()),
        vec![row(Tool::Go, ".tool-versions", "1.22.3", Rule::Prefix)]
    );
}

#[test]
fn a_symbolic_link_is_not_followed() {
    let (_d, root) = checkout(&[]);
    std::os::unix::fs::symlink("/etc/passwd", root.join(".nvmrc")).unwrap();
    assert_eq!(
        read(&root, &root, &[Tool::Node]).unwrap_err().to_string(),
        ".nvmrc is a symbolic link, or lies behind one; lock files and manifests must be regular files"
    );
}

#[test]
fn a_broken_package_json_is_named() {
    let (_d, root) = checkout(&[("package.json", "{")]);
    assert_eq!(
        read(&root, &root, &[Tool::Node]).unwrap_err().to_string(),
        "cannot parse package.json: EOF while parsing an object at line 1 column 1"
    );
}
