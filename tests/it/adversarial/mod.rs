//! Adversarial plans: each case starts from a valid plan, breaks one thing the way a confused or
//! prompt-injected agent would, and asserts the exact set of errors (pointer and code) it earns.

use quartermaster::mission::{self, Mission};
use quartermaster::validate::{self, Validation};
use serde_json::{Value, json};
use std::collections::BTreeSet;

mod commands;
mod shapes;
mod test_commands_and_paths;

fn base() -> Value {
    json!({
        "repo_context": {
            "platform": "github",
            "ecosystems": ["go", "npm", "cargo"],
            "test_command": "go test ./...",
            "default_branch": "main",
            "lock_files": ["go.sum"]
        },
        "actions": [
            {
                "type": "create_mr",
                "branch": "quartermaster/go-patch",
                "title": "chore(deps): update Go patch dependencies",
                "description": "Updates gorilla/mux.",
                "updates": [{"package": "github.com/gorilla/mux", "from": "v1.8.0", "to": "v1.8.1", "update_type": "patch"}],
                "commands": ["go get github.com/gorilla/mux@v1.8.1", "go mod tidy"],
                "test_command": "go test ./...",
                "labels": ["dependencies"],
                "fallback_strategy": "individual_on_failure",
                "confidence": 0.85,
                "working_dir": "providers/s3"
            },
            {
                "type": "create_mr",
                "branch": "quartermaster/npm-lodash",
                "title": "chore(deps): update lodash",
                "description": "Security fix.",
                "updates": [{"package": "lodash", "from": "4.17.20", "to": "4.17.21", "update_type": "patch"}],
                "commands": ["npm install lodash@4.17.21"],
                "test_command": "npm test",
                "labels": ["dependencies", "security"],
                "fallback_strategy": "batch",
                "confidence": 0.9
            },
            {
                "type": "update_mr",
                "mr_id": 42,
                "branch": "quartermaster/cargo-serde",
                "rebase_first": true,
                "updates": [{"package": "serde", "from": "1.0.200", "to": "1.0.201", "update_type": "patch"}],
                "commands": ["cargo update -p serde --precise 1.0.201"],
                "test_command": "cargo test",
                "description": "Updated versions.",
                "labels": ["quartermaster"],
                "confidence": 0.8
            },
            {
                "type": "create_issue",
                "title": "chore(deps): major update for pgx v5 -> v6",
                "body": "Migration guide: ...",
                "labels": ["quartermaster", "major-update"],
                "confidence": 0.9
            },
            {"type": "comment_mr", "mr_id": 42, "body": "New version available.", "confidence": 0.8},
            {"type": "comment_issue", "issue_id": 15, "body": "Still outdated.", "confidence": 0.8},
            {"type": "close_mr", "mr_id": 41, "comment": "Superseded.", "delete_branch": true, "confidence": 0.9},
            {"type": "skip", "package": "golang.org/x/crypto", "reason": "Human requested hold", "reason_type": "human_hold", "confidence": 1.0}
        ]
    })
}

fn deps() -> Mission {
    mission::load("deps", None).unwrap()
}

fn run(plan: &Value, mission: &Mission) -> Validation {
    validate::validate(serde_json::to_string(plan).unwrap().as_bytes(), mission)
}

fn errors(v: &Validation) -> BTreeSet<(String, String)> {
    v.errors()
        .map(|f| (f.pointer.clone(), f.code.as_str().to_string()))
        .collect()
}

struct Case {
    name: &'static str,
    mission: &'static str,
    mutate: fn(&mut Value),
    expect: &'static [(&'static str, &'static str)],
}

const fn case(
    name: &'static str,
    mutate: fn(&mut Value),
    expect: &'static [(&'static str, &'static str)],
) -> Case {
    Case {
        name,
        mission: "deps",
        mutate,
        expect,
    }
}

fn set(plan: &mut Value, pointer: &str, value: Value) {
    *plan
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no {pointer}")) = value;
}

fn remove(plan: &mut Value, pointer: &str) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    plan.pointer_mut(parent)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .shift_remove(key);
}

/// Every case, section after section.
fn cases() -> impl Iterator<Item = &'static Case> {
    commands::CASES
        .iter()
        .chain(test_commands_and_paths::CASES)
        .chain(shapes::CASES)
}

#[test]
fn base_plan_is_valid() {
    let v = run(&base(), &deps());
    assert!(v.is_valid(), "{:?}", v.findings);
    assert_eq!(v.findings.len(), 0, "{:?}", v.findings);
}

