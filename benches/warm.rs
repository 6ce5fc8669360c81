//! What warm caches buy: the same updates run with `--caches cold` and with `--caches warm`.
//!
//! Opt-in by nature: it needs the public registries (crates.io and npm, reached through cargo and
//! npm) and root with namespaces (where warm caches are layered). Run with `bench/warm`, or
//! `bench/warm cargo` or `bench/warm npm` for one project; `QM_WARM_TRACE=1` prints where each
//! run's time went.
//!
//! - cargo: a library on clap, regex, serde and tokio, each pinned one patch release behind, and
//!   two crates no update touches (syn with every feature, tracing-subscriber), whose cold
//!   `cargo test` builds them all (25 to 35 s on a busy 2-core machine). The four updates run as
//!   one batch (one unit) and as four `create_mr` actions (the four units a split makes),
//!   `--jobs 1`; the split's wall time over the batch's is the figure warm caches should bring
//!   from about 5x down to one cold build plus four incremental ones.
//! - npm: a package with jest and eslint as dev dependencies and four small dependencies one
//!   patch behind, updated by four `create_mr` actions; each unit's frozen install (`npm ci`)
//!   against the cold one.
//!
//! Every run is checked (each action `done`, the caches in the mode asked for, a warm-up that
//! succeeded) so that a figure never comes from a run that did nothing. The machine's load
//! average (from /proc/loadavg) is printed at the start and end of each run.

#[path = "../tests/it/common/mod.rs"]
mod common;

use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A package one patch release behind: (name, locked, update).
type Pin = (&'static str, &'static str, &'static str);

/// Chosen so that each update changes one crate (and its derive or builder twin), all published
/// long before any minimum release age.
const CRATES: [Pin; 4] = [
    ("clap", "4.4.10", "4.4.11"),
    ("regex", "1.10.2", "1.10.3"),
    ("serde", "1.0.190", "1.0.191"),
    ("tokio", "1.35.0", "1.35.1"),
];

/// Small runtime dependencies; jest and eslint (some 340 packages in all) make
/// `npm ci` cost.
const PACKAGES: [Pin; 4] = [
    ("dayjs", "1.11.9", "1.11.10"),
    ("lodash", "4.17.20", "4.17.21"),
    ("nanoid", "3.3.6", "3.3.7"),
    ("uuid", "9.0.0", "9.0.1"),
];
const DEV_TOOLS: [&str; 2] = ["jest@29.7.0", "eslint@8.57.0"];

fn main() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "warm caches are layered only as root with namespaces: run bench/warm as root"
    );
    let asked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |project: &str| asked.is_empty() || asked.iter().any(|a| a == project);
    let scratch = tempfile::tempdir().unwrap();
    let mut rows = Vec::new();
    if wanted("cargo") {
        cargo_rows(&scratch.path().join("cargo"), &mut rows);
    }
    if wanted("npm") {
        let seed = npm_project(&scratch.path().join("npm"));
        for mode in ["cold", "warm"] {
            rows.push(measure("npm", "4 units", mode, &seed, npm_plan()));
        }
    }
    print_table(&rows);
}

/// The cargo project's batch and its four units, cold then warm.
fn cargo_rows(dir: &Path, rows: &mut Vec<Row>) {
    let seed = cargo_project(dir);
    for mode in ["cold", "warm"] {
        let unsplit = vec![create_mr("quartermaster/all", &crate_updates(), "batch")];
        rows.push(measure("cargo", "batch of 4", mode, &seed, plan(unsplit)));
        let split = crate_updates()
            .iter()
            .map(|u| create_mr(&branch(u), std::slice::from_ref(u), "batch"))
            .collect();
        rows.push(measure("cargo", "4 units", mode, &seed, plan(split)));
    }
}

fn update(&(package, from, to): &Pin) -> Value {
    json!({"package": package, "from": from, "to": to, "update_type": "patch"})
}

