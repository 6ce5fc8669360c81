//! Every finding code with its message, on the real cases.

use super::{copy, edit, fixture, read};
use crate::changes::{Code, DeclaredUpdate, Snapshot, Trust, UpdateType, Verdict, check, diff};
use std::path::Path;

fn declared(package: &str, from: &str, to: &str, update_type: UpdateType) -> DeclaredUpdate {
    DeclaredUpdate {
        package: package.into(),
        from: from.into(),
        to: to.into(),
        update_type,
    }
}

fn verdict(before: &Snapshot, after: &Snapshot, updates: &[DeclaredUpdate]) -> Verdict {
    check(&diff(before, after), updates, &Trust::default())
}

fn messages(verdict: &Verdict, code: Code) -> Vec<&str> {
    verdict
        .findings
        .iter()
        .filter(|f| f.code == code)
        .map(|f| f.message.as_str())
        .collect()
}

fn pair(
    fixture_rel: &str,
    edited: &Path,
    working_dir: &str,
    ecosystem: &str,
) -> (Snapshot, Snapshot) {
    (
        read(&fixture(fixture_rel), working_dir, ecosystem).unwrap(),
        read(edited, working_dir, ecosystem).unwrap(),
    )
}

#[test]
fn pinned_thiserror_does_not_reach_its_to() {
    let before = read(&fixture("cargo/pinned-thiserror/before"), ".", "cargo").unwrap();
    let after = read(&fixture("cargo/pinned-thiserror/after"), ".", "cargo").unwrap();
    let v = verdict(
        &before,
        &after,
        &[
            declared("thiserror", "1.0.65", "1.0.69", UpdateType::Patch),
            declared("anyhow", "1.0.90", "1.0.104", UpdateType::Patch),
        ],
    );
    assert_eq!(
        messages(&v, Code::UpdateNotReached),
        [
            "`thiserror` stayed at 1.0.65 in Cargo.lock: the commands did not update it, so it did not reach 1.0.69 (a requirement such as an `=` pin or a range may hold it back); drop the update from the unit or change what holds it"
        ]
    );
    assert!(v.blocked());
    assert!(!v.updates[0].reached && v.updates[1].reached);
    assert_eq!(
        v.updates[1].link.as_deref(),
        Some("https://crates.io/crates/anyhow/1.0.104")
    );
    assert_eq!(
        v.direct.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["anyhow 1.0.90 → 1.0.104"]
    );
}

#[test]
fn npm_update_async_states_the_real_versions() {
    let before = read(&fixture("npm/winston"), ".", "npm").unwrap();
    let after = read(&fixture("npm/winston-update/after"), ".", "npm").unwrap();
    let v = verdict(
        &before,
        &after,
        &[declared("async", "3.2.4", "3.2.7", UpdateType::Patch)],
    );
    assert_eq!(
        messages(&v, Code::UpdateNotReached),
        [
            "`async` ended at 3.2.6 in package-lock.json, not at the declared 3.2.7 (it was 3.2.5): declare 3.2.6 as `to`, or use a command that reaches 3.2.7"
        ]
    );
    assert_eq!(
        messages(&v, Code::UpdateFromMismatch),
        [
            "`async` was declared from 3.2.4, but the base package-lock.json had 3.2.5; 3.2.5 is what gets published"
        ]
    );
    let fact = &v.updates[0];
    assert_eq!(
        (fact.from.as_deref(), fact.to.as_deref()),
        (Some("3.2.5"), Some("3.2.6"))
    );
    assert_eq!(
        v.transitive
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["semver 5.7.2, 6.3.1 → 6.3.1"]
    );
}

#[test]
fn from_mismatch_alone_does_not_block() {
    let before = read(&fixture("npm/winston"), ".", "npm").unwrap();
    let after = read(&fixture("npm/winston-update/after"), ".", "npm").unwrap();
    let v = verdict(
        &before,
        &after,
        &[declared("async", "3.2.4", "v3.2.6", UpdateType::Patch)],
    );
    assert_eq!(v.findings.len(), 1);
    assert!(!v.findings[0].blocking && !v.blocked());
    assert_eq!(
        v.updates[0].link.as_deref(),
        Some("https://www.npmjs.com/package/async/v/3.2.6")
    );
}

