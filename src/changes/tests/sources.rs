//! The new-source rule on URLs that tools read differently, exact path origins, the public
//! registries and the configured one.

use crate::changes::{
    Code, Ecosystem, EcosystemSnapshot, LockedPackage, Snapshot, Source, Trust, check, diff,
};
use std::collections::BTreeMap;

fn copy(name: &str, version: &str, source: Source) -> LockedPackage {
    LockedPackage {
        name: name.into(),
        version: version.into(),
        source,
        integrity: None,
        direct: false,
    }
}

fn lock(ecosystem: Ecosystem, packages: Vec<LockedPackage>) -> Snapshot {
    let file = match ecosystem {
        Ecosystem::Cargo => "Cargo.lock",
        _ => "package-lock.json",
    };
    Snapshot {
        ecosystems: BTreeMap::from([(
            ecosystem,
            EcosystemSnapshot {
                lock_file: Some(file.into()),
                packages,
                ..EcosystemSnapshot::default()
            },
        )]),
        ..Snapshot::default()
    }
}

/// A workspace member and `a` 1.0.0 from the public registry.
fn base() -> Vec<LockedPackage> {
    vec![
        copy("ws", "1.0.0", Source::Path("packages/ws".into())),
        copy(
            "a",
            "1.0.0",
            Source::from_url("https://registry.npmjs.org/a/-/a-1.0.0.tgz"),
        ),
    ]
}

/// The new-source messages when `a` moves to 1.0.1 resolved from `resolved`.
fn refusals(resolved: &str, trust: &Trust) -> Vec<String> {
    let mut after = base();
    after[1] = copy("a", "1.0.1", Source::from_url(resolved));
    let d = diff(&lock(Ecosystem::Npm, base()), &lock(Ecosystem::Npm, after));
    check(&d, &[], trust)
        .findings
        .into_iter()
        .filter(|f| f.code == Code::ChangeNewSource)
        .map(|f| f.message)
        .collect()
}

#[test]
fn urls_npm_would_read_as_another_host_are_refused() {
    let trust = Trust::default();
    // npm reads the backslash as `/`: the host is evil.example, not the registry after the `@`.
    let backslash = refusals(
        "https://evil.example\\@registry.npmjs.org/a/-/a-1.0.1.tgz",
        &trust,
    );
    insta::assert_snapshot!(backslash.join("\n"));
    // `http:/host` is `http://host` to any WHATWG parser, npm's included: not a local path.
    let slash = refusals("http:/evil.example/a/-/a-1.0.1.tgz", &trust);
    insta::assert_snapshot!(slash.join("\n"));
    for (url, why) in [
        (
            "https://user:secret@registry.npmjs.org/a/-/a-1.0.1.tgz",
            "credentials in the URL",
        ),
        ("https://registry.npmjs.org /a/-/a-1.0.1.tgz", "whitespace"),
        (
            "https://registry.npmjs.org\u{7}/a/-/a-1.0.1.tgz",
            "a control character",
        ),
    ] {
        let found = refusals(url, &trust);
        assert_eq!(found.len(), 1, "{url}");
        assert!(found[0].contains(why), "{url}: {}", found[0]);
    }
    // Allowing the host the backslash hides does not admit the URL.
    let allowed = Trust::hosts(&["evil.example".into(), "registry.npmjs.org".into()]);
    assert_eq!(
        refusals(
            "https://evil.example\\@registry.npmjs.org/a/-/a-1.0.1.tgz",
            &allowed
        )
        .len(),
        1
    );
    assert!(refusals("http:/evil.example/a/-/a-1.0.1.tgz", &allowed).is_empty());
}

#[test]
fn a_local_path_admits_only_itself() {
    let found = refusals("file:../../outside", &Trust::default());
    insta::assert_snapshot!(found.join("\n"));
    assert!(refusals("packages/ws", &Trust::default()).is_empty());
}