fn crate_updates() -> Vec<Value> {
    CRATES.iter().map(update).collect()
}

fn branch(update: &Value) -> String {
    format!("quartermaster/{}", update["package"].as_str().unwrap())
}

fn npm_plan() -> Value {
    let actions = PACKAGES
        .iter()
        .map(|pin| {
            let u = update(pin);
            let mut a = create_mr(&branch(&u), std::slice::from_ref(&u), "batch");
            a["title"] = json!(format!("chore(deps): update {}", pin.0));
            a["commands"] = json!([format!("npm install {}@{}", pin.0, pin.2)]);
            a["test_command"] = json!("npm test");
            a
        })
        .collect();
    plan_tested_by("npm", "package-lock.json", "npm test", actions)
}

/// A scratch HOME for the tools that write the projects, so that this machine's own
/// configuration (`~/.npmrc`, `~/.cargo`) shapes no lock file.
fn tool(program: &str, dir: &Path, home: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    cmd.current_dir(dir)
        .env("HOME", home)
        .env("CARGO_HOME", home.join(".cargo"))
        .env("npm_config_cache", home.join(".npm"));
    cmd
}

/// The cargo library, committed with its lock file (the four crates one patch behind).
fn cargo_project(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    let deps: String = CRATES
        .iter()
        .map(|(name, locked, _)| {
            // The locked version's minor series, so that the lock may hold it.
            let req = locked.rsplit_once('.').unwrap().0;
            match *name {
                "clap" | "serde" => {
                    format!("{name} = {{ version = \"{req}\", features = [\"derive\"] }}\n")
                }
                "tokio" => format!("{name} = {{ version = \"{req}\", features = [\"full\"] }}\n"),
                _ => format!("{name} = \"{req}\"\n"),
            }
        })
        .collect();
    let write = |path: &str, text: &str| std::fs::write(dir.join(path), text).unwrap();
    write(
        "Cargo.toml",
        &format!(
            "[package]\nname = \"warm-bench\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n{deps}{UNTOUCHED}"
        ),
    );
    write("src/lib.rs", CARGO_LIB);
    write("tests/uses.rs", CARGO_TEST);
    write(".gitignore", "/target\n");
    let home = dir.with_extension("home");
    succeed(tool("cargo", dir, &home).args(["generate-lockfile", "--quiet"]));
    for (name, locked, _) in CRATES {
        succeed(tool("cargo", dir, &home).args([
            "update",
            "--quiet",
            "-p",
            name,
            "--precise",
            locked,
        ]));
    }
    commit(dir)
}

/// Dependencies no update touches, there for the cold build's weight: a unit that rebuilds them
/// is not incremental.
const UNTOUCHED: &str = "syn = { version = \"2\", features = [\"full\", \"extra-traits\", \"visit\", \"visit-mut\", \"fold\"] }\n\
tracing-subscriber = { version = \"0.3\", features = [\"env-filter\"] }\n";

const CARGO_LIB: &str = "//! Uses each dependency, so that its tests build them all.\n\
#[derive(clap::Parser, serde::Serialize, Debug)]\n\
pub struct Args {\n    #[arg(long, default_value_t = 2)]\n    pub workers: usize,\n}\n\n\
pub fn words(text: &str) -> usize {\n    regex::Regex::new(r\"\\w+\").unwrap().find_iter(text).count()\n}\n\n\
pub fn run(args: &Args) -> usize {\n    tokio::runtime::Builder::new_multi_thread()\n        .worker_threads(args.workers)\n        .build()\n        .unwrap()\n        .block_on(async { tokio::task::spawn(async { words(\"two words\") }).await.unwrap() })\n}\n";

const CARGO_TEST: &str = "use clap::Parser;\n\n\
#[test]\nfn every_dependency_works() {\n    let args = warm_bench::Args::parse_from([\"x\", \"--workers\", \"1\"]);\n    assert_eq!(warm_bench::run(&args), 2);\n    assert!(format!(\"{args:?}\").contains(\"workers\"));\n}\n";

