//! The pangolin export checked against pangolin's own rules, re-implemented here from the facts of
//! its source (QuarrySystems/pangolin, its run validator and lock manager; read, not copied): the
//! structural validation `orch submit` runs, and the greedy lock selection of a tick. The exports
//! under test are the real binary's.

use crate::common::assert_succeeded;
use proptest::prelude::*;
use quartermaster::plan::Plan;
use quartermaster::scale::plan_sha256;
use quartermaster::schedule;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashSet};

const REPO: &str = "github.com/Octo/Widgets";

fn plan_path(name: &str) -> String {
    format!("{}/examples/plans/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn plan_bytes(name: &str) -> Vec<u8> {
    std::fs::read(plan_path(name)).unwrap()
}

/// `quartermaster export --format pangolin` of an example plan, and the plan.
fn exported(name: &str, repo: &str) -> (Plan, Value) {
    let out = assert_cmd::Command::cargo_bin("quartermaster")
        .unwrap()
        .args(["export", "--format", "pangolin", "--repo", repo])
        .arg(plan_path(name))
        .env_remove("GITHUB_REPOSITORY")
        .env_remove("CI_PROJECT_PATH")
        .output()
        .unwrap();
    assert_succeeded(&out);
    let plan: Plan = serde_json::from_slice(&plan_bytes(name)).unwrap();
    (plan, serde_json::from_slice(&out.stdout).unwrap())
}

/// pangolin's structural validation: unique ids, known `depends_on` and `needs` references,
/// `needs` within `depends_on`, and, when those hold, no cycle.
fn validate_run(run: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let items = run["items"].as_array().expect("items is an array");
    let mut ids = HashSet::new();
    for item in items {
        let id = item["id"].as_str().expect("an id");
        if !ids.insert(id) {
            errors.push(format!("duplicate item id {id:?}"));
        }
    }
    let deps = |item: &Value| -> Vec<String> {
        item["depends_on"]
            .as_array()
            .expect("depends_on is an array")
            .iter()
            .map(|d| d.as_str().unwrap().to_string())
            .collect()
    };
    for item in items {
        let id = item["id"].as_str().unwrap();
        let depends_on = deps(item);
        for dep in &depends_on {
            if !ids.contains(dep.as_str()) {
                errors.push(format!("{id}: depends_on references unknown item {dep:?}"));
            }
        }
        for (key, binding) in item["needs"].as_object().into_iter().flatten() {
            let from = binding["from"].as_str().unwrap_or_default();
            if !ids.contains(from) {
                errors.push(format!(
                    "{id}: needs[{key}] references unknown item {from:?}"
                ));
            } else if !depends_on.iter().any(|d| d == from) {
                errors.push(format!("{id}: needs[{key}] {from:?} is not in depends_on"));
            }
        }
    }
    if errors.is_empty() {
        let graph: BTreeMap<String, Vec<String>> = items
            .iter()
            .map(|i| (i["id"].as_str().unwrap().to_string(), deps(i)))
            .collect();
        let mut state: BTreeMap<&str, u8> = BTreeMap::new();
        fn cyclic<'g>(
            id: &'g str,
            graph: &'g BTreeMap<String, Vec<String>>,
            state: &mut BTreeMap<&'g str, u8>,
        ) -> bool {
            state.insert(id, 1);
            for dep in &graph[id] {
                let seen = state.get(dep.as_str()).copied();
                if seen == Some(1) || (seen.is_none() && cyclic(dep, graph, state)) {
                    return true;
                }
            }
            state.insert(id, 2);
            false
        }
        for id in graph.keys() {
            if !state.contains_key(id.as_str()) && cyclic(id, &graph, &mut state) {
                errors.push(format!("cycle through {id}"));
                break;
            }
        }
    }
    errors
}