/// npm's `omit-lockfile-registry-resolved` drops the URLs: the copies come from the registry the
/// configuration resolves to, the public one here, which the base used.
#[test]
fn dropped_resolved_urls_come_from_the_configured_registry() {
    let before = read(&fixture("npm/winston"), ".", "npm").unwrap();
    let after = read(
        &fixture("npm/winston-update/after-omit-resolved"),
        ".",
        "npm",
    )
    .unwrap();
    let v = verdict(
        &before,
        &after,
        &[declared(
            "safe-stable-stringify",
            "2.5.0",
            "3.0.0",
            UpdateType::Major,
        )],
    );
    assert!(
        messages(&v, Code::UpdateNotReached)[0]
            .starts_with("`safe-stable-stringify` ended at 2.5.0 in package-lock.json")
    );
    assert!(messages(&v, Code::ChangeNewSource).is_empty());
    // `async` moved though undeclared: a direct dependency outside the plan.
    assert_eq!(
        messages(&v, Code::ChangeUndeclaredDependency),
        [
            "`async` is a direct dependency that changed in package-lock.json (async 3.2.5 → 3.2.6), but the plan declares no update for it: the unit is denied; declare the update or leave it unchanged"
        ]
    );
}

#[test]
fn go_get_adding_a_require_is_denied() {
    let dir = copy("go/docker-agent");
    edit(
        dir.path(),
        "go.mod",
        "\tgithub.com/Microsoft/go-winio v0.6.2\n",
        "\tgithub.com/Microsoft/go-winio v0.6.2\n\tevil.example/pwn v1.0.0\n",
    );
    let sum = std::fs::read_to_string(dir.path().join("go.sum")).unwrap();
    std::fs::write(
        dir.path().join("go.sum"),
        sum + "evil.example/pwn v1.0.0 h1:AAAA=\n",
    )
    .unwrap();
    let (before, after) = pair("go/docker-agent", dir.path(), ".", "go");
    let v = verdict(
        &before,
        &after,
        &[declared(
            "github.com/Microsoft/go-winio",
            "v0.6.2",
            "v0.6.2",
            UpdateType::Digest,
        )],
    );
    assert_eq!(
        messages(&v, Code::ChangeUndeclaredDependency),
        [
            "`evil.example/pwn` was added to go.mod (require) with `v1.0.0`, but the plan declares no update for it: the unit is denied; declare the update or remove the command that changes it"
        ]
    );
    assert_eq!(
        messages(&v, Code::ChangeNewSource),
        [
            "`evil.example/pwn` v1.0.0 now resolves from evil.example (module evil.example/pwn) in go.sum, which the base lock file did not use and the configuration does not allow: the unit is denied; allow that host only if it is trusted"
        ]
    );
    assert_eq!(
        messages(&v, Code::UpdateNotReached),
        [
            "`github.com/Microsoft/go-winio` stayed at v0.6.2 in go.sum: the commands did not update it, so it did not reach v0.6.2 (a requirement such as an `=` pin or a range may hold it back); drop the update from the unit or change what holds it"
        ]
    );
    let allowed = check(
        &diff(&before, &after),
        &[],
        &Trust::hosts(&["https://Evil.example".to_string()]),
    );
    assert!(
        messages(&allowed, Code::ChangeNewSource).is_empty(),
        "an operator-allowed host passes"
    );
}

#[test]
fn postinstall_added_to_package_json_is_denied() {
    let dir = copy("npm/winston");
    edit(
        dir.path(),
        "package.json",
        "\"scripts\": {",
        "\"scripts\": {\n\t\t\"postinstall\": \"node x.js\",",
    );
    let (before, after) = pair("npm/winston", dir.path(), ".", "npm");
    let v = verdict(&before, &after, &[]);
    assert_eq!(
        messages(&v, Code::ChangeManifestField),
        [
            "`package.json: scripts.postinstall` was added by the commands; an update may change only dependency entries, so the unit is denied: undo that change"
        ]
    );
    assert!(v.blocked());
}

