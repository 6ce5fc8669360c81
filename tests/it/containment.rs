//! What a test command can do to the units after it, at whatever isolation level this machine
//! gives (`uid+namespaces` as root, `namespaces` unprivileged): a `setsid` chain that keeps
//! re-forking and a survivor aiming at Quartermaster's git directories are gone before the next
//! command starts; a poisoned HOME does not reach the next unit; the runner's file commands and
//! the token stay out of reach.

use crate::common::*;
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The strongest level this machine allows: `uid+namespaces` as root, `namespaces` unprivileged.
#[test]
fn a_test_command_reaches_nothing_after_it() {
    attack_then_inspect(&[]);
}

/// The container deployment: root without namespaces, a dedicated uid per slot.
#[test]
fn at_the_uid_level_a_test_command_reaches_nothing_after_it() {
    if !nix::unistd::geteuid().is_root() {
        skip::skipped("the uid level needs root (CI runs as root)");
        return;
    }
    let level = attack_then_inspect(&["--isolation", "uid"]);
    assert_eq!(level, "uid");
}

/// Runs an attacking test command, then a unit that inspects what is left; returns the level.
fn attack_then_inspect(extra: &[&str]) -> String {
    let f = Fixture::new();
    let mark = format!("qmmark{}", f.uid_base);
    let files = runner_files(&f);
    commit_the_attack(&f, &mark, &files);
    let main = f.branches()["main"].clone();

    let watcher = Watcher::start(&mark);
    let run = run_attack_and_inspect(&f, &files, extra);
    std::thread::sleep(Duration::from_millis(500));
    let seen = watcher.stop();

    let level = run.report["isolation"]["level"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(run.status(0), "done", "{level}: {}", run.said());
    assert_eq!(run.status(1), "done", "{level}: {}", run.said());
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(
            !text.contains("EVIL"),
            "{level}: a command wrote to {file}: {text}"
        );
    }
    assert_eq!(
        sh(&f.remote, "git rev-parse quartermaster/a^"),
        main,
        "{level}: the pushed branch is the checked commit on main"
    );
    let first_inspect = seen
        .iter()
        .find(|(k, _)| k == "inspect")
        .map(|(_, t)| *t)
        .expect("the watcher saw the next command");
    let late: Vec<&String> = seen
        .iter()
        .filter(|(k, t)| k != "inspect" && *t >= first_inspect)
        .map(|(k, _)| k)
        .collect();
    assert!(
        late.is_empty(),
        "{level}: still running when the next command started: {late:?}"
    );
    assert!(processes_running(&format!("{mark}chain")).is_empty());
    assert!(processes_running(&format!("{mark}survivor")).is_empty());
    level
}

/// The runner's file commands (`GITHUB_ENV` ... `GITHUB_STEP_SUMMARY`), empty.
fn runner_files(f: &Fixture) -> Vec<String> {
    let gh = f.root.path().join("gh");
    std::fs::create_dir_all(&gh).unwrap();
    ["env", "path", "output", "state", "step_summary"]
        .iter()
        .map(|n| {
            let p = gh.join(n);
            std::fs::write(&p, "").unwrap();
            p.display().to_string()
        })
        .collect()
}

/// Commits a `setsid` chain script and a Makefile whose `attack` target does its worst and whose
/// `inspect` target fails on anything the attack left.
fn commit_the_attack(f: &Fixture, mark: &str, files: &[String]) {
    let chain =
        format!("d=${{1:-0}}\n( sleep 0.05; exec sh \"$0\" $((d+1)) {mark}chain ) &\nsleep 0.2\n");
    let makefile = format!(
        "bump-greeting:\n\tsed -i 's/^version = \"1.0.0\"$$/version = \"1.0.1\"/' Cargo.lock\n\
         bump-farewell:\n\tsed -i 's/^version = \"2.0.0\"$$/version = \"2.0.1\"/' Cargo.lock\n\
         attack:\n\
         \tsetsid sh ./chain.sh 0 {mark}chain >/dev/null 2>&1 </dev/null &\n\
         \tsetsid sh -c 'sleep 2; for g in {tmp}/quartermaster-*/git-*; do git --git-dir=$$g update-ref HEAD HEAD~1; done' {mark}survivor >/dev/null 2>&1 </dev/null &\n\
         \tmkdir -p $$HOME/.config/go $$HOME/.config/pip\n\
         \techo 'registry=http://127.0.0.1:9/' >> $$HOME/.npmrc\n\
         \techo 'GOFLAGS=-toolexec=/bin/false' >> $$HOME/.config/go/env\n\
         \tprintf '[global]\\nindex-url=http://127.0.0.1:9/\\n' >> $$HOME/.config/pip/pip.conf\n\
         \t-echo '[build]' >> $$CARGO_HOME/config.toml\n\
         \t-for f in {files} /github/file_commands/x; do echo EVIL=1 >> $$f; done\n\
         \t! grep -qs {TOKEN} /proc/[0-9]*/environ\n\
         \ninspect:\n\
         \tsh -c 'sleep 1' {mark}inspect\n\
         \ttest ! -e $$HOME/.npmrc && test ! -e $$HOME/.config/go/env && test ! -e $$HOME/.config/pip/pip.conf\n\
         \t! grep -qs 'build' $$CARGO_HOME/config.toml\n",
        tmp = f.tmp().display(),
        files = files.join(" "),
    );
    f.commit_file("main", "chain.sh", &chain);
    f.commit_file("main", "Makefile", &makefile);
    sh(&f.checkout, "git pull -q");
}

