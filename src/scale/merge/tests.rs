use super::*;
use crate::finding::Finding;
use crate::hint::Hint;
use crate::report::ActionReport;
use proptest::prelude::*;
use serde_json::Value;

/// A report written by the real Quartermaster (examples/demo.sh on the local forge).
const DEMO: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/demo-report.json"
));

fn whole() -> RunReport {
    serde_json::from_str(DEMO).unwrap()
}

fn sha() -> String {
    whole().plan_sha256.unwrap()
}

/// `whole` cut into shard reports, as `run --only` would write them.
fn split(whole: &RunReport, shards: &[Vec<usize>]) -> Vec<(String, RunReport)> {
    shards
        .iter()
        .enumerate()
        .map(|(n, only)| {
            let mut r = whole.clone();
            r.only = Some(only.clone());
            r.actions.retain(|a| only.contains(&a.index));
            r.started_at = format!("2026-11-23T18:0{n}:00Z");
            r.finished_at = format!("2026-11-23T18:1{n}:00Z");
            r.timing.total_ms = r.actions.iter().map(ActionReport::child_ms).sum::<u64>() + 100;
            r.timing.peak_memory_kb = 100 + n as u64;
            r.forge_requests = r.actions.len() as u64;
            r.tally();
            (format!("shard-{n}.json"), r)
        })
        .collect()
}

/// The report as JSON without what differs between one run and its shards: the timings.
fn apart_from_timings(r: &RunReport) -> Value {
    let mut v = serde_json::to_value(r).unwrap();
    let map = v.as_object_mut().unwrap();
    for key in ["timing", "started_at", "finished_at", "forge_requests"] {
        map.remove(key);
    }
    v
}

fn message(reports: Vec<(String, RunReport)>) -> String {
    merge(reports).unwrap_err().to_string()
}

#[test]
fn the_fixture_reads_back_as_written() {
    let r = whole();
    assert!(r.actions.len() >= 3, "{}", r.actions.len());
    assert_eq!(r.plan_actions, r.actions.len());
    let written: Value = serde_json::from_str(DEMO).unwrap();
    assert_eq!(serde_json::to_value(&r).unwrap(), written);
}

proptest! {
    #[test]
    fn merging_the_shards_gives_the_whole_report(
        assignment in prop::collection::vec(0usize..4, 3..4),
        reverse in any::<bool>(),
    ) {
        let whole = whole();
        let n = whole.actions.len();
        let mut shards: Vec<Vec<usize>> = vec![Vec::new(); 4];
        for i in 0..n {
            shards[assignment[i % assignment.len()]].push(i);
        }
        shards.retain(|s| !s.is_empty());
        let mut parts = split(&whole, &shards);
        if reverse {
            parts.reverse();
        }
        let total: u64 = parts.iter().map(|(_, r)| r.timing.total_ms).sum();
        let merged = merge(parts).unwrap();
        prop_assert_eq!(merged.forge_requests, n as u64);
        prop_assert_eq!(merged.timing.total_ms, total);
        prop_assert_eq!(merged.timing.commands_ms, whole.timing.commands_ms);
        prop_assert_eq!(merged.timing.overhead_ms, 100 * shards.len() as u64);
        prop_assert_eq!(merged.timing.peak_memory_kb, 99 + shards.len() as u64);
        prop_assert_eq!(merged.started_at.as_str(), "2026-11-23T18:00:00Z");
        prop_assert_eq!(
            merged.finished_at.clone(),
            format!("2026-11-23T18:1{}:00Z", shards.len() - 1)
        );
        prop_assert_eq!(apart_from_timings(&merged), apart_from_timings(&whole));
    }
}

#[test]
fn missing_shards_are_a_failure_that_says_what_it_has() {
    let mut parts = split(&whole(), &[vec![0], vec![1, 2]]);
    parts.pop();
    assert_eq!(parts[0].1.exit_code, 1, "action 0 failed in the demo");
    parts[0].1.actions[0].status = crate::report::Status::Done;
    parts[0].1.tally();
    assert_eq!(parts[0].1.exit_code, 0, "a shard whose actions are done");
    let merged = merge(parts).unwrap();
    assert_eq!(merged.only, Some(vec![0]));
    assert_eq!(merged.actions.len(), 1);
    assert_eq!(merged.exit_code, 1, "a merge lacking actions");
    assert!(
        merged
            .to_markdown()
            .contains("**Shard**: actions 0 of the plan's 3 are in this report; the others are not in this shard."),
        "{}",
        merged.to_markdown()
    );
}

#[test]
fn a_shard_that_could_not_start_makes_the_run_fail_with_its_reason() {
    let mut parts = split(&whole(), &[vec![0], vec![1, 2]]);
    parts[1].1.actions.clear();
    parts[1].1.error = Some("the forge answered 401".into());
    parts[1].1.hint = Some("check the token".into());
    parts[1].1.isolation = None;
    let merged = merge(parts).unwrap();
    assert_eq!(
        merged.error.as_deref(),
        Some("shard-1.json: the forge answered 401")
    );
    assert_eq!(merged.hint.as_deref(), Some("check the token"));
    assert_eq!(merged.exit_code, 2);
    assert_eq!(
        merged.isolation.unwrap().level,
        whole().isolation.unwrap().level
    );
}

