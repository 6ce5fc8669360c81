//! A PR split off a batch speaks of the update it carries: its own title, description and commit
//! message, saying it was split off, why, and what became of the other updates.

use crate::common::*;

/// The PR body without its build marker, which holds the base commit of this run.
fn body_of(pull: &serde_json::Value) -> String {
    pull["body"]
        .as_str()
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("<!-- quartermaster:build:"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// greeting 1.0.1 passes, farewell 2.0.1 breaks the app's test: the batch fails, each update is
/// tried alone, and greeting's PR says so, naming farewell's failure; the batch's description
/// (which speaks of both) is not in it.
#[test]
fn a_split_pr_says_it_was_split_off_and_why() {
    let f = Fixture::new();
    let run = f.run(&both_updates("individual_on_failure"), &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    let pulls = f.pulls();
    assert_eq!(pulls.len(), 1, "{}", run.said());
    let body = body_of(&pulls[0]);
    assert!(!body.contains("Patch releases."), "{body}");
    insta::assert_snapshot!("split_pr_title", pulls[0]["title"].as_str().unwrap());
    insta::assert_snapshot!("split_pr_body", body);
    let message = sh(
        &f.remote,
        "git log -1 --format=%B quartermaster/cargo--greeting",
    );
    insta::assert_snapshot!("split_commit_message", message);
}

/// With `individual`, no batch is tried: the PR says that the strategy split it.
#[test]
fn an_individual_pr_says_its_strategy_split_it() {
    let f = Fixture::new();
    let run = f.run(&both_updates("individual"), &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    let pulls = f.pulls();
    assert_eq!(pulls.len(), 1, "{}", run.said());
    assert_eq!(
        pulls[0]["title"],
        "chore(deps): update greeting from 1.0.0 to 1.0.1"
    );
    let body = body_of(&pulls[0]);
    assert!(
        body.starts_with(
            "Updates `greeting` from `1.0.0` to `1.0.1`.\n\nSplit off `quartermaster/cargo` (“chore(deps): update cargo patch dependencies”): the action's fallback strategy `individual` gives each update a branch of its own.\n\nThe action's other updates, each on a branch of its own:\n- `farewell`: failed its tests: `cargo test` failed: exit code 101; no PR\n"
        ),
        "{body}"
    );
}