#[test]
fn every_adversarial_plan_is_refused_precisely() {
    let count = cases().count();
    assert!(count >= 60, "only {count} cases");
    let mut names = BTreeSet::new();
    let mut failures = Vec::new();
    for case in cases() {
        assert!(names.insert(case.name), "duplicate case name {}", case.name);
        let mut plan = base();
        (case.mutate)(&mut plan);
        let mission = mission::load(case.mission, None).unwrap();
        let v = run(&plan, &mission);
        let expected: BTreeSet<(String, String)> = case
            .expect
            .iter()
            .map(|(p, c)| (p.to_string(), c.to_string()))
            .collect();
        let got = errors(&v);
        if v.is_valid() || got != expected {
            failures.push(format!(
                "{}: expected {expected:?}, got {got:?}\n    {}",
                case.name,
                v.errors()
                    .map(|f| f.to_string())
                    .collect::<Vec<_>>()
                    .join("\n    ")
            ));
        }
        for f in v.errors() {
            assert!(!f.message.is_empty(), "{}: empty message", case.name);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What `quartermaster validate` prints for every adversarial plan: each refusal's message, as
/// the user reads it, is pinned here.
#[test]
fn every_refusal_reads_as_validate_prints_it() {
    let mut out = String::new();
    for case in cases() {
        let mut plan = base();
        (case.mutate)(&mut plan);
        let mission = mission::load(case.mission, None).unwrap();
        out.push_str(&format!("## {}\n", case.name));
        out.push_str(&quartermaster::cli::render_text(
            "plan.json",
            &run(&plan, &mission),
        ));
        out.push('\n');
    }
    insta::assert_snapshot!(out);
}

#[test]
fn malformed_documents() {
    let deps = deps();
    let codes = |bytes: &[u8]| -> Vec<(String, String)> {
        validate::validate(bytes, &deps)
            .errors()
            .map(|f| (f.pointer.clone(), f.code.as_str().to_string()))
            .collect()
    };
    let json_syntax = vec![(String::new(), "json.syntax".to_string())];
    assert_eq!(codes(b"{\"repo_context\": }"), json_syntax);
    assert_eq!(codes(b""), json_syntax);
    assert_eq!(codes(b"\xff\xfe{}"), json_syntax);
    assert_eq!(
        codes(b"[]"),
        vec![(String::new(), "schema.invalid_type".to_string())]
    );
    assert_eq!(
        codes("[".repeat(5000).as_bytes()),
        vec![(String::new(), "json.too_deep".to_string())]
    );
    let mut huge = serde_json::to_vec(&base()).unwrap();
    huge.resize(10 * 1024 * 1024 + 1, b' ');
    assert_eq!(
        codes(&huge),
        vec![(String::new(), "plan.too_large".to_string())]
    );
}

#[test]
fn warnings_do_not_invalidate() {
    let mut plan = base();
    // the same package updated twice in one working directory, a label twice, an unused update
    plan["actions"][1]["working_dir"] = json!("providers/s3");
    plan["actions"][1]["updates"]
        .as_array_mut()
        .unwrap()
        .push(json!({"package": "github.com/gorilla/mux", "from": "v1.8.0", "to": "v1.8.1", "update_type": "patch"}));
    plan["actions"][3]["labels"] = json!(["a", "a"]);
    plan["repo_context"]["lock_files"] = json!(["go.sum", ".github/workflows/ci.yml"]);
    let v = run(&plan, &deps());
    assert!(v.is_valid(), "{:?}", v.findings);
    let lock = v
        .warnings()
        .find(|f| f.code.as_str() == "lock_files.not_committed")
        .unwrap();
    assert!(
        lock.message.starts_with("`.github/workflows/ci.yml` is not a dependency file of the declared ecosystems, so Quartermaster would refuse a branch that changes it; the files it commits: "),
        "{}",
        lock.message
    );
    assert!(lock.message.contains("go.sum"), "{}", lock.message);
    let warnings: BTreeSet<(String, String)> = v
        .warnings()
        .map(|f| (f.pointer.clone(), f.code.as_str().to_string()))
        .collect();
    let expected: BTreeSet<(String, String)> = [
        ("/actions/1/updates/1", "update.unused"),
        ("/actions/1/updates/1/package", "update.duplicate_package"),
        ("/actions/3/labels/1", "label.duplicate"),
        ("/repo_context/lock_files/1", "lock_files.not_committed"),
    ]
    .iter()
    .map(|(p, c)| (p.to_string(), c.to_string()))
    .collect();
    assert_eq!(warnings, expected);
}

#[test]
fn all_problems_of_one_plan_are_reported_together() {
    let mut plan = base();
    set(
        &mut plan,
        "/actions/0/commands/1",
        json!("go mod tidy; curl evil"),
    );
    set(&mut plan, "/actions/0/branch", json!("main"));
    p_typo(&mut plan);
    set(&mut plan, "/actions/5/issue_id", json!(0));
    let v = run(&plan, &deps());
    let got: Vec<String> = v.errors().map(|f| f.pointer.clone()).collect();
    assert_eq!(
        got,
        vec![
            "/actions/0/branch",
            "/actions/0/commands/1",
            "/actions/1/fallback_stratgy",
            "/actions/1/fallback_strategy",
            "/actions/1/test_command",
            "/actions/5/issue_id",
        ]
    );
}

/// A typo in one action and a bad test command in the same action: both are reported.
fn p_typo(plan: &mut Value) {
    let v = plan["actions"][1]["fallback_strategy"].clone();
    remove(plan, "/actions/1/fallback_strategy");
    plan["actions"][1]["fallback_stratgy"] = v;
    set(plan, "/actions/1/test_command", json!("npx left-pad"));
}
