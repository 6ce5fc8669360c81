//! Shards end to end with the real binary on the local forge: `shards` cuts a plan, each shard
//! runs with `run --only`, `report merge` puts the reports together, and the result is the report
//! of the whole plan run at once, apart from timings. Also the refusals of `shards`, `--only` and
//! `report merge` as a user meets them.

use crate::common::{Fixture, Run, create_mr, farewell, greeting, plan, strip_timings};
use quartermaster::schedule::{KeyContext, plan_keys};
use regex::Regex;
use serde_json::{Value, json};
use std::path::Path;

/// A plan whose actions fall into five lock groups: the two `create_mr` share the root's lock
/// files, the comment and the close share PR #2, the others stand alone.
fn mixed_plan() -> Value {
    plan(vec![
        create_mr("quartermaster/greeting", &[greeting()], "batch"),
        create_mr("quartermaster/farewell", &[farewell()], "batch"),
        json!({"type": "create_issue", "title": "chore(deps): farewell 2.0.1 changes bye()", "body": "Pin it.", "labels": ["dependencies"], "confidence": 0.9}),
        json!({"type": "skip", "package": "tokio", "reason": "held for the 2.0 migration", "reason_type": "human_hold", "confidence": 1.0}),
        json!({"type": "comment_issue", "issue_id": 1, "body": "Still outdated.", "confidence": 0.9}),
        json!({"type": "comment_mr", "mr_id": 2, "body": "Superseded soon.", "confidence": 0.9}),
        json!({"type": "close_mr", "mr_id": 2, "comment": "Superseded.", "confidence": 0.9}),
    ])
}

/// A fixture holding what the plan's comments and close refer to: a bot issue #1 and a bot PR #2.
fn seeded() -> Fixture {
    let f = Fixture::new();
    assert_eq!(f.seed_issue(&["quartermaster"]), 1);
    assert_eq!(f.seed_pull("quartermaster/old", &["quartermaster"]), 2);
    f
}

