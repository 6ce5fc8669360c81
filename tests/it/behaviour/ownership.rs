//! Whose branches and PRs Quartermaster touches: its own, regenerated and force-pushed; never one
//! with a human's commits, another person's PR or issue, a fork's PR, or a branch that moved.

use crate::common;

use crate::on_every_forge;
use common::*;
use serde_json::json;

on_every_forge!(
    update_mr_regenerates_from_the_new_base_and_force_pushes,
    update_mr_leaves_a_branch_with_human_commits_alone,
    an_amended_bot_commit_counts_as_a_human_edit,
    create_mr_also_respects_human_commits,
    other_peoples_prs_and_issues_are_refused,
    close_mr_comments_closes_and_deletes_the_branch,
    close_mr_keeps_a_branch_with_human_commits,
);

on_every_forge!(
    remote: fork_prs_are_never_quartermasters,
);

fn update_mr_regenerates_from_the_new_base_and_force_pushes(backend: Backend) {
    let f = Fixture::on(backend);
    let first = f.run(&one_pr(), &[]);
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
    let first = f.run(&one_pr(), &[]);
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
    let recreate = f.run(&one_pr(), &[]);
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
    let mut child = f.spawn_local_run(&plan(vec![update]));
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
