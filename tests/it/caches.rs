//! Warm caches cannot be poisoned: a unit's writes to the caches it starts from (cargo's build
//! output and home, the npm cache) and to what its install built in the workspace
//! (`node_modules/`, `target/`) reach neither the next unit nor, through the CI's cache
//! directory, the next run. The warm-up is the one writer whose bytes every unit sees, which is
//! the control: the same bytes written there do reach the next unit, and its check catches them.

use crate::common::*;
use serde_json::{Value, json};

/// What the attack prints once its writes took, and the inspection once it saw the base's bytes.
const WROTE: &str = "ATTACK-WROTE-EVIL";
const SAW: &str = "INSPECT-SAW-BASE";

/// Where the attack writes, as the units' environment names it.
const TARGETS: &[&str] = &["CARGO_TARGET_DIR", "CARGO_HOME", "npm_config_cache"];
/// And in the workspace, where each unit's frozen install writes `base` if nothing is there.
const IN_WORKSPACE: &[&str] = &["node_modules", "target"];

/// The warm-up leaves `base` in a marker in every cache; `attack` checks it sees it, overwrites
/// it and checks the write took; `inspect` checks it sees `base`. Each says what it saw, then
/// fails, so that no PR is opened (a clean clone has no warm caches to replay them on).
fn commit_the_attack(f: &Fixture) {
    let each = |body: &str| {
        TARGETS
            .iter()
            .map(|var| format!("$${var}"))
            .chain(IN_WORKSPACE.iter().map(|dir| dir.to_string()))
            .map(|dir| body.replace("DIR", &dir))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let makefile = format!(
        "bump-greeting:\n\tsed -i 's/^version = \"1.0.0\"$$/version = \"1.0.1\"/' Cargo.lock\n\
         bump-farewell:\n\tsed -i 's/^version = \"2.0.0\"$$/version = \"2.0.1\"/' Cargo.lock\n\
         warm:\n{warm}\n\
         attack:\n{attack}\n\t@echo {WROTE}; false\n\
         inspect:\n{inspect}\n\t@echo {SAW}; false\n",
        warm = each(
            "\tmkdir -p DIR && (test -e DIR/marker || echo $${QM_TEST_MARK:-base} > DIR/marker)"
        ),
        attack = each(
            "\tgrep -qx base DIR/marker && echo EVIL > DIR/marker && grep -qx EVIL DIR/marker"
        ),
        inspect = each("\tgrep -qx base DIR/marker"),
    );
    f.commit_file("main", "Makefile", &makefile);
    sh(&f.checkout, "git pull -q");
}

/// A `create_mr` on `branch` of `update`, made by `make bump-<package>` and tested by `make
/// <target>`.
fn made_by_make(branch: &str, update: Value, target: &str) -> Value {
    let bump = format!("make bump-{}", update["package"].as_str().unwrap());
    let mut action = create_mr(branch, &[update], "batch");
    action["commands"] = json!([bump]);
    action["test_command"] = json!(format!("make {target}"));
    action
}

/// Unit `a` attacks, unit `b` inspects; the warm-up runs `make warm` as the frozen install.
fn attack_then_inspect(f: &Fixture, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let attack = made_by_make("quartermaster/a", greeting(), "attack");
    let inspect = made_by_make("quartermaster/b", farewell(), "inspect");
    run_units(f, vec![attack, inspect], extra, env)
}

fn run_units(f: &Fixture, actions: Vec<Value>, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let mut flags = f.custom_mission(
        "caches",
        json!({"cargo": {"packages": "crates", "versions": "semver",
            "commands": ["make bump-greeting", "make bump-farewell"], "files": ["Cargo.lock"],
            "install": ["make warm"]}}),
    );
    flags.extend(extra.iter().map(|s| s.to_string()));
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    f.run_with(&plan(actions), &flags, env)
}

fn warm(run: &Run) -> bool {
    run.report["isolation"]["caches"]["mode"] == "warm"
}

/// Root with namespaces: the only place caches are layered.
fn layered_here() -> bool {
    if nix::unistd::geteuid().is_root() {
        return true;
    }
    skip::skipped("warm caches need root with namespaces (CI runs as root)");
    false
}

#[test]
fn a_unit_cannot_poison_the_warm_caches_for_the_next_unit_or_the_next_run() {
    if !layered_here() {
        return;
    }
    let f = Fixture::new();
    commit_the_attack(&f);
    let cache = f.root.path().join("ci-cache");
    let dir = cache.display().to_string();
    let run = attack_then_inspect(&f, &["--cache-dir", &dir], &[]);
    assert!(warm(&run), "{}", run.said());
    assert_eq!(run.report["isolation"]["caches"]["warm_up"]["ok"], true);
    let said = run.said();
    assert!(said.contains(WROTE), "the attack's writes took: {said}");
    assert!(
        said.contains(SAW),
        "the next unit saw the base's bytes: {said}"
    );
    for var in TARGETS {
        let kept = cache.join(cache_rel(var)).join("marker");
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "base\n", "{var}");
    }
    // The next run starts from the CI's cache directory: what the attack wrote is not there.
    let inspect = made_by_make("quartermaster/c", farewell(), "inspect");
    let next = run_units(&f, vec![inspect], &["--cache-dir", &dir], &[]);
    assert!(next.said().contains(SAW), "{}", next.said());
}

