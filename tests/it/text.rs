//! What Quartermaster writes from plan text and child output: commits, issues, comments, the job
//! log. None of it pings, closes, skips CI, rewrites a human's issue, or steers the terminal.

use crate::common::*;
use serde_json::json;

/// A human's issue with the bot label and the very title of the plan's issue is left alone: only
/// an issue carrying Quartermaster's hidden marker is ever rewritten.
#[test]
fn a_humans_issue_that_merely_has_the_label_is_never_rewritten() {
    let f = Fixture::new();
    let human = f.seed_issue(&["quartermaster"]);
    let issue = json!({"type": "create_issue", "title": "A human's issue",
        "body": "Quartermaster's take.", "labels": [], "confidence": 0.9});
    let run = f.run(&plan(vec![issue.clone()]), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    // Besides the dependency dashboard.
    let plan_issues = || -> Vec<serde_json::Value> {
        f.issues()
            .into_iter()
            .filter(|i| i["title"] != "Dependency dashboard")
            .collect()
    };
    let issues = plan_issues();
    assert_eq!(issues.len(), 2);
    assert_eq!(issues[0]["number"], human);
    assert_eq!(issues[0]["body"], "");
    assert!(
        issues[1]["body"]
            .as_str()
            .unwrap()
            .starts_with("Quartermaster's take.")
    );
    let again = f.run(&plan(vec![issue]), &[]);
    assert_eq!(
        again.reason(0),
        format!("issue #{} unchanged", issues[1]["number"])
    );
    assert_eq!(plan_issues().len(), 2);
}

/// Plan text reaching a commit closes no issue, skips no CI and pings nobody.
#[test]
fn commit_messages_from_plan_text_close_and_skip_nothing() {
    let f = Fixture::new();
    let mut action = create_mr("quartermaster/cargo", &[greeting()], "batch");
    action["title"] = json!("fix: bump greeting [skip ci] fixes #1 @alice");
    let run = f.run(&plan(vec![action]), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let message = sh(&f.remote, "git log -1 --format=%s quartermaster/cargo");
    assert_eq!(message, "fix: bump greeting (skip ci) fixes `#1` `@alice`");
}

/// 60,000 characters of references grow past the forge's limit once neutralised; the marker is
/// kept whole after the cut, so a second run finds the comment instead of posting it again.
#[test]
fn a_long_comment_is_posted_once() {
    let f = Fixture::new();
    f.open_cargo_pr();
    let comment = json!({"type": "comment_mr", "mr_id": 1, "body": "#1".repeat(30_000),
        "confidence": 0.9});
    for _ in 0..2 {
        let run = f.run(&plan(vec![comment.clone()]), &[]);
        assert_eq!(run.code, 0, "{}", run.said());
    }
    let comments = f.pulls()[0]["comments"].as_array().unwrap().clone();
    assert_eq!(comments.len(), 1);
    let body = comments[0]["body"].as_str().unwrap();
    assert!(
        body.contains("… (truncated)\n\n<!-- quartermaster:comment:"),
        "{}",
        &body[body.len() - 80..]
    );
}

/// A variable holding the token, even base64-encoded as HTTP credentials, is never handed to
/// commands, whatever `--extra-env` says.
#[test]
fn extra_env_refuses_a_variable_holding_the_encoded_token() {
    let f = Fixture::new();
    let encoded = "eC1hY2Nlc3MtdG9rZW46cW0tdGVzdC10b2tlbi03ZDQxYzA="; // x-access-token:<TOKEN>
    let run = f.run_with(
        &one_pr(),
        &["--extra-env", "DEPLOY_AUTH"],
        &[("QM_TOKEN", TOKEN), ("DEPLOY_AUTH", encoded)],
    );
    assert_eq!(run.code, 2, "{}", run.said());
    assert!(
        run.stderr.ends_with(
            "error: extra-env: `DEPLOY_AUTH` holds the forge token and is never passed to agent commands\n"
        ),
        "{}",
        run.stderr
    );
}

/// A failing command's output reaches the job log with its escape sequences made visible.
#[test]
fn child_output_cannot_steer_the_job_log() {
    let f = Fixture::new();
    let mut action = create_mr("quartermaster/cargo", &[greeting()], "batch");
    action["test_command"] = json!("make ansi");
    let run = f.run(&plan(vec![action]), &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);
    assert!(
        run.stderr.contains("| \\x1b]0;pwned\\x07\\x1b[2Jcleared"),
        "{}",
        run.stderr
    );
}
