//! A cancelled CI job: SIGTERM while a test command runs. The run stops the command, writes its
//! report, summary and outputs with what had finished and the rest `cancelled`, and exits
//! non-zero within seconds.

use crate::common::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[test]
fn sigterm_during_a_test_command_writes_the_report_with_cancelled_actions() {
    let f = Fixture::new();
    let mut hang = create_mr("quartermaster/hang", &[farewell()], "batch");
    hang["test_command"] = json!("make hang");
    let issue = json!({"type": "create_issue", "title": "Never opened", "body": "After the signal.",
                       "labels": [], "confidence": 0.9});
    let plan_path = f.write_plan(&plan(vec![
        create_mr("quartermaster/cargo", &[greeting()], "batch"),
        hang,
        issue,
    ]));
    let (report, summary) = (
        f.root.path().join("report.json"),
        f.root.path().join("summary.md"),
    );
    let child = f
        .qm_process()
        .arg("run")
        .arg("--plan")
        .arg(&plan_path)
        .arg("--checkout")
        .arg(&f.checkout)
        .args([
            "--jobs",
            "1",
            "--remote",
            "origin",
            "--forge",
            "local",
            "--forge-dir",
        ])
        .arg(&f.forge)
        .arg("--report")
        .arg(&report)
        .arg("--summary")
        .arg(&summary)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let hung = hanging_test();
    let signalled = Instant::now();
    sh(f.root.path(), &format!("kill -TERM {}", child.id()));
    let out = child.wait_with_output().unwrap();
    let took = signalled.elapsed();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(took < Duration::from_secs(10), "took {took:?}: {said}");
    assert_eq!(out.status.code(), Some(128 + 15), "{said}");
    assert!(
        !processes_running("sleep 1213").contains(&hung),
        "the test command survived"
    );

    let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    the_report_says_what_finished(&f, &report);
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(
        summary.starts_with("## Quartermaster: 1 done, 0 failed, 0 skipped, 0 denied, 2 cancelled"),
        "{summary}"
    );
    assert!(
        summary.contains("**Cancelled**: the run was stopped by signal 15"),
        "{summary}"
    );
}

/// Done what finished, `cancelled` the rest, and nothing after the signal.
fn the_report_says_what_finished(f: &Fixture, report: &Value) {
    assert_eq!(report["signal"], 15);
    assert_eq!(report["exit_code"], 143);
    let statuses: Vec<&str> = report["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["done", "cancelled", "cancelled"], "{report:#}");
    let reason = report["actions"][1]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("stopped by signal 15 while it ran"),
        "{reason}"
    );
    assert_eq!(
        report["actions"][2]["reason"],
        "not started: the run was stopped by signal 15"
    );
    assert_eq!(report["summary"]["cancelled"], 2);
    assert_eq!(report["upkeep"], json!([]), "no upkeep after the signal");
    assert!(f.issues().is_empty(), "nothing opened after the signal");
    assert!(!f.branches().contains_key("quartermaster/hang"));
    assert!(f.branches().contains_key("quartermaster/cargo"));
}

/// The test command that hangs, once it runs.
fn hanging_test() -> u32 {
    first_process_running(
        "sleep 1213",
        Duration::from_secs(180),
        "the test never started",
    )
}