/// The control: the same bytes, written by the warm-up (the one writer every unit sees), do
/// reach the next unit, and its check fails on them.
#[test]
fn bytes_the_warm_up_writes_reach_every_unit() {
    if !layered_here() {
        return;
    }
    let f = Fixture::new();
    commit_the_attack(&f);
    let inspect = made_by_make("quartermaster/b", farewell(), "inspect");
    let flags = ["--extra-env", "QM_TEST_MARK"];
    let run = run_units(&f, vec![inspect], &flags, &[("QM_TEST_MARK", "EVIL")]);
    assert!(warm(&run), "{}", run.said());
    assert_eq!(run.report["isolation"]["caches"]["warm_up"]["ok"], true);
    assert_eq!(run.status(0), "failed", "{}", run.said());
    let said = run.said();
    assert!(!said.contains(SAW), "{said}");
    assert!(
        said.contains("grep -qx base $CARGO_TARGET_DIR/marker"),
        "{said}"
    );
}

/// Asked for cold caches, units get none: the start-up line and the report say so.
#[test]
fn cold_caches_are_said_and_reported() {
    let f = Fixture::new();
    let run = f.run(&one_pr(), &["--caches", "cold"]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(run.report["isolation"]["caches"]["mode"], "cold");
    assert!(
        run.said()
            .contains("quartermaster: caches cold (asked for (`--caches cold`))")
    );
}

/// Where a variable points in the cache view, relative to it.
fn cache_rel(var: &str) -> &'static str {
    match var {
        "CARGO_TARGET_DIR" => "cargo-target",
        "CARGO_HOME" => "cargo",
        _ => "npm",
    }
}

/// The first unit that builds runs the warm-up; an unchanged re-run, whose unit reuses its PR,
/// builds nothing and has none.
#[test]
fn an_unchanged_re_run_has_no_warm_up() {
    if !layered_here() {
        return;
    }
    let f = Fixture::new();
    let first = f.run(&one_pr(), &[]);
    assert_eq!(first.code, 0, "{}", first.said());
    let warm_up = &first.report["isolation"]["caches"]["warm_up"];
    assert_eq!(warm_up["ok"], true, "{}", first.said());
    let commands: Vec<&str> = warm_up["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command"].as_str().unwrap())
        .collect();
    assert_eq!(
        commands,
        ["cargo fetch --locked", "cargo test --no-run --locked"]
    );
    let again = f.run(&one_pr(), &[]);
    assert_eq!(again.code, 0, "{}", again.said());
    assert!(again.reason(0).contains("unchanged"), "{}", again.reason(0));
    assert!(warm(&again));
    assert_eq!(again.report["isolation"]["caches"].get("warm_up"), None);
    assert!(
        !again.said().contains("warming the caches"),
        "{}",
        again.said()
    );
}