/// Runs the attacking unit, then the inspecting one, with the runner's file commands set.
fn run_attack_and_inspect(f: &Fixture, files: &[String], extra: &[&str]) -> Run {
    let mut attack = create_mr("quartermaster/a", &[greeting()], "batch");
    attack["commands"] = json!(["make bump-greeting"]);
    attack["test_command"] = json!("make attack");
    let mut inspect = create_mr("quartermaster/b", &[farewell()], "batch");
    inspect["commands"] = json!(["make bump-farewell"]);
    inspect["test_command"] = json!("make inspect");
    let mut flags = f.custom_mission(
        "contain",
        json!({"cargo": {"packages": "crates", "versions": "semver",
            "commands": ["make bump-greeting", "make bump-farewell"], "files": ["Cargo.lock"]}}),
    );
    flags.extend(extra.iter().map(|s| s.to_string()));
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    // farewell 2.0.1 breaks `cargo test`, not `make inspect`.
    let env: Vec<(&str, &str)> = vec![
        ("QM_TOKEN", TOKEN),
        ("GITHUB_ENV", &files[0]),
        ("GITHUB_PATH", &files[1]),
        ("GITHUB_OUTPUT", &files[2]),
        ("GITHUB_STATE", &files[3]),
        ("GITHUB_STEP_SUMMARY", &files[4]),
    ];
    f.run_with(&plan(vec![attack, inspect]), &flags, &env)
}

/// Sightings of each marked process, from outside every sandbox.
struct Watcher {
    seen: Arc<Mutex<Vec<(String, Instant)>>>,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Watcher {
    fn start(mark: &str) -> Self {
        let seen: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (seen, stop, mark) = (seen.clone(), stop.clone(), mark.to_string());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    for kind in ["chain", "survivor", "inspect"] {
                        if !processes_running(&format!("{mark}{kind}")).is_empty() {
                            seen.lock()
                                .unwrap()
                                .push((kind.to_string(), Instant::now()));
                        }
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            })
        };
        Self { seen, stop, thread }
    }

    fn stop(self) -> Vec<(String, Instant)> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().unwrap();
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

/// Two units at once, at the strongest level: one's test command reaches for the other's
/// workspace and cannot touch it.
#[test]
fn a_unit_cannot_reach_the_unit_beside_it() {
    assert_eq!(attack_the_neighbour(&[]), "done");
}

/// The same at the uid level (root, no namespaces): the other slot's uid cannot enter.
#[test]
fn at_the_uid_level_a_unit_cannot_reach_the_unit_beside_it() {
    if !nix::unistd::geteuid().is_root() {
        skip::skipped("the uid level needs root (CI runs as root)");
        return;
    }
    assert_eq!(attack_the_neighbour(&["--isolation", "uid"]), "done");
}

/// Runs, at once, an attack in `p0` and a victim in `p1` that checks its workspace after the
/// attack; returns the victim's status.
fn attack_the_neighbour(extra: &[&str]) -> String {
    let f = Fixture::new();
    f.add_projects(&["p0", "p1"], 0);
    let tmp = f.tmp().display().to_string();
    // Slot names are predictable; the sandbox directory's name is listed in TMPDIR.
    let targets = format!("{tmp}/qm-sandbox-*/slot-*/work/p1 {tmp}/qm-sandbox-*/slot-1/work/p1");
    let bump = "bump:\n\tsed -i 's/^version = \"1.0.0\"$$/version = \"1.0.1\"/' Cargo.lock\n";
    let attack = format!(
        "{bump}attack:\n\tfor i in 1 2 3 4 5 6 7 8 9 10; do for d in {targets}; do echo evil >> $$d/Cargo.lock; touch $$d/pwned; done; sleep 0.2; done; true\n"
    );
    let victim =
        format!("{bump}victim:\n\tsleep 3\n\t! grep -q evil Cargo.lock && test ! -e pwned\n");
    f.commit_file("main", "p0/Makefile", &attack);
    f.commit_file("main", "p1/Makefile", &victim);
    let action = |dir: &str, test: &str| {
        let mut a = create_mr(&format!("quartermaster/{dir}"), &[greeting()], "batch");
        a["working_dir"] = json!(dir);
        a["commands"] = json!(["make bump"]);
        a["test_command"] = json!(format!("make {test}"));
        a
    };
    let mut flags = f.custom_mission(
        "neighbours",
        json!({"cargo": {"packages": "crates", "versions": "semver",
            "commands": ["make bump"], "files": ["Cargo.lock"]}}),
    );
    flags.extend(extra.iter().map(|s| s.to_string()));
    flags.extend(["--jobs", "2"].map(String::from));
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let run = f.run(
        &plan(vec![action("p0", "attack"), action("p1", "victim")]),
        &flags,
    );
    assert_eq!(run.status(0), "done", "{}", run.said());
    let starts: Vec<u64> = (0..2)
        .map(|i| run.action(i)["started_ms"].as_u64().unwrap_or(0))
        .collect();
    let first_end = starts[0] + run.action(0)["duration_ms"].as_u64().unwrap();
    assert!(starts[1] < first_end, "the units did not run at once");
    run.status(1).to_string()
}
