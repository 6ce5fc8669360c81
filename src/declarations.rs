//! What a repository already declares: its dependencies and its `package.json` scripts.
//!
//! Quartermaster updates dependencies; it does not add them. Installing a package the project does
//! not use is how a prompt-injected plan would get code from the registry run (install scripts,
//! `setup.py`, binaries in `node_modules/.bin`), so a command that names a package of an ecosystem
//! whose tool would add it (npm, yarn, pnpm, bun, pip, poetry) must name one the manifest in
//! `working_dir` already declares. `uv add` must name a package pyproject.toml already declares
//! (`uv lock --upgrade-package` adds nothing, so it may name any locked package). Cargo and
//! bundler need no check: `cargo update -p` and `bundle update` refuse packages the lock file does
//! not hold.
//!
//! Likewise `npm|yarn|pnpm|bun run <script>` only runs the project's own scripts: bun and yarn fall
//! back to binaries and, for bun, to any program on PATH when no script has that name.

use crate::changes::ChangesError;
use serde_json::Value;
use std::path::Path;

/// Why the manifests in the working directory could not say what the project declares.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ManifestError {
    #[error("cannot read {name} in the working directory: {source}")]
    Read {
        name: &'static str,
        #[source]
        source: ChangesError,
    },
    #[error("cannot read {0} in the working directory: there is none")]
    Missing(&'static str),
    /// A manifest past a parser budget, or one its parser refuses.
    #[error(transparent)]
    Unreadable(#[from] ChangesError),
    #[error("package.json is not valid JSON: {0}")]
    Json(#[source] serde_json::Error),
    #[error("pyproject.toml is not valid TOML: {0}")]
    Toml(#[source] toml::de::Error),
    #[error("the working directory has no requirements*.txt or pyproject.toml")]
    NoPythonManifest,
}

/// Whether an update command (`argv`, as it runs) of `ecosystem` could add a package the project
/// does not declare.
pub(crate) fn checks_declared(ecosystem: &str, argv: &[String]) -> bool {
    match ecosystem {
        "npm" | "yarn" | "pnpm" | "bun" | "pip" | "poetry" | "go" => true,
        "uv" => argv.get(1).is_some_and(|w| w == "add"),
        _ => false,
    }
}

/// Whether an update command (`argv`, as it runs) only moves packages already in the lock file,
/// transitive ones included: `npm update <pkg>` updates a package of the tree and adds none (a
/// name the tree lacks changes nothing), so a package the lock holds may be named although the
/// manifest does not declare it.
pub(crate) fn moves_locked(ecosystem: &str, argv: &[String]) -> bool {
    ecosystem == "npm" && argv.get(1).is_some_and(|w| w == "update")
}

/// Where the check of [`declares_dependency`] looks, when it is narrower than "the manifests".
pub(crate) fn declared_where(ecosystem: &str) -> Option<&'static str> {
    (ecosystem == "uv").then_some(
        "pyproject.toml's `[project] dependencies`, `[project.optional-dependencies]` or `[dependency-groups]`",
    )
}

/// Whether the manifests in `dir` declare `package` for `ecosystem`. `Err` when no manifest could
/// be read, so that the refusal can say so.
pub(crate) fn declares_dependency(
    ecosystem: &str,
    dir: &Path,
    package: &str,
) -> Result<bool, ManifestError> {
    match ecosystem {
        "npm" | "yarn" | "pnpm" | "bun" => {
            let manifest = package_json(dir)?;
            Ok([
                "dependencies",
                "devDependencies",
                "optionalDependencies",
                "peerDependencies",
            ]
            .iter()
            .any(|section| manifest.get(section).and_then(|d| d.get(package)).is_some()))
        }
        "pip" | "poetry" => python_declares(dir, package),
        "uv" => {
            let text =
                read(dir, "pyproject.toml")?.ok_or(ManifestError::Missing("pyproject.toml"))?;
            let mut names = Vec::new();
            pep621_names(&text, &mut names)?;
            Ok(names.contains(&normalise(package)))
        }
        "go" => go_declares(dir, package),
        _ => Ok(true),
    }
}

/// Whether `go.mod` in `dir` requires `package`, directly or `// indirect`: `go get` of a module
/// go.mod does not name would add it.
fn go_declares(dir: &Path, package: &str) -> Result<bool, ManifestError> {
    let text = read(dir, "go.mod")?.ok_or(ManifestError::Missing("go.mod"))?;
    let (_, required) = crate::changes::parse_go_mod("go.mod", &text)?;
    Ok(required.iter().any(|module| module.name == package))
}

/// Whether `package.json` in `dir` defines `script`.
pub(crate) fn declares_script(dir: &Path, script: &str) -> Result<bool, ManifestError> {
    Ok(package_json(dir)?
        .get("scripts")
        .and_then(|s| s.get(script))
        .is_some())
}

fn package_json(dir: &Path) -> Result<Value, ManifestError> {
    let text = read(dir, "package.json")?.ok_or(ManifestError::Missing("package.json"))?;
    crate::changes::budget::check_json("package.json", &text)?;
    serde_json::from_str(&text).map_err(ManifestError::Json)
}

/// The manifest `name` in `dir`, read as every lock file and manifest is (a regular file within
/// its cap, never through a symbolic link); `None` when there is none.
fn read(dir: &Path, name: &'static str) -> Result<Option<String>, ManifestError> {
    crate::changes::read::read_file(&dir.join(name), name)
        .map_err(|source| ManifestError::Read { name, source })
}

/// PEP 503 normalisation: case-insensitive, runs of `-`, `_`, `.` equal.
fn normalise(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// The project name a PEP 508 requirement starts with (`requests[socks]>=2 ; python_version<"3"`).
fn requirement_name(requirement: &str) -> Option<String> {
    let trimmed = requirement.trim_start();
    let end = trimmed
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(trimmed.len());
    (end > 0).then(|| normalise(&trimmed[..end]))
}

fn python_declares(dir: &Path, package: &str) -> Result<bool, ManifestError> {
    let wanted = normalise(package);
    let mut read_any = false;
    let mut names: Vec<String> = Vec::new();
    let mut requirement_files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    if let Ok(entries) = std::fs::read_dir(dir.join("requirements")) {
        requirement_files.extend(entries.flatten().map(|e| e.path()));
    }
    for path in requirement_files {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let in_requirements_dir = path.parent().is_some_and(|p| p.ends_with("requirements"));
        if !(name.ends_with(".txt") && (name.starts_with("requirements") || in_requirements_dir)) {
            continue;
        }
        if let Ok(Some(text)) = crate::changes::read::read_file(&path, name) {
            read_any = true;
            names.extend(
                text.lines()
                    .map(|l| l.split('#').next().unwrap_or_default().trim())
                    .filter(|l| !l.is_empty() && !l.starts_with('-'))
                    .filter_map(requirement_name),
            );
        }
    }
    if let Some(text) = read(dir, "pyproject.toml")? {
        read_any = true;
        let doc = pep621_names(&text, &mut names)?;
        let poetry = doc.get("tool").and_then(|t| t.get("poetry"));
        let mut tables: Vec<&toml::Value> = ["dependencies", "dev-dependencies"]
            .iter()
            .filter_map(|k| poetry.and_then(|p| p.get(*k)))
            .collect();
        if let Some(groups) = poetry
            .and_then(|p| p.get("group"))
            .and_then(toml::Value::as_table)
        {
            tables.extend(groups.values().filter_map(|g| g.get("dependencies")));
        }
        for table in tables.into_iter().filter_map(toml::Value::as_table) {
            names.extend(table.keys().map(|k| normalise(k)));
        }
    }
    if !read_any {
        return Err(ManifestError::NoPythonManifest);
    }
    Ok(names.contains(&wanted))
}

/// Adds the names pyproject.toml's standard tables declare (`[project] dependencies`,
/// `[project.optional-dependencies]`, `[dependency-groups]`) to `names`; returns the document.
fn pep621_names(text: &str, names: &mut Vec<String>) -> Result<toml::Value, ManifestError> {
    let doc = toml::Value::Table(toml::from_str::<toml::Table>(text).map_err(ManifestError::Toml)?);
    let strings = |v: Option<&toml::Value>| -> Vec<String> {
        v.and_then(toml::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str())
                    .filter_map(requirement_name)
                    .collect()
            })
            .unwrap_or_default()
    };
    let project = doc.get("project");
    names.extend(strings(project.and_then(|p| p.get("dependencies"))));
    if let Some(optional) = project
        .and_then(|p| p.get("optional-dependencies"))
        .and_then(toml::Value::as_table)
    {
        for group in optional.values() {
            names.extend(strings(Some(group)));
        }
    }
    if let Some(groups) = doc.get("dependency-groups").and_then(toml::Value::as_table) {
        for group in groups.values() {
            names.extend(strings(Some(group)));
        }
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn package_json_dependencies_and_scripts() {
        let d = dir_with(&[(
            "package.json",
            r#"{"dependencies": {"lodash": "^4"}, "devDependencies": {"@types/node": "20"}, "scripts": {"test:unit": "jest"}}"#,
        )]);
        assert!(declares_dependency("npm", d.path(), "lodash").unwrap());
        assert!(declares_dependency("pnpm", d.path(), "@types/node").unwrap());
        assert!(!declares_dependency("yarn", d.path(), "evil-postinstall").unwrap());
        assert!(declares_script(d.path(), "test:unit").unwrap());
        assert!(!declares_script(d.path(), "pip").unwrap());
        assert!(declares_dependency("npm", tempfile::tempdir().unwrap().path(), "x").is_err());
        assert!(declares_dependency("cargo", d.path(), "anything").unwrap());
    }

    #[test]
    fn python_requirements_and_pyproject() {
        let d = dir_with(&[
            (
                "requirements.txt",
                "Requests[socks]>=2.0  # http\n-r base.txt\n--index-url x\n",
            ),
            ("requirements/dev.txt", "pytest==8.0\n"),
            (
                "pyproject.toml",
                "[project]\ndependencies = [\"zope.interface>=5\"]\n[project.optional-dependencies]\ndocs = [\"sphinx\"]\n[tool.poetry.group.test.dependencies]\nhypothesis = \"*\"\n",
            ),
        ]);
        for ok in [
            "requests",
            "REQUESTS",
            "pytest",
            "zope-interface",
            "Zope_Interface",
            "sphinx",
            "hypothesis",
        ] {
            assert!(declares_dependency("pip", d.path(), ok).unwrap(), "{ok}");
        }
        assert!(!declares_dependency("poetry", d.path(), "evil-sdist").unwrap());
        assert!(declares_dependency("pip", tempfile::tempdir().unwrap().path(), "x").is_err());
    }

    #[test]
    fn uv_add_needs_a_standard_pyproject_declaration() {
        let argv = |words: &str| -> Vec<String> { words.split(' ').map(String::from).collect() };
        assert!(checks_declared("uv", &argv("uv add --no-sync lib==1.0.1")));
        assert!(!checks_declared(
            "uv",
            &argv("uv lock --upgrade-package lib==1.0.1")
        ));
        let d = dir_with(&[
            (
                "pyproject.toml",
                "[project]\nname = \"app\"\ndependencies = [\"lib>=1\"]\n[dependency-groups]\ndev = [\"pytest\"]\n[tool.poetry.dependencies]\nlegacy = \"*\"\n",
            ),
            ("requirements.txt", "pinned==1.0\n"),
        ]);
        assert!(declares_dependency("uv", d.path(), "lib").unwrap());
        assert!(declares_dependency("uv", d.path(), "pytest").unwrap());
        // uv add writes to `[project]`: a name only poetry's table or a requirements file holds
        // would be added there, new.
        assert!(!declares_dependency("uv", d.path(), "legacy").unwrap());
        assert!(!declares_dependency("uv", d.path(), "pinned").unwrap());
        assert!(declares_dependency("uv", tempfile::tempdir().unwrap().path(), "x").is_err());
    }

    #[test]
    fn go_modules_required_directly_or_indirectly() {
        let d = dir_with(&[(
            "go.mod",
            "module example.com/app\n\ngo 1.21\n\nrequire (\n\tgolang.org/x/text v0.14.0\n\tgithub.com/pkg/errors v0.9.1 // indirect\n)\n",
        )]);
        for ok in ["golang.org/x/text", "github.com/pkg/errors"] {
            assert!(declares_dependency("go", d.path(), ok).unwrap(), "{ok}");
        }
        assert!(!declares_dependency("go", d.path(), "evil.example/pwn").unwrap());
        assert!(declares_dependency("go", tempfile::tempdir().unwrap().path(), "x").is_err());
    }
}
