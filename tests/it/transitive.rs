//! Legitimate updates wherever the lock holds them: a member's dependency in a Cargo virtual
//! workspace, a transitive package declared in the plan (cargo, npm), one of two versions of a
//! crate; and a plan that names the wrong ecosystem is told so.

use crate::common::npm_registry::NpmRegistry;
use crate::common::*;
use serde_json::{Value, json};

/// Adds `files` to the default branch, then a Cargo.lock for `dir` resolved against the local
/// registry, with `pins` (`cargo update` arguments) applied.
fn add_cargo_project(f: &Fixture, dir: &str, files: &[(&str, &str)], pins: &[&[&str]]) {
    let work = f.clone_main(&format!("work-{dir}"));
    for (path, text) in files {
        let path = work.join(dir).join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let project = work.join(dir);
    f.cargo(&project, &["generate-lockfile", "--quiet"]);
    for pin in pins {
        f.cargo(&project, pin);
    }
    sh(
        &work,
        &format!("git add . && git commit -qm '{dir}' && git push -q origin main"),
    );
    sh(&f.checkout, "git pull -q");
}

fn package(name: &str, dependencies: &str) -> String {
    format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n{dependencies}"
    )
}

/// A `create_mr` in `dir` of one update (`package`, `from` → `to`) by `command`, tested with
/// `make check`.
fn update_in(dir: &str, (package, from, to): (&str, &str, &str), command: &str) -> Value {
    let mut a = create_mr(&format!("quartermaster/{dir}"), &[], "batch");
    a["updates"] = json!([{"package": package, "from": from, "to": to, "update_type": "patch"}]);
    a["commands"] = json!([command]);
    a["working_dir"] = json!(dir);
    a["test_command"] = json!("make check");
    a
}

const CHECK: (&str, &str) = ("Makefile", "check:\n\ttrue\n");

/// The PR body and the commit message of `branch`.
fn texts(f: &Fixture, branch: &str) -> (String, String) {
    let body = f
        .pulls()
        .iter()
        .find(|p| p["head"] == branch)
        .map(|p| p["body"].as_str().unwrap().to_string())
        .unwrap_or_default();
    (
        body,
        sh(&f.remote, &format!("git log -1 --format=%B {branch}")),
    )
}