/// The npm package, committed with its lock file (written without installing anything).
fn npm_project(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let write = |path: &str, text: &str| std::fs::write(dir.join(path), text).unwrap();
    write(
        "package.json",
        "{\n  \"name\": \"warm-bench\",\n  \"version\": \"1.0.0\",\n  \"private\": true,\n  \"scripts\": {\"test\": \"node test.js\"}\n}\n",
    );
    write("test.js", NPM_TEST);
    write(".gitignore", "node_modules/\n");
    let home = dir.with_extension("home");
    let install = |args: &[&str]| {
        succeed(
            tool("npm", dir, &home)
                .args(["install", "--package-lock-only", "--no-audit", "--no-fund"])
                .args(args),
        )
    };
    let pinned: Vec<String> = PACKAGES
        .iter()
        .map(|(n, v, _)| format!("{n}@{v}"))
        .collect();
    install(&pinned.iter().map(String::as_str).collect::<Vec<_>>());
    install(&[&["--save-dev"], &DEV_TOOLS[..]].concat());
    commit(dir)
}

const NPM_TEST: &str = "const assert = require('assert');\n\
assert.strictEqual(require('lodash').chunk([1, 2, 3], 2).length, 2);\n\
assert.strictEqual(require('uuid').v4().length, 36);\n\
assert.strictEqual(require('dayjs')('2024-01-01').year(), 2024);\n\
assert.strictEqual(require('nanoid').nanoid().length, 21);\n\
console.log('ok');\n";

fn commit(dir: &Path) -> PathBuf {
    sh(
        dir,
        "git init -q -b main && git add . && git commit -qm project",
    );
    dir.to_path_buf()
}

/// A fixture whose remote's `main` is the project in `seed`, and whose cargo reaches crates.io
/// itself (the fixture's own registry stands in for it otherwise).
fn fixture_of(seed: &Path) -> Fixture {
    let f = Fixture::new();
    std::fs::write(
        f.cargo_home.join("config.toml"),
        "# crates.io itself: no source replaced\n",
    )
    .unwrap();
    sh(
        seed,
        &format!("git push -q -f file://{} main", f.remote.display()),
    );
    sh(
        &f.checkout,
        "git fetch -q origin && git reset -q --hard origin/main",
    );
    f
}

/// One unit's time in its update commands, its frozen install and its tests, in ms.
struct Unit {
    branch: String,
    update: u64,
    install: u64,
    test: u64,
    /// The rest of the action's time: checkout, verification, the policy's gates, the PR.
    rest: u64,
}

/// One run's figures.
struct Row {
    project: &'static str,
    shape: &'static str,
    mode: &'static str,
    wall: f64,
    warm_up: Option<f64>,
    units: Vec<Unit>,
    load: (String, String),
}

/// The 1, 5 and 15 minute load averages.
fn load() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap();
    text.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `plan` on a fresh fixture of `seed` with caches `mode`, one action at a time, and
