//! Signed commits: with `--sign-commits`, GitHub and GitLab make Quartermaster's commits through
//! their APIs (and sign them), from exactly the bytes Quartermaster verified; a forge that stores
//! anything else is caught, and the branch is not left holding it.

use crate::common::*;
use crate::on_every_forge;
use serde_json::Value;

on_every_forge!(
    remote: forges_make_and_sign_the_verified_commit,
    a_forge_storing_other_bytes_is_caught,
);

fn fakes_state_tamper(f: &Fixture, tamper: bool) {
    match f.backend {
        Backend::Github => f.github().state.lock().unwrap().tamper = tamper,
        Backend::Gitlab => f.gitlab().state.lock().unwrap().tamper = tamper,
        Backend::Local => unreachable!("the local forge makes no commits"),
    }
}

fn api_commits(f: &Fixture) -> Vec<String> {
    match f.backend {
        Backend::Github => f.github().state.lock().unwrap().api_commits.clone(),
        Backend::Gitlab => f.gitlab().state.lock().unwrap().api_commits.clone(),
        Backend::Local => unreachable!("the local forge makes no commits"),
    }
}

/// `main`'s Cargo.lock with greeting moved to 1.0.1, as `cargo update` writes it here.
fn verified_lock(f: &Fixture) -> String {
    let work = f.clone_main("verify");
    succeed(
        std::process::Command::new("cargo")
            .args(["update", "--quiet", "-p", "greeting", "--precise", "1.0.1"])
            .current_dir(&work)
            .env("CARGO_HOME", &f.cargo_home),
    );
    std::fs::read_to_string(work.join("Cargo.lock")).unwrap()
}

fn forges_make_and_sign_the_verified_commit(backend: Backend) {
    let f = Fixture::on(backend);
    let plan = one_pr();
    let run = f.run(&plan, &["--sign-commits"]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(run.reason(0), "PR #1 created");
    let tip = f.branches()["quartermaster/cargo"].clone();
    assert_eq!(
        api_commits(&f),
        std::slice::from_ref(&tip),
        "the forge made the commit"
    );
    assert_eq!(
        sh(&f.remote, "git diff --name-only main quartermaster/cargo"),
        "Cargo.lock"
    );
    assert_eq!(
        f.show("quartermaster/cargo", "Cargo.lock"),
        verified_lock(&f).trim_end()
    );
    assert_eq!(
        sh(&f.remote, "git rev-parse quartermaster/cargo^"),
        f.branches()["main"]
    );
    let committer = sh(&f.remote, "git log -1 --format=%ce quartermaster/cargo");
    assert_ne!(
        committer, "quartermaster@noreply.invalid",
        "the forge committed it"
    );
    assert!(
        run.output().contains("the forge made and signed"),
        "{}",
        run.said()
    );
    let body = f.pulls()[0]["body"].as_str().unwrap().to_string();
    assert!(body.contains("<!-- quartermaster:record:"), "{body}");

    // The PR's record says the forge's commit is Quartermaster's: the rerun is free, not a
    // branch left alone for a human's commit.
    let again = f.run(&plan, &["--sign-commits"]);
    assert_eq!(again.code, 0, "{}", again.said());
    assert_eq!(again.reason(0), "PR #1 unchanged");
    assert_eq!(f.branches()["quartermaster/cargo"], tip);
}

/// A forge that stores other bytes than it was sent: nothing of it stays on a branch.
fn a_forge_storing_other_bytes_is_caught(backend: Backend) {
    let f = Fixture::on(backend);
    fakes_state_tamper(&f, true);
    let run = f.run(&one_pr(), &["--sign-commits"]);
    assert_eq!(run.code, 1, "{}", run.said());
    let reason = run.reason(0);
    assert!(reason.contains("not the verified"), "{reason}");
    let ids = regex::Regex::new("[0-9a-f]{40}").unwrap();
    let name = format!("tampered_on_{backend:?}").to_lowercase();
    insta::assert_snapshot!(name, ids.replace_all(reason, "<id>"));
    assert!(
        !f.branches().contains_key("quartermaster/cargo"),
        "{reason}"
    );
    assert!(f.pulls().is_empty());
    // The control: the same forge storing what it is sent.
    fakes_state_tamper(&f, false);
    let run = f.run(&one_pr(), &["--sign-commits"]);
    assert_eq!(run.code, 0, "{}", run.said());
}

/// The local forge has no API to make commits: asked to sign, the run says so and runs nothing.
#[test]
fn signing_on_the_local_forge_is_refused() {
    let f = Fixture::new();
    let run = f.run(&one_pr(), &["--sign-commits"]);
    assert_eq!(run.code, 2, "{}", run.said());
    assert!(
        run.report["error"]
            .as_str()
            .is_some_and(|e| e.contains("the local forge has no API")),
        "{}",
        run.report
    );
    assert_eq!(run.report["actions"], Value::Array(vec![]));
}
