//! The local forge stays local: without `--remote`, branches go to a bare repository of its own
//! in the forge directory, which follows the checkout's branches; never to the checkout's remote.

use crate::common::*;
use serde_json::Value;

/// A run on the local forge with these extra flags; its exit code and report.
fn run(f: &Fixture, extra: &[&str]) -> (i32, Value, String) {
    let plan = f.write_plan(&one_pr());
    let report = f.root.path().join("local-report.json");
    let _ = std::fs::remove_file(&report);
    let out = f
        .qm()
        .arg("run")
        .arg("--plan")
        .arg(&plan)
        .arg("--checkout")
        .arg(&f.checkout)
        .args(["--forge", "local", "--forge-dir"])
        .arg(&f.forge)
        .arg("--report")
        .arg(&report)
        .args(extra)
        .output()
        .unwrap();
    let report = std::fs::read(&report)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    (out.status.code().unwrap_or(-1), report, said)
}

#[test]
fn the_local_forge_pushes_to_its_own_repository_and_never_to_the_checkouts_remote() {
    let f = Fixture::new();
    // The checkout's origin is a server that refuses connections: a push there fails.
    sh(
        &f.checkout,
        "git remote set-url origin http://127.0.0.1:9/octo/hello.git",
    );
    let (code, report, said) = run(&f, &[]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(report["actions"][0]["reason"], "PR #1 created", "{said}");
    let own = f.forge.join("remote.git");
    let lock = sh(&own, "git show quartermaster/cargo:Cargo.lock");
    assert!(
        lock.contains("name = \"greeting\"\nversion = \"1.0.1\""),
        "{lock}"
    );
    assert_eq!(
        sh(&own, "git rev-parse main"),
        sh(&f.checkout, "git rev-parse main")
    );
    assert_eq!(f.branches().keys().collect::<Vec<_>>(), ["main"]);
    assert_eq!(
        sh(&f.checkout, "git remote get-url origin"),
        "http://127.0.0.1:9/octo/hello.git"
    );

    // The forge's repository follows the checkout's branches, and keeps its own.
    sh(
        &f.checkout,
        "echo notes > NOTES && git add NOTES && git commit -qm notes",
    );
    let (code, _, said) = run(&f, &[]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(
        sh(&own, "git rev-parse main"),
        sh(&f.checkout, "git rev-parse main")
    );
    assert!(!sh(&own, "git branch --list quartermaster/cargo").is_empty());

    // The control: named with --remote, the checkout's remote is where the push goes.
    let (code, report, said) = run(&f, &["--remote", "origin"]);
    assert_ne!(code, 0, "{said}");
    let reason = report["actions"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("failed to connect to 127.0.0.1"),
        "{reason}\n{said}"
    );
}