#[test]
fn the_public_registry_and_the_configured_one_are_trusted() {
    let trust = Trust::default();
    assert!(refusals("https://registry.yarnpkg.com/a/-/a-1.0.1.tgz", &trust).is_empty());
    assert!(refusals("HTTPS://REGISTRY.NPMJS.ORG:443/a/-/a-1.0.1.tgz", &trust).is_empty());
    assert_eq!(
        refusals("https://npm.corp.example/a/-/a-1.0.1.tgz", &trust).len(),
        1
    );
    let configured = Trust {
        configured: BTreeMap::from([(Ecosystem::Npm, "npm.corp.example".to_string())]),
        ..Trust::default()
    };
    assert!(refusals("https://npm.corp.example/a/-/a-1.0.1.tgz", &configured).is_empty());
    assert_eq!(
        refusals("https://other.corp.example/a/-/a-1.0.1.tgz", &configured).len(),
        1
    );
}

/// A lock written without URLs (`omit-lockfile-registry-resolved`) gains one from the public
/// registry, or from the registry the configuration names; a host of neither is refused.
#[test]
fn a_lock_without_urls_is_compared_by_the_configured_registry() {
    let without =
        |version: &str, source: Source| lock(Ecosystem::Npm, vec![copy("a", version, source)]);
    let before = without("1.0.0", Source::Unrecorded);
    let check_after = |url: &str, trust: &Trust| {
        let after = without("1.0.1", Source::from_url(url));
        check(&diff(&before, &after), &[], trust).findings
    };
    assert!(
        check_after(
            "https://registry.npmjs.org/a/-/a-1.0.1.tgz",
            &Trust::default()
        )
        .is_empty()
    );
    let configured = Trust {
        configured: BTreeMap::from([(Ecosystem::Npm, "127.0.0.1:4873".to_string())]),
        ..Trust::default()
    };
    assert!(check_after("http://127.0.0.1:4873/a/-/a-1.0.1.tgz", &configured).is_empty());
    assert_eq!(
        check_after("http://127.0.0.1:4874/a/-/a-1.0.1.tgz", &configured).len(),
        1
    );
}

/// Only crates.io's own source ids are public: another registry on the same host is not.
#[test]
fn crates_io_is_told_by_its_source_id() {
    let crate_from = |source: &str| {
        let before = lock(Ecosystem::Cargo, vec![]);
        let after = lock(
            Ecosystem::Cargo,
            vec![copy("x", "1.0.0", Source::Registry(source.into()))],
        );
        check(&diff(&before, &after), &[], &Trust::default()).findings
    };
    assert!(crate_from("registry+https://github.com/rust-lang/crates.io-index").is_empty());
    assert!(crate_from("sparse+https://index.crates.io/").is_empty());
    assert_eq!(
        crate_from("registry+https://github.com/evil/index").len(),
        1
    );
}

#[test]
fn what_has_a_scheme_is_a_url_and_local_protocols_are_paths() {
    for (given, expected) in [
        (
            "http:/evil.example/a.tgz",
            Source::Registry("http:/evil.example/a.tgz".into()),
        ),
        (
            "HTTPS:evil.example/a.tgz",
            Source::Registry("HTTPS:evil.example/a.tgz".into()),
        ),
        ("file:../lib", Source::Path("../lib".into())),
        ("link:../lib", Source::Path("../lib".into())),
        ("portal:../lib", Source::Path("../lib".into())),
        ("packages/lib", Source::Path("packages/lib".into())),
        ("C:/lib", Source::Path("C:/lib".into())),
    ] {
        assert_eq!(Source::from_url(given), expected, "{given}");
    }
    assert_eq!(
        Source::from_url("HTTPS:evil.example/a.tgz").origin().host(),
        Some("evil.example")
    );
}

#[test]
fn git_hosts_are_read_from_every_form() {
    for (url, host) in [
        ("git+ssh://git@github.com/org/repo.git#abc", "github.com"),
        ("git+ssh://git@github.com:org/repo.git#abc", "github.com"),
        ("git+https://GitLab.com/org/repo.git", "gitlab.com"),
        ("github:org/repo#abc", "github.com"),
        ("git@bitbucket.org:org/repo.git", "bitbucket.org"),
    ] {
        assert_eq!(Source::Git(url.into()).origin().host(), Some(host), "{url}");
    }
}
