//! `run --plan docker-agent:<name>` and `validate docker-agent:<name>` with the real binary: the
//! plan is claimed, run and answered (its status and the result plan), every refusal runs nothing,
//! and a signal after the claim still answers the plan `failed`.

use crate::common::replay::Operator;
use crate::common::{Fixture, Run, create_mr, greeting, one_pr, plan, processes_running, sh};
use quartermaster::named_plan::{PlanFile, PlanName, PlanStore, plan_json};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn name(text: &str) -> PlanName {
    PlanName::parse(text).unwrap()
}

/// The plans directory of a fixture, with `weekly` submitted as the agent would: the plan in a
/// fenced block of prose.
fn submitted(f: &Fixture, plan: &Value) -> PathBuf {
    let dir = f.root.path().join("plans");
    let content = format!(
        "This week's updates.\n\n```json\n{}\n```\n",
        serde_json::to_string_pretty(plan).unwrap()
    );
    PlanStore::new(&dir)
        .submit(&name("weekly"), &content, Some("planner"), None)
        .unwrap();
    dir
}

fn read(dir: &Path, plan: &str) -> PlanFile {
    PlanStore::new(dir).read(&name(plan)).unwrap()
}

/// Runs `docker-agent:weekly` from `dir` on the local forge.
fn run_named(f: &Fixture, dir: &Path, extra: &[&str]) -> Run {
    let report = f.root.path().join("report.json");
    let _ = std::fs::remove_file(&report);
    let out = f
        .qm()
        .args(["run", "--plan", "docker-agent:weekly", "--plans-dir"])
        .arg(dir)
        .arg("--checkout")
        .arg(&f.checkout)
        .args(["--remote", "origin", "--forge", "local", "--forge-dir"])
        .arg(&f.forge)
        .arg("--report")
        .arg(&report)
        .args(extra)
        .output()
        .unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        report: std::fs::read(&report)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        summary: String::new(),
    };
    // The named plans here are the fixture's cargo plans.
    f.replay(&run, &plan(vec![]), &Operator::of(f, extra, &[]));
    run
}

/// The report the result plan carries.
fn result_report(result: &PlanFile) -> Value {
    serde_json::from_str(&plan_json(result.content())).unwrap()
}

#[test]
fn a_named_plan_is_claimed_run_and_answered() {
    let f = Fixture::new();
    let dir = submitted(&f, &one_pr());
    let before = read(&dir, "weekly");
    let run = run_named(&f, &dir, &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert!(
        run.stderr
            .contains("quartermaster: claimed plan weekly at revision 2 in "),
        "{}",
        run.said()
    );
    assert!(
        run.stderr
            .contains("quartermaster: plan weekly is done; the result is in plan weekly-result"),
        "{}",
        run.said()
    );
    assert_eq!(run.report["plan"], "docker-agent:weekly");
    assert_eq!(f.pulls().len(), 1);
    let after = read(&dir, "weekly");
    assert_eq!(
        (after.status(), after.author(), after.revision()),
        ("done", "quartermaster", 3)
    );
    assert_eq!(after.content(), before.content());
    let result = read(&dir, "weekly-result");
    assert_eq!(
        (result.status(), result.author(), result.revision()),
        ("done", "quartermaster", 1)
    );
    assert!(
        result.content().starts_with("## Quartermaster"),
        "{}",
        result.content()
    );
    assert_eq!(result_report(&result), run.report);
}

#[test]
fn a_failed_action_answers_failed_and_a_custom_result_plan_gets_it() {
    let f = Fixture::new();
    let comment = json!({"type": "comment_mr", "mr_id": 42, "body": "ping", "confidence": 0.9});
    let dir = submitted(&f, &plan(vec![comment]));
    let run = run_named(
        &f,
        &dir,
        &["--result-plan", "weekly-outcome", "--claim-status", "ready"],
    );
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(read(&dir, "weekly").status(), "failed");
    let result = read(&dir, "weekly-outcome");
    assert_eq!(result.status(), "failed");
    assert_eq!(result_report(&result)["exit_code"], 1);
    assert!(!dir.join("weekly-result.json").exists());
}

#[test]
fn an_invalid_plan_is_answered_invalid_with_its_findings() {
    let f = Fixture::new();
    let mut action = create_mr("quartermaster/cargo", &[greeting()], "batch");
    action["branch"] = json!("feature/cargo");
    let dir = submitted(&f, &plan(vec![action]));
    let run = run_named(&f, &dir, &[]);
    assert_eq!(run.code, 2, "{}", run.said());
    assert_eq!(read(&dir, "weekly").status(), "invalid");
    let report = result_report(&read(&dir, "weekly-result"));
    assert_eq!(report["validation"]["errors"][0]["code"], "branch.prefix");
    assert_eq!(
        report["validation"]["errors"][0]["pointer"],
        "/actions/0/branch"
    );
    assert!(f.branches().len() == 1, "nothing was pushed");
}

#[test]
fn a_plan_not_ready_is_refused_and_left_as_it_was() {
    let f = Fixture::new();
    let dir = submitted(&f, &one_pr());
    let file = dir.join("weekly.json");
    let draft = std::fs::read_to_string(&file)
        .unwrap()
        .replace("\"status\": \"ready\"", "\"status\": \"draft\"");
    std::fs::write(&file, &draft).unwrap();
    let run = run_named(&f, &dir, &[]);
    assert_eq!(run.code, 2, "{}", run.said());
    assert_eq!(
        run.stderr,
        "error: plan `weekly` has status `draft` at revision 1, not `ready`; nothing ran\nhint: only a plan with the status --claim-status names (QM_CLAIM_STATUS, default `ready`) is claimed; a plan that ran already needs the agent to submit it again\n"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), draft);
    assert_eq!(run.report, Value::Null, "nothing ran, so no report");
    assert!(!dir.join("weekly-result.json").exists());
    let approved = run_named(&f, &dir, &["--claim-status", "draft"]);
    assert_eq!(approved.code, 0, "{}", approved.said());
}

