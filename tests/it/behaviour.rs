//! The engine's behavioural suite: `quartermaster run` end to end with real git repositories, real
//! `cargo update` against a local registry and real `cargo test`, run once per forge: the local
//! forge, and GitHub and GitLab through HTTP fakes of their APIs with branches pushed over smart
//! HTTP behind the token. The same assertions hold on every forge. Hermetic: no network.

use crate::common;

use crate::on_every_forge;
use common::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

on_every_forge!(
    batch_green_opens_one_pr,
    batch_red_opens_nothing,
    individual_on_failure_lands_what_passes,
    individual_makes_one_branch_per_update,
    rerunning_the_same_plan_creates_nothing_new,
    update_mr_regenerates_from_the_new_base_and_force_pushes,
    update_mr_leaves_a_branch_with_human_commits_alone,
    an_amended_bot_commit_counts_as_a_human_edit,
    create_mr_also_respects_human_commits,
    other_peoples_prs_and_issues_are_refused,
    close_mr_comments_closes_and_deletes_the_branch,
    close_mr_keeps_a_branch_with_human_commits,
    skips_low_confidence_and_no_change_actions,
    dry_run_pushes_and_opens_nothing,
    the_checkout_is_left_exactly_as_it_was,
    the_token_never_reaches_children_config_reports_or_logs,
);

