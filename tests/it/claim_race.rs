//! Several claimers at once, as real `quartermaster run` processes and as threads: exactly one
//! wins, and every loser is told why and runs nothing.

use crate::common::Fixture;
use quartermaster::named_plan::{PlanName, PlanStore, StoreError};
use std::process::Stdio;
use std::sync::{Arc, Barrier};

const PLAN: &str =
    r#"{"name": "race", "content": "{}", "status": "ready", "revision": 7, "updatedAt": ""}"#;
const CLAIMERS: usize = 8;

fn plans_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("race.json"), PLAN).unwrap();
    dir
}

/// A plan that runs in a moment: one `skip`.
const SKIP_PLAN: &str = r#"{"repo_context": {"platform": "github", "ecosystems": ["cargo"], "default_branch": "main"}, "actions": [{"type": "skip", "package": "serde", "reason": "held", "reason_type": "human_hold", "confidence": 1}]}"#;

#[test]
fn several_quartermaster_processes_claiming_one_plan_have_exactly_one_winner() {
    let f = Fixture::new();
    for round in 0..3 {
        let dir = f.root.path().join(format!("plans-{round}"));
        PlanStore::new(&dir)
            .submit(&PlanName::parse("race").unwrap(), SKIP_PLAN, None, None)
            .unwrap();
        let children: Vec<_> = (0..CLAIMERS)
            .map(|i| {
                f.qm_process()
                    .args(["run", "--plan", "docker-agent:race", "--plans-dir"])
                    .arg(&dir)
                    .arg("--checkout")
                    .arg(&f.checkout)
                    .args(["--remote", "origin", "--forge", "local", "--forge-dir"])
                    .arg(&f.forge)
                    .arg("--report")
                    .arg(dir.join(format!("report-{i}.json")))
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let outputs: Vec<_> = children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect();
        let winners = outputs.iter().filter(|o| o.status.success()).count();
        assert_eq!(winners, 1, "round {round}: {outputs:#?}");
        for loser in outputs.iter().filter(|o| !o.status.success()) {
            assert_eq!(loser.status.code(), Some(2));
            let err = String::from_utf8_lossy(&loser.stderr);
            // A loser that read the plan before the winner's claim finds it moved on; one that
            // read it after finds it no longer `ready`.
            let told = [
                "error: plan `race` changed: expected revision 1, found 2; nothing was written",
                "error: plan `race` has status `in-progress` at revision 2, not `ready`; nothing ran",
                "error: plan `race` has status `done` at revision 3, not `ready`; nothing ran",
            ];
            assert!(told.iter().any(|t| err.contains(t)), "round {round}: {err}");
        }
        let reports = (0..CLAIMERS)
            .filter(|i| dir.join(format!("report-{i}.json")).exists())
            .count();
        assert_eq!(reports, 1, "round {round}: only the winner ran");
        let store = PlanStore::new(&dir);
        let plan = store.read(&PlanName::parse("race").unwrap()).unwrap();
        assert_eq!((plan.revision(), plan.status()), (3, "done"));
        let result = store
            .read(&PlanName::parse("race-result").unwrap())
            .unwrap();
        assert_eq!((result.revision(), result.status()), (1, "done"));
    }
}

#[test]
fn threads_claiming_without_a_revision_also_have_one_winner() {
    let dir = plans_dir();
    let barrier = Arc::new(Barrier::new(CLAIMERS));
    let handles: Vec<_> = (0..CLAIMERS)
        .map(|_| {
            let (barrier, path) = (barrier.clone(), dir.path().to_path_buf());
            std::thread::spawn(move || {
                // A store per thread: each takes the lock through its own open file, as separate
                // processes do.
                let store = PlanStore::new(path);
                barrier.wait();
                store.claim(&PlanName::parse("race").unwrap(), None, "ready")
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(
        results.iter().filter(|r| r.is_ok()).count(),
        1,
        "{results:#?}"
    );
    for err in results.iter().filter_map(|r| r.as_ref().err()) {
        assert!(
            matches!(err, StoreError::WrongStatus { revision: 8, .. }),
            "{err}"
        );
    }
}

/// docker-agent takes `flock(LOCK_EX)` on `.plans.lock`; util-linux's `flock` takes the same lock
/// from another process, so this is what a docker-agent write in progress looks like to us.
#[test]
fn a_docker_agent_style_flock_holder_keeps_quartermaster_waiting() {
    use quartermaster::named_plan::LOCK_FILE;
    use std::process::Command;
    use std::time::{Duration, Instant};
    let dir = plans_dir();
    let lock = dir.path().join(LOCK_FILE);
    let mut holder = Command::new("flock")
        .arg(&lock)
        .args(["sleep", "1"])
        .spawn()
        .expect("util-linux `flock`");
    // Wait until the other process holds the lock, seen through a lock attempt of our own.
    let probe = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock)
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while probe.try_lock().is_ok() {
        probe.unlock().unwrap();
        assert!(Instant::now() < deadline, "flock never took the lock");
        std::thread::sleep(Duration::from_millis(5));
    }
    let store = PlanStore::new(dir.path()).with_lock_timeout(Duration::from_millis(100));
    let name = PlanName::parse("race").unwrap();
    assert!(matches!(
        store.claim(&name, None, "ready"),
        Err(StoreError::LockTimeout { .. })
    ));
    let patient = PlanStore::new(dir.path()).with_lock_timeout(Duration::from_secs(10));
    assert_eq!(
        patient.claim(&name, Some(7), "ready").unwrap().revision(),
        8
    );
    assert!(holder.wait().unwrap().success());
}
