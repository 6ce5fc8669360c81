//! How a plan's updates become branches and PRs: batches, individual updates on failure,
//! reruns, skipped and dry-run actions, and commands that time out or change too much.

use crate::common;

use crate::on_every_forge;
use common::*;
use serde_json::json;
use std::time::{Duration, Instant};

on_every_forge!(
    batch_green_opens_one_pr,
    batch_red_opens_nothing,
    individual_on_failure_lands_what_passes,
    individual_makes_one_branch_per_update,
    rerunning_the_same_plan_creates_nothing_new,
    skips_low_confidence_and_no_change_actions,
    dry_run_pushes_and_opens_nothing,
);

fn batch_green_opens_one_pr(backend: Backend) {
    let f = Fixture::on(backend);
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(run.status(0), "done");
    assert_eq!(run.reason(0), "PR #1 created");
    let pr = &run.action(0)["pull_requests"][0];
    assert_eq!(pr["number"], 1);
    assert_eq!(pr["operation"], "created");
    assert_eq!(pr["branch"], "quartermaster/cargo");
    let update = &run.action(0)["updates"][0];
    assert_eq!(update["landed"], true);
    assert_eq!(update["pull_request"], 1);
    assert_eq!(update["test"], "passed");

    let lock = f.show("quartermaster/cargo", "Cargo.lock");
    assert!(
        lock.contains("name = \"greeting\"\nversion = \"1.0.1\""),
        "{lock}"
    );
    let author = sh(
        &f.remote,
        "git log -1 --format='%an <%ae>|%P' quartermaster/cargo",
    );
    let main = f.branches()["main"].clone();
    assert_eq!(author, format!("{}|{main}", f.bot()));

    let pulls = f.pulls();
    assert_eq!(pulls.len(), 1);
    assert_eq!(pulls[0]["labels"], json!(["quartermaster", "dependencies"]));
    assert_eq!(pulls[0]["base"], "main");
    let body = pulls[0]["body"].as_str().unwrap();
    assert!(body.starts_with("Patch releases."));
    assert!(
        body.contains(
            "| [`greeting`](https://crates.io/crates/greeting/1.0.1) | `1.0.0` → `1.0.1` | patch |"
        ),
        "{body}"
    );
    assert!(body.contains("<!-- quartermaster:pr:"));
    assert!(
        run.summary
            .contains("| 0 | create_mr `quartermaster/cargo` | chore(deps): update cargo patch dependencies | ✅ done | PR #1 created |"),
        "{}",
        run.summary
    );
    assert!(
        run.stdout
            .contains("## Quartermaster: 1 done, 0 failed, 0 skipped, 0 denied")
    );
}

fn batch_red_opens_nothing(backend: Backend) {
    let f = Fixture::on(backend);
    let run = f.run(&both_updates("batch"), &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "failed");
    assert_eq!(run.reason(0), "`cargo test` failed: exit code 101; no PR");
    assert!(f.pulls().is_empty());
    assert_eq!(f.branches().keys().collect::<Vec<_>>(), vec!["main"]);
    let runs = &run.action(0)["test"]["runs"];
    assert_eq!(runs.as_array().unwrap().len(), 1);
    assert_eq!(runs[0]["passed"], false);
    assert!(runs[0]["output_tail"].as_str().unwrap().contains("Bye Ada"));
    for u in run.action(0)["updates"].as_array().unwrap() {
        assert_eq!(u["landed"], false);
        assert_eq!(u["test"], "failed");
    }
    assert!(run.summary.contains("### Failures"));
}

fn individual_on_failure_lands_what_passes(backend: Backend) {
    let f = Fixture::on(backend);
    let run = f.run(&both_updates("individual_on_failure"), &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "partial");
    let reason = run.reason(0);
    assert!(
        reason.starts_with("the batch failed its tests, so each update was tried alone"),
        "{reason}"
    );
    assert!(
        reason.contains("quartermaster/cargo--greeting: PR #1 created"),
        "{reason}"
    );
    assert!(
        reason.contains("quartermaster/cargo--farewell: `cargo test` failed"),
        "{reason}"
    );
    let branches = f.branches();
    assert!(branches.contains_key("quartermaster/cargo--greeting"));
    assert!(!branches.contains_key("quartermaster/cargo--farewell"));
    assert!(!branches.contains_key("quartermaster/cargo"));
    let pulls = f.pulls();
    assert_eq!(pulls.len(), 1);
    assert_eq!(pulls[0]["head"], "quartermaster/cargo--greeting");
    assert_eq!(
        pulls[0]["title"],
        "chore(deps): update greeting from 1.0.0 to 1.0.1"
    );
    let updates = run.action(0)["updates"].as_array().unwrap();
    assert_eq!(
        (
            updates[0]["package"].as_str(),
            updates[0]["landed"].as_bool(),
            updates[0]["test"].as_str()
        ),
        (Some("greeting"), Some(true), Some("passed"))
    );
    assert_eq!(updates[0]["pull_request"], 1);
    assert_eq!(
        (
            updates[1]["package"].as_str(),
            updates[1]["landed"].as_bool(),
            updates[1]["test"].as_str()
        ),
        (Some("farewell"), Some(false), Some("failed"))
    );
    let test_branches = run.tested_branches(0);
    assert_eq!(
        test_branches,
        vec![
            "quartermaster/cargo",
            "quartermaster/cargo--greeting",
            "quartermaster/cargo--farewell"
        ]
    );
}

