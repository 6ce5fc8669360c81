//! The README's end-to-end command, `examples/demo.sh`, run as a newcomer would (with the binary
//! under test instead of a fresh release build).

use std::path::Path;
use std::process::Command;

#[test]
fn the_demo_runs_end_to_end() {
    let out_dir = tempfile::tempdir().unwrap();
    let stdout = run_the_demo(out_dir.path());
    assert_the_demo_said(&stdout, out_dir.path());
    // Each row says what its action is about.
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("| # | Action"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    insta::assert_snapshot!(table.join("\n"));
    assert_the_forge_holds_the_pr(out_dir.path());
}

/// Runs the demo into `out_dir`; what it printed.
fn run_the_demo(out_dir: &Path) -> String {
    let out = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/demo.sh"))
        .env("QM_BIN", env!("CARGO_BIN_EXE_quartermaster"))
        .env("QM_DEMO_DIR", out_dir)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITLAB_CI")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    stdout.into_owned()
}

fn assert_the_demo_said(stdout: &str, out_dir: &Path) {
    assert!(
        stdout.contains("quartermaster/cargo-patch-updates--greeting"),
        "{stdout}"
    );
    assert!(
        stdout.contains("forge/pulls/1.json: chore(deps): update greeting from 1.0.0 to 1.0.1"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "forge/issues/2.json: chore(deps): farewell 2.0.1 changes the output of bye()"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("forge/issues/3.json: Dependency dashboard"),
        "{stdout}"
    );
    let origin = Command::new("git")
        .arg("-C")
        .arg(out_dir.join("remote.git"))
        .args(["branch", "--list", "quartermaster/*"])
        .output()
        .unwrap();
    assert!(
        origin.stdout.is_empty(),
        "the checkout's origin got no branch"
    );
    assert!(
        stdout.contains("## Quartermaster: 1 done, 0 failed, 1 skipped, 0 denied, 1 partial"),
        "{stdout}"
    );
}

/// The report, the PR the local forge holds, and the branch's lock file agree.
fn assert_the_forge_holds_the_pr(out_dir: &Path) {
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        report["summary"],
        serde_json::json!({"done": 1, "failed": 0, "skipped": 1, "denied": 0, "partial": 1})
    );
    assert_eq!(report["exit_code"], 1);
    let pull: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("forge/pulls/1.json")).unwrap())
            .unwrap();
    let body = pull["body"].as_str().unwrap();
    assert!(
        body.contains(
            "| [`greeting`](https://crates.io/crates/greeting/1.0.1) | `1.0.0` → `1.0.1` | patch |"
        ),
        "the PR states what Cargo.lock shows: {body}"
    );
    let lock = Command::new("git")
        .arg("-C")
        .arg(out_dir.join("forge/remote.git"))
        .args([
            "show",
            "quartermaster/cargo-patch-updates--greeting:Cargo.lock",
        ])
        .output()
        .unwrap();
    let lock = String::from_utf8_lossy(&lock.stdout);
    assert!(
        lock.contains("name = \"greeting\"\nversion = \"1.0.1\""),
        "{lock}"
    );
}

/// The demo's one slow step, the release build, shows cargo's progress and is announced first.
#[test]
fn the_demo_says_it_builds_once_and_shows_the_build() {
    let script =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/demo.sh")).unwrap();
    let build = script
        .lines()
        .position(|l| l.trim_start().starts_with("cargo build --release"))
        .unwrap();
    let lines: Vec<&str> = script.lines().collect();
    assert!(!lines[build].contains("--quiet"), "{}", lines[build]);
    let announced = lines[..build].join("\n");
    assert!(
        announced.contains("building Quartermaster in release mode: once"),
        "{announced}"
    );
}