/// checks that it did what it measures.
fn measure(
    project: &'static str,
    shape: &'static str,
    mode: &'static str,
    seed: &Path,
    plan: Value,
) -> Row {
    let f = fixture_of(seed);
    eprintln!("warm bench: {project}, {shape}, caches {mode}: running");
    let before = load();
    let started = Instant::now();
    // QM_WARM_TRACE=1 shows where each run's time went.
    let trace = std::env::var_os("QM_WARM_TRACE").is_some();
    let log: &[(&str, &str)] = if trace {
        &[("QM_LOG", "quartermaster=debug")]
    } else {
        &[]
    };
    let run = f.run_unreplayed(&plan, &["--caches", mode, "--jobs", "1"], log);
    let wall = started.elapsed().as_secs_f64();
    let after = load();
    if trace {
        run.stderr
            .lines()
            .filter(|l| l.contains("quartermaster") || l.starts_with('['))
            .for_each(|l| println!("  {l}"));
    }
    assert_eq!(run.code, 0, "{project} {shape} {mode}: {}", run.said());
    let caches = &run.report["isolation"]["caches"];
    assert_eq!(caches["mode"], mode, "{}", run.said());
    let warm_up = (mode == "warm").then(|| {
        assert_eq!(caches["warm_up"]["ok"], true, "{}", run.said());
        let ms = caches["warm_up"]["duration_ms"].as_u64().unwrap();
        Duration::from_millis(ms).as_secs_f64()
    });
    let actions = run.report["actions"].as_array().unwrap();
    assert_eq!(actions.len(), plan["actions"].as_array().unwrap().len());
    let units = actions.iter().map(|a| unit(a, &run)).collect();
    Row {
        project,
        shape,
        mode,
        wall,
        warm_up,
        units,
        load: (before, after),
    }
}

/// An action's unit, which must have opened its PR after its tests passed.
fn unit(action: &Value, run: &Run) -> Unit {
    assert_eq!(action["status"], "done", "{action:#}\n{}", run.said());
    let total = |records: &Value| -> u64 {
        records
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["duration_ms"].as_u64())
            .sum()
    };
    let tests = &action["test"]["runs"];
    assert!(
        tests.as_array().is_some_and(|r| !r.is_empty()),
        "{action:#}"
    );
    Unit {
        branch: action["branch"].as_str().unwrap_or("?").to_string(),
        update: total(&action["commands"]),
        install: total(&action["installs"]),
        test: total(tests),
        rest: action["duration_ms"]
            .as_u64()
            .unwrap_or(0)
            .saturating_sub(total(&action["commands"]) + total(&action["installs"]) + total(tests)),
    }
}

fn seconds(ms: u64) -> String {
    format!("{:.1}", ms as f64 / 1000.0)
}

fn print_table(rows: &[Row]) {
    println!(
        "\n{:<6} {:<11} {:<6} {:>7} {:>9}  {:<44} load at start -> end (1, 5, 15 min)",
        "", "plan", "caches", "wall s", "warm-up s", "each unit: update / install / test / rest s"
    );
    for row in rows {
        let warm_up = row.warm_up.map_or("-".into(), |s| format!("{s:.1}"));
        for (i, u) in row.units.iter().enumerate() {
            let name = u.branch.trim_start_matches("quartermaster/");
            let each = format!(
                "{name}: {} / {} / {} / {}",
                seconds(u.update),
                seconds(u.install),
                seconds(u.test),
                seconds(u.rest)
            );
            if i == 0 {
                println!(
                    "{:<6} {:<11} {:<6} {:>7.1} {:>9}  {each:<44} {} -> {}",
                    row.project, row.shape, row.mode, row.wall, warm_up, row.load.0, row.load.1
                );
            } else {
                println!("{:<45} {each}", "");
            }
        }
    }
    println!();
    let wall = |shape: &str, mode: &str| {
        rows.iter()
            .find(|r| r.project == "cargo" && r.shape == shape && r.mode == mode)
            .map(|r| r.wall)
    };
    for mode in ["cold", "warm"] {
        if let (Some(split), Some(batch)) = (wall("4 units", mode), wall("batch of 4", mode)) {
            println!(
                "cargo, caches {mode}: 4 units / batch of 4 = {:.2}x",
                split / batch
            );
        }
    }
    let installs = |mode: &str| -> Vec<String> {
        rows.iter()
            .filter(|r| r.project == "npm" && r.mode == mode)
            .flat_map(|r| r.units.iter().map(|u| seconds(u.install)))
            .collect()
    };
    if rows.iter().any(|r| r.project == "npm") {
        println!(
            "npm ci per unit: cold {} s; warm {} s",
            installs("cold").join(", "),
            installs("warm").join(", ")
        );
    }
}
