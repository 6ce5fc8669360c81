//! `--jobs`: actions run at once where their lock keys allow, never where they do not, and the
//! report is the one a run of one action at a time writes, apart from timings.

use crate::common::*;
use serde_json::{Value, json};

/// A `create_mr` of greeting 1.0.1 in project `dir`, on `branch`, tested by a slow `make check`.
fn update_in(dir: &str, branch: &str) -> Value {
    let mut action = create_mr(branch, &[greeting()], "batch");
    action["working_dir"] = json!(dir);
    action["test_command"] = json!("make check");
    action
}

/// Four actions: 0 and 2 change the same lock file (`workdir:p0`), 1 and 3 are independent.
fn four_actions() -> Value {
    plan(vec![
        update_in("p0", "quartermaster/p0"),
        update_in("p1", "quartermaster/p1"),
        update_in("p0", "quartermaster/p0-again"),
        update_in("p2", "quartermaster/p2"),
    ])
}

fn fixture() -> Fixture {
    let f = Fixture::new();
    f.add_projects(&["p0", "p1", "p2"], 2);
    f
}

/// `(start, end)` of action `i`, in milliseconds after the run's first action started.
fn span(run: &Run, i: usize) -> (u64, u64) {
    let action = run.action(i);
    let start = action["started_ms"].as_u64().unwrap_or(0);
    (start, start + action["duration_ms"].as_u64().unwrap())
}

fn without_timings(mut report: Value) -> Value {
    strip_timings(&mut report);
    report
}

#[test]
fn actions_sharing_a_key_never_overlap_and_the_report_keeps_plan_order() {
    let parallel = fixture();
    let run = parallel.run(&four_actions(), &["--jobs", "3"]);
    assert_eq!(run.code, 0, "{}", run.said());
    let indices: Vec<u64> = run.report["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indices, vec![0, 1, 2, 3]);
    let spans: Vec<(u64, u64)> = (0..4).map(|i| span(&run, i)).collect();
    // 0 and 2 hold workdir:p0: 2 starts only after 0 ended.
    assert!(spans[0].1 <= spans[2].0, "0 and 2 overlapped: {spans:?}");
    // 1 runs beside 0 (the jobs did run at once).
    assert!(spans[1].0 < spans[0].1, "1 waited for 0: {spans:?}");
    for line in run.stderr.lines().filter(|l| l.contains("$ make check")) {
        assert!(
            line.starts_with('['),
            "a parallel progress line has no prefix: {line}"
        );
    }

    let serial = fixture();
    let one = serial.run(&four_actions(), &["--jobs", "1"]);
    assert_eq!(one.code, 0, "{}", one.said());
    let spans: Vec<(u64, u64)> = (0..4).map(|i| span(&one, i)).collect();
    assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0), "{spans:?}");
    let paths = |f: &Fixture, report: &Value| {
        let text = report.to_string();
        let root = f.root.path().canonicalize().unwrap();
        serde_json::from_str::<Value>(&text.replace(&root.display().to_string(), "<root>")).unwrap()
    };
    assert_eq!(
        without_timings(paths(&parallel, &run.report)),
        without_timings(paths(&serial, &one.report))
    );
    assert_eq!(parallel.branches().len(), serial.branches().len());
}

#[test]
fn jobs_refusal_names_the_input() {
    let f = Fixture::new();
    let run = f.run_with(&four_actions(), &[], &[("QM_JOBS", "0")]);
    assert_eq!(run.code, 2, "{}", run.said());
    assert!(
        run.stderr
            .contains("--jobs must be a number from 1 to 16, not `0`"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("hint: give how many actions may run at once")
    );
}

/// What a unit leaves in its slot's workspace (ignored and untracked files, a taken mode, a
/// directory swapped for a link, a link out) is gone before the next unit of that slot starts:
/// a layered workspace drops its upper layer, a checkout is brought back to the base.
#[test]
fn a_reused_workspace_keeps_nothing_of_the_last_unit() {
    for mode in ["layered", "checkouts"] {
        let run = litter_then_pristine(mode);
        let kept = &run.report["isolation"]["workspaces"];
        let expected = if nix::unistd::geteuid().is_root() {
            mode
        } else {
            skip::skipped("layered workspaces need root with namespaces (CI runs as root)");
            "checkouts"
        };
        assert_eq!(kept["mode"], expected, "{kept}");
        let line = format!("quartermaster: workspaces {expected} (");
        assert!(run.said().contains(&line), "{}", run.said());
    }
}

fn litter_then_pristine(mode: &str) -> Run {
    let f = Fixture::new();
    f.commit_file(
        "main",
        "Makefile",
        "litter:\n\tmkdir -p target/deep && echo x > target/deep/f && echo u > untracked.txt\n\tchmod 600 Cargo.toml && chmod 000 target/deep\n\trm -r src && ln -s /tmp src && ln -s /etc/passwd passwd-link\n\npristine:\n\ttest ! -e untracked.txt && test ! -e target && test ! -e passwd-link\n\ttest ! -L src && test -f src/lib.rs\n\ttest \"$$(stat -c %a Cargo.toml)\" = 644\n",
    );
    let mut litter = create_mr("quartermaster/litter", &[greeting()], "batch");
    litter["test_command"] = json!("make litter");
    let mut pristine = create_mr("quartermaster/pristine", &[greeting()], "batch");
    pristine["test_command"] = json!("make pristine");
    let run = f.run(
        &plan(vec![litter, pristine]),
        &["--jobs", "1", "--workspaces", mode],
    );
    assert_eq!(run.code, 0, "{mode}: {}", run.said());
    assert_eq!(run.status(1), "done", "{mode}: {}", run.reason(1));
    assert_eq!(
        f.show("quartermaster/pristine", "src/lib.rs"),
        f.show("main", "src/lib.rs")
    );
    run
}

/// The container deployment (root, no namespaces): two slots, two uids, two units at once.
#[test]
fn at_the_uid_level_two_slots_build_at_once() {
    if !nix::unistd::geteuid().is_root() {
        skip::skipped("the uid level needs root (CI runs as root)");
        return;
    }
    let f = fixture();
    // No toolchain under a private HOME at this level: the update is a `make` target.
    let mut flags = f.custom_mission(
        "uid-jobs",
        json!({"cargo": {"packages": "crates", "versions": "semver",
            "commands": ["make bump"], "files": ["Cargo.lock"]}}),
    );
    flags.extend(["--isolation", "uid", "--jobs", "2"].map(String::from));
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    for dir in ["p0", "p1"] {
        let makefile = f.show("main", &format!("{dir}/Makefile"))
            + "\nbump:\n\tsed -i 's/^version = \"1.0.0\"$$/version = \"1.0.1\"/' Cargo.lock\n";
        f.commit_file("main", &format!("{dir}/Makefile"), &makefile);
    }
    let actions: Vec<Value> = ["p0", "p1"]
        .iter()
        .map(|dir| {
            let mut a = update_in(dir, &format!("quartermaster/{dir}"));
            a["commands"] = json!(["make bump"]);
            a
        })
        .collect();
    let run = f.run(&plan(actions), &flags);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(run.report["isolation"]["level"], "uid");
    let (a, b) = (span(&run, 0), span(&run, 1));
    assert!(
        b.0 < a.1,
        "the two slots did not build at once: {a:?} {b:?}"
    );
    for dir in ["p0", "p1"] {
        let lock = f.show(
            &format!("quartermaster/{dir}"),
            &format!("{dir}/Cargo.lock"),
        );
        assert!(lock.contains("version = \"1.0.1\""), "{lock}");
    }
}
