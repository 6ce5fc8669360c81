//! The GitHub forge against an HTTP fake of GitHub's API: the exact requests it sends, how few,
//! how it survives faults, and how it speaks to the Actions runner.

use crate::common;

use common::github::Fault;
use common::*;
use serde_json::json;

pub(crate) const FIND: &str =
    "/repos/octo/hello/pulls?head=octo%3Aquartermaster%2Fcargo&state=all&per_page=10";
/// After the plan's actions: the dependency dashboard looked for, and the bot's open PRs listed.
pub(crate) const DASHBOARD: &str =
    "/repos/octo/hello/issues?labels=quartermaster&state=open&per_page=100";
pub(crate) const OPEN: &str =
    "/repos/octo/hello/pulls?state=open&sort=created&direction=asc&per_page=100";

/// The requests of upkeep and of a dashboard that is created (`true`) or left as it is.
pub(crate) fn upkeep_calls(creates: bool) -> Vec<(String, String)> {
    let mut out = vec![
        ("GET".to_string(), DASHBOARD.to_string()),
        ("GET".to_string(), OPEN.to_string()),
    ];
    if creates {
        out.push(("POST".into(), "/repos/octo/hello/issues".into()));
    }
    out
}

#[test]
fn a_new_pr_with_labels_takes_three_requests_and_a_rerun_one_besides_upkeep() {
    let f = Fixture::on(Backend::Github);
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let requests = f.github_requests();
    assert_eq!(requests.len(), 6, "{requests:#?}");
    let after: Vec<(String, String)> = requests[3..]
        .iter()
        .map(|r| (r.method.clone(), r.uri.clone()))
        .collect();
    assert_eq!(after, upkeep_calls(true));
    assert!(
        requests
            .iter()
            .all(|r| r.authorization == format!("Bearer {TOKEN}"))
    );
    assert_eq!(
        (requests[0].method.as_str(), requests[0].uri.as_str()),
        ("GET", FIND)
    );
    assert_eq!(
        (requests[1].method.as_str(), requests[1].uri.as_str()),
        ("POST", "/repos/octo/hello/pulls")
    );
    let body = &requests[1].body;
    assert_eq!(
        body["title"],
        "chore(deps): update cargo patch dependencies"
    );
    assert_eq!(body["head"], "quartermaster/cargo");
    assert_eq!(body["base"], "main");
    assert_eq!(body["draft"], false);
    assert_eq!(body["maintainer_can_modify"], true);
    assert!(
        body["body"]
            .as_str()
            .unwrap()
            .starts_with("Patch releases.\n\n| Package | Change | Type |")
    );
    assert_eq!(body.as_object().unwrap().len(), 6);
    assert_eq!(
        (
            requests[2].method.as_str(),
            requests[2].uri.as_str(),
            &requests[2].body
        ),
        (
            "POST",
            "/repos/octo/hello/issues/1/labels",
            &json!({"labels": ["quartermaster", "dependencies"]})
        )
    );
    assert_eq!(run.report["forge_requests"], 6);

    f.forget_github_requests();
    let again = f.run(&one_pr(), &[]);
    assert_eq!(again.code, 0, "{}", again.said());
    // The dashboard, unchanged, is not edited.
    let mut expected = vec![("GET".to_string(), FIND.to_string())];
    expected.extend(upkeep_calls(false));
    assert_eq!(f.calls(), expected);
    assert_eq!(again.report["forge_requests"], 3);
    assert_eq!(
        again.action(0)["pull_requests"][0]["operation"],
        "unchanged"
    );
}

#[test]
fn a_502_after_github_acted_does_not_duplicate_the_pr() {
    let f = Fixture::on(Backend::Github);
    let mut lost = Fault::new("POST", "/pulls", 502, json!({"message": "Server Error"}));
    lost.after_effect = true;
    f.fault(lost);
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(
        f.pulls().len(),
        1,
        "one PR, found again after the lost answer"
    );
    assert_eq!(
        f.pulls()[0]["labels"],
        json!(["quartermaster", "dependencies"])
    );
    let posts = f
        .calls()
        .iter()
        .filter(|(m, u)| m == "POST" && u.ends_with("/pulls"))
        .count();
    assert_eq!(posts, 1);
}

#[test]
fn labels_refused_right_after_creation_are_retried() {
    let f = Fixture::on(Backend::Github);
    f.fault(Fault::new(
        "POST",
        "/issues/1/labels",
        422,
        json!({"message": "Validation Failed", "errors": [{"resource": "Label", "code": "invalid"}]}),
    ));
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(
        f.pulls()[0]["labels"],
        json!(["quartermaster", "dependencies"])
    );
}

#[test]
fn labels_lost_to_a_server_error_are_sent_again() {
    let f = Fixture::on(Backend::Github);
    f.fault(Fault::new(
        "POST",
        "/issues/1/labels",
        502,
        json!({"message": "Server Error"}),
    ));
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let label_posts = f
        .calls()
        .iter()
        .filter(|(m, u)| m == "POST" && u.ends_with("/labels"))
        .count();
    assert_eq!(label_posts, 2);
    assert_eq!(
        f.pulls()[0]["labels"],
        json!(["quartermaster", "dependencies"])
    );
}