#[test]
fn the_weakest_isolation_stands_for_the_run() {
    let mut parts = split(&whole(), &[vec![0], vec![1, 2]]);
    parts[0].1.isolation = Some(IsolationReport {
        level: Level::Uid,
        fallbacks: vec!["no namespaces here".into()],
        uid_base: None,
        limits: None,
        caches: None,
        workspaces: None,
    });
    parts[1].1.isolation = Some(IsolationReport {
        level: Level::UidNamespaces,
        fallbacks: vec![],
        uid_base: None,
        limits: None,
        caches: None,
        workspaces: None,
    });
    let isolation = merge(parts).unwrap().isolation.unwrap();
    assert_eq!(isolation.level, Level::Uid);
    assert_eq!(isolation.fallbacks, vec!["no namespaces here".to_string()]);
}

#[test]
fn refusals_say_why() {
    let base = || split(&whole(), &[vec![0], vec![1, 2]]);
    let e = merge(vec![]).unwrap_err();
    assert_eq!(e.to_string(), "nothing to merge");
    assert_eq!(
        e.hint().unwrap(),
        "name the shard reports: report merge A.json B.json -o all.json"
    );

    let mut parts = base();
    parts[1].1.plan_sha256 = None;
    let e = merge(parts).unwrap_err();
    assert_eq!(
        e.to_string(),
        "shard-1.json does not say which plan it ran (no `plan_sha256`)"
    );
    assert_eq!(
        e.hint().unwrap(),
        "it comes from a Quartermaster that cannot shard: run every shard with the same, newer version"
    );

    let mut parts = base();
    parts[1].1.plan_sha256 = Some("ff".into());
    let e = merge(parts).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "shard-1.json is a report of another plan than shard-0.json: plan sha256 ff, not {}",
            sha()
        )
    );
    assert_eq!(
        e.hint().unwrap(),
        "merge the shards of one plan only; each shard runs the same plan file"
    );

    let mut parts = base();
    parts[1].1.mission = "docs-drift".into();
    let e = merge(parts).unwrap_err();
    assert_eq!(
        e.to_string(),
        "`mission` differs: docs-drift in shard-1.json, deps in shard-0.json"
    );
    assert_eq!(
        e.hint().unwrap(),
        "shards of one run share it: run every shard with the same version, mission, forge and settings"
    );

    let mut parts = base();
    parts[1].1.dry_run = !parts[0].1.dry_run;
    assert!(message(parts).starts_with("`dry_run` differs: "));

    let mut parts = base();
    parts[1].1.forge = crate::forge::ForgeKind::Github;
    assert_eq!(
        message(parts),
        "`forge` differs: github in shard-1.json, local in shard-0.json"
    );

    let mut parts = base();
    parts[0].1.validation.warnings = vec![Finding::warning(
        "/repo_context/lock_files/0",
        crate::finding::Code::LockFileNotCommitted,
        "m",
    )];
    assert_eq!(
        message(parts),
        "`validation` differs: valid with 0 errors and 0 warnings in shard-1.json, valid with 0 errors and 1 warnings in shard-0.json"
    );
}

#[test]
fn overlaps_and_strays_are_refused() {
    let whole = whole();
    let e = merge(split(&whole, &[vec![0, 1], vec![1, 2]])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "shard-1.json and shard-0.json both ran action 1"
    );
    assert_eq!(
        e.hint().unwrap(),
        "give each shard's report once, from shards that `quartermaster shards` cut from this plan"
    );
    let mut parts = split(&whole, &[vec![0], vec![1, 2]]);
    parts[0].1.only = None;
    assert_eq!(
        message(parts),
        "shard-1.json and shard-0.json both ran action 1"
    );
    let mut parts = split(&whole, &[vec![0], vec![1, 2]]);
    parts[1].1.only = Some(vec![1, 2, 9]);
    assert_eq!(
        message(parts),
        "shard-1.json: action 9 is outside the plan's 3 actions"
    );
    let mut parts = split(&whole, &[vec![0], vec![1, 2]]);
    parts[1].1.actions.push(whole.actions[0].clone());
    assert_eq!(
        message(parts),
        "shard-1.json: action 0 is outside the actions the report says it ran (`only`)"
    );
}

#[test]
fn shards_of_an_invalid_plan_merge_into_its_refusal() {
    let mut parts = split(&whole(), &[vec![0], vec![1, 2]]);
    for (_, r) in &mut parts {
        r.validation.valid = false;
        r.plan_actions = 0;
        r.actions.clear();
        r.tally();
    }
    let merged = merge(parts).unwrap();
    assert_eq!(merged.only, None);
    assert_eq!(merged.exit_code, 2);
}

#[test]
fn bad_times_and_files_are_named() {
    let mut parts = split(&whole(), &[vec![0], vec![1, 2]]);
    parts[1].1.finished_at = "yesterday".into();
    let e = merge(parts).unwrap_err();
    assert_eq!(
        e.to_string(),
        "shard-1.json: `finished_at` is not an RFC 3339 time: \"yesterday\""
    );
    assert_eq!(
        e.hint().unwrap(),
        "pass the JSON reports that `quartermaster run --report` wrote"
    );
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.json");
    let e = read(&missing).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("cannot read {}: ", missing.display())),
        "{e}"
    );
    let garbage = dir.path().join("garbage.json");
    std::fs::write(&garbage, "{\"version\": 1}").unwrap();
    let e = read(&garbage).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "{} is not a Quartermaster report: missing field",
            garbage.display()
        )),
        "{e}"
    );
    let good = dir.path().join("good.json");
    std::fs::write(&good, DEMO).unwrap();
    assert_eq!(read(&good).unwrap().actions.len(), whole().actions.len());
}