/// Quartermaster's lock-key format, under the repository prefix, each key once per item.
fn lock_key_problems(run: &Value, repo: &str) -> Vec<String> {
    let prefix = format!("{}#", repo.to_ascii_lowercase());
    let mut problems = Vec::new();
    for item in run["items"].as_array().unwrap() {
        let keys: Vec<&str> = item["resourceLocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap())
            .collect();
        if keys.iter().collect::<HashSet<_>>().len() != keys.len() {
            problems.push(format!("{}: a key twice", item["id"]));
        }
        for key in keys {
            let well_formed = key
                .strip_prefix(&prefix)
                .and_then(|k| k.split_once(':'))
                .is_some_and(|(kind, value)| match kind {
                    "branch" => value.starts_with("quartermaster/"),
                    "pr" | "issue" => value.parse::<u64>().is_ok_and(|n| n > 0),
                    "issue-title" => {
                        value.len() == 16 && value.chars().all(|c| c.is_ascii_hexdigit())
                    }
                    "workdir" => !value.is_empty() && !value.starts_with('/'),
                    _ => false,
                });
            if !well_formed {
                problems.push(format!("{}: {key:?}", item["id"]));
            }
        }
    }
    problems
}

#[test]
fn exports_pass_pangolins_rules() {
    for name in ["seed-deps.json", "twenty-actions.json"] {
        let (plan, run) = exported(name, REPO);
        assert_eq!(validate_run(&run), Vec::<String>::new(), "{name}");
        assert_eq!(
            lock_key_problems(&run, REPO),
            Vec::<String>::new(),
            "{name}"
        );
        let items = run["items"].as_array().unwrap();
        assert_eq!(items.len(), plan.actions.len());
        let sha = plan_sha256(&plan_bytes(name));
        for (index, (item, action)) in items.iter().zip(&plan.actions).enumerate() {
            assert_eq!(item["id"], format!("a{index}-{}", action.action_type()));
            assert_eq!(item["executor"], "quartermaster");
            assert_eq!(item["depends_on"], Value::Array(vec![]));
            assert_eq!(item["inputs"]["repository"], REPO);
            assert_eq!(item["inputs"]["plan_sha256"], sha.as_str());
            assert_eq!(item["inputs"]["action_index"], index);
            assert_eq!(
                item["inputs"]["action"],
                serde_json::to_value(action).unwrap()
            );
        }
        assert_eq!(run["queue"], "default");
        assert!(
            run["id"]
                .as_str()
                .unwrap()
                .starts_with("qm-github.com-octo-widgets-")
        );
    }
}

#[test]
fn the_rules_catch_broken_runs() {
    let (_, mut run) = exported("seed-deps.json", REPO);
    run["items"][1]["id"] = run["items"][0]["id"].clone();
    assert_eq!(
        validate_run(&run),
        vec![r#"duplicate item id "a0-create_mr""#]
    );
    let (_, mut run) = exported("seed-deps.json", REPO);
    run["items"][0]["depends_on"] = serde_json::json!(["a1-update_mr"]);
    run["items"][1]["depends_on"] = serde_json::json!(["a0-create_mr"]);
    assert_eq!(validate_run(&run).len(), 1);
    run["items"][1]["depends_on"] = serde_json::json!(["nope"]);
    run["items"][2]["needs"] = serde_json::json!({"p": {"from": "a0-create_mr"}});
    assert_eq!(validate_run(&run).len(), 2);
    run["items"][0]["resourceLocks"] = serde_json::json!(["github.com/x/y#pr:1", "a#b", "a#b"]);
    assert_eq!(lock_key_problems(&run, REPO).len(), 4);
}

#[test]
fn runs_on_one_repository_exclude_each_other_and_others_never() {
    let locks = |repo: &str| -> BTreeSet<String> {
        let (_, run) = exported("twenty-actions.json", repo);
        run["items"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|i| i["resourceLocks"].as_array().unwrap().clone())
            .map(|k| k.as_str().unwrap().to_string())
            .collect()
    };
    let ours = locks(REPO);
    assert_eq!(ours, locks("github.com/octo/widgets"));
    assert!(ours.is_disjoint(&locks("github.com/octo/gadgets")));
    assert!(ours.is_disjoint(&locks("gitlab.com/octo/widgets")));
}

/// pangolin's tick: ready items in array order, each fired when none of its keys is held or taken
/// earlier in the same pass; returns each item's (start, end) step, finishing them in `picks` order.
fn pangolin(locks: &[BTreeSet<String>], slots: usize, picks: &[usize]) -> Vec<(usize, usize)> {
    let mut times = vec![(usize::MAX, usize::MAX); locks.len()];
    let mut running: Vec<usize> = Vec::new();
    let mut picks = picks.iter().cycle();
    let mut step = 0;
    while times.iter().any(|t| t.1 == usize::MAX) {
        let mut taken: BTreeSet<&String> = running.iter().flat_map(|&i| &locks[i]).collect();
        for i in 0..locks.len() {
            if running.len() >= slots {
                break;
            }
            if times[i].0 != usize::MAX || locks[i].iter().any(|k| taken.contains(k)) {
                continue;
            }
            taken.extend(&locks[i]);
            times[i].0 = step;
            running.push(i);
        }
        step += 1;
        let done = running.remove(picks.next().unwrap() % running.len());
        times[done].1 = step;
        step += 1;
    }
    times
}

fn overtaken(keys: &[BTreeSet<String>], times: &[(usize, usize)]) -> bool {
    (0..keys.len())
        .any(|j| (0..j).any(|i| !keys[i].is_disjoint(&keys[j]) && times[j].0 < times[i].1))
}

fn named(keys: &[&[&str]]) -> Vec<BTreeSet<String>> {
    keys.iter()
        .map(|k| k.iter().map(|s| s.to_string()).collect())
        .collect()
}

#[test]
fn plain_keys_would_let_pangolin_reorder_a_pr() {
    // update_mr #42 waits for the workdir; close_mr #42 would close the PR first.
    let plain = named(&[&["workdir:."], &["pr:42", "workdir:."], &["pr:42"]]);
    assert!(overtaken(&plain, &pangolin(&plain, 4, &[0])));
    let ordered = schedule::ordered(&plain);
    assert!(!overtaken(&plain, &pangolin(&ordered, 4, &[0])));
}

proptest! {
    #[test]
    fn pangolin_keeps_plan_order_with_exported_keys(
        keys in prop::collection::vec(prop::collection::btree_set("[a-f]", 0..3), 1..20),
        slots in 1usize..6,
        picks in prop::collection::vec(0usize..8, 1..10),
    ) {
        let times = pangolin(&schedule::ordered(&keys), slots, &picks);
        prop_assert!(!overtaken(&keys, &times), "{times:?}");
    }
}

#[test]
fn twenty_actions_run_in_plan_order_under_pangolin() {
    let (_, run) = exported("twenty-actions.json", REPO);
    let keys: Vec<BTreeSet<String>> = run["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            i["resourceLocks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    for picks in [[0usize, 1, 2], [2, 0, 1], [1, 1, 0]] {
        assert!(!overtaken(&keys, &pangolin(&keys, 4, &picks)));
    }
}

fn export_with(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = assert_cmd::Command::cargo_bin("quartermaster").unwrap();
    cmd.args(["export", "--format", "pangolin"])
        .arg(plan_path("seed-deps.json"))
        .args(args);
    for name in [
        "GITHUB_REPOSITORY",
        "GITHUB_SERVER_URL",
        "CI_SERVER_FQDN",
        "CI_SERVER_HOST",
        "CI_PROJECT_PATH",
    ] {
        cmd.env_remove(name);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_repository_comes_from_the_ci_job_unless_given() {
    let (code, stdout, stderr) = export_with(
        &[],
        &[
            ("CI_SERVER_FQDN", "gitlab.example.com"),
            ("CI_PROJECT_PATH", "tools/Widgets"),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let run: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        run["items"][0]["inputs"]["repository"],
        "gitlab.example.com/tools/Widgets"
    );
    assert!(
        run["items"][3]["resourceLocks"]
            .as_array()
            .unwrap()
            .contains(&Value::from("gitlab.example.com/tools/widgets#pr:42")),
        "{}",
        run["items"][3]
    );
    let (code, stdout, _) = export_with(
        &["--queue", "deps", "--executor", "qm-runner"],
        &[("GITHUB_REPOSITORY", "octo/widgets")],
    );
    assert_eq!(code, 0);
    let run: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(run["queue"], "deps");
    assert_eq!(run["items"][0]["executor"], "qm-runner");
    assert_eq!(
        run["items"][0]["inputs"]["repository"],
        "github.com/octo/widgets"
    );
}

#[test]
fn export_refusals_say_why() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[],
            "error: no repository to prefix the lock keys with\nhint: pass --repo HOST/OWNER/NAME; in GitHub Actions or GitLab CI it is read from GITHUB_SERVER_URL and GITHUB_REPOSITORY, or CI_SERVER_FQDN and CI_PROJECT_PATH\n",
        ),
        (
            &["--repo", "octo/widgets"],
            "error: `octo/widgets` is not a repository as HOST/OWNER/NAME\nhint: for example github.com/octo/widgets or gitlab.com/group/subgroup/project\n",
        ),
        (
            &["--repo", "github.com/o/n", "--queue", ""],
            "error: --queue is empty\nhint: name a pangolin queue, or leave the flag out\n",
        ),
    ];
    for (args, expected) in cases {
        let (code, stdout, stderr) = export_with(args, &[]);
        assert_eq!(
            (code, stdout.as_str(), stderr.as_str()),
            (2, "", *expected),
            "{args:?}"
        );
    }
}