#[test]
fn configuration_refusals_come_before_the_claim() {
    let f = Fixture::new();
    let dir = submitted(&f, &plan(vec![]));
    let before = std::fs::read(dir.join("weekly.json")).unwrap();
    let cases: [(&[&str], &str); 3] = [
        (
            &["--result-plan", "weekly"],
            "error: --result-plan `weekly` is the plan itself\nhint: name another plan, or leave --result-plan unset to write `<name>-result`\n",
        ),
        (
            &["--result-plan", "Weekly"],
            "error: --result-plan: `Weekly` is not a valid plan name\nhint: use lower-case letters, digits, `-` and `_`, starting with a letter or digit (docker-agent's rule)\n",
        ),
        (
            &["--mission", "nope"],
            "error: mission: unknown mission `nope`; available: deps, docs-drift\n",
        ),
    ];
    for (flags, said) in cases {
        let run = run_named(&f, &dir, flags);
        assert_eq!((run.code, run.stderr.as_str()), (2, said));
    }
    let missing = run_named(&f, &f.root.path().join("elsewhere"), &[]);
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.starts_with("error: no plan `weekly` in "),
        "{}",
        missing.said()
    );
    assert_eq!(std::fs::read(dir.join("weekly.json")).unwrap(), before);
}

#[test]
fn a_signal_after_the_claim_answers_the_plan_failed() {
    let f = Fixture::new();
    let mut action = create_mr("quartermaster/cargo", &[greeting()], "batch");
    action["test_command"] = json!("make hang");
    let dir = submitted(&f, &plan(vec![action]));
    let child = f
        .local_run("docker-agent:weekly")
        .arg("--plans-dir")
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while processes_running("sleep 1213").is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the test never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(read(&dir, "weekly").status(), "in-progress");
    sh(f.root.path(), &format!("kill -TERM {}", child.id()));
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(128 + 15));
    let plan = read(&dir, "weekly");
    assert_eq!((plan.status(), plan.revision()), ("failed", 3));
    let result = read(&dir, "weekly-result");
    assert_eq!(result.status(), "failed");
    assert!(
        result
            .content()
            .contains("the run was stopped by signal 15 (a cancelled job)"),
        "{}",
        result.content()
    );
}

#[test]
fn validate_reads_a_named_plan_without_claiming_it() {
    let f = Fixture::new();
    let dir = submitted(&f, &one_pr());
    let before = std::fs::read(dir.join("weekly.json")).unwrap();
    f.qm()
        .args(["validate", "docker-agent:weekly"])
        .env("QM_PLANS_DIR", &dir)
        .assert()
        .code(0)
        .stdout("docker-agent:weekly: valid\n");
    assert_eq!(std::fs::read(dir.join("weekly.json")).unwrap(), before);
    f.qm()
        .args(["validate", "docker-agent:monthly", "--plans-dir"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(format!(
            "error: no plan `monthly` in {}\nhint: the agent has not written it, or the plans directory is not the one docker-agent used (--plans-dir, QM_PLANS_DIR)\n",
            dir.display()
        ));
    std::fs::write(dir.join("broken.json"), "{\"revision\": \"1\"}").unwrap();
    f.qm()
        .args(["validate", "docker-agent:broken", "--plans-dir"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(format!(
            "error: plan file {} is corrupt: `revision` must be an integer; it was left untouched\nhint: docker-agent cannot read it either: have the agent write the plan again, or remove the file\n",
            dir.join("broken.json").display()
        ));
}

#[test]
fn an_empty_plans_dir_variable_means_docker_agents_default() {
    let f = Fixture::new();
    let home = f.root.path().join("home");
    let weekly = one_pr();
    PlanStore::new(home.join(".cagent/plans"))
        .submit(&name("weekly"), &weekly.to_string(), None, None)
        .unwrap();
    f.qm()
        .args(["validate", "docker-agent:weekly"])
        .env("HOME", &home)
        .env("QM_PLANS_DIR", "")
        .assert()
        .code(0)
        .stdout("docker-agent:weekly: valid\n");
}
