//! Diffs of before/after pairs: derived from the fixtures by editing them, and produced by
//! really running `cargo update` and `npm update` (see the fixtures' README).

use super::{copy, edit, fixture, read};
use crate::changes::{ChangeKind, Ecosystem, Source, diff};

#[test]
fn real_npm_update_moves_async_only() {
    let before = read(&fixture("npm/winston"), ".", "npm").unwrap();
    let after = read(&fixture("npm/winston-update/after"), ".", "npm").unwrap();
    let d = diff(&before, &after);
    let npm = &d.ecosystems[0];
    let async_ = npm.packages.iter().find(|p| p.name == "async").unwrap();
    assert_eq!(
        (
            async_.kind,
            async_.before.ended_at(),
            async_.after.ended_at()
        ),
        (
            ChangeKind::Changed,
            Some("3.2.5".into()),
            Some("3.2.6".into())
        )
    );
    // The trimmed fixture's dev-only `semver` went away: a transitive removal, nothing else moved.
    let names: Vec<&str> = npm.packages.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["async", "semver"]);
    assert_eq!(npm.packages[1].after.versions(), ["6.3.1"]);
    assert!(npm.entries.is_empty() && npm.fields.is_empty() && npm.integrity.is_empty());
}

#[test]
fn real_npm_update_with_resolved_omitted_loses_every_source() {
    let before = read(&fixture("npm/winston"), ".", "npm").unwrap();
    let after = read(
        &fixture("npm/winston-update/after-omit-resolved"),
        ".",
        "npm",
    )
    .unwrap();
    let npm = &diff(&before, &after).ecosystems[0];
    assert!(
        npm.new_copies
            .iter()
            .all(|c| c.source == Source::Unrecorded)
    );
    assert_eq!(
        npm.new_copies.len(),
        27,
        "every copy but the extraneous nested semver"
    );
}

#[test]
fn real_cargo_update_of_pinned_thiserror_changes_only_anyhow() {
    let before = read(&fixture("cargo/pinned-thiserror/before"), ".", "cargo").unwrap();
    let after = read(&fixture("cargo/pinned-thiserror/after"), ".", "cargo").unwrap();
    let cargo = &diff(&before, &after).ecosystems[0];
    assert_eq!(cargo.packages.len(), 1);
    assert_eq!(cargo.packages[0].name, "anyhow");
    assert_eq!(
        cargo.packages[0].after.ended_at().as_deref(),
        Some("1.0.104")
    );
    assert_eq!(
        cargo.unchanged["thiserror"].ended_at().as_deref(),
        Some("1.0.65")
    );
}

#[test]
fn version_sets_of_nested_copies() {
    let dir = copy("npm/winston");
    edit(
        dir.path(),
        "package-lock.json",
        "\"version\": \"6.3.1\"",
        "\"version\": \"7.6.0\"",
    );
    let before = read(&fixture("npm/winston"), ".", "npm").unwrap();
    let after = read(dir.path(), ".", "npm").unwrap();
    let npm = &diff(&before, &after).ecosystems[0];
    let semver = &npm.packages[0];
    assert_eq!(
        (semver.before.versions(), semver.after.versions()),
        (vec!["5.7.2", "6.3.1"], vec!["5.7.2", "7.6.0"])
    );
    assert_eq!(semver.after.ended_at().as_deref(), Some("5.7.2, 7.6.0"));
    assert!(!semver.is_direct());
}

#[test]
fn integrity_change_for_the_same_version() {
    let dir = copy("yarn-v1/hyper");
    edit(
        dir.path(),
        "yarn.lock",
        "sha512-m3iNNWpd9",
        "sha512-AAAAAAAAA",
    );
    let before = read(&fixture("yarn-v1/hyper"), ".", "yarn").unwrap();
    let after = read(dir.path(), ".", "yarn").unwrap();
    let yarn = &diff(&before, &after).ecosystems[0];
    assert!(yarn.packages.is_empty());
    assert_eq!(
        (
            yarn.integrity[0].name.as_str(),
            yarn.integrity[0].version.as_str()
        ),
        ("clsx", "2.1.0")
    );
}

#[test]
fn manifest_entries_and_fields_split() {
    let dir = copy("cargo/hexyl");
    edit(
        dir.path(),
        "Cargo.toml",
        "libc = \"0.2\"",
        "libc = \"0.2.170\"",
    );
    edit(
        dir.path(),
        "Cargo.toml",
        "[profile.release]",
        "[patch.crates-io]\nlibc = { git = \"https://example.invalid/libc\" }\n\n[profile.release]",
    );
    let before = read(&fixture("cargo/hexyl"), ".", "cargo").unwrap();
    let after = read(dir.path(), ".", "cargo").unwrap();
    let cargo = &diff(&before, &after).ecosystems[0];
    assert_eq!(cargo.entries.len(), 1);
    let entry = &cargo.entries[0];
    assert_eq!(
        (
            entry.table.as_str(),
            entry.name.as_str(),
            entry.before.as_deref(),
            entry.after.as_deref()
        ),
        ("dependencies", "libc", Some("0.2"), Some("0.2.170"))
    );
    assert_eq!(cargo.fields.len(), 1);
    assert_eq!(cargo.fields[0].field, "patch.crates-io.libc");
}

#[test]
fn python_names_compare_normalised() {
    let dir = copy("uv/flask");
    edit(
        dir.path(),
        "uv.lock",
        "name = \"markupsafe\"\nversion = \"3.0.3\"",
        "name = \"MarkupSafe\"\nversion = \"3.0.4\"",
    );
    let before = read(&fixture("uv/flask"), ".", "uv").unwrap();
    let after = read(dir.path(), ".", "uv").unwrap();
    let uv = &diff(&before, &after).ecosystems[0];
    assert_eq!(
        uv.packages[0].name, "markupsafe",
        "PEP 503 names compare equal"
    );
    assert_eq!(uv.ecosystem, Ecosystem::Uv);
}