#[test]
fn gemfile_edited_outside_gem_lines_is_denied() {
    let dir = copy("bundle/rubygems.org");
    edit(
        dir.path(),
        "Gemfile",
        "source \"https://rubygems.org\"",
        "source \"https://gems.example\"",
    );
    edit(
        dir.path(),
        "Gemfile",
        "gem \"rack\", \"~> 3.2\"",
        "gem \"rack\", \"~> 3.2\" # a comment is not a change\nplugin \"evil\"",
    );
    let (before, after) = pair("bundle/rubygems.org", dir.path(), ".", "bundle");
    let v = verdict(&before, &after, &[]);
    assert_eq!(
        messages(&v, Code::ChangeManifestField),
        [
            "`Gemfile: plugin` was added by the commands; an update may change only dependency entries, so the unit is denied: undo that change",
            "`Gemfile: source` was changed by the commands; an update may change only dependency entries, so the unit is denied: undo that change",
        ]
    );
}

#[test]
fn changed_constraint_of_another_package_is_denied() {
    let dir = copy("cargo/hexyl");
    edit(
        dir.path(),
        "Cargo.toml",
        "libc = \"0.2\"",
        "libc = \"=0.2.161\"",
    );
    let (before, after) = pair("cargo/hexyl", dir.path(), ".", "cargo");
    let v = verdict(
        &before,
        &after,
        &[declared("anyhow", "1.0.91", "1.0.92", UpdateType::Patch)],
    );
    assert_eq!(
        messages(&v, Code::ChangeUndeclaredDependency),
        [
            "`libc` changed in Cargo.toml (dependencies) from `0.2` to `=0.2.161`, but the plan declares no update for it: the unit is denied; declare the update or remove the command that changes it"
        ]
    );
}

#[test]
fn changed_integrity_for_the_same_version_is_denied() {
    let dir = copy("bundle/rubygems.org");
    edit(
        dir.path(),
        "Gemfile.lock",
        "rack (3.2.6) sha256=5ed78e1f",
        "rack (3.2.6) sha256=00000000",
    );
    let (before, after) = pair("bundle/rubygems.org", dir.path(), ".", "bundle");
    let v = verdict(&before, &after, &[]);
    assert_eq!(
        messages(&v, Code::ChangeIntegrity),
        [
            "`rack` 3.2.6 has another integrity in Gemfile.lock than in the base (sha256=5ed78e1f73b2e2567… → sha256=0000000073b2e2567…): same version, other content, so the unit is denied; restore the base entry"
        ]
    );
}

#[test]
fn unknown_package_is_not_reached() {
    let before = read(&fixture("npm/winston"), ".", "npm").unwrap();
    let v = verdict(
        &before,
        &before,
        &[declared("left-pad", "1.0.0", "1.3.0", UpdateType::Minor)],
    );
    assert_eq!(
        messages(&v, Code::UpdateNotReached),
        [
            "`left-pad` is in none of the lock files read, so it cannot have reached 1.3.0: check the package name, or drop the update"
        ]
    );
}

#[test]
fn lock_file_maintenance_allows_lock_moves_but_not_manifest_changes() {
    let before = read(&fixture("npm/winston"), ".", "npm").unwrap();
    let after = read(&fixture("npm/winston-update/after"), ".", "npm").unwrap();
    let maintenance = [declared(
        "lock file",
        "",
        "",
        UpdateType::LockFileMaintenance,
    )];
    let v = verdict(&before, &after, &maintenance);
    assert!(
        v.findings.is_empty() && v.updates[0].reached,
        "{:?}",
        v.findings
    );
    let dir = copy("npm/winston-update/after");
    edit(
        dir.path(),
        "package.json",
        "\"async\": \"^3.2.3\"",
        "\"async\": \"^3.2.6\"",
    );
    let edited = read(dir.path(), ".", "npm").unwrap();
    let v = verdict(&before, &edited, &maintenance);
    assert_eq!(
        messages(&v, Code::ChangeUndeclaredDependency),
        [
            "`async` changed in package.json (dependencies) from `^3.2.3` to `^3.2.6`, but the plan declares no update for it: the unit is denied; declare the update or remove the command that changes it"
        ]
    );
}

