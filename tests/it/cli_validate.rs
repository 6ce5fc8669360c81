//! `quartermaster validate` as a user runs it: exit codes, both output formats, stdin, missions.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use std::path::PathBuf;

fn qm() -> Command {
    let mut c = Command::cargo_bin("quartermaster").unwrap();
    c.env_remove("QM_MISSION").env_remove("QM_MISSIONS_DIR");
    c
}

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples/plans")
        .join(name)
}

fn seed_with(pointer: &str, value: Value) -> String {
    let mut plan: Value =
        serde_json::from_slice(&std::fs::read(example("seed-deps.json")).unwrap()).unwrap();
    *plan.pointer_mut(pointer).unwrap() = value;
    serde_json::to_string_pretty(&plan).unwrap()
}

#[test]
fn valid_plan_exits_zero() {
    qm().arg("validate")
        .arg(example("seed-deps.json"))
        .assert()
        .code(0)
        .stdout(predicate::str::ends_with("seed-deps.json: valid\n"));
}

#[test]
fn invalid_plan_exits_two_and_names_the_field() {
    let plan = seed_with(
        "/actions/0/commands/0",
        "go get -toolexec=/tmp/x github.com/gorilla/mux@v1.8.1".into(),
    );
    qm().args(["validate", "-"])
        .write_stdin(plan)
        .assert()
        .code(2)
        .stdout(predicate::str::contains("<stdin>: invalid, 1 error, 0 warnings"))
        .stdout(predicate::str::contains(
            "error[command.option_injection] /actions/0/commands/0: `-toolexec=/tmp/x` is an option",
        ));
}

#[test]
fn json_format_has_the_documented_shape() {
    let plan = seed_with("/actions/0/test_command", "python -c 'import os'".into());
    let out = qm()
        .args(["validate", "-", "--format", "json"])
        .write_stdin(plan)
        .assert()
        .code(2);
    let report: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(report["valid"], false);
    assert_eq!(report["warnings"], serde_json::json!([]));
    let errors = report["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["pointer"], "/actions/0/test_command");
    assert_eq!(errors[0]["code"], "test_command.inline_code");
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("python -m pytest")
    );
    assert_eq!(errors[0].as_object().unwrap().len(), 3);
}

#[test]
fn warnings_are_shown_but_the_plan_is_valid() {
    let plan = seed_with("/actions/2/labels", serde_json::json!(["a", "a"]));
    qm().args(["validate", "-"])
        .write_stdin(plan)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("<stdin>: valid, 1 warning"))
        .stdout(predicate::str::contains(
            "warning[label.duplicate] /actions/2/labels/1",
        ));
}

#[test]
fn malformed_json_reports_line_and_column() {
    qm().args(["validate", "-", "--format", "json"])
        .write_stdin("{\n  \"repo_context\": {,\n}")
        .assert()
        .code(2)
        .stdout(predicate::str::contains("\"code\": \"json.syntax\""))
        .stdout(predicate::str::contains("line 2, column 20"));
}

#[test]
fn missing_file_and_unknown_mission_are_configuration_errors() {
    qm().args(["validate", "does-not-exist.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "error: cannot read plan does-not-exist.json:",
        ));
    qm().arg("validate")
        .arg(example("seed-deps.json"))
        .args(["--mission", "nope"])
        .assert()
        .code(2)
        .stderr("error: mission: unknown mission `nope`; available: deps, docs-drift\n");
}

#[test]
fn docs_drift_mission_refuses_merge_requests() {
    qm().arg("validate")
        .arg(example("seed-deps.json"))
        .env("QM_MISSION", "docs-drift")
        .assert()
        .code(2)
        .stdout(predicate::str::contains(
            "error[mission.action_not_allowed] /actions/0/type: the docs-drift mission does not allow create_mr actions; it allows: create_issue, comment_issue, skip",
        ));
    qm().arg("validate")
        .arg(example("seed-docs-drift.json"))
        .args(["--mission", "docs-drift"])
        .assert()
        .code(0);
}

#[test]
fn custom_missions_dir_narrows_the_allowlist() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("go-only")).unwrap();
    std::fs::write(
        dir.path().join("go-only/allowlist.json"),
        r#"{"description": "Go without tidy", "action_types": ["create_mr", "update_mr", "create_issue", "comment_mr", "comment_issue", "close_mr", "skip"],
            "ecosystems": {"go": {"packages": "go-module", "versions": "go", "commands": ["go get <pkg>@<ver>"], "files": ["go.mod", "go.sum"]}}}"#,
    )
    .unwrap();
    qm().arg("validate")
        .arg(example("seed-deps.json"))
        .args(["--mission", "go-only", "--missions-dir"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stdout(predicate::str::contains(
            "error[command.not_allowlisted] /actions/0/commands/1: `mod` does not fit `get`; allowed forms for `go`: go get <pkg>@<ver>",
        ));
}