#[test]
fn a_pr_the_lookup_missed_is_adopted_and_brought_up_to_date() {
    let f = Fixture::on(Backend::Github);
    let existing = f.seed_pull("quartermaster/cargo", &["quartermaster"]);
    // The listing lags behind: it does not show the open PR yet.
    f.fault(Fault::new("GET", "/pulls", 200, json!([])));
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(run.reason(0), format!("PR #{existing} created"));
    let pulls = f.pulls();
    assert_eq!(pulls.len(), 1, "no second PR");
    assert_eq!(
        pulls[0]["title"],
        "chore(deps): update cargo patch dependencies"
    );
    assert!(
        pulls[0]["body"]
            .as_str()
            .unwrap()
            .starts_with("Patch releases.")
    );
    assert_eq!(pulls[0]["labels"], json!(["quartermaster", "dependencies"]));
}

#[test]
fn a_bad_token_fails_with_advice_and_the_report_is_written() {
    let f = Fixture::on(Backend::Github);
    f.github().state.lock().unwrap().token = "another-token".into();
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "failed");
    assert_eq!(
        run.reason(0),
        "forge: the forge refused the token: GitHub answered 401 (Bad credentials) while looking for the branch's PR: the token is missing, wrong or expired"
    );
    assert!(f.branches().len() == 1, "nothing pushed");
}

#[test]
fn actions_not_permitted_to_open_prs_names_the_setting() {
    let f = Fixture::on(Backend::Github);
    f.fault(Fault::new(
        "POST",
        "/pulls",
        403,
        json!({"message": "GitHub Actions is not permitted to create or approve pull requests.", "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request", "status": "403"}),
    ));
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert!(
        run.reason(0).contains("Turn on \"Allow GitHub Actions to create and approve pull requests\" in the settings of octo/hello"),
        "{}",
        run.reason(0)
    );
    assert!(f.pulls().is_empty());
}

#[test]
fn an_exhausted_budget_fails_the_remaining_actions_with_the_reason() {
    let f = Fixture::on(Backend::Github);
    let mut limit = Fault::new(
        "GET",
        "/pulls",
        429,
        json!({"message": "API rate limit exceeded"}),
    );
    limit.headers = vec![("retry-after", "3600".into())];
    f.fault(limit);
    let run = f.run(
        &plan(vec![
            create_mr("quartermaster/cargo", &[greeting()], "batch"),
            json!({"type": "create_issue", "title": "t", "body": "b", "labels": [], "confidence": 0.9}),
        ]),
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.said());
    assert!(
        run.reason(0)
            .contains("the forge asked to wait 3600s (API rate limit exceeded)"),
        "{}",
        run.reason(0)
    );
    assert_eq!(run.status(1), "failed");
    assert!(
        run.reason(1)
            .contains("the remaining forge calls of this run are skipped"),
        "{}",
        run.reason(1)
    );
    assert_eq!(
        f.github_requests().len(),
        1,
        "no request after the budget ran out"
    );
    assert!(f.issues().is_empty());
}

#[test]
fn outputs_summary_groups_and_masks_for_the_runner() {
    let f = Fixture::on(Backend::Github);
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let outputs = std::fs::read_to_string(f.root.path().join("github-output")).unwrap();
    for line in [
        &format!("report={}\n", f.root.path().join("report.json").display()),
        "done=1\n",
        "failed=0\n",
        "exit-code=0\n",
        "pull-request-numbers=1\n",
        "pull-requests=[{\"number\":1,\"url\":\"https://github.com/octo/hello/pull/1\",\"branch\":\"quartermaster/cargo\",\"operation\":\"created\"}]\n",
        "pull-request-urls=https://github.com/octo/hello/pull/1\n",
    ] {
        assert!(outputs.contains(line), "{line} not in\n{outputs}");
    }
    let summary = std::fs::read_to_string(f.root.path().join("step-summary.md")).unwrap();
    assert!(summary.starts_with("## Quartermaster: 1 done, 0 failed, 0 skipped, 0 denied"));
    let out = &run.stdout;
    assert!(out.contains(&format!("::add-mask::{TOKEN}\n")));
    assert!(out.contains("::group::[1/1] create_mr quartermaster/cargo\n::stop-commands::"));
    assert!(out.contains("::endgroup::"));
}

