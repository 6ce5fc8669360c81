//! The repository's policy on every version a unit newly resolves, through the binary, on the
//! cargo fixture: its local registry's index lines carry `pubtime` and `yanked`, and the fixture's
//! OSV stand-in serves advisories. Each refusal's message is asserted; each gate has a run that
//! passes beside the run it refuses, so that no refusal can come from something else.

use crate::common::*;
use serde_json::{Value, json};

const FRESH: &str =
    "/// Greets.\npub fn greet(name: &str) -> String { format!(\"Hello, {name}!\") }";

fn greeting_to(to: &str) -> Value {
    json!({"package": "greeting", "from": "1.0.0", "to": to, "update_type": "patch"})
}

fn update_plan(branch: &str, to: &str) -> Value {
    plan(vec![create_mr(branch, &[greeting_to(to)], "batch")])
}

/// greeting 1.0.2, published `hours` ago.
fn publish_fresh(f: &Fixture, hours: u64) {
    let line = Crate {
        pubtime: Some(hours_ago(hours)),
        ..Crate::default()
    };
    f.publish_crate("greeting", "1.0.2", FRESH, &line);
}

/// Commits `text` as the repository's policy on the default branch.
pub(crate) fn commit_policy(f: &Fixture, text: &str) {
    f.commit_file("main", ".quartermaster.toml", text);
    sh(&f.checkout, "git pull -q");
}

/// A message without what changes from one run to the next: times, ages, ports, commits.
pub(crate) fn stable(text: &str) -> String {
    let rules = [
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<time>"),
        (r"published \d+ \w+( \d+ \w+)? ago", "published <age> ago"),
        (r"taken in \d+ \w+( \d+ \w+)?,", "taken in <wait>,"),
        (r"127\.0\.0\.1:\d+", "127.0.0.1:<port>"),
        (r"\(([0-9a-f]{8})\)", "(<commit>)"),
    ];
    rules
        .iter()
        .fold(text.to_string(), |text, (pattern, with)| {
            regex::Regex::new(pattern)
                .unwrap()
                .replace_all(&text, *with)
                .into_owned()
        })
}

/// Asserts that action 0 was refused before its tests, and pushed and opened nothing.
pub(crate) fn refused_before_tests(f: &Fixture, run: &Run, status: &str, code: &str) {
    assert_eq!(run.status(0), status, "{}", run.said());
    assert!(
        run.reason(0).contains(&format!("[{code}]")),
        "{}",
        run.reason(0)
    );
    assert!(
        run.action(0)["test"].is_null(),
        "no test ran: {}",
        run.action(0)
    );
    let findings = &run.action(0)["changes"][0]["findings"];
    assert!(
        findings
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == code && f["blocking"] == true),
        "{findings}"
    );
    assert_eq!(
        f.branches().len(),
        1,
        "nothing was pushed: {:?}",
        f.branches()
    );
    assert!(f.pulls().is_empty(), "no PR record");
}

#[test]
fn a_too_new_direct_version_is_refused_before_its_tests() {
    let f = Fixture::new();
    publish_fresh(&f, 2);
    let run = f.run(&update_plan("quartermaster/fresh", "1.0.2"), &[]);
    refused_before_tests(&f, &run, "denied", "policy.release_too_new");
    insta::assert_snapshot!(stable(run.reason(0)));
    let checked = &run.action(0)["screening"][0]["checked"][0];
    assert_eq!(checked["package"], "greeting");
    assert_eq!(checked["age"], "too new");
    assert!(
        run.stderr.contains("minimum release age 3 days"),
        "{}",
        run.stderr
    );
    assert!(
        f.osv
            .queried()
            .contains(&("crates.io".into(), "greeting".into(), "1.0.2".into())),
        "advisories were asked too"
    );
}

#[test]
fn a_too_new_transitive_version_is_refused() {
    let f = Fixture::new();
    let helper = Crate {
        pubtime: Some(hours_ago(5)),
        ..Crate::default()
    };
    f.publish_crate("helper", "1.0.0", "pub fn help() {}", &helper);
    let greeting = Crate {
        deps: vec![("helper".into(), "1.0".into())],
        ..Crate::default()
    };
    f.publish_crate("greeting", "1.0.2", FRESH, &greeting);
    let run = f.run(&update_plan("quartermaster/transitive", "1.0.2"), &[]);
    refused_before_tests(&f, &run, "denied", "policy.release_too_new");
    insta::assert_snapshot!(stable(run.reason(0)));
    let checked = run.action(0)["screening"][0]["checked"]
        .as_array()
        .unwrap()
        .clone();
    let helper = checked.iter().find(|c| c["package"] == "helper").unwrap();
    assert_eq!(
        (helper["direct"].clone(), helper["age"].clone()),
        (json!(false), json!("too new"))
    );
    let greeting = checked.iter().find(|c| c["package"] == "greeting").unwrap();
    assert_eq!(
        greeting["age"], "old enough",
        "the direct update itself passes"
    );
}

