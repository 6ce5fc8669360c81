//! The snapshot's record of what it read, and a plan naming the wrong ecosystem.

use crate::changes::{ChangesError, snapshot};
use std::path::Path;

const SUM: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// A `Cargo.lock` of `packages`: (name, version, registry?, dependencies).
fn cargo_lock(packages: &[(&str, &str, bool, &[&str])]) -> String {
    let mut text = String::from("version = 4\n");
    for (name, version, registry, dependencies) in packages {
        text.push_str(&format!(
            "\n[[package]]\nname = \"{name}\"\nversion = \"{version}\"\n"
        ));
        if *registry {
            text.push_str(&format!(
                "source = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"{SUM}\"\n"
            ));
        }
        if !dependencies.is_empty() {
            let list: Vec<String> = dependencies.iter().map(|d| format!(" \"{d}\",")).collect();
            text.push_str(&format!("dependencies = [\n{}\n]\n", list.join("\n")));
        }
    }
    text
}

fn write(dir: &Path, file: &str, text: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// chmln/sd's shape: a virtual workspace whose member `cli` uses anyhow and regex (which needs
/// regex-syntax 0.8), and whose member `xtask` uses legacy (which needs regex-syntax 0.6).
fn sd(dir: &Path, anyhow: &str, syntax: &str) {
    write(
        dir,
        "Cargo.toml",
        "[workspace]\nmembers = [\"cli\", \"xtask\"]\n[workspace.dependencies]\nclap = \"4\"\n",
    );
    write(
        dir,
        "cli/Cargo.toml",
        "[package]\nname = \"cli\"\nversion = \"0.1.0\"\n[dependencies]\nanyhow = \"1\"\nregex = \"1\"\n",
    );
    write(
        dir,
        "xtask/Cargo.toml",
        "[package]\nname = \"xtask\"\nversion = \"0.1.0\"\n[dependencies]\nlegacy = \"1\"\n",
    );
    let regex_dep = format!("regex-syntax {syntax}");
    write(
        dir,
        "Cargo.lock",
        &cargo_lock(&[
            ("anyhow", anyhow, true, &[]),
            ("cli", "0.1.0", false, &["anyhow", "regex"]),
            ("legacy", "1.0.0", true, &["regex-syntax 0.6.29"]),
            ("regex", "1.12.2", true, &[&regex_dep]),
            ("regex-syntax", "0.6.29", true, &[]),
            ("regex-syntax", syntax, true, &[]),
            ("xtask", "0.1.0", false, &["legacy"]),
        ]),
    );
}

/// The snapshot keeps the bytes of every file it read, and the files it looked for in vain.
#[test]
fn a_snapshot_records_the_bytes_it_read() {
    let dir = tempfile::tempdir().unwrap();
    sd(dir.path(), "1.0.99", "0.8.8");
    let root = dir.path();
    let read = snapshot(root, &root.join("cli"), &["cargo"]).unwrap();
    let files: Vec<(&str, bool)> = read
        .files
        .iter()
        .map(|(f, bytes)| (f.as_str(), bytes.is_some()))
        .collect();
    assert_eq!(
        files,
        [
            ("Cargo.lock", true),
            ("Cargo.toml", true),
            ("cli/Cargo.toml", true)
        ]
    );
    assert_eq!(
        read.files["Cargo.lock"].as_deref(),
        Some(std::fs::read(root.join("Cargo.lock")).unwrap().as_slice())
    );
    let go = tempfile::tempdir().unwrap();
    write(go.path(), "go.mod", "module example.com/m\n\ngo 1.21\n");
    let read = snapshot(go.path(), go.path(), &["go"]).unwrap();
    assert_eq!(read.files["go.sum"], None, "looked for, absent");
}

/// An npm plan in a pnpm project is told so, not asked to commit a lock file.
#[test]
fn a_plan_naming_the_wrong_ecosystem_is_told_which_one_the_project_uses() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "package.json", "{\"name\": \"app\"}\n");
    write(dir.path(), "pnpm-lock.yaml", "lockfileVersion: '9.0'\n");
    write(dir.path(), "web/package.json", "{\"name\": \"web\"}\n");
    let e = snapshot(dir.path(), &dir.path().join("web"), &["npm"]).unwrap_err();
    assert!(matches!(e, ChangesError::OtherEcosystem { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "npm: no package-lock.json in web or a parent directory up to the repository root, but pnpm-lock.yaml is there: this is a pnpm project; write the plan's commands for pnpm and declare `pnpm` in repo_context.ecosystems"
    );
    let alone = tempfile::tempdir().unwrap();
    write(alone.path(), "package.json", "{\"name\": \"app\"}\n");
    let e = snapshot(alone.path(), alone.path(), &["npm"]).unwrap_err();
    assert!(matches!(e, ChangesError::MissingLock { .. }), "{e:?}");
}