fn individual_makes_one_branch_per_update(backend: Backend) {
    let f = Fixture::on(backend);
    let mut action = create_mr(
        "quartermaster/cargo",
        &[greeting(), farewell()],
        "individual",
    );
    // a command that names no package runs in every split
    action["commands"]
        .as_array_mut()
        .unwrap()
        .push(json!("cargo update -p greeting --precise 1.0.1"));
    let run = f.run(&plan(vec![action]), &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    let tested = run.tested_branches(0);
    assert_eq!(
        tested,
        vec![
            "quartermaster/cargo--greeting",
            "quartermaster/cargo--farewell"
        ]
    );
    assert_eq!(f.pulls().len(), 1);
    let commands: Vec<(&str, &str)> = run.action(0)["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["branch"].as_str().unwrap(),
                c["command"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        commands,
        vec![
            (
                "quartermaster/cargo--greeting",
                "cargo update -p greeting --precise 1.0.1"
            ),
            (
                "quartermaster/cargo--greeting",
                "cargo update -p greeting --precise 1.0.1"
            ),
            (
                "quartermaster/cargo--farewell",
                "cargo update -p farewell --precise 2.0.1"
            ),
        ]
    );
}

fn rerunning_the_same_plan_creates_nothing_new(backend: Backend) {
    let f = Fixture::on(backend);
    let actions = vec![
        create_mr("quartermaster/cargo", &[greeting()], "batch"),
        json!({"type": "create_issue", "title": "chore(deps): farewell 2.0.1 breaks bye()", "body": "Pin it.", "labels": ["dependencies"], "confidence": 0.9}),
        // GitLab numbers issues apart from MRs; GitHub and the local forge share one sequence.
        json!({"type": "comment_issue", "issue_id": if backend == Backend::Gitlab { 1 } else { 2 }, "body": "Still broken upstream.", "confidence": 0.9}),
        json!({"type": "comment_mr", "mr_id": 1, "body": "Ready for review.", "confidence": 0.9}),
    ];
    let first = f.run(&plan(actions.clone()), &[]);
    assert_eq!(first.code, 0, "{}", first.said());
    let branches = f.branches();
    let pulls = f.pulls();
    let issues = f.issues();
    let second = f.run(&plan(actions), &[]);
    assert_eq!(second.code, 0, "{}", second.said());
    assert_eq!(f.branches(), branches, "nothing pushed");
    assert_eq!(f.pulls(), pulls, "no PR created or edited");
    assert_eq!(f.issues(), issues, "no issue created, edited or commented");
    assert_eq!(
        second.action(0)["pull_requests"][0]["operation"],
        "unchanged"
    );
    // The branch already holds this very build on this base: no command and no test ran.
    assert_eq!(
        second.action(0)["pull_requests"][0]["reused"],
        branches["quartermaster/cargo"]
    );
    assert_eq!(second.action(0)["commands"], json!([]));
    assert!(second.action(0)["test"].is_null());
    assert_eq!(second.action(1)["issues"][0]["operation"], "unchanged");
    assert_eq!(second.action(2)["comments"][0]["operation"], "unchanged");
    assert_eq!(second.action(3)["comments"][0]["operation"], "unchanged");
    assert_eq!(pulls[0]["comments"].as_array().unwrap().len(), 1);
    assert_eq!(issues[0]["comments"].as_array().unwrap().len(), 1);
    // Anything that decides the build (here, the description) builds again.
    let mut changed = create_mr("quartermaster/cargo", &[greeting()], "batch");
    changed["description"] = json!("Patch releases, reviewed.");
    let third = f.run(&plan(vec![changed]), &[]);
    assert_eq!(third.code, 0, "{}", third.said());
    assert_eq!(third.action(0)["commands"].as_array().unwrap().len(), 1);
    assert_eq!(third.action(0)["pull_requests"][0]["operation"], "updated");
}

#[test]
fn command_timeout_kills_the_test_and_the_run_goes_on() {
    let f = Fixture::new();
    let mut slow = create_mr("quartermaster/slow", &[greeting()], "batch");
    slow["test_command"] = json!("make slow");
    // The next action's test takes no time, whatever the machine's load.
    let mut quick = create_mr("quartermaster/cargo", &[greeting()], "batch");
    quick["test_command"] = json!("make quick");
    let started = Instant::now();
    let run = f.run(&plan(vec![slow, quick]), &["--command-timeout", "5s"]);
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "failed");
    assert_eq!(
        run.reason(0),
        "`make slow` failed: timed out after 5s; no PR"
    );
    assert_eq!(run.status(1), "done", "the next action still ran");
}

fn skips_low_confidence_and_no_change_actions(backend: Backend) {
    let f = Fixture::on(backend);
    let mut unsure = create_mr("quartermaster/unsure", &[greeting()], "batch");
    unsure["confidence"] = json!(0.3);
    let already =
        json!({"package": "greeting", "from": "1.0.0", "to": "1.0.0", "update_type": "pin"});
    let noop = create_mr("quartermaster/noop", &[already], "batch");
    let run = f.run(
        &plan(vec![
            unsure,
            noop,
            json!({"type": "skip", "package": "serde", "reason": "Held for 2.0", "reason_type": "human_hold", "confidence": 1.0}),
        ]),
        &["--min-confidence", "0.5"],
    );
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(
        (run.status(0), run.reason(0)),
        ("skipped", "confidence 0.3 is below the threshold 0.5")
    );
    assert_eq!((run.status(1), run.reason(1)), ("skipped", "no changes"));
    assert_eq!(
        (run.status(2), run.reason(2)),
        ("skipped", "serde (human_hold): Held for 2.0")
    );
    assert_eq!(f.branches().len(), 1);
    assert!(f.pulls().is_empty());
}

fn dry_run_pushes_and_opens_nothing(backend: Backend) {
    let f = Fixture::on(backend);
    let run = f.run(
        &plan(vec![
            create_mr("quartermaster/cargo", &[greeting()], "batch"),
            json!({"type": "create_issue", "title": "t", "body": "b", "labels": [], "confidence": 0.9}),
        ]),
        &["--dry-run"],
    );
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(run.status(0), "skipped");
    assert_eq!(
        run.reason(0),
        "dry run: tests passed; would push quartermaster/cargo and open its PR"
    );
    assert_eq!(run.reason(1), "dry run: would open the issue");
    assert_eq!(run.report["dry_run"], true);
    assert_eq!(f.branches().len(), 1);
    assert!(f.pulls().is_empty() && f.issues().is_empty());
    assert!(run.summary.contains("**Dry run**"));
}

#[test]
fn a_command_that_changes_more_than_dependency_files_gets_nothing_pushed() {
    let f = Fixture::new();
    // A mission whose command is a Makefile target stands in for an update tool that writes
    // outside the dependency files (a post-install step, a hijacked plugin).
    let mission = f.custom_mission(
        "escape",
        json!({"cargo": {"packages": "crates", "versions": "semver",
                         "commands": ["make <pkg>"], "files": ["Cargo.toml", "Cargo.lock"]}}),
    );
    let mut action = create_mr(
        "quartermaster/escape",
        &[json!({"package": "escape", "from": "1.0.0", "to": "1.0.1", "update_type": "patch"})],
        "batch",
    );
    action["commands"] = json!(["make escape"]);
    let before = f.branches();
    let flags: Vec<&str> = mission.iter().map(String::as_str).collect();
    let run = f.run(&plan(vec![action]), &flags);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "denied");
    assert_eq!(
        run.reason(0),
        "the commands changed files that are not dependency files (Cargo.lock, Cargo.toml): `.github/workflows/release.yml`, `src/lib.rs`; nothing was pushed"
    );
    assert!(run.action(0)["test"].is_null(), "no test ran");
    assert_eq!(f.branches(), before);
    assert!(f.pulls().is_empty());
}

#[test]
fn individual_on_failure_also_splits_when_a_command_fails_on_the_batch() {
    let f = Fixture::new();
    // No farewell 9.9.9 exists: its command fails, in the batch and alone; greeting lands.
    let missing =
        json!({"package": "farewell", "from": "2.0.0", "to": "9.9.9", "update_type": "major"});
    let run = f.run(
        &plan(vec![create_mr(
            "quartermaster/cargo",
            &[greeting(), missing],
            "individual_on_failure",
        )]),
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "partial");
    let reason = run.reason(0);
    assert!(
        reason.starts_with("a command failed on the batch, so each update was tried alone; quartermaster/cargo--greeting: PR #1 created; quartermaster/cargo--farewell: `cargo update -p farewell --precise 9.9.9` failed"),
        "{reason}"
    );
    assert_eq!(f.pulls().len(), 1);
    assert_eq!(f.pulls()[0]["head"], "quartermaster/cargo--greeting");
    let updates = &run.action(0)["updates"];
    assert_eq!(updates[0]["landed"], true);
    assert_eq!(updates[1]["landed"], false);
    assert_eq!(updates[1]["test"], "not_run");
}
