//! The GitLab forge against an HTTP fake of GitLab's REST API: the exact requests it sends, how
//! few, how it survives faults, and how it refuses tokens that cannot work.

use crate::common;

use common::gitlab::Fault;
use common::*;
use serde_json::json;
use std::collections::BTreeMap;

// The gitlab crate sends an empty query (`?`) on requests without parameters; GitLab ignores it.
pub(crate) const USER: &str = "/api/v4/user?";
pub(crate) const PROJECT: &str = "/api/v4/projects/42?";
pub(crate) const FIND: &str =
    "/api/v4/projects/42/merge_requests?source_branch=quartermaster%2Fcargo";
/// After the plan's actions: the dependency dashboard looked for, and the bot's open MRs listed.
pub(crate) const DASHBOARD: &str = "/api/v4/projects/42/issues?state=opened&labels=quartermaster&search=Dependency+dashboard&in=title&per_page=100&page=1";
pub(crate) const OPEN: &str = "/api/v4/projects/42/merge_requests?state=opened&labels=quartermaster&order_by=created_at&sort=asc&per_page=100&page=1";

#[test]
fn a_new_mr_with_labels_takes_one_request_after_connecting_and_a_rerun_none_more_but_upkeeps() {
    let f = Fixture::on(Backend::Gitlab);
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let requests = f.gitlab_requests();
    assert!(
        requests.iter().all(|r| r.private_token == TOKEN),
        "{requests:#?}"
    );
    let seen: Vec<(String, String)> = requests
        .iter()
        .map(|r| (r.method.clone(), r.uri.clone()))
        .collect();
    assert_eq!(
        seen,
        vec![
            get(USER),
            get(PROJECT),
            get(FIND),
            ("POST".into(), "/api/v4/projects/42/merge_requests?".into()),
            get(DASHBOARD),
            get(OPEN),
            ("POST".into(), "/api/v4/projects/42/issues?".into()),
        ]
    );
    let form = &requests[3].form;
    let expected: BTreeMap<String, String> = [
        ("source_branch", "quartermaster/cargo"),
        ("target_branch", "main"),
        ("title", "chore(deps): update cargo patch dependencies"),
        ("labels", "quartermaster,dependencies"),
        ("remove_source_branch", "true"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .chain(std::iter::once((
        "description".to_string(),
        form["description"].clone(),
    )))
    .collect();
    assert_eq!(form, &expected);
    assert!(form["description"].starts_with("Patch releases.\n\n| Package | Change | Type |"));
    assert_eq!(run.report["forge_requests"], 7);
    assert_eq!(
        f.pulls()[0]["labels"],
        json!(["quartermaster", "dependencies"])
    );

    f.forget_gitlab_requests();
    let again = f.run(&one_pr(), &[]);
    assert_eq!(again.code, 0, "{}", again.said());
    // The dashboard, unchanged, is not edited.
    assert_eq!(
        f.calls(),
        vec![
            get(USER),
            get(PROJECT),
            get(FIND),
            get(DASHBOARD),
            get(OPEN)
        ]
    );
    assert_eq!(again.report["forge_requests"], 5);
    assert_eq!(
        again.action(0)["pull_requests"][0]["operation"],
        "unchanged"
    );
}

#[test]
fn a_job_token_alone_is_refused_with_advice_before_anything_is_pushed() {
    let advice = "create a project (or group) access token with the `api` and `write_repository` scopes and at least the Developer role";
    let f = Fixture::on(Backend::Gitlab);
    let run = f.run_with(&one_pr(), &[], &[("QM_TOKEN", "")]);
    assert_eq!(run.code, 2, "{}", run.said());
    assert!(
        run.stderr.contains(
            "error: only the CI job token is available, and it cannot create merge requests:"
        ),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(advice));
    let run = f.run_with(
        &one_pr(),
        &[],
        &[("QM_TOKEN", "glcbt-64_fixture-job-token")],
    );
    assert_eq!(run.code, 2, "{}", run.said());
    assert!(
        run.stderr
            .contains("error: the token is the CI job token, which cannot create merge requests:"),
        "{}",
        run.stderr
    );
    assert!(f.gitlab_requests().is_empty(), "GitLab was never called");
    assert_eq!(f.branches().len(), 1, "nothing pushed");
}

#[test]
fn a_refused_token_or_missing_project_stops_before_any_work() {
    let f = Fixture::on(Backend::Gitlab);
    f.gitlab().state.lock().unwrap().token = "another-token".into();
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 2, "{}", run.said());
    assert!(run.stderr.contains("refused the token"), "{}", run.stderr);
    f.gitlab().state.lock().unwrap().token = TOKEN.into();
    let run = f.run_with(&one_pr(), &[], &[("CI_PROJECT_ID", "7")]);
    assert_eq!(run.code, 2, "{}", run.said());
    assert!(run.stderr.contains("GitLab answered 404 while reading the project: project 7 does not exist or the token cannot see it"), "{}", run.stderr);
    assert_eq!(f.branches().len(), 1, "nothing pushed");
}

#[test]
fn drafts_use_the_title_prefix_and_stay_unchanged_on_rerun() {
    let f = Fixture::on(Backend::Gitlab);
    let run = f.run(&one_pr(), &["--draft"]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(
        f.pulls()[0]["title"],
        "Draft: chore(deps): update cargo patch dependencies"
    );
    f.forget_gitlab_requests();
    let again = f.run(&one_pr(), &["--draft"]);
    assert_eq!(
        again.action(0)["pull_requests"][0]["operation"],
        "unchanged"
    );
    assert!(f.calls().iter().all(|(m, _)| m == "GET"), "no edit");
}

#[test]
fn quick_actions_in_plan_text_are_escaped() {
    let f = Fixture::on(Backend::Gitlab);
    let run = f.run(
        &plan(vec![json!({
            "type": "create_issue", "title": "Breaking change in farewell",
            "body": "See the changelog.\n/merge\n/approve\ncc @maintainer",
            "labels": [], "confidence": 0.9
        })]),
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.said());
    let body = f.issues()[0]["body"].as_str().unwrap().to_string();
    assert!(
        body.starts_with("See the changelog.\n\\/merge\n\\/approve\ncc @\u{200B}maintainer"),
        "{body}"
    );
}

#[test]
fn the_token_check_is_retried_on_server_errors_and_explained_on_403() {
    let f = Fixture::on(Backend::Gitlab);
    f.fault(Fault::new(
        "GET",
        "/user",
        502,
        json!({"message": "502 Bad Gateway"}),
    ));
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let checks = f.calls().into_iter().filter(|c| *c == get(USER)).count();
    assert_eq!(checks, 2, "the token check was tried again");
    assert_eq!(run.report["forge_requests"], f.calls().len());

    let f = Fixture::on(Backend::Gitlab);
    f.fault(Fault::new(
        "GET",
        "/user",
        403,
        json!({"error": "insufficient_scope"}),
    ));
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 2, "{}", run.said());
    assert!(
        run.stderr
            .contains("answered 403 when Quartermaster checked the token with GET /user"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "give the project or group access token the `api` and `write_repository` scopes"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(f.branches().len(), 1, "nothing pushed");
}
