//! What one unit may take of the runner. Each attack runs twice: within the limits, where it is
//! stopped and the unit's result names the limit, and as the positive control with the limit
//! lifted or no sandbox, where it gets through.

use crate::common::*;
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Runs the greeting update with `make <target>` as its test command, plus `flags`.
fn attack(f: &Fixture, recipe: &str, flags: &[&str]) -> Run {
    let makefile = f.show("main", "Makefile");
    if !makefile.contains("\nattack:") {
        f.commit_file(
            "main",
            "Makefile",
            &format!("{makefile}\nattack:\n{recipe}\n"),
        );
    }
    let mut action = create_mr("quartermaster/attack", &[greeting()], "batch");
    action["test_command"] = json!("make attack");
    f.run(&plan(vec![action]), flags)
}

fn test_result(run: &Run) -> String {
    run.action(0)["test"]["runs"][0]["result"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The most processes whose command line holds `mark` seen at once while `run` runs.
fn peak_processes(mark: &str, run: impl FnOnce() -> Run) -> (Run, usize) {
    let peak = Arc::new(Mutex::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (peak, stop, mark) = (peak.clone(), stop.clone(), mark.to_string());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let n = processes_running(&mark).len();
                let mut peak = peak.lock().unwrap();
                *peak = (*peak).max(n);
                drop(peak);
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let run = run();
    stop.store(true, Ordering::SeqCst);
    watcher.join().unwrap();
    let peak = *peak.lock().unwrap();
    (run, peak)
}

/// 300 processes from one test command: 100 at most get to run, and the result says why.
#[test]
fn a_fork_storm_stops_at_the_process_limit() {
    let f = Fixture::new();
    let mark = format!("qmstorm{}", f.uid_base);
    // `; :` keeps each `sh` (and its mark) alive beside its `sleep`.
    let recipe = format!(
        "\tfor i in $$(seq 300); do sh -c 'sleep 20; :' {mark} & done; sleep 3; test $$(pgrep -c -f {mark}) -ge 300"
    );
    let (run, peak) = peak_processes(&mark, || attack(&f, &recipe, &["--limit", "processes=100"]));
    assert_eq!(run.status(0), "failed", "{}", run.said());
    assert!(peak < 100, "{peak} processes ran at once");
    let result = test_result(&run);
    assert!(
        result.contains("probably stopped by the limit of 100 processes"),
        "{result}\n{}",
        run.said()
    );
    // The control: no sandbox, no limit; all 300 run at once.
    let (free, peak) = peak_processes(&mark, || attack(&f, &recipe, &["--isolation", "none"]));
    assert_eq!(free.status(0), "done", "{}", free.said());
    assert!(peak >= 300, "{peak}");
}

/// 256 MiB into `/dev/shm`: a 64 MiB tmpfs is full, said so; unsized (the control), it fits.
#[test]
fn shared_memory_is_as_large_as_the_tmpfs_limit() {
    let f = Fixture::new();
    // A file of its own, removed once written whole: a replay of the branch runs this on the
    // host, while a full /dev/shm is how the limit is recognised.
    let recipe = "\tf=/dev/shm/qm-fill.$$$$; head -c 268435456 /dev/zero > $$f && \\\n\t  test $$(stat -c %s $$f) -eq 268435456 && rm -f $$f";
    let run = attack(&f, recipe, &["--limit", "tmpfs=64MiB"]);
    if run.report["isolation"]["level"] == "uid" {
        eprintln!("skipped: without namespaces /dev/shm is the host's");
        return;
    }
    assert_eq!(run.status(0), "failed", "{}", run.said());
    assert!(
        test_result(&run).ends_with("; limit reached: /dev/shm is full (64 MiB)"),
        "{}",
        test_result(&run)
    );
    let free = attack(&f, recipe, &["--limit", "tmpfs=off"]);
    assert_eq!(free.status(0), "done", "{}", free.said());
}

/// A 64 MiB file where 16 MiB is the limit.
#[test]
fn a_file_larger_than_the_limit_is_not_written() {
    let f = Fixture::new();
    let recipe =
        "\thead -c 67108864 /dev/zero > big.bin\n\ttest $$(stat -c %s big.bin) -eq 67108864";
    let run = attack(&f, recipe, &["--limit", "file-size=16MiB"]);
    assert_eq!(run.status(0), "failed", "{}", run.said());
    let result = test_result(&run);
    assert!(
        result.contains("file size limit 16 MiB"),
        "{result}\n{}",
        run.said()
    );
    let free = attack(&f, recipe, &["--isolation", "none"]);
    assert_eq!(free.status(0), "done", "{}", free.said());
}

/// 600 MiB of memory in one process where 256 MiB is the limit.
#[test]
fn memory_beyond_the_limit_is_refused() {
    let f = Fixture::new();
    let recipe = "\tpython3 -c 'b = bytearray(600 * 1024 * 1024); print(len(b))'";
    let run = attack(&f, recipe, &["--limit", "memory=256MiB"]);
    assert_eq!(run.status(0), "failed", "{}", run.said());
    let result = test_result(&run);
    assert!(
        result.contains("memory limit 256 MiB"),
        "{result}\n{}",
        run.said()
    );
    let free = attack(&f, recipe, &["--isolation", "none"]);
    assert_eq!(free.status(0), "done", "{}", free.said());
}

/// The limits in force are in the report, and a bad one is refused before anything runs.
#[test]
fn limits_are_reported_and_bad_ones_refused() {
    let f = Fixture::new();
    let run = f.run(
        &plan(vec![]),
        &["--limit", "memory=4GiB", "--limit", "tmpfs=off"],
    );
    let limits = &run.report["isolation"]["limits"];
    assert_eq!(limits["memory"], 4u64 << 30, "{}", run.said());
    assert_eq!(limits["tmpfs"], serde_json::Value::Null);
    assert_eq!(limits["processes"], 8192);
    assert!(["rlimits", "cgroup v2"].contains(&limits["by"].as_str().unwrap()));
    let bad = f.run(&plan(vec![]), &["--limit", "memory=lots"]);
    assert_eq!(bad.code, 2);
    insta::assert_snapshot!(bad.stderr);
}