/// A warm-up that fails (here: the base's install fails, the unit's passes) leaves the units
/// with the caches it started from (none here); the run says why, and the units still build.
#[test]
fn a_failed_warm_up_leaves_the_units_cold_and_says_why() {
    if !layered_here() {
        return;
    }
    let f = Fixture::new();
    f.commit_file(
        "main",
        "Makefile",
        "bump-greeting:\n\tsed -i 's/^version = \"1.0.0\"$$/version = \"1.0.1\"/' Cargo.lock\n\
         warm:\n\tgrep -q 'version = \"1.0.1\"' Cargo.lock\n\
         check:\n\ttrue\n",
    );
    sh(&f.checkout, "git pull -q");
    let update = made_by_make("quartermaster/a", greeting(), "check");
    let mut flags = f.custom_mission(
        "caches",
        json!({"cargo": {"packages": "crates", "versions": "semver",
            "commands": ["make bump-greeting"], "files": ["Cargo.lock"], "install": ["make warm"]}}),
    );
    flags.push("--caches".into());
    flags.push("warm".into());
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let run = f.run_unreplayed(&plan(vec![update]), &flags, &[]);
    let warm_up = &run.report["isolation"]["caches"]["warm_up"];
    assert_eq!(warm_up["ok"], false, "{}", run.said());
    assert_eq!(warm_up["failed"], "`make warm` failed: exit code 2");
    assert!(
        run.said().contains(
            "the warm-up failed (`make warm` failed: exit code 2); units start from the caches it started from"
        ),
        "{}",
        run.said()
    );
    assert_eq!(run.status(0), "done", "{}", run.said());
}

/// Each working directory is warmed in a cell of its own, by whichever slot takes it (here both
/// slots of `--jobs 2`, each waiting a second so that neither takes both), and every unit starts
/// from the caches of all of them.
#[test]
fn places_warm_in_parallel_and_every_unit_sees_them_all() {
    if !layered_here() {
        return;
    }
    let f = Fixture::new();
    f.add_projects(&["a", "b"], 0);
    for dir in ["a", "b"] {
        let makefile = format!(
            "bump-greeting:\n\tsed -i 's/^version = \"1.0.0\"$$/version = \"1.0.1\"/' Cargo.lock\n\
             warm:\n\tsleep 1\n\tmkdir -p $$CARGO_HOME && echo {dir} > $$CARGO_HOME/marker-{dir}\n\
             check:\n\tgrep -qx a $$CARGO_HOME/marker-a && grep -qx b $$CARGO_HOME/marker-b\n"
        );
        f.commit_file("main", &format!("{dir}/Makefile"), &makefile);
    }
    sh(&f.checkout, "git pull -q");
    let actions = ["a", "b"]
        .iter()
        .map(|dir| {
            let mut action = made_by_make(&format!("quartermaster/{dir}"), greeting(), "check");
            action["working_dir"] = json!(dir);
            action
        })
        .collect();
    let mut flags = f.custom_mission(
        "caches",
        json!({"cargo": {"packages": "crates", "versions": "semver",
            "commands": ["make bump-greeting"], "files": ["Cargo.lock"], "install": ["make warm"]}}),
    );
    flags.extend(["--jobs", "2"].map(String::from));
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let run = f.run_unreplayed(&plan(actions), &flags, &[]);
    let said = run.said();
    let warm_up = &run.report["isolation"]["caches"]["warm_up"];
    assert_eq!(warm_up["ok"], true, "{said}");
    assert_eq!(warm_up["commands"].as_array().unwrap().len(), 2, "{said}");
    for action in ["[1/2]", "[2/2]"] {
        let warmed = said
            .lines()
            .any(|l| l.starts_with(action) && l.contains("$ make warm") && l.ends_with("warm-up"));
        assert!(warmed, "{action} warmed a place: {said}");
    }
    assert_eq!((run.status(0), run.status(1)), ("done", "done"), "{said}");
}
