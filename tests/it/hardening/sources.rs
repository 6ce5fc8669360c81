//! Where a pushed lock file sends every future install. A URL that npm reads as another host
//! than a naive parser does is never pushed, nor is `http:/host` taken for a local path; a lock
//! that records no URL is compared by the registry the configuration resolves to.

use crate::common::npm_registry::NpmRegistry;
use crate::common::*;
use serde_json::{Value, json};

fn async_update(branch: &str) -> Value {
    json!({
        "type": "create_mr",
        "branch": branch,
        "title": "chore(deps): update async",
        "description": "A patch release of async.",
        "updates": [{"package": "async", "from": "3.2.5", "to": "3.2.6", "update_type": "patch"}],
        "commands": ["npm update async"],
        "test_command": "npm test",
        "labels": ["dependencies"],
        "fallback_strategy": "batch",
        "confidence": 0.9
    })
}

fn npm_plan(actions: Vec<Value>) -> Value {
    plan_tested_by("npm", "package-lock.json", "npm test", actions)
}

/// Runs the async update with the operator's npmrc naming `registry`, plus `flags`.
fn update(f: &Fixture, registry: &NpmRegistry, flags: &[&str]) -> Run {
    let npmrc = format!("npmrc={}", f.npmrc(registry).display());
    f.run_with(
        &npm_plan(vec![async_update("quartermaster/async")]),
        flags,
        &[("QM_TOOL_CONFIG", &npmrc)],
    )
}

/// An npm app with async 3.2.5 locked from `registry`; with `workspace`, an npm-workspaces
/// project whose lock also has a local member (`packages/lib`, named `@app/lib`: npm records
/// a member's name, and so its path, when it is not its directory's).
fn app(f: &Fixture, registry: &NpmRegistry, workspace: bool) {
    registry.publish("3.2.5");
    f.add_npm_app(registry, &[("async", "^3.2.5")]);
    if workspace {
        let mut manifest: Value = serde_json::from_str(&f.show("main", "package.json")).unwrap();
        manifest["workspaces"] = json!(["packages/*"]);
        f.commit_file("main", "package.json", &manifest.to_string());
        let work = f.clone_main("workspace-member");
        std::fs::create_dir_all(work.join("packages/lib")).unwrap();
        std::fs::write(
            work.join("packages/lib/package.json"),
            r#"{"name": "@app/lib", "version": "1.0.0"}"#,
        )
        .unwrap();
        f.node_tool(&work, registry, &["npm", "install", "--package-lock-only"]);
        sh(
            &work,
            "git add . && git commit -qm 'a workspace member' && git push -q origin main",
        );
    }
}

/// The registry names, for async 3.2.6, `http://<evil>\@<registry>/...`: npm reads the backslash
/// as `/` and fetches from the host before it, which a hand-written parser would not see. The
/// unit is denied and nothing is pushed; the other host's log shows npm did fetch from it.
#[test]
fn a_url_npm_reads_as_another_host_is_never_pushed() {
    let Some(f) = Fixture::with_tool(&["npm", "--version"]) else {
        return;
    };
    let registry = NpmRegistry::start("async");
    app(&f, &registry, false);
    let evil = registry.mirror();
    let hidden = format!(
        "{}\\@{}async/-/async-3.2.6.tgz",
        evil.url.trim_end_matches('/'),
        registry.url.trim_start_matches("http://")
    );
    registry.publish_with_tarball("3.2.6", &hidden);
    let run = update(&f, &registry, &[]);
    assert_eq!(run.status(0), "denied", "{}", run.said());
    let reason = run.reason(0);
    assert!(
        reason.contains("[change.new_source] `async` 3.2.6 resolves from `")
            && reason.contains("(a backslash, which URL parsers read as `/`)"),
        "{reason}"
    );
    assert!(!f.branches().contains_key("quartermaster/async"));
    // The attack ran: npm fetched the tarball from the host the backslash hid.
    let fetched = evil.requests.lock().unwrap().clone();
    assert!(
        fetched.iter().any(|p| p.ends_with("/async-3.2.6.tgz")),
        "{fetched:?}"
    );
}

/// `http:/<host>/...` is `http://<host>/...` to npm; a lock of npm workspaces already has local
/// paths, so reading it as one would admit the host. Denied; allowed as a registry host (the
/// positive control), the same update is pushed with that URL in its lock.
#[test]
fn a_url_missing_a_slash_is_not_a_local_path() {
    let Some(f) = Fixture::with_tool(&["npm", "--version"]) else {
        return;
    };
    let registry = NpmRegistry::start("async");
    app(&f, &registry, true);
    let evil = registry.mirror();
    let host = evil.url.trim_start_matches("http://").trim_end_matches('/');
    let url = format!("http:/{host}/async/-/async-3.2.6.tgz");
    registry.publish_with_tarball("3.2.6", &url);
    let run = update(&f, &registry, &[]);
    assert_eq!(run.status(0), "denied", "{}", run.said());
    assert!(
        run.reason(0)
            .contains(&format!("`async` 3.2.6 now resolves from {host} ({url})")),
        "{}",
        run.reason(0)
    );
    assert!(!f.branches().contains_key("quartermaster/async"));
    let allowed = update(&f, &registry, &["--registry-host", host]);
    assert_eq!(allowed.status(0), "done", "{}", allowed.said());
    let lock = f.show("quartermaster/async", "package-lock.json");
    assert!(lock.contains(&format!("\"resolved\": \"{url}\"")), "{lock}");
}

/// A team commits its lock without URLs (`omit-lockfile-registry-resolved` in its own npm
/// configuration); the unit's npm, without that setting, records the public registry's URL for
/// the updated entry (npm fetches it from the configured registry, `replace-registry-host`). The
/// public registry is trusted and a URL-less lock is compared by the configured registry: the
/// update lands.
#[test]
fn a_lock_without_urls_updated_from_the_public_registry_lands() {
    let Some(f) = Fixture::with_tool(&["npm", "--version"]) else {
        return;
    };
    let registry = NpmRegistry::start("async");
    app(&f, &registry, false);
    let mut lock: Value = serde_json::from_str(&f.show("main", "package-lock.json")).unwrap();
    for entry in lock["packages"].as_object_mut().unwrap().values_mut() {
        entry.as_object_mut().unwrap().remove("resolved");
    }
    f.commit_file(
        "main",
        "package-lock.json",
        &serde_json::to_string_pretty(&lock).unwrap(),
    );
    let public = "https://registry.npmjs.org/async/-/async-3.2.6.tgz";
    registry.publish_with_tarball("3.2.6", public);
    let run = update(&f, &registry, &[]);
    assert_eq!(run.status(0), "done", "{}", run.said());
    let pushed = f.show("quartermaster/async", "package-lock.json");
    assert!(
        pushed.contains(&format!("\"resolved\": \"{public}\"")),
        "{pushed}"
    );
    assert!(!run.said().contains("change.new_source"), "{}", run.said());
}
