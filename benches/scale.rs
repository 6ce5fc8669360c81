//! Quartermaster's cost as the repository grows, and what `--jobs` buys.
//!
//! Run with `bench/scale` (or `cargo bench --bench scale -- [FILES...]`, default 0 10000 50000).
//! For each count of extra tracked files it builds the test fixture (a cargo project, a local
//! registry, a bare remote) padded with that many files, then with the release binary:
//! - runs 8 `create_mr` actions one at a time (`cargo update -p greeting --precise 1.0.1`, tested
//!   by `make quick`) and prints the overhead of each action (its wall time minus its commands and
//!   tests) and the run's peak memory;
//! - runs the same plan again, unchanged, and prints its wall time and how many commands ran;
//! - runs 8 actions in 8 separate projects whose tests take 2 s, with `--jobs 1` and `--jobs 4`.
//!
//! `QM_SCALE_TRACE=1` also prints where each action's time went, and each `--jobs` run's log. The
//! PRs are not replayed on a clean clone, as the integration tests do: that would be timed too.

#[path = "../tests/it/common/mod.rs"]
mod common;

use common::*;
use serde_json::{Value, json};
use std::time::Instant;

fn main() {
    let counts: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let counts = if counts.is_empty() {
        vec![0, 10_000, 50_000]
    } else {
        counts
    };
    let trace = std::env::var_os("QM_SCALE_TRACE").is_some();
    for files in counts {
        serial(files);
        parallel(files, trace);
    }
}

/// The time an action spent outside its commands, frozen installs and tests (the first one that
/// builds also runs the warm-up, which the report times apart: see `warm_up_ms`).
fn overhead(action: &Value, warm_up_ms: u64) -> u64 {
    let children: u64 = action["commands"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(action["installs"].as_array().into_iter().flatten())
        .chain(action["test"]["runs"].as_array().into_iter().flatten())
        .filter_map(|r| r["duration_ms"].as_u64())
        .sum();
    action["duration_ms"]
        .as_u64()
        .unwrap_or(0)
        .saturating_sub(children + warm_up_ms)
}

/// How long the run's warm-up took (0 without one), and how much of it was outside its
/// commands (the base's checkout, with layered workspaces).
fn warm_up_ms(run: &Run) -> (u64, u64) {
    let warm_up = &run.report["isolation"]["caches"]["warm_up"];
    let total = warm_up["duration_ms"].as_u64().unwrap_or(0);
    let commands: u64 = warm_up["commands"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["duration_ms"].as_u64())
        .sum();
    (total, total.saturating_sub(commands))
}

/// Writes the fixture's files out, so that the run is not timed writing them back.
fn settle(f: &Fixture) {
    sh(f.root.path(), "sync");
}

fn serial(files: usize) {
    let f = Fixture::new();
    f.pad(files);
    settle(&f);
    let actions: Vec<Value> = (0..8)
        .map(|i| {
            let mut a = create_mr(&format!("quartermaster/scale-{i}"), &[greeting()], "batch");
            a["test_command"] = json!("make quick");
            a
        })
        .collect();
    let plan = plan(actions);
    // QM_SCALE_TRACE=1 shows where each action's time went.
    let trace = std::env::var_os("QM_SCALE_TRACE").is_some();
    let log: &[(&str, &str)] = if trace {
        &[("QM_LOG", "quartermaster=debug")]
    } else {
        &[]
    };
    let run = f.run_unreplayed(&plan, &["--jobs", "1"], log);
    assert_eq!(run.code, 0, "{}", run.said());
    if trace {
        run.stderr
            .lines()
            .filter(|l| l.contains("quartermaster::engine") || l.starts_with('['))
            .for_each(|l| println!("  {l}"));
    }
    let (warm_up, outside) = warm_up_ms(&run);
    let each: Vec<u64> = (0..8)
        .map(|i| overhead(run.action(i), if i == 0 { warm_up } else { 0 }))
        .collect();
    let rest = &each[1..];
    println!(
        "{files} files: overhead per action: first {} ms (+ {outside} ms of the warm-up outside its commands), then mean {} ms, max {} ms; warm-up {warm_up} ms ({}); workspaces {}; peak memory {} KiB",
        each[0],
        rest.iter().sum::<u64>() / rest.len() as u64,
        rest.iter().max().unwrap(),
        run.report["isolation"]["caches"]["mode"],
        run.report["isolation"]["workspaces"]["mode"],
        run.report["timing"]["peak_memory_kb"]
    );
    // What the first action's overhead is held against: a clone of the same remote, now.
    let scratch = tempfile::tempdir().unwrap();
    let started = Instant::now();
    sh(
        scratch.path(),
        &format!("git clone -q file://{} clone", f.remote.display()),
    );
    println!(
        "{files} files: git clone of the remote: {} ms",
        started.elapsed().as_millis()
    );
    let started = Instant::now();
    let again = f.run_unreplayed(&plan, &["--jobs", "1"], log);
    let wall = started.elapsed();
    assert_eq!(again.code, 0, "{}", again.said());
    if trace {
        again.stderr.lines().for_each(|l| println!("  re-run: {l}"));
    }
    let ran: usize = (0..8)
        .map(|i| again.action(i)["commands"].as_array().map_or(0, Vec::len))
        .sum();
    let unchanged = (0..8)
        .filter(|&i| again.action(i)["pull_requests"][0]["operation"] == "unchanged")
        .count();
    // What the re-run is held against: fetching the remote's objects, which any run starts with.
    let started = Instant::now();
    sh(
        scratch.path(),
        &format!("git clone -q --bare file://{} bare", f.remote.display()),
    );
    println!(
        "{files} files: unchanged re-run: wall {} ms, {ran} commands run, {unchanged} of 8 PRs unchanged; a bare clone of the remote: {} ms",
        wall.as_millis(),
        started.elapsed().as_millis()
    );
}

fn parallel(files: usize, trace: bool) {
    let names: Vec<String> = (0..8).map(|i| format!("p{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut walls = Vec::new();
    for jobs in ["1", "4"] {
        let f = Fixture::new();
        f.pad(files);
        f.add_projects(&names, 2);
        settle(&f);
        let actions: Vec<Value> = names
            .iter()
            .map(|dir| {
                let mut a = create_mr(&format!("quartermaster/{dir}"), &[greeting()], "batch");
                a["working_dir"] = json!(dir);
                a["test_command"] = json!("make check");
                a
            })
            .collect();
        let log: &[(&str, &str)] = if trace {
            &[("QM_LOG", "quartermaster=debug")]
        } else {
            &[]
        };
        let started = Instant::now();
        let run = f.run_unreplayed(&plan(actions), &["--jobs", jobs], log);
        walls.push(started.elapsed().as_millis());
        assert_eq!(run.code, 0, "{}", run.said());
        if trace {
            println!("  --jobs {jobs}:");
            run.stderr.lines().for_each(|l| println!("  {l}"));
        }
    }
    println!(
        "{files} files: 8 independent actions, tests of 2 s: --jobs 1 wall {} ms, --jobs 4 wall {} ms ({:.2}x)",
        walls[0],
        walls[1],
        walls[1] as f64 / walls[0] as f64
    );
}
