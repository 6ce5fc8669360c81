//! Lock maintenance: an action that refreshes a whole lock file declares one
//! `lock_file_maintenance` update naming it, and only such an action may run a command that
//! refreshes every package (`cargo update`). What the PR lists comes from the lock file.

use crate::common::gem_source::GemSource;
use crate::common::npm_registry::NpmRegistry;
use crate::common::*;
use serde_json::{Value, json};

fn refresh(lock: &str) -> Value {
    json!({"package": lock, "from": "2026-11-18", "to": "2026-11-25", "update_type": "lock_file_maintenance"})
}

/// `quartermaster validate` of a plan of `action`: its exit code and what it printed.
fn validate(f: &Fixture, action: Value) -> (Option<i32>, String) {
    let path = f.write_plan(&plan(vec![action]));
    let out = f.qm().arg("validate").arg(&path).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A `make ok` target, so that farewell 2.0.1 (which breaks `cargo test`) does not fail the unit.
fn add_ok_target(f: &Fixture) {
    let makefile = f.show("main", "Makefile") + "\nok:\n\ttrue\n";
    f.commit_file("main", "Makefile", &makefile);
}

#[test]
fn a_lock_refresh_states_every_package_the_lock_moved() {
    let f = Fixture::new();
    add_ok_target(&f);
    let mut action = create_mr(
        "quartermaster/lock-maintenance",
        &[refresh("Cargo.lock")],
        "batch",
    );
    action["title"] = json!("chore(deps): lock file maintenance");
    action["commands"] = json!(["cargo update"]);
    action["test_command"] = json!("make ok");
    let run = f.run(&plan(vec![action]), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(run.status(0), "done", "{}", run.reason(0));
    let lock = f.show("quartermaster/lock-maintenance", "Cargo.lock");
    assert!(
        lock.contains("name = \"greeting\"\nversion = \"1.0.1\""),
        "{lock}"
    );
    assert!(
        lock.contains("name = \"farewell\"\nversion = \"2.0.1\""),
        "{lock}"
    );
    let body = f.pulls()[0]["body"].as_str().unwrap().to_string();
    assert!(
        body.contains(
            "| `Cargo.lock` | refreshed | lock_file_maintenance |\n\
             | [`farewell`](https://crates.io/crates/farewell/2.0.1) | `2.0.0` → `2.0.1` | lock_file_maintenance |\n\
             | [`greeting`](https://crates.io/crates/greeting/1.0.1) | `1.0.0` → `1.0.1` | lock_file_maintenance |\n"
        ),
        "{body}"
    );
    assert!(!body.contains("2026-11"), "{body}");
    let message = sh(
        &f.remote,
        "git log -1 --format=%B quartermaster/lock-maintenance",
    );
    assert!(
        message.contains(
            "- Cargo.lock: refreshed\n- farewell: 2.0.0 -> 2.0.1\n- greeting: 1.0.0 -> 1.0.1\n"
        ),
        "{message}"
    );
}

#[test]
fn a_lock_refresh_outside_a_lock_maintenance_action_is_refused() {
    let f = Fixture::new();
    let mut action = create_mr("quartermaster/cargo", &[greeting()], "batch");
    action["commands"] = json!(["cargo update -p greeting", "cargo update"]);
    let (code, text) = validate(&f, action);
    assert_eq!(code, Some(2));
    assert!(
        text.contains("error[command.needs_lock_maintenance] /actions/0/commands/1: `cargo update` refreshes every package of the cargo lock file, and no update of this action declares that: only an update with update_type `lock_file_maintenance` whose package names the lock file (Cargo.lock, Cargo.toml) allows it"),
        "{text}"
    );
}

#[test]
fn a_lock_maintenance_update_without_its_command_is_flagged() {
    let f = Fixture::new();
    let mut action = create_mr(
        "quartermaster/cargo",
        &[greeting(), refresh("Cargo.lock")],
        "batch",
    );
    action["commands"] = json!(["cargo update -p greeting"]);
    let (_, text) = validate(&f, action);
    assert!(
        text.contains("warning[update.unused] /actions/0/updates/1: no lock-maintenance command refreshes `Cargo.lock`; add one (`cargo update`, `npm update`, ...) or drop the update"),
        "{text}"
    );
}

/// Split, the refresh runs in the lock-maintenance unit alone: greeting's unit moves greeting
/// only, so its PR does not carry farewell.
#[test]
fn split_units_run_the_refresh_only_in_the_lock_maintenance_unit() {
    let f = Fixture::new();
    add_ok_target(&f);
    let mut action = create_mr(
        "quartermaster/cargo",
        &[greeting(), refresh("Cargo.lock")],
        "individual",
    );
    action["commands"] = json!(["cargo update -p greeting", "cargo update"]);
    action["test_command"] = json!("make ok");
    let run = f.run(&plan(vec![action]), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let pulls = f.pulls();
    assert_eq!(pulls.len(), 2, "{}", run.said());
    let greeting_pr = pulls
        .iter()
        .find(|p| p["title"].as_str().unwrap().contains("greeting"))
        .unwrap();
    let body = greeting_pr["body"].as_str().unwrap();
    assert!(body.contains("`1.0.0` → `1.0.1`"), "{body}");
    assert!(!body.contains("farewell"), "{body}");
}

/// `npm update` with no package, against the registry stand-in: package-lock.json moves async
/// within its range, and package.json stays as it was.
#[test]
fn npm_update_refreshes_package_lock_json() {
    let Some(f) = Fixture::with_tool(&["npm", "--version"]) else {
        return;
    };
    let registry = NpmRegistry::async_app(&f);
    let mut action = create_mr(
        "quartermaster/npm-lock",
        &[refresh("package-lock.json")],
        "batch",
    );
    action["commands"] = json!(["npm update"]);
    action["test_command"] = json!("npm test");
    let mut plan = plan(vec![action]);
    plan["repo_context"]["ecosystems"] = json!(["npm"]);
    plan["repo_context"]["test_command"] = json!("npm test");
    let npmrc = format!("npmrc={}", f.npmrc(&registry).display());
    let run = f.run_with(&plan, &[], &[("QM_TOOL_CONFIG", &npmrc)]);
    assert_eq!(run.code, 0, "{}", run.said());
    let body = f.pulls()[0]["body"].as_str().unwrap().to_string();
    assert!(
        body.contains("| `package-lock.json` | refreshed | lock_file_maintenance |\n"),
        "{body}"
    );
    assert!(
        body.contains("`3.2.5` → `3.2.6` | lock_file_maintenance |"),
        "{body}"
    );
    assert_eq!(
        f.show("quartermaster/npm-lock", "package.json"),
        f.show("main", "package.json")
    );
}

/// `bundle update` with no gem runs as `bundle lock --update`, against the gem source stand-in:
/// Gemfile.lock moves lib within `~> 1.0`, and the Gemfile stays as it was.
#[test]
fn bundle_update_refreshes_gemfile_lock() {
    let Some(f) = Fixture::with_tool(&["bundle", "--version"]) else {
        return;
    };
    let source = GemSource::lib_app(&f);
    source.publish("1.0.1");
    let mut action = create_mr(
        "quartermaster/gems-lock",
        &[refresh("Gemfile.lock")],
        "batch",
    );
    action["commands"] = json!(["bundle update"]);
    action["test_command"] = json!("make gems");
    let plan = plan_tested_by("bundle", "Gemfile.lock", "make gems", vec![action]);
    let run = f.run(&plan, &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let body = f.pulls()[0]["body"].as_str().unwrap().to_string();
    assert!(
        body.contains("| `Gemfile.lock` | refreshed | lock_file_maintenance |\n"),
        "{body}"
    );
    assert!(
        body.contains("`1.0.0` → `1.0.1` | lock_file_maintenance |"),
        "{body}"
    );
    let before = f.show("main", "Gemfile.lock");
    assert_eq!(
        f.show("quartermaster/gems-lock", "Gemfile.lock"),
        before.replace("    lib (1.0.0)", "    lib (1.0.1)")
    );
    assert_eq!(
        f.show("quartermaster/gems-lock", "Gemfile"),
        f.show("main", "Gemfile")
    );
}
