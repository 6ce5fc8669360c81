//! The lock's format each reader records, and its change as a fact that blocks nothing.

use super::{copy, eco, edit, fixture, read};
use crate::changes::{DeclaredUpdate, Ecosystem, FormatChange, Trust, UpdateType, check, diff};

/// The format recorded for the fixture `rel` read as `ecosystem`.
fn format_of(rel: &str, working_dir: &str, ecosystem: &str) -> Option<String> {
    let s = read(&fixture(rel), working_dir, ecosystem).unwrap();
    let e = Ecosystem::from_name(ecosystem).unwrap();
    eco(&s, e).format.clone()
}

#[test]
fn cargo_lock_states_its_version() {
    assert_eq!(format_of("cargo/hexyl", ".", "cargo").as_deref(), Some("4"));
}

#[test]
fn package_lock_states_its_lockfile_version() {
    assert_eq!(format_of("npm/winston", ".", "npm").as_deref(), Some("3"));
    assert_eq!(
        format_of("npm/lockfile-v1", ".", "npm").as_deref(),
        Some("1")
    );
}

#[test]
fn yarn_lock_states_berry_metadata_version_or_classic_1() {
    assert_eq!(
        format_of("yarn-berry/prettier", ".", "yarn").as_deref(),
        Some("10")
    );
    assert_eq!(
        format_of("yarn-v1/hyper", ".", "yarn").as_deref(),
        Some("1")
    );
}

#[test]
fn pnpm_lock_states_its_lockfile_version() {
    assert_eq!(
        format_of("pnpm/vue-core", "packages/compiler-sfc", "pnpm").as_deref(),
        Some("9.0")
    );
    // Older pnpm versions wrote it as a number (here with this lock's keys, which are not 5.x's).
    let dir = copy("pnpm/vue-core");
    edit(
        dir.path(),
        "pnpm-lock.yaml",
        "lockfileVersion: '9.0'",
        "lockfileVersion: 6.0",
    );
    let s = read(dir.path(), "packages/compiler-sfc", "pnpm").unwrap();
    assert_eq!(eco(&s, Ecosystem::Pnpm).format.as_deref(), Some("6.0"));
}

#[test]
fn bun_lock_states_its_lockfile_version() {
    assert_eq!(format_of("bun/hono", ".", "bun").as_deref(), Some("1"));
}

#[test]
fn poetry_lock_states_its_lock_version() {
    assert_eq!(
        format_of("poetry/poetry", ".", "poetry").as_deref(),
        Some("2.1")
    );
}

#[test]
fn uv_lock_states_version_and_revision() {
    assert_eq!(
        format_of("uv/flask", ".", "uv").as_deref(),
        Some("1 (revision 3)")
    );
}

#[test]
fn gemfile_lock_states_the_bundler_that_wrote_it() {
    assert_eq!(
        format_of("bundle/rubygems.org", ".", "bundle").as_deref(),
        Some("4.0.16")
    );
    // Older Bundler versions indented it by three spaces.
    let dir = copy("bundle/rubygems.org");
    edit(
        dir.path(),
        "Gemfile.lock",
        "BUNDLED WITH\n  4.0.16",
        "BUNDLED WITH\n   2.4.22",
    );
    let s = read(dir.path(), ".", "bundle").unwrap();
    assert_eq!(eco(&s, Ecosystem::Bundle).format.as_deref(), Some("2.4.22"));
}

#[test]
fn go_sum_and_requirements_have_no_format() {
    assert_eq!(format_of("go/docker-agent", ".", "go"), None);
    assert_eq!(format_of("pip/sigstore", ".", "pip"), None);
}

#[test]
fn a_stated_format_is_quoted_short_and_on_one_line() {
    let dir = copy("npm/winston");
    let long = format!("3\\n{}", "x".repeat(100));
    edit(
        dir.path(),
        "package-lock.json",
        "\"lockfileVersion\": 3",
        &format!("\"lockfileVersion\": \"{long}\""),
    );
    let s = read(dir.path(), ".", "npm").unwrap();
    let format = eco(&s, Ecosystem::Npm).format.clone().unwrap();
    assert_eq!(format, format!("3{}", "x".repeat(39)));
}

/// The flask case: the update rewrote uv.lock's revision 3 to 5 besides bumping click. The
/// verdict states it and blocks nothing for it.
#[test]
fn a_rewritten_format_is_a_fact_not_a_finding() {
    let dir = copy("uv/flask");
    edit(dir.path(), "uv.lock", "revision = 3", "revision = 5");
    let (before, after) = (
        read(&fixture("uv/flask"), ".", "uv").unwrap(),
        read(dir.path(), ".", "uv").unwrap(),
    );
    let d = diff(&before, &after);
    let change = FormatChange {
        ecosystem: Ecosystem::Uv,
        lock_file: "uv.lock".into(),
        from: "1 (revision 3)".into(),
        to: "1 (revision 5)".into(),
    };
    assert_eq!(d.ecosystems[0].format.as_ref(), Some(&change));
    let maintenance = DeclaredUpdate {
        package: "uv.lock".into(),
        from: String::new(),
        to: String::new(),
        update_type: UpdateType::LockFileMaintenance,
    };
    let v = check(&d, &[maintenance], &Trust::default());
    assert_eq!(v.formats, [change]);
    assert!(v.findings.is_empty(), "{:?}", v.findings);
    let same = diff(&before, &before);
    assert_eq!(same.ecosystems[0].format, None);
    assert!(check(&same, &[], &Trust::default()).formats.is_empty());
}

#[test]
fn a_new_lock_file_is_no_format_change() {
    let dir = copy("npm/winston");
    std::fs::rename(
        dir.path().join("package-lock.json"),
        dir.path().join("npm-shrinkwrap.json"),
    )
    .unwrap();
    edit(
        dir.path(),
        "npm-shrinkwrap.json",
        "\"lockfileVersion\": 3",
        "\"lockfileVersion\": 2",
    );
    let before = read(&fixture("npm/winston"), ".", "npm").unwrap();
    let after = read(dir.path(), ".", "npm").unwrap();
    assert_eq!(diff(&before, &after).ecosystems[0].format, None);
}