/// chmln/sd's anyhow PR said "1 transitive change: anyhow": in a virtual workspace whose member
/// uses greeting, greeting's update is the PR's subject, not a transitive change.
#[test]
fn a_virtual_workspace_members_dependency_is_direct() {
    let f = Fixture::new();
    let members = "[workspace]\nresolver = \"2\"\nmembers = [\"app\", \"tool\"]\n";
    add_cargo_project(
        &f,
        "ws",
        &[
            ("Cargo.toml", members),
            ("app/Cargo.toml", &package("app", "greeting = \"1.0\"\n")),
            ("app/src/lib.rs", "pub use greeting::greet;\n"),
            ("tool/Cargo.toml", &package("tool", "farewell = \"2.0\"\n")),
            ("tool/src/lib.rs", "pub use farewell::bye;\n"),
            CHECK,
        ],
        &[
            &["update", "--quiet", "-p", "greeting", "--precise", "1.0.0"],
            &["update", "--quiet", "-p", "farewell", "--precise", "2.0.0"],
        ],
    );
    let action = update_in(
        "ws",
        ("greeting", "1.0.0", "1.0.1"),
        "cargo update -p greeting --precise 1.0.1",
    );
    let run = f.run(&plan(vec![action]), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let (body, message) = texts(&f, "quartermaster/ws");
    assert!(
        body.contains(
            "| [`greeting`](https://crates.io/crates/greeting/1.0.1) | `1.0.0` → `1.0.1` | patch |"
        ),
        "{body}"
    );
    assert!(!body.contains("transitive"), "{body}");
    assert!(!message.contains("transitive"), "{message}");
}

/// `cargo update -p leaf --precise 1.0.1` of a crate the project has only through `middle`.
#[test]
fn a_declared_transitive_crate_lands() {
    let f = Fixture::new();
    f.publish("leaf", "1.0.0", "pub fn leaf() {}");
    f.publish_with(
        "middle",
        "1.0.0",
        "pub use leaf::leaf;",
        &[("leaf", "^1.0")],
    );
    add_cargo_project(
        &f,
        "deep",
        &[
            ("Cargo.toml", &package("deep", "middle = \"1\"\n")),
            ("src/lib.rs", "pub use middle::leaf;\n"),
            CHECK,
        ],
        &[],
    );
    f.publish("leaf", "1.0.1", "/// Leaf.\npub fn leaf() {}");
    let action = update_in(
        "deep",
        ("leaf", "1.0.0", "1.0.1"),
        "cargo update -p leaf --precise 1.0.1",
    );
    let run = f.run(&plan(vec![action]), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let (body, message) = texts(&f, "quartermaster/deep");
    assert!(
        body.contains(
            "| [`leaf`](https://crates.io/crates/leaf/1.0.1) | `1.0.0` → `1.0.1` | patch |"
        ),
        "{body}"
    );
    assert!(!body.contains("transitive"), "{body}");
    assert!(message.contains("- leaf: 1.0.0 -> 1.0.1\n\n"), "{message}");
}

/// A lock holding `syntax` 0.6.0 (through legacy) and 0.8.0 (through modern), with 0.8.1
/// released since; the update of the 0.8 copy.
fn two_versions(f: &Fixture) -> (&'static str, &'static str, &'static str) {
    for version in ["0.6.0", "0.8.0"] {
        f.publish("syntax", version, "pub fn parse() {}");
    }
    f.publish_with("legacy", "1.0.0", "", &[("syntax", "0.6")]);
    f.publish_with("modern", "1.0.0", "", &[("syntax", "0.8")]);
    let deps = "legacy = \"1\"\nmodern = \"1\"\n";
    add_cargo_project(
        f,
        "two",
        &[
            ("Cargo.toml", &package("two", deps)),
            ("src/lib.rs", ""),
            CHECK,
        ],
        &[],
    );
    f.publish("syntax", "0.8.1", "/// Parses.\npub fn parse() {}");
    ("syntax", "0.8.0", "0.8.1")
}

/// `quartermaster validate PLAN`, with `--checkout` when given: the exit code and what it printed.
fn validate(
    f: &Fixture,
    plan: &Value,
    checkout: Option<&std::path::Path>,
) -> (Option<i32>, String) {
    let path = f.write_plan(plan);
    let mut cmd = f.qm();
    cmd.arg("validate").arg(&path);
    if let Some(dir) = checkout {
        cmd.arg("--checkout").arg(dir);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// `-p syntax` cannot say which copy to move: `validate` given the checkout refuses it with the
/// form cargo asks for, and so does the run, before any command.
#[test]
fn a_crate_locked_twice_named_alone_is_refused_with_the_form_to_use() {
    let f = Fixture::new();
    let update = two_versions(&f);
    let plain = plan(vec![update_in(
        "two",
        update,
        "cargo update -p syntax --precise 0.8.1",
    )]);
    let message = "`syntax` is locked at 2 versions in two/Cargo.lock (0.6.0, 0.8.0), so `cargo update -p syntax --precise 0.8.1` cannot tell which one to update: name the copy as cargo asks, `cargo update -p syntax@0.8.0 --precise 0.8.1`, with the update's `from` the locked version to move";
    assert_eq!(
        validate(&f, &plain, None).0,
        Some(0),
        "without the checkout, nothing tells"
    );
    let (code, text) = validate(&f, &plain, Some(&f.checkout));
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains(&format!(
            "error[command.ambiguous_package] /actions/0/commands/0: {message}"
        )),
        "{text}"
    );
    let run = f.run(&plain, &[]);
    assert_eq!(run.status(0), "failed", "{}", run.said());
    assert_eq!(
        run.reason(0),
        format!("[command.ambiguous_package] {message}; nothing ran")
    );
    assert_eq!(run.action(0)["commands"], json!([]), "no command ran");
}

/// `cargo update -p syntax@0.8.0 --precise 0.8.1` (the form cargo asks for) validates, runs, and
/// its PR states the 0.8 copy's versions; the 0.6 copy stays.
#[test]
fn a_crate_locked_twice_is_updated_by_the_copy_it_names() {
    let f = Fixture::new();
    let update = two_versions(&f);
    let named = plan(vec![update_in(
        "two",
        update,
        "cargo update -p syntax@0.8.0 --precise 0.8.1",
    )]);
    let (code, text) = validate(&f, &named, Some(&f.checkout));
    assert_eq!(code, Some(0), "{text}");
    let run = f.run(&named, &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let (body, message) = texts(&f, "quartermaster/two");
    assert!(
        body.contains(
            "| [`syntax`](https://crates.io/crates/syntax/0.8.1) | `0.8.0` → `0.8.1` | patch |"
        ),
        "{body}"
    );
    assert!(!body.contains("transitive"), "{body}");
    assert!(message.contains("- syntax: 0.8.0 -> 0.8.1\n"), "{message}");
    let lock = f.show("quartermaster/two", "two/Cargo.lock");
    assert!(
        lock.contains("name = \"syntax\"\nversion = \"0.6.0\""),
        "{lock}"
    );
}

/// A node app whose package-lock.json has `parent` 1.0.0 and, through it, `child` 1.0.0.
fn node_app(f: &Fixture, lock: &[&str]) -> NpmRegistry {
    let registry = NpmRegistry::start("parent");
    registry.publish_package("child", "1.0.0", json!({}));
    registry.publish_package(
        "parent",
        "1.0.0",
        json!({"dependencies": {"child": "^1.0.0"}}),
    );
    f.add_node_app(&registry, &[("parent", "^1.0.0")], &[lock]);
    registry.publish_package("child", "1.0.1", json!({}));
    registry
}

fn npm_plan(ecosystem: &str, package: &str, command: &str) -> Value {
    let mut a = create_mr("quartermaster/node", &[], "batch");
    a["updates"] =
        json!([{"package": package, "from": "1.0.0", "to": "1.0.1", "update_type": "patch"}]);
    a["commands"] = json!([command]);
    a["test_command"] = json!("npm test");
    let mut plan = plan(vec![a]);
    plan["repo_context"]["ecosystems"] = json!([ecosystem]);
    plan["repo_context"]["test_command"] = json!("npm test");
    plan["repo_context"]["lock_files"] = json!([]);
    plan
}

fn run_npm(f: &Fixture, registry: &NpmRegistry, plan: &Value) -> Run {
    let npmrc = format!("npmrc={}", f.npmrc(registry).display());
    f.run_with(plan, &[], &[("QM_TOOL_CONFIG", &npmrc)])
}

/// `npm update child` of a package the app has only through `parent`: valid, and it lands, its PR
/// stating package-lock.json's versions (it was refused as "not a dependency the project
/// declares").
#[test]
fn npm_update_of_a_transitive_package_lands() {
    let Some(f) = Fixture::with_tool(&["npm", "--version"]) else {
        return;
    };
    let registry = node_app(&f, &["npm", "install", "--package-lock-only"]);
    let plan = npm_plan("npm", "child", "npm update child");
    let (code, text) = validate(&f, &plan, None);
    assert_eq!(code, Some(0), "{text}");
    let run = run_npm(&f, &registry, &plan);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(
        sh(&f.remote, "git diff --name-only main quartermaster/node"),
        "package-lock.json"
    );
    let (body, message) = texts(&f, "quartermaster/node");
    assert!(
        body.contains("| `child` | `1.0.0` → `1.0.1` | patch |"),
        "{body}"
    );
    assert!(!body.contains("transitive"), "{body}");
    assert!(message.contains("- child: 1.0.0 -> 1.0.1\n\n"), "{message}");
}

/// An npm plan in a pnpm project is told that the project is pnpm's, before anything runs.
#[test]
fn a_plan_naming_the_wrong_ecosystem_is_told_so() {
    let Some(f) = Fixture::with_tool(&["pnpm", "--version"]) else {
        return;
    };
    let registry = node_app(&f, &["pnpm", "install", "--lockfile-only"]);
    let run = run_npm(
        &f,
        &registry,
        &npm_plan("npm", "parent", "npm update parent"),
    );
    assert_eq!(run.status(0), "failed", "{}", run.said());
    assert_eq!(
        run.reason(0),
        "[ecosystem.mismatch] npm: no package-lock.json in . or a parent directory up to the repository root, but pnpm-lock.yaml is there: this is a pnpm project; write the plan's commands for pnpm and declare `pnpm` in repo_context.ecosystems; nothing ran"
    );
    assert_eq!(run.action(0)["commands"], json!([]), "no command ran");
}
