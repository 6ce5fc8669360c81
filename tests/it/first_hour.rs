//! What a newcomer hits first, and what each message tells them to do: the plan on standard input,
//! a run from inside a clone, a plan that is not JSON, an option spelled another way, the flags
//! `run` requires, and what a finding code means.

use crate::common::*;
use insta::assert_snapshot;
use serde_json::{Value, json};
use std::io::Write;

/// What a command printed on standard error, with the fixture's paths made stable.
fn said(f: &Fixture, out: &std::process::Output) -> String {
    let root = f.root.path().display().to_string();
    String::from_utf8_lossy(&out.stderr).replace(&root, "ROOT")
}

/// `run --plan -` reads the plan from standard input.
#[test]
fn the_plan_can_come_from_standard_input() {
    let f = Fixture::new();
    let plan = one_pr();
    let mut child = f
        .qm_process()
        .args([
            "run",
            "--plan",
            "-",
            "--forge",
            "local",
            "--dry-run",
            "--checkout",
        ])
        .arg(&f.checkout)
        .arg("--forge-dir")
        .arg(&f.forge)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&serde_json::to_vec(&plan).unwrap())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", said(&f, &out));
    assert!(
        stdout.contains("## Quartermaster: 0 done, 0 failed, 1 skipped"),
        "{stdout}"
    );
}

/// From a subdirectory of the clone, `run` finds the clone as git does; outside any repository
/// it says to run inside one or to name it with `--checkout`.
#[test]
fn run_finds_the_clone_from_a_subdirectory_and_else_names_checkout() {
    let f = Fixture::new();
    let plan = f.write_plan(&one_pr());
    let sub = f.checkout.join("src");
    let run = |dir: &std::path::Path| {
        f.qm_process()
            .args(["run", "--forge", "local", "--dry-run", "--plan"])
            .arg(&plan)
            .arg("--forge-dir")
            .arg(&f.forge)
            .current_dir(dir)
            .output()
            .unwrap()
    };
    let out = run(&sub);
    assert_eq!(out.status.code(), Some(0), "{}", said(&f, &out));
    let elsewhere = f.root.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let out = run(&elsewhere);
    assert_eq!(out.status.code(), Some(2));
    let said = said(&f, &out);
    let refusal: Vec<&str> = said
        .lines()
        .filter(|l| l.starts_with("error:") || l.starts_with("hint:"))
        .collect();
    assert_snapshot!(refusal.join("\n"));
}

/// `validate`'s one line about a plan file that is not JSON.
fn validate_file(f: &Fixture, text: &str) -> String {
    let path = f.root.path().join("plan.yml");
    std::fs::write(&path, text).unwrap();
    let out = f.qm().arg("validate").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    String::from_utf8_lossy(&out.stdout).replace(&f.root.path().display().to_string(), "ROOT")
}

#[test]
fn a_yaml_or_empty_plan_is_told_the_plan_is_json() {
    let f = Fixture::new();
    assert_snapshot!(validate_file(
        &f,
        "repo_context:\n  platform: github\nactions: []\n"
    ));
    assert_snapshot!(validate_file(&f, " \n"));
}

/// `cargo update --package` and `uv lock -P` are refused with the spelling the allowed form uses.
#[test]
fn another_spelling_of_an_option_is_told_the_allowed_one() {
    let f = Fixture::new();
    let mut cargo = create_mr("quartermaster/cargo", &[greeting()], "batch");
    cargo["commands"] = json!(["cargo update --package greeting"]);
    let mut uv: Value = create_mr("quartermaster/uv", &[greeting()], "batch");
    uv["commands"] = json!(["uv lock -P greeting==1.0.1"]);
    let mut p = plan(vec![cargo, uv]);
    p["repo_context"]["ecosystems"] = json!(["cargo", "uv"]);
    let path = f.write_plan(&p);
    let out = f.qm().arg("validate").arg(&path).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let refusals: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("command.option_injection"))
        .map(str::trim)
        .collect();
    assert_snapshot!(refusals.join("\n"));
}

/// `run --help` shows `--plan` as required, and `-` as standard input.
#[test]
fn run_help_marks_the_plan_required() {
    let out = Fixture::new()
        .qm()
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let top: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Usage:"))
        .take_while(|l| !l.contains("--plans-dir"))
        .collect();
    assert_snapshot!(top.join("\n"));
}

/// `quartermaster explain CODE` says what a code means and how to fix it; an unknown code gets
/// the closest one.
#[test]
fn explain_prints_what_a_code_means() {
    let f = Fixture::new();
    let out = f.qm().args(["explain", "branch.prefix"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_snapshot!(String::from_utf8_lossy(&out.stdout));
    let out = f.qm().args(["explain", "branch.prefx"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_snapshot!(said(&f, &out));
    let out = f
        .qm()
        .args(["explain", "--format", "json", "json.syntax"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["code"], "json.syntax");
    assert!(json["fix"].as_str().is_some_and(|f| f.len() > 10));
}