#[test]
fn an_old_enough_version_passes_and_its_pr_says_what_was_checked() {
    let f = Fixture::new();
    let run = f.run(&update_plan("quartermaster/old", "1.0.1"), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let body = f.pulls()[0]["body"].as_str().unwrap().to_string();
    assert!(
        body.contains("Checked: 1 newly resolved version against a minimum release age of 3 days, deprecations and known advisories (OSV)."),
        "{body}"
    );
    assert!(
        body.contains("- greeting 1.0.0 → 1.0.1: release notes unavailable (the registry names no source repository)"),
        "{body}"
    );
    assert_eq!(f.osv.queried_sorted(), osv::greeting_queries());
    assert_eq!(
        run.action(0)["screening"][0]["checked"][0]["age"],
        "old enough"
    );
}

#[test]
fn minimum_zero_or_an_exclusion_lets_a_fresh_version_through() {
    let f = Fixture::new();
    publish_fresh(&f, 1);
    commit_policy(&f, "[release-age]\nexclude = [\"farewell\"]\n");
    let other = f.run(&update_plan("quartermaster/other", "1.0.2"), &[]);
    assert_eq!(
        other.status(0),
        "denied",
        "excluding another package changes nothing"
    );
    commit_policy(&f, "[release-age]\nexclude = [\"greet*\"]\n");
    let excluded = f.run(&update_plan("quartermaster/excluded", "1.0.2"), &[]);
    assert_eq!(excluded.status(0), "done", "{}", excluded.said());
    assert_eq!(
        excluded.action(0)["screening"][0]["checked"][0]["age"],
        "exempt"
    );
    commit_policy(&f, "[release-age]\nminimum = \"0\"\n");
    let off = f.run(&update_plan("quartermaster/off", "1.0.2"), &[]);
    assert_eq!(off.status(0), "done", "{}", off.said());
    assert!(
        off.stderr.contains("no minimum release age"),
        "{}",
        off.stderr
    );
    assert_eq!(
        off.action(0)["screening"][0]["checked"][0]["age"],
        "no minimum"
    );
}

#[test]
fn a_policy_in_the_working_tree_or_on_another_branch_is_ignored() {
    let f = Fixture::new();
    publish_fresh(&f, 1);
    let relaxed = "[release-age]\nminimum = \"0\"\n";
    sh(&f.checkout, "git checkout -q -b relaxed");
    std::fs::write(f.checkout.join(".quartermaster.toml"), relaxed).unwrap();
    sh(
        &f.checkout,
        "git add .quartermaster.toml && git commit -qm relax && git push -q origin relaxed",
    );
    let run = f.run(&update_plan("quartermaster/branch", "1.0.2"), &[]);
    assert_eq!(
        run.status(0),
        "denied",
        "the policy of a checked-out branch: {}",
        run.said()
    );
    assert!(
        run.stderr
            .contains("policy from the defaults (no .quartermaster.toml at main ("),
        "{}",
        run.stderr
    );
    sh(&f.checkout, "git checkout -q main");
    std::fs::write(f.checkout.join(".quartermaster.toml"), relaxed).unwrap();
    let run = f.run(&update_plan("quartermaster/tree", "1.0.2"), &[]);
    assert_eq!(
        run.status(0),
        "denied",
        "an uncommitted policy: {}",
        run.said()
    );
    // Control: the same policy committed on the default branch is the one in force.
    std::fs::remove_file(f.checkout.join(".quartermaster.toml")).unwrap();
    commit_policy(&f, relaxed);
    let run = f.run(&update_plan("quartermaster/main", "1.0.2"), &[]);
    assert_eq!(run.status(0), "done", "{}", run.said());
}

#[test]
fn a_vulnerable_to_is_refused_naming_the_advisory() {
    let f = Fixture::new();
    f.osv.add(osv::advisory(
        "GHSA-7rjr-3q55-vv33",
        "crates.io",
        "greeting",
        &["1.0.1"],
        "1.0.2",
    ));
    let run = f.run(&update_plan("quartermaster/vulnerable", "1.0.1"), &[]);
    refused_before_tests(&f, &run, "denied", "policy.vulnerable");
    insta::assert_snapshot!(stable(run.reason(0)));
    let fetched = f
        .osv
        .requests
        .lock()
        .unwrap()
        .iter()
        .any(|(l, _)| l == "GET /v1/vulns/GHSA-7rjr-3q55-vv33");
    assert!(fetched, "the full record was read");
}

#[test]
fn a_fresh_security_fix_passes_and_its_pr_lists_the_advisory() {
    let f = Fixture::new();
    publish_fresh(&f, 2);
    f.osv.add(osv::advisory(
        "GHSA-7rjr-3q55-vv33",
        "crates.io",
        "greeting",
        &["1.0.0", "1.0.1"],
        "1.0.2",
    ));
    let run = f.run(&update_plan("quartermaster/security", "1.0.2"), &[]);
    assert_eq!(run.status(0), "done", "{}", run.said());
    let pull = &f.pulls()[0];
    assert_eq!(
        pull["title"],
        "chore(deps): update cargo patch dependencies [security]"
    );
    let body = pull["body"].as_str().unwrap();
    assert!(
        body.contains("- [GHSA-7rjr-3q55-vv33 (high)](https://osv.dev/vulnerability/GHSA-7rjr-3q55-vv33) in `greeting` `1.0.0` → `1.0.2`: Remote code execution in greeting"),
        "{body}"
    );
    let screening = &run.action(0)["screening"][0];
    assert_eq!(screening["checked"][0]["age"], "too new, fixes an advisory");
    assert_eq!(
        screening["fixes"][0]["advisory"]["id"],
        "GHSA-7rjr-3q55-vv33"
    );
    assert!(
        run.stderr
            .contains("security fix: greeting 1.0.0 → 1.0.2 fixes GHSA-7rjr-3q55-vv33 (high)"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_yanked_to_is_refused() {
    let f = Fixture::new();
    let yanked = Crate {
        yanked: true,
        ..Crate::default()
    };
    f.publish_crate("greeting", "1.0.2", FRESH, &yanked);
    let run = f.run(&update_plan("quartermaster/yanked", "1.0.2"), &[]);
    refused_before_tests(&f, &run, "denied", "policy.deprecated");
    insta::assert_snapshot!(stable(run.reason(0)));
}

#[test]
fn unreachable_advisories_fail_closed_unless_the_policy_allows() {
    let f = Fixture::new();
    let unreachable = [("QM_OSV_URL", "http://127.0.0.1:9")];
    let run = f.run_with(
        &update_plan("quartermaster/closed", "1.0.1"),
        &[],
        &unreachable,
    );
    refused_before_tests(&f, &run, "failed", "policy.advisories_unavailable");
    insta::assert_snapshot!(stable(run.reason(0)));
    commit_policy(&f, "[advisories]\nblock = false\n");
    let run = f.run_with(
        &update_plan("quartermaster/open", "1.0.1"),
        &[],
        &unreachable,
    );
    assert_eq!(run.status(0), "done", "{}", run.said());
    let body = f.pulls()[0]["body"].as_str().unwrap().to_string();
    assert!(
        body.contains("known advisories could not be checked (OSV (http://127.0.0.1:9):"),
        "{body}"
    );
}

#[test]
fn an_unknown_publish_time_is_refused_unless_the_policy_allows() {
    let f = Fixture::new();
    let undated = Crate {
        pubtime: Some(String::new()),
        ..Crate::default()
    };
    f.publish_crate("greeting", "1.0.2", FRESH, &undated);
    let run = f.run(&update_plan("quartermaster/undated", "1.0.2"), &[]);
    refused_before_tests(&f, &run, "failed", "policy.release_age_unknown");
    insta::assert_snapshot!(stable(run.reason(0)));
    commit_policy(&f, "[release-age]\nunknown-publish-time = \"allow\"\n");
    let run = f.run(&update_plan("quartermaster/allowed", "1.0.2"), &[]);
    assert_eq!(run.status(0), "done", "{}", run.said());
}

#[test]
fn a_policy_that_does_not_parse_stops_the_run_before_anything() {
    let f = Fixture::new();
    commit_policy(&f, "[release-age]\nminimun = \"1 day\"\n");
    let run = f.run(&update_plan("quartermaster/typo", "1.0.1"), &[]);
    assert_eq!(run.code, 2, "{}", run.said());
    assert!(run.report["actions"].as_array().unwrap().is_empty());
    insta::assert_snapshot!(stable(&format!(
        "{}\nhint: {}",
        run.report["error"].as_str().unwrap(),
        run.report["hint"].as_str().unwrap()
    )));
    assert_eq!(f.branches().len(), 1, "nothing ran");
}

#[test]
fn the_operators_policy_file_is_used_instead_of_the_repositorys() {
    let f = Fixture::new();
    publish_fresh(&f, 1);
    commit_policy(&f, "[release-age]\nminimum = \"30 days\"\n");
    let file = f.root.path().join("operator-policy.toml");
    std::fs::write(&file, "[release-age]\nminimum = \"0\"\n").unwrap();
    let file = file.display().to_string();
    let run = f.run_with(
        &update_plan("quartermaster/operator", "1.0.2"),
        &[],
        &[("QM_POLICY", &file)],
    );
    assert_eq!(run.status(0), "done", "{}", run.said());
    assert!(
        run.stderr
            .contains(&format!("policy from {file}: no minimum release age")),
        "{}",
        run.stderr
    );
}