#[test]
fn replacement_allows_its_successor() {
    let dir = copy("npm/winston");
    edit(
        dir.path(),
        "package.json",
        "\"stack-trace\": \"0.0.x\"",
        "\"error-stack\": \"^1.0.0\"",
    );
    edit(
        dir.path(),
        "package-lock.json",
        "\"node_modules/stack-trace\"",
        "\"node_modules/error-stack\"",
    );
    edit(
        dir.path(),
        "package-lock.json",
        "\"version\": \"0.0.10\"",
        "\"version\": \"1.0.0\"",
    );
    let (before, after) = pair("npm/winston", dir.path(), ".", "npm");
    let v = verdict(
        &before,
        &after,
        &[declared(
            "stack-trace",
            "0.0.10",
            "1.0.0",
            UpdateType::Replacement,
        )],
    );
    assert!(v.findings.is_empty(), "{:?}", v.findings);
    let v = verdict(
        &before,
        &after,
        &[declared(
            "stack-trace",
            "0.0.10",
            "2.0.0",
            UpdateType::Replacement,
        )],
    );
    assert_eq!(
        messages(&v, Code::ChangeUndeclaredDependency),
        [
            "`error-stack` was added to package.json (dependencies) with `^1.0.0`, but the plan declares no update for it: the unit is denied; declare the update or remove the command that changes it"
        ]
    );
}

#[test]
fn versions_compare_per_ecosystem() {
    use crate::changes::Ecosystem::{Bundle, Cargo, Go, Pip};
    use crate::changes::version::same_version;
    assert!(same_version(Go, "1.8.1", "v1.8.1"));
    assert!(same_version(Pip, "2.0", "2.0.0") && same_version(Pip, "1.0RC1", "1.0rc1"));
    assert!(same_version(Cargo, "v1.0.69", "1.0.69") && !same_version(Cargo, "1.0.6", "1.0.69"));
    assert!(same_version(Bundle, "8.1.3.0", "8.1.3") && !same_version(Bundle, "8.1.3.1", "8.1.3"));
}

#[test]
fn private_sources_get_no_link() {
    use crate::changes::{Ecosystem, Source, source::registry_link};
    assert_eq!(
        registry_link(
            Ecosystem::Bundle,
            "avo",
            "3.32.4",
            &Source::Registry("https://packager.dev/avo-hq/".into())
        ),
        None
    );
    assert_eq!(
        registry_link(
            Ecosystem::Bundle,
            "rack",
            "3.2.6",
            &Source::Registry("https://rubygems.org/".into())
        )
        .as_deref(),
        Some("https://rubygems.org/gems/rack/versions/3.2.6")
    );
    assert_eq!(
        registry_link(
            Ecosystem::Go,
            "charm.land/bubbles/v2",
            "v2.0.0",
            &Source::Module("charm.land/bubbles/v2".into())
        )
        .as_deref(),
        Some("https://pkg.go.dev/charm.land/bubbles/v2@v2.0.0")
    );
    assert_eq!(
        registry_link(
            Ecosystem::Pip,
            "x",
            "1",
            &Source::Registry("https://pypi.corp.example/simple".into())
        ),
        None
    );
}

#[test]
fn a_new_index_url_is_a_field_and_a_new_source() {
    let dir = copy("pip/sigstore");
    edit(
        dir.path(),
        "requirements.txt",
        "annotated-types==0.8.0",
        "--index-url https://pypi.corp.example/simple\nannotated-types==0.8.0",
    );
    let (before, after) = pair("pip/sigstore", dir.path(), ".", "pip");
    let v = verdict(&before, &after, &[]);
    assert_eq!(
        messages(&v, Code::ChangeManifestField),
        [
            "`requirements.txt: --index-url` was added by the commands; an update may change only dependency entries, so the unit is denied: undo that change"
        ]
    );
    assert!(messages(&v, Code::ChangeNewSource).contains(
        &"`sigstore` 4.5.0 now resolves from pypi.corp.example (https://pypi.corp.example/simple) in requirements.txt, which the base lock file did not use and the configuration does not allow: the unit is denied; allow that host only if it is trusted"
    ));
}