#[test]
fn command_output_cannot_issue_workflow_commands() {
    let f = Fixture::on(Backend::Github);
    let mut inject = create_mr("quartermaster/cargo", &[greeting()], "batch");
    inject["test_command"] = json!("make inject");
    let run = f.run(&plan(vec![inject]), &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    let mut stopped: Option<String> = None;
    let mut seen = 0;
    for line in run.stdout.lines() {
        if let Some(token) = line.strip_prefix("::stop-commands::") {
            stopped = Some(token.to_string());
        } else if stopped.as_ref().is_some_and(|t| line == format!("::{t}::")) {
            stopped = None;
        } else if line.contains("::error::injected by a test") {
            seen += 1;
            assert!(stopped.is_some(), "unguarded: {line}");
        }
    }
    assert!(seen >= 1, "{}", run.stdout);
}

#[test]
fn an_invalid_plan_becomes_annotations() {
    let f = Fixture::on(Backend::Github);
    let mut bad = create_mr("quartermaster/cargo", &[greeting()], "batch");
    bad["test_command"] = json!("python -c 'import os'");
    let run = f.run(&plan(vec![bad]), &[]);
    assert_eq!(run.code, 2, "{}", run.said());
    let plan_path = f.root.path().join("plan.json").display().to_string();
    assert!(
        run.stdout.contains(&format!(
            "::error file={plan_path},title=test_command.inline_code::/actions/0/test_command: `python -c` runs code written in the plan"
        )),
        "{}",
        run.stdout
    );
    assert!(f.github_requests().is_empty(), "nothing reached GitHub");
}

#[test]
fn the_default_token_and_persisted_credentials_are_warned_about() {
    let f = Fixture::on(Backend::Github);
    sh(
        &f.checkout,
        "git config http.https://github.com/.extraheader 'AUTHORIZATION: basic eA=='",
    );
    let run = f.run_with(&one_pr(), &[], &[("QM_TOKEN_IS_DEFAULT", "true")]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert!(run.stdout.contains("::warning title=Quartermaster::The token is the workflow's GITHUB_TOKEN: PRs it opens do not trigger other workflows"));
    assert!(
        run.stdout
            .contains("::warning title=Quartermaster::The checkout holds persisted credentials.")
    );
}

#[test]
fn a_push_refused_for_workflow_files_names_the_permission() {
    let f = Fixture::on(Backend::Github);
    let hook = f.remote.join("hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho 'refusing to allow a GitHub App to create or update workflow `.github/workflows/ci.yml` without `workflows` permission' >&2\nexit 1\n",
    )
    .unwrap();
    sh(&f.remote, "chmod +x hooks/pre-receive");
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert!(
        run.reason(0).starts_with(
            "GitHub refused the push because it changes files under .github/workflows"
        ),
        "{}",
        run.reason(0)
    );
    assert!(
        run.reason(0)
            .contains("personal access token with the `workflow` scope")
    );
}

#[test]
fn github_enterprise_server_paths_keep_the_api_prefix() {
    let f = Fixture::on(Backend::Github);
    let api = format!("{}/api/v3", f.github().uri());
    let run = f.run_with(&one_pr(), &[], &[("GITHUB_API_URL", &api)]);
    assert_eq!(run.code, 0, "{}", run.said());
    let uris: Vec<String> = f.github_requests().into_iter().map(|r| r.uri).collect();
    assert!(
        uris.iter()
            .all(|u| u.starts_with("/api/v3/repos/octo/hello/")),
        "{uris:?}"
    );
}

#[test]
fn missing_repository_or_token_is_a_configuration_error() {
    let f = Fixture::on(Backend::Github);
    let run = f.run_with(&one_pr(), &[], &[("GITHUB_REPOSITORY", "")]);
    assert_eq!(run.code, 2);
    let said = run.stderr.lines().rev().take(2).collect::<Vec<_>>();
    insta::assert_snapshot!(said.into_iter().rev().collect::<Vec<_>>().join("\n"));
    // The report, the job summary and the outputs still say what happened.
    assert_eq!(run.report["exit_code"], 2);
    assert_eq!(
        run.report["error"],
        "the github forge needs the repository, and GITHUB_REPOSITORY is not set (GitHub Actions sets it)"
    );
    assert_eq!(
        run.report["hint"],
        "outside GitHub Actions, name it with --repository OWNER/NAME (QM_REPOSITORY)"
    );
    let summary = std::fs::read_to_string(f.root.path().join("step-summary.md")).unwrap();
    assert!(
        summary.contains(
            "Quartermaster could not start; nothing ran.\n\n> the github forge needs the repository"
        ),
        "{summary}"
    );
    let outputs = std::fs::read_to_string(f.root.path().join("github-output")).unwrap();
    assert!(outputs.contains("exit-code=2\n"), "{outputs}");
    let run = f.run_with(&one_pr(), &[], &[("QM_TOKEN", "")]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("error: no token: set QM_TOKEN or GITHUB_TOKEN"),
        "{}",
        run.stderr
    );
}

#[test]
fn action_yml_declares_exactly_the_outputs_written() {
    let f = Fixture::on(Backend::Github);
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let outputs = std::fs::read_to_string(f.root.path().join("github-output")).unwrap();
    let mut written: Vec<String> = Vec::new();
    let mut lines = outputs.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delimiter)) = line.split_once("<<") {
            written.push(name.to_string());
            for inner in lines.by_ref() {
                if inner == delimiter {
                    break;
                }
            }
        } else if let Some((name, _)) = line.split_once('=') {
            written.push(name.to_string());
        }
    }
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/action.yml")).unwrap();
    let action = &yaml_rust2::YamlLoader::load_from_str(&text).unwrap()[0];
    let mut declared: Vec<String> = action["outputs"]
        .as_hash()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    written.sort();
    declared.sort();
    assert_eq!(written, declared);
}