fn batch_green_opens_one_pr(backend: Backend) {
    let f = Fixture::on(backend);
    let run = f.run(
        &plan(vec![create_mr(
            "quartermaster/cargo",
            &[greeting()],
            "batch",
        )]),
        &[],
    );
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
    let run = f.run(
        &plan(vec![create_mr(
            "quartermaster/cargo",
            &[greeting(), farewell()],
            "batch",
        )]),
        &[],
    );
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
    let run = f.run(
        &plan(vec![create_mr(
            "quartermaster/cargo",
            &[greeting(), farewell()],
            "individual_on_failure",
        )]),
        &[],
    );
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
    let test_branches: Vec<&str> = run.action(0)["test"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["branch"].as_str().unwrap())
        .collect();
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
    let tested: Vec<&str> = run.action(0)["test"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["branch"].as_str().unwrap())
        .collect();
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

fn update_mr_regenerates_from_the_new_base_and_force_pushes(backend: Backend) {
    let f = Fixture::on(backend);
    let first = f.run(
        &plan(vec![create_mr(
            "quartermaster/cargo",
            &[greeting()],
            "batch",
        )]),
        &[],
    );
    assert_eq!(first.code, 0, "{}", first.said());
    let old_tip = f.branches()["quartermaster/cargo"].clone();
    f.human_commit("main", "README.md");
    let new_main = f.branches()["main"].clone();
    let update = json!({
        "type": "update_mr", "mr_id": 1, "branch": "quartermaster/cargo",
        "updates": [greeting()], "commands": [command(&greeting())], "test_command": "cargo test",
        "description": "Rebased on the new main.", "labels": ["rebased"], "confidence": 0.8
    });
    let run = f.run(&plan(vec![update]), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(run.status(0), "done");
    assert_eq!(run.reason(0), "PR #1 updated");
    let tip = f.branches()["quartermaster/cargo"].clone();
    assert_ne!(tip, old_tip);
    assert_eq!(sh(&f.remote, &format!("git rev-parse {tip}^")), new_main);
    assert_eq!(
        f.show("quartermaster/cargo", "README.md"),
        "edited by a human"
    );
    let pr = &f.pulls()[0];
    assert!(
        pr["body"]
            .as_str()
            .unwrap()
            .starts_with("Rebased on the new main.")
    );
    assert_eq!(
        pr["labels"],
        json!(["quartermaster", "dependencies", "rebased"])
    );
    assert_eq!(f.pulls().len(), 1);
}

fn update_mr_leaves_a_branch_with_human_commits_alone(backend: Backend) {
    let f = Fixture::on(backend);
    let first = f.run(
        &plan(vec![create_mr(
            "quartermaster/cargo",
            &[greeting()],
            "batch",
        )]),
        &[],
    );
    assert_eq!(first.code, 0, "{}", first.said());
    f.human_commit("quartermaster/cargo", "NOTES.md");
    let human_tip = f.branches()["quartermaster/cargo"].clone();
    let update = json!({
        "type": "update_mr", "mr_id": 1, "branch": "quartermaster/cargo",
        "updates": [greeting()], "commands": [command(&greeting())], "test_command": "cargo test",
        "confidence": 0.8
    });
    let run = f.run(&plan(vec![update.clone()]), &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "denied");
    assert_eq!(
        run.reason(0),
        "quartermaster/cargo has commits by human@example.com; human edits win, so the branch was left alone"
    );
    assert_eq!(
        f.branches()["quartermaster/cargo"],
        human_tip,
        "not force-pushed"
    );
    let comments = f.pulls()[0]["comments"].as_array().unwrap().clone();
    assert_eq!(comments.len(), 1);
    assert!(comments[0]["body"].as_str().unwrap().starts_with(
        "Quartermaster did not update `quartermaster/cargo`: the branch has commits by someone other than its bot identity (human@example.com)."
    ));
    // Said once: a second run does not repeat it, nor does a further human commit.
    let again = f.run(&plan(vec![update.clone()]), &[]);
    assert_eq!(again.status(0), "denied");
    assert_eq!(f.pulls()[0]["comments"].as_array().unwrap().len(), 1);
    assert_eq!(f.branches()["quartermaster/cargo"], human_tip);
    f.human_commit("quartermaster/cargo", "MORE.md");
    let third = f.run(&plan(vec![update]), &[]);
    assert_eq!(third.status(0), "denied");
    assert_eq!(f.pulls()[0]["comments"].as_array().unwrap().len(), 1);
}

fn an_amended_bot_commit_counts_as_a_human_edit(backend: Backend) {
    let f = Fixture::on(backend);
    let action = create_mr("quartermaster/cargo", &[greeting()], "batch");
    f.run(&plan(vec![action.clone()]), &[]);
    // `git commit --amend` keeps the bot as author; the committer is the human.
    let work = f.root.path().join("amend");
    sh(
        f.root.path(),
        &format!(
            "git clone -q -b quartermaster/cargo file://{} {}",
            f.remote.display(),
            work.display()
        ),
    );
    sh(
        &work,
        "echo tweak >> Cargo.toml && git commit -qa --amend --no-edit && git push -qf origin quartermaster/cargo",
    );
    let author = sh(
        &f.remote,
        "git log -1 --format='%ae/%ce' quartermaster/cargo",
    );
    assert!(author.ends_with("/human@example.com"), "{author}");
    let tip = f.branches()["quartermaster/cargo"].clone();
    let run = f.run(&plan(vec![action]), &[]);
    assert_eq!(run.status(0), "denied", "{}", run.said());
    assert!(
        run.reason(0).contains("human@example.com"),
        "{}",
        run.reason(0)
    );
    assert_eq!(f.branches()["quartermaster/cargo"], tip);
}

fn create_mr_also_respects_human_commits(backend: Backend) {
    let f = Fixture::on(backend);
    let action = create_mr("quartermaster/cargo", &[greeting()], "batch");
    f.run(&plan(vec![action.clone()]), &[]);
    f.human_commit("quartermaster/cargo", "NOTES.md");
    let tip = f.branches()["quartermaster/cargo"].clone();
    let run = f.run(&plan(vec![action]), &[]);
    assert_eq!(run.status(0), "denied", "{}", run.said());
    assert_eq!(f.branches()["quartermaster/cargo"], tip);
}

fn other_peoples_prs_and_issues_are_refused(backend: Backend) {
    let f = Fixture::on(backend);
    let human_pr = f.seed_pull("feature/login", &["quartermaster"]);
    let unlabelled_pr = f.seed_pull("quartermaster/lookalike", &[]);
    let issue = f.seed_issue(&["bug"]);
    let run = f.run(
        &plan(vec![
            json!({"type": "close_mr", "mr_id": human_pr, "comment": "Superseded", "delete_branch": true, "confidence": 0.9}),
            json!({"type": "close_mr", "mr_id": unlabelled_pr, "confidence": 0.9}),
            json!({"type": "comment_mr", "mr_id": human_pr, "body": "hi", "confidence": 0.9}),
            json!({"type": "comment_issue", "issue_id": issue, "body": "hi", "confidence": 0.9}),
            json!({"type": "update_mr", "mr_id": human_pr, "branch": "quartermaster/x", "updates": [greeting()],
                   "commands": [command(&greeting())], "test_command": "cargo test", "confidence": 0.9}),
            json!({"type": "comment_mr", "mr_id": 99, "body": "hi", "confidence": 0.9}),
        ]),
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.said());
    let outside = format!(
        "PR #{human_pr} is not Quartermaster's: its branch feature/login is outside quartermaster/"
    );
    let expected = [
        ("denied", outside.clone()),
        (
            "denied",
            format!(
                "PR #{unlabelled_pr} is not Quartermaster's: it does not carry the `quartermaster` label"
            ),
        ),
        ("denied", outside.clone()),
        (
            "denied",
            format!(
                "issue #{issue} does not carry the `quartermaster` label: Quartermaster only comments on its own issues"
            ),
        ),
        ("denied", outside),
        ("failed", "PR #99 does not exist".to_string()),
    ];
    for (i, (status, reason)) in expected.iter().enumerate() {
        assert_eq!(
            (run.status(i), run.reason(i)),
            (*status, reason.as_str()),
            "action {i}"
        );
    }
    // A refused update_mr still accounts for its updates.
    assert_eq!(
        run.action(4)["updates"],
        json!([{"package": "greeting", "from": "1.0.0", "to": "1.0.1", "update_type": "patch",
                "branch": "quartermaster/x", "landed": false, "test": "not_run"}])
    );
    let pulls = f.pulls();
    assert!(
        pulls
            .iter()
            .all(|p| p["state"] == "open" && p["comments"] == json!([]))
    );
    assert_eq!(f.issues()[0]["comments"], json!([]));
    assert_eq!(
        run.report["summary"],
        json!({"done": 0, "failed": 1, "skipped": 0, "denied": 5})
    );
}

fn close_mr_comments_closes_and_deletes_the_branch(backend: Backend) {
    let f = Fixture::on(backend);
    f.open_cargo_pr();
    let close = json!({"type": "close_mr", "mr_id": 1, "comment": "Superseded by newer updates", "delete_branch": true, "confidence": 0.9});
    let run = f.run(&plan(vec![close.clone()]), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(run.reason(0), "PR #1 closed; quartermaster/cargo deleted");
    assert!(!f.branches().contains_key("quartermaster/cargo"));
    let pr = &f.pulls()[0];
    assert_eq!(pr["state"], "closed");
    assert!(
        pr["comments"][0]["body"]
            .as_str()
            .unwrap()
            .starts_with("Superseded by newer updates")
    );
    let again = f.run(&plan(vec![close]), &[]);
    assert_eq!(again.code, 0, "{}", again.said());
    assert_eq!(again.reason(0), "PR #1 was already closed");
    assert_eq!(
        again.action(0)["pull_requests"][0]["operation"],
        "unchanged"
    );
    // A PR a human closed is not reopened by the next create_mr.
    let recreate = f.run(
        &plan(vec![create_mr(
            "quartermaster/cargo",
            &[greeting()],
            "batch",
        )]),
        &[],
    );
    assert_eq!(recreate.status(0), "skipped", "{}", recreate.said());
    assert!(
        recreate
            .reason(0)
            .starts_with("PR #1 on quartermaster/cargo was closed without merging")
    );
    assert_eq!(f.pulls().len(), 1);
}

fn close_mr_keeps_a_branch_with_human_commits(backend: Backend) {
    let f = Fixture::on(backend);
    f.open_cargo_pr();
    f.human_commit("quartermaster/cargo", "NOTES.md");
    let tip = f.branches()["quartermaster/cargo"].clone();
    let close = json!({"type": "close_mr", "mr_id": 1, "delete_branch": true, "confidence": 0.9});
    let run = f.run(&plan(vec![close]), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(
        run.reason(0),
        "PR #1 closed; quartermaster/cargo was kept: it has commits by human@example.com"
    );
    assert_eq!(f.branches()["quartermaster/cargo"], tip);
    assert_eq!(f.pulls()[0]["state"], "closed");
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
fn an_invalid_plan_runs_nothing_and_says_why() {
    let f = Fixture::new();
    let mut bad = create_mr("quartermaster/cargo", &[greeting()], "batch");
    bad["commands"] = json!(["cargo update -p greeting --precise 1.0.1 --config x=y"]);
    let run = f.run(&plan(vec![bad]), &[]);
    assert_eq!(run.code, 2, "{}", run.said());
    assert!(
        run.stderr
            .contains("error[command.option_injection] /actions/0/commands/0"),
        "{}",
        run.said()
    );
    assert_eq!(run.report["validation"]["valid"], false);
    assert_eq!(
        run.report["validation"]["errors"][0]["code"],
        "command.option_injection"
    );
    assert_eq!(run.report["actions"], json!([]));
    assert!(run.summary.contains("The plan is invalid; nothing ran."));
    assert_eq!(f.branches().len(), 1);
}

#[test]
fn configuration_errors_exit_2_before_anything_runs() {
    let f = Fixture::new();
    let plan_path = f.write_plan(&plan(vec![create_mr(
        "quartermaster/cargo",
        &[greeting()],
        "batch",
    )]));
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--min-confidence", "7"],
            "error: min-confidence must be between 0 and 1, not 7\n",
        ),
        (
            vec!["--remote", "upstream"],
            "has no remote `upstream`; pass --remote NAME\n",
        ),
        (
            vec!["--mission", "nope"],
            "error: mission: unknown mission `nope`; available: deps, docs-drift\n",
        ),
        (
            vec!["--extra-env", "GITHUB_TOKEN"],
            "error: extra-env: `GITHUB_TOKEN` holds forge credentials and is never passed to agent commands\n",
        ),
    ];
    for (args, message) in cases {
        let out = f
            .qm()
            .arg("run")
            .arg("--plan")
            .arg(&plan_path)
            .arg("--checkout")
            .arg(&f.checkout)
            .args(["--forge", "local"])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.ends_with(message), "{args:?}: {stderr}");
    }
    assert_eq!(f.branches().len(), 1);
}

/// Everything about the checkout a user could notice: branch, HEAD, index, status, files, config.
fn checkout_state(f: &Fixture) -> Vec<String> {
    vec![
        sh(&f.checkout, "git symbolic-ref HEAD"),
        sh(&f.checkout, "git rev-parse HEAD"),
        sh(&f.checkout, "git status --porcelain --ignored"),
        sh(&f.checkout, "git ls-files -s | sha256sum"),
        sh(
            &f.checkout,
            "find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum",
        ),
        sh(&f.checkout, "git for-each-ref"),
        sh(&f.checkout, "cat .git/config"),
    ]
}

fn the_checkout_is_left_exactly_as_it_was(backend: Backend) {
    let f = Fixture::build(backend, "--depth 1", TOKEN);
    std::fs::write(f.checkout.join("local-notes.txt"), "uncommitted work\n").unwrap();
    let before = checkout_state(&f);
    let shallow = std::fs::read(f.checkout.join(".git/shallow")).unwrap();
    let run = f.run(
        &plan(vec![
            create_mr(
                "quartermaster/cargo",
                &[greeting(), farewell()],
                "individual_on_failure",
            ),
            create_mr("quartermaster/other", &[greeting()], "batch"),
        ]),
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(checkout_state(&f), before);
    assert_eq!(
        std::fs::read(f.checkout.join(".git/shallow")).unwrap(),
        shallow
    );
    sh(
        &f.checkout,
        "git log --oneline >/dev/null && git fsck --no-progress",
    );
}

const CANARY: &str = "qm_canary_5f1d9c0e7b2a";

fn the_token_never_reaches_children_config_reports_or_logs(backend: Backend) {
    let f = Fixture::build(backend, "", CANARY);
    // What actions/checkout persists: an auth header for the token, and a credentials file it
    // includes. The URL form is what GitLab Runner leaves.
    let b64 = "eC1hY2Nlc3MtdG9rZW46cW1fY2FuYXJ5XzVmMWQ5YzBlN2IyYQ=="; // x-access-token:<canary>
    let creds = f.root.path().join("git-credentials.config");
    std::fs::write(
        &creds,
        format!("[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic {b64}\n"),
    )
    .unwrap();
    sh(
        &f.checkout,
        &format!(
            "git config http.https://github.com/.extraheader 'AUTHORIZATION: basic {b64}' && \
             git config includeIf.gitdir:{}/.git.path {} && \
             git config remote.mirror.url https://oauth2:{CANARY}@gitlab.example.com/g/p.git && \
             git config remote.origin.pushurl https://oauth2:{CANARY}@gitlab.example.com/g/p.git && \
             git config url.https://x-access-token:{CANARY}@github.com/.insteadOf https://github.com/ && \
             git init --quiet --bare .git/modules/vendored && \
             git --git-dir=.git/modules/vendored config http.https://github.com/.extraheader 'AUTHORIZATION: basic {b64}'",
            f.checkout.display(),
            creds.display()
        ),
    );
    let config_before = std::fs::read(f.checkout.join(".git/config")).unwrap();
    let submodule_before = std::fs::read(f.checkout.join(".git/modules/vendored/config")).unwrap();
    let creds_before = std::fs::read(&creds).unwrap();
    let run = f.run_with(
        &plan(vec![create_mr(
            "quartermaster/cargo",
            &[greeting()],
            "batch",
        )]),
        &[],
        &[
            ("QM_TOKEN", CANARY),
            ("GITHUB_TOKEN", CANARY),
            ("GITLAB_TOKEN", CANARY),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.said());
    let report = std::fs::read_to_string(f.root.path().join("report.json")).unwrap();
    let read = |name: &str| std::fs::read_to_string(f.root.path().join(name)).unwrap_or_default();
    let places = [
        ("the GitHub step outputs", read("github-output")),
        ("the GitHub job summary", read("step-summary.md")),
        ("the report", report),
        ("the summary", run.summary.clone()),
        // `::add-mask::` lines carry the secret to the runner, which hides it and never shows them.
        (
            "stdout",
            run.stdout
                .lines()
                .filter(|l| !l.starts_with("::add-mask::"))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        ("stderr", run.stderr.clone()),
        (
            "the forge records",
            serde_json::to_string(&f.pulls()).unwrap(),
        ),
        ("the pushed branch", sh(&f.remote, "git log -p --all")),
    ];
    for (place, text) in places {
        assert!(
            !text.contains(CANARY),
            "the token leaked into {place}: {text}"
        );
        assert!(!text.contains(b64), "the encoded token leaked into {place}");
    }
    assert_eq!(
        std::fs::read(&creds).unwrap(),
        creds_before,
        "credentials file restored"
    );
    assert_eq!(
        std::fs::read(f.checkout.join(".git/config")).unwrap(),
        config_before,
        "checkout config restored byte for byte"
    );
    assert_eq!(
        std::fs::read(f.checkout.join(".git/modules/vendored/config")).unwrap(),
        submodule_before,
        "submodule config restored byte for byte"
    );
    assert!(
        run.output()
            .contains("credentials persisted in the checkout are hidden while commands run")
    );
}

#[test]
fn working_dir_must_stay_inside_the_repository() {
    let f = Fixture::new();
    let seed = f.root.path().join("seed");
    sh(
        &seed,
        "ln -s /tmp escape && mkdir -p sub && git add escape && git commit -qm link && git push -q ../remote.git main",
    );
    let mut escape = create_mr("quartermaster/escape", &[greeting()], "batch");
    escape["working_dir"] = json!("escape");
    let mut missing = create_mr("quartermaster/missing", &[greeting()], "batch");
    missing["working_dir"] = json!("nowhere");
    let run = f.run(&plan(vec![escape, missing]), &[]);
    assert_eq!(run.status(0), "failed");
    assert_eq!(
        run.reason(0),
        "git: working_dir `escape` leads outside the repository (through a symbolic link)"
    );
    assert_eq!(
        run.reason(1),
        "git: working_dir `nowhere` does not exist in the repository"
    );
}

/// A default branch the remote lacks stops the run before any action (no issue either), and the
/// error lists the branches the remote has.
#[test]
fn a_missing_default_branch_stops_the_run_before_any_action() {
    let f = Fixture::new();
    let mut p = plan(vec![
        create_mr("quartermaster/cargo", &[greeting()], "batch"),
        json!({"type": "create_issue", "title": "t", "body": "b", "labels": [], "confidence": 0.9}),
    ]);
    p["repo_context"]["default_branch"] = Value::from("trunk");
    let run = f.run(&p, &[]);
    assert_eq!(run.code, 2, "{}", run.said());
    assert_eq!(run.report["actions"], json!([]));
    assert!(f.issues().is_empty(), "no action ran");
    let said: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("error: ") || l.starts_with("hint: "))
        .collect();
    insta::assert_snapshot!(said.join("\n"));
}

#[test]
fn a_branch_that_moves_while_quartermaster_works_is_not_overwritten() {
    let f = Fixture::new();
    f.open_cargo_pr();
    f.human_commit("main", "README.md");
    let main = f.branches()["main"].clone();
    let update = json!({
        "type": "update_mr", "mr_id": 1, "branch": "quartermaster/cargo",
        "updates": [greeting()], "commands": [command(&greeting())], "test_command": "make pause",
        "confidence": 0.8
    });
    let plan_path = f.write_plan(&plan(vec![update]));
    let mut child = f
        .qm_process()
        .arg("run")
        .arg("--plan")
        .arg(&plan_path)
        .arg("--checkout")
        .arg(&f.checkout)
        .args(["--remote", "origin", "--forge", "local", "--forge-dir"])
        .arg(&f.forge)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the branch is committed, its tests take a while: another push lands meanwhile.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains("committed ") {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut stderr, &mut line).unwrap() == 0 {
            panic!("the run ended before committing: {said}");
        }
        said.push_str(&line);
    }
    sh(
        &f.remote,
        "git update-ref refs/heads/quartermaster/cargo refs/heads/main",
    );
    std::io::Read::read_to_string(&mut stderr, &mut said).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(1), "{said}");
    assert!(
        said.contains("git: quartermaster/cargo changed on the remote while Quartermaster worked"),
        "{said}"
    );
    assert_eq!(
        f.branches()["quartermaster/cargo"],
        main,
        "the other push stands"
    );
}

#[test]
fn no_temporary_directory_is_left_behind() {
    let f = Fixture::new();
    let run = f.run(
        &plan(vec![create_mr(
            "quartermaster/cargo",
            &[greeting(), farewell()],
            "individual_on_failure",
        )]),
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.said());
    let left: Vec<_> = std::fs::read_dir(f.tmp())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{left:?}");
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

/// A fork's PR on a branch named `quartermaster/cargo`, even with the bot label, is someone else's:
/// it is neither touched nor mistaken for the PR of Quartermaster's own branch.
fn fork_prs_are_never_quartermasters(backend: Backend) {
    let f = Fixture::on(backend);
    let fork = f.seed_fork_pull("quartermaster/cargo", &["quartermaster"]);
    let run = f.run(
        &plan(vec![
            json!({"type": "close_mr", "mr_id": fork, "delete_branch": true, "confidence": 0.9}),
            create_mr("quartermaster/cargo", &[greeting()], "batch"),
        ]),
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "denied");
    assert_eq!(
        run.reason(0),
        format!("PR #{fork} is not Quartermaster's: its branch quartermaster/cargo is in a fork")
    );
    assert_eq!(run.status(1), "done", "{}", run.said());
    let ours = run.action(1)["pull_requests"][0]["number"]
        .as_u64()
        .unwrap();
    assert_ne!(ours, fork);
    let pulls = f.pulls();
    assert_eq!(pulls.len(), 2);
    assert!(pulls.iter().all(|p| p["state"] == "open"));
}

#[test]
fn fork_prs_are_never_quartermasters_on_github() {
    fork_prs_are_never_quartermasters(Backend::Github)
}

#[test]
fn fork_prs_are_never_quartermasters_on_gitlab() {
    fork_prs_are_never_quartermasters(Backend::Gitlab)
}

#[test]
fn a_cancelled_run_kills_its_command_and_restores_the_checkout() {
    let f = Fixture::new();
    sh(
        &f.checkout,
        "git config http.https://github.com/.extraheader 'AUTHORIZATION: basic eA=='",
    );
    let config_before = std::fs::read(f.checkout.join(".git/config")).unwrap();
    let mut action = create_mr("quartermaster/cargo", &[greeting()], "batch");
    action["test_command"] = json!("make hang");
    let plan_path = f.write_plan(&plan(vec![action]));
    let child = f
        .qm_process()
        .arg("run")
        .arg("--plan")
        .arg(&plan_path)
        .arg("--checkout")
        .arg(&f.checkout)
        .args(["--remote", "origin", "--forge", "local", "--forge-dir"])
        .arg(&f.forge)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let hung = loop {
        if let Some(pid) = processes_running("sleep 1213").first() {
            break *pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the test never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // While the command runs, the credentials are hidden.
    assert_ne!(
        std::fs::read(f.checkout.join(".git/config")).unwrap(),
        config_before
    );
    sh(f.root.path(), &format!("kill -TERM {}", child.id()));
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(128 + 15));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("quartermaster: interrupted by signal 15; stopping the running command and writing the report"),
        "{stderr}"
    );
    assert!(
        !processes_running("sleep 1213").contains(&hung),
        "the test command {hung} survived"
    );
    assert_eq!(
        std::fs::read(f.checkout.join(".git/config")).unwrap(),
        config_before,
        "checkout config restored byte for byte"
    );
    assert!(!f.branches().contains_key("quartermaster/cargo"));
}

#[test]
fn packages_must_be_declared_and_scripts_must_exist() {
    let f = Fixture::new();
    f.commit_file(
        "main",
        "package.json",
        r#"{"name": "hello", "dependencies": {"left-pad": "^1.0.0"}, "scripts": {"test": "make test"}}"#,
    );
    // An npm ecosystem whose command is a Makefile target: the checks come before anything runs.
    let mission = f.custom_mission(
        "js",
        json!({"npm": {"packages": "npm", "versions": "semver",
                       "commands": ["make <pkg>"], "files": ["package.json"]}}),
    );
    let npm = |package: &str, branch: &str, test: &str| {
        let mut action = create_mr(
            branch,
            &[json!({"package": package, "from": "1.0.0", "to": "1.0.1", "update_type": "patch"})],
            "batch",
        );
        action["commands"] = json!([format!("make {package}")]);
        action["test_command"] = json!(test);
        action
    };
    // `src` holds no package.json: nothing can confirm the package.
    let mut elsewhere = npm("left-pad", "quartermaster/in-src", "npm test");
    elsewhere["working_dir"] = json!("src");
    let mut js_plan = plan(vec![
        npm("lodash", "quartermaster/lodash", "npm test"),
        npm("left-pad", "quartermaster/left-pad", "npm run lint"),
        elsewhere,
    ]);
    js_plan["repo_context"]["ecosystems"] = json!(["npm"]);
    js_plan["repo_context"]["test_command"] = json!("npm test");
    let flags: Vec<&str> = mission.iter().map(String::as_str).collect();
    let run = f.run(&js_plan, &flags);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(
        (run.status(0), run.reason(0)),
        (
            "denied",
            "`lodash` is not a dependency the project declares in the repository root: Quartermaster updates dependencies, it does not add new ones"
        )
    );
    assert_eq!(
        (run.status(1), run.reason(1)),
        (
            "denied",
            "`npm run lint`: package.json in the repository root has no script `lint`; only the project's own scripts run"
        )
    );
    assert_eq!(run.status(2), "denied");
    assert!(
        run.reason(2).starts_with(
            "cannot confirm that `left-pad` is a declared dependency: cannot read package.json in the working directory:"
        ),
        "{}",
        run.reason(2)
    );
    for i in 0..3 {
        assert!(run.action(i)["commands"].as_array().unwrap().is_empty());
    }
}