/// Runs the binary in the fixture; returns the exit code, stdout and stderr.
fn qm(f: &Fixture, args: &[&str]) -> (i32, String, String) {
    let out = f.qm().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A report as the fixture's files and clocks do not shape it: the fixture's directory, the
/// sandbox's scratch directories and slots, build hashes, every duration and the order of cargo's parallel
/// build log are masked.
fn apart_from_timings(report: &Value, root: &Path) -> Value {
    let text = report.to_string().replace(path(root), "<root>");
    let masks = [
        (r"qm-sandbox-\w+", "qm-sandbox-<x>"),
        // Which slot ran an action depends on which worker was free.
        (r"slot-\d+", "slot-<n>"),
        (r"hello_app-[0-9a-f]+", "hello_app-<hash>"),
        (r"in \d+\.\d+s", "in <t>"),
    ];
    let text = masks.iter().fold(text, |text, (pattern, mask)| {
        Regex::new(pattern)
            .unwrap()
            .replace_all(&text, *mask)
            .into_owned()
    });
    let mut value: Value = serde_json::from_str(&text).unwrap();
    strip_timings(&mut value);
    value
}

/// The shards `quartermaster shards --format json` cuts.
fn cut(f: &Fixture, plan: &Path, max: &str) -> Vec<Vec<usize>> {
    let (code, stdout, stderr) = qm(
        f,
        &[
            "shards",
            path(plan),
            "--max",
            max,
            "--format",
            "json",
            "--checkout",
            path(&f.checkout),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let out: Value = serde_json::from_str(&stdout).unwrap();
    out["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| serde_json::from_value(s["only"].clone()).unwrap())
        .collect()
}

#[test]
fn shards_run_with_only_merge_into_the_whole_plans_report() {
    let whole_fixture = seeded();
    let whole = whole_fixture.run(&mixed_plan(), &[]);
    assert_eq!(whole.code, 1, "farewell fails its tests: {}", whole.said());
    assert_eq!(whole.status(0), "done", "{}", whole.reason(0));
    assert_eq!(whole.status(6), "done", "{}", whole.reason(6));

    let f = seeded();
    let plan_path = f.write_plan(&mixed_plan());
    let shards = cut(&f, &plan_path, "2");
    assert_eq!(shards, vec![vec![0, 1, 2, 4], vec![3, 5, 6]]);
    let mut reports = Vec::new();
    for (n, only) in shards.iter().enumerate() {
        let list: Vec<String> = only.iter().map(usize::to_string).collect();
        let run = f.run(&mixed_plan(), &["--only", &list.join(",")]);
        shard_says_what_it_ran(&run, only, n);
        let report = f.root.path().join(format!("report-{n}.json"));
        std::fs::write(&report, run.report.to_string()).unwrap();
        reports.push(report);
    }
    let merged = f.root.path().join("merged.json");
    let summary = f.root.path().join("merged.md");
    let mut args = vec!["report", "merge"];
    args.extend(reports.iter().map(|r| path(r)));
    args.extend(["-o", path(&merged), "--summary", path(&summary)]);
    let (code, stdout, stderr) = qm(&f, &args);
    assert_eq!(code, whole.code, "{stderr}");
    let merged: Value = serde_json::from_slice(&std::fs::read(&merged).unwrap()).unwrap();
    assert_eq!(
        apart_from_timings(&merged, f.root.path()),
        apart_from_timings(&whole.report, whole_fixture.root.path())
    );
    assert_eq!(std::fs::read_to_string(&summary).unwrap(), stdout);
    assert!(
        stdout.starts_with("## Quartermaster: 5 done, 1 failed, 1 skipped, 0 denied"),
        "{stdout}"
    );
    assert!(!stdout.contains("**Shard**"), "{stdout}");
}

/// A shard's report holds its actions only, says which, and counts nothing it did not run.
fn shard_says_what_it_ran(run: &Run, only: &[usize], n: usize) {
    let report = &run.report;
    assert_eq!(report["only"], json!(only), "{}", run.said());
    assert_eq!(report["plan_actions"], 7);
    let indices: Vec<u64> = report["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["index"].as_u64().unwrap())
        .collect();
    let expected: Vec<u64> = only.iter().map(|&i| i as u64).collect();
    assert_eq!(indices, expected, "shard {n}");
    let s = &report["summary"];
    let counted: u64 = ["done", "failed", "skipped", "denied"]
        .iter()
        .map(|k| s[k].as_u64().unwrap())
        .sum();
    assert_eq!(counted, only.len() as u64, "shard {n}: {s}");
    let list: Vec<String> = only.iter().map(usize::to_string).collect();
    assert!(
        run.summary.contains(&format!(
            "**Shard**: actions {} of the plan's 7 are in this report; the others are not in this shard.",
            list.join(", ")
        )),
        "{}",
        run.summary
    );
}

#[test]
fn shards_never_split_a_lock_group_nor_exceed_max() {
    let f = Fixture::new();
    for name in ["seed-deps.json", "twenty-actions.json"] {
        let plan_path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/plans")
            .join(name);
        let plan: quartermaster::plan::Plan =
            serde_json::from_slice(&std::fs::read(&plan_path).unwrap()).unwrap();
        let keys = plan_keys(&plan, &KeyContext::default());
        for max in [1, 2, 3, 4, 7, 20] {
            let shards = cut(&f, &plan_path, &max.to_string());
            assert!(shards.len() <= max, "{name} --max {max}: {shards:?}");
            let mut all: Vec<usize> = shards.iter().flatten().copied().collect();
            all.sort_unstable();
            assert_eq!(all, (0..plan.actions.len()).collect::<Vec<_>>());
            let shard_of = |i: usize| shards.iter().position(|s| s.contains(&i)).unwrap();
            for i in 0..keys.len() {
                for j in 0..i {
                    if !keys[i].is_disjoint(&keys[j]) {
                        assert_eq!(shard_of(i), shard_of(j), "{name}: {i} and {j} share a key");
                    }
                }
            }
        }
    }
}

#[test]
fn a_workspace_in_the_checkout_keeps_its_members_in_one_shard() {
    let f = Fixture::new();
    let checkout = tempfile::tempdir().unwrap();
    std::fs::write(checkout.path().join("go.work"), "go 1.22\n").unwrap();
    std::fs::create_dir_all(checkout.path().join("providers/s3")).unwrap();
    let plan_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/plans/seed-deps.json");
    let json = |checkout: &Path| {
        let (code, stdout, stderr) = qm(
            &f,
            &[
                "shards",
                path(&plan_path),
                "--max",
                "7",
                "--format",
                "json",
                "--checkout",
                path(checkout),
            ],
        );
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str::<Value>(&stdout).unwrap()["shards"].clone()
    };
    // Without the workspace, providers/s3 owns its lock files; with go.work at the root, the
    // root's go.work.sum is shared with action 1's module.
    assert_eq!(json(&f.checkout).as_array().unwrap().len(), 5);
    assert_eq!(
        json(checkout.path())[0]["only"],
        json!([0, 1, 3, 5]),
        "{}",
        json(checkout.path())
    );
}

#[test]
fn shards_and_only_refusals_say_why() {
    let f = Fixture::new();
    let plan_path = f.write_plan(&mixed_plan());
    let plan = path(&plan_path);
    let cases: &[(&[&str], &str)] = &[
        (
            &["shards", plan, "--max", "0", "--format", "json"],
            "error: --max must be at least 1\nhint: give the most CI jobs the plan may take, e.g. --max 4\n",
        ),
        (
            &["shards", plan, "--max", "300", "--format", "github-matrix"],
            "error: --max 300 is more than a GitHub matrix holds (256 jobs)\nhint: use --max 256 or less\n",
        ),
        (
            &[
                "shards",
                plan,
                "--max",
                "2",
                "--format",
                "gitlab-pipeline",
                "--token-variable",
                "MY-TOKEN",
            ],
            "error: --token-variable `MY-TOKEN` is not a CI/CD variable name\nhint: use letters, digits and `_`, not starting with a digit\n",
        ),
        (
            &[
                "shards",
                plan,
                "--max",
                "2",
                "--format",
                "gitlab-pipeline",
                "--plan-job",
                "",
            ],
            "error: --plan-job is empty\nhint: name the parent pipeline's job whose artifacts hold the plan\n",
        ),
    ];
    for (args, expected) in cases {
        let (code, stdout, stderr) = qm(&f, args);
        assert_eq!(
            (code, stdout.as_str(), stderr.as_str()),
            (2, "", *expected),
            "{args:?}"
        );
    }
    let invalid = f.write_plan(&json!({"repo_context": {}, "actions": []}));
    let (code, stdout, stderr) = qm(
        &f,
        &["shards", path(&invalid), "--max", "2", "--format", "json"],
    );
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(stderr.contains(": invalid, "), "{stderr}");
    assert!(
        stderr.contains("error[schema.missing_field] /repo_context"),
        "{stderr}"
    );
}

#[test]
fn only_naming_an_action_the_plan_lacks_runs_nothing() {
    let f = Fixture::new();
    let run = f.run(&mixed_plan(), &["--only", "2,9"]);
    assert_eq!(run.code, 2, "{}", run.said());
    assert_eq!(
        run.report["error"],
        "--only: there is no action 9; the plan has 7"
    );
    assert_eq!(
        run.report["hint"],
        "indices start at 0; cut the shards from the plan this run executes"
    );
    assert_eq!(run.report["actions"], json!([]));
    assert!(f.issues().is_empty(), "nothing ran");
    let run = f.run(&mixed_plan(), &["--only", "1-3"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "error: --only: `1-3` is not an action index\nhint: give action indices separated by commas, such as 0,3,5 (`quartermaster shards` prints them)\n"
    );
}

#[test]
fn merge_refuses_reports_it_cannot_join() {
    let f = Fixture::new();
    let skip = |package: &str| json!({"type": "skip", "package": package, "reason": "held", "reason_type": "human_hold", "confidence": 1.0});
    let two = plan(vec![skip("a"), skip("b")]);
    let write = |name: &str, run: &Run| {
        let p = f.root.path().join(name);
        std::fs::write(&p, run.report.to_string()).unwrap();
        p
    };
    let first = write("first.json", &f.run(&two, &["--only", "0"]));
    let again = write("again.json", &f.run(&two, &["--only", "0,1"]));
    let other = write("other.json", &f.run(&plan(vec![skip("c")]), &[]));
    let merge = |reports: &[&Path]| {
        let out = f.root.path().join("merged.json");
        let mut args = vec!["report", "merge"];
        args.extend(reports.iter().map(|r| path(r)));
        args.extend(["-o", path(&out)]);
        qm(&f, &args)
    };
    let (code, _, stderr) = merge(&[&first, &again]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        format!(
            "error: {} and {} both ran action 0\nhint: give each shard's report once, from shards that `quartermaster shards` cut from this plan\n",
            again.display(),
            first.display()
        )
    );
    let (code, _, stderr) = merge(&[&first, &other]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(&format!(
            "error: {} is a report of another plan than {}: plan sha256 ",
            other.display(),
            first.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.ends_with(
            "\nhint: merge the shards of one plan only; each shard runs the same plan file\n"
        ),
        "{stderr}"
    );
    // One shard of two: the merge says what it has and fails.
    let (code, stdout, _) = merge(&[&first]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("**Shard**: actions 0 of the plan's 2"),
        "{stdout}"
    );
}
