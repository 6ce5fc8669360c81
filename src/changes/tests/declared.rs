//! Declared updates wherever the lock holds them: in a member of a Cargo virtual workspace, as a
//! transitive package, as one of two versions of a crate. And the snapshot's record of what it
//! read, and a plan naming the wrong ecosystem.

use crate::changes::{
    ChangesError, DeclaredUpdate, Ecosystem, Trust, UpdateType, check, diff, snapshot,
};
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

fn declared(package: &str, from: &str, to: &str) -> DeclaredUpdate {
    DeclaredUpdate {
        package: package.into(),
        from: from.into(),
        to: to.into(),
        update_type: UpdateType::Patch,
    }
}

/// sd's anyhow PR said "1 transitive change: anyhow": in a virtual workspace, a member's
/// dependency is direct, and a declared update is never also a transitive change.
#[test]
fn a_declared_update_in_a_virtual_workspace_is_not_transitive() {
    let (before, after) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    sd(before.path(), "1.0.99", "0.8.8");
    sd(after.path(), "1.0.100", "0.8.8");
    let read = |d: &Path| snapshot(d, d, &["cargo"]).unwrap();
    let v = check(
        &diff(&read(before.path()), &read(after.path())),
        &[declared("anyhow", "1.0.99", "1.0.100")],
        &Trust::default(),
    );
    assert!(!v.blocked(), "{:?}", v.findings);
    assert_eq!(
        (v.updates[0].from.as_deref(), v.updates[0].to.as_deref()),
        (Some("1.0.99"), Some("1.0.100"))
    );
    assert!(v.transitive.is_empty(), "{:?}", v.transitive);
    assert!(v.refreshed().is_empty());
    let eco = &read(before.path()).ecosystems[&Ecosystem::Cargo];
    let direct: Vec<&str> = eco
        .packages
        .iter()
        .filter(|p| p.direct)
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(
        direct,
        ["anyhow", "legacy", "regex"],
        "every member's dependencies"
    );
}

/// A lock holding regex-syntax 0.6.29 and 0.8.8, both transitive: the update of the 0.8 copy
/// states that copy's versions, not every version locked, and is not transitive either.
#[test]
fn one_of_two_versions_of_a_crate_states_its_own_versions() {
    let (before, after) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    sd(before.path(), "1.0.99", "0.8.8");
    sd(after.path(), "1.0.99", "0.8.12");
    let read = |d: &Path| snapshot(d, d, &["cargo"]).unwrap();
    let (b, a) = (read(before.path()), read(after.path()));
    assert_eq!(
        b.locked_versions(Ecosystem::Cargo, "regex-syntax"),
        (vec!["0.6.29".to_string(), "0.8.8".into()], "Cargo.lock")
    );
    let v = check(
        &diff(&b, &a),
        &[declared("regex-syntax", "0.8.8", "0.8.12")],
        &Trust::default(),
    );
    assert!(!v.blocked(), "{:?}", v.findings);
    let fact = &v.updates[0];
    assert_eq!(
        (fact.from.as_deref(), fact.to.as_deref()),
        (Some("0.8.8"), Some("0.8.12"))
    );
    assert_eq!(
        fact.link.as_deref(),
        Some("https://crates.io/crates/regex-syntax/0.8.12")
    );
    assert!(v.transitive.is_empty(), "{:?}", v.transitive);
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
