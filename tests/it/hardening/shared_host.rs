//! One host, several runs and units: concurrent runs take uid ranges of their own, a
//! passed-through variable never carries the run's CI credentials, and a reused workspace's root
//! is as it was checked out.

use crate::common::*;
use serde_json::json;
use std::time::Duration;

/// Runs `plan` in `f` with the sandbox's uid base chosen by Quartermaster, not the fixture's (an
/// empty variable is unset).
fn run_free_base(f: &Fixture, plan: &serde_json::Value, extra: &[&str]) -> Run {
    f.run_with(plan, extra, &[("QM_SANDBOX_UID_BASE", "")])
}

/// Two jobs of one self-hosted runner: while the first run's unit holds its uids, a second run
/// takes the next free range and finishes; a third that insists on the first run's base is
/// refused, naming the flag (the positive control: the range really was held).
#[test]
fn concurrent_runs_take_uid_ranges_of_their_own() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: dedicated sandbox uids need root (CI runs as root)");
        return;
    }
    let first = Fixture::new();
    let go = first.registry.join("go");
    let mark = format!("qmhold{}", first.uid_base);
    let makefile = first.show("main", "Makefile")
        + &format!(
            "\nhold:\n\tsh -c 'while [ ! -e {} ]; do sleep 0.2; done; :' {mark}\n",
            go.display()
        );
    first.commit_file("main", "Makefile", &makefile);
    // Lets the first run finish however this test ends.
    struct Release(std::path::PathBuf);
    impl Drop for Release {
        fn drop(&mut self) {
            let _ = std::fs::write(&self.0, "");
        }
    }
    let release = Release(go.clone());
    let mut holding = create_mr("quartermaster/hold", &[greeting()], "batch");
    holding["test_command"] = json!("make hold");
    let held = {
        let plan = plan(vec![holding]);
        let f = first;
        std::thread::spawn(move || (run_free_base(&f, &plan, &[]), f))
    };
    let held_uid = uid_of_the_process_marked(&mark);
    let second = Fixture::new();
    let run = run_free_base(&second, &one_pr(), &[]);
    assert_eq!(run.status(0), "done", "{}", run.said());
    let base = run.report["isolation"]["uid_base"].as_u64().unwrap() as u32;
    assert_ne!(base, held_uid);
    let third = Fixture::new();
    let refused = run_free_base(
        &third,
        &one_pr(),
        &["--sandbox-uid-base", &held_uid.to_string()],
    );
    assert_eq!(refused.code, 2, "{}", refused.said());
    let error: Vec<&str> = refused
        .stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .collect();
    insta::assert_snapshot!(error.join("\n").replace(&held_uid.to_string(), "<uid>"));
    drop(release);
    let (run, first) = held.join().unwrap();
    assert_eq!(run.status(0), "done", "{}", run.said());
    assert_eq!(run.report["isolation"]["uid_base"], held_uid);
    drop(first);
}

/// The uid of the process whose command line carries `mark`, once it runs.
fn uid_of_the_process_marked(mark: &str) -> u32 {
    let holder = first_process_running(mark, Duration::from_secs(300), "the first run never held");
    let status = std::fs::read_to_string(format!("/proc/{holder}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|u| u.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap()
}

/// `--extra-env CACHE_TOKEN` where that variable holds the Actions runtime token: refused before
/// anything runs. The control: without the runtime token in the run's environment, the same flag
/// hands the variable to the test command, which sees it.
#[test]
fn extra_env_refuses_a_variable_holding_a_ci_credential() {
    let f = Fixture::new();
    let makefile = f.show("main", "Makefile") + "\nleak:\n\ttest -n \"$$CACHE_TOKEN\"\n";
    f.commit_file("main", "Makefile", &makefile);
    let mut action = create_mr("quartermaster/cargo", &[greeting()], "batch");
    action["test_command"] = json!("make leak");
    let plan = plan(vec![action]);
    let runtime = "eyJ0eXAiOiJKV1QiLCJhbGciOi-runtime-token";
    let run = f.run_with(
        &plan,
        &["--extra-env", "CACHE_TOKEN"],
        &[("ACTIONS_RUNTIME_TOKEN", runtime), ("CACHE_TOKEN", runtime)],
    );
    assert_eq!(run.code, 2, "{}", run.said());
    insta::assert_snapshot!(run.stderr);
    let control = f.run_with(
        &plan,
        &["--extra-env", "CACHE_TOKEN"],
        &[("CACHE_TOKEN", runtime)],
    );
    assert_eq!(control.status(0), "done", "{}", control.said());
}

/// A unit makes the workspace root group-writable and setgid (2775); the next unit of the slot
/// finds it as checked out, whether workspaces are layered or checkouts. The first unit's test
/// shows its change took.
#[test]
fn the_next_unit_finds_the_workspace_root_as_checked_out() {
    for mode in ["layered", "checkouts"] {
        let f = Fixture::new();
        let makefile = f.show("main", "Makefile")
            + "\nloosen:\n\tchmod 2775 .\n\ttest \"$$(stat -c %a .)\" = 2775\n\
               \ncheck-root:\n\ttest \"$$(stat -c %a .)\" = 755\n";
        f.commit_file("main", "Makefile", &makefile);
        let mut first = create_mr("quartermaster/first", &[greeting()], "batch");
        first["test_command"] = json!("make loosen");
        let mut second = create_mr("quartermaster/second", &[farewell()], "batch");
        second["test_command"] = json!("make check-root");
        let flags = ["--jobs", "1", "--workspaces", mode];
        let run = f.run(&plan(vec![first, second]), &flags);
        assert_eq!(run.status(0), "done", "{mode}: {}", run.said());
        assert_eq!(run.status(1), "done", "{mode}: {}", run.said());
    }
}
