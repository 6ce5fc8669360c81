//! Lock files and manifests written to take Quartermaster down: a nine-line `pnpm-lock.yaml`
//! whose aliases would expand to a billion nodes, and a FIFO where a manifest belongs. Each ends
//! the unit with a finding code, in seconds, and the report is written.

use crate::common::*;
use serde_json::json;
use std::time::{Duration, Instant};

/// Nine lines: each anchor lists the one before ten times (10⁹ nodes once expanded).
fn bomb() -> String {
    let mut text = String::from("lockfileVersion: '9.0'\na: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (name, previous) in "bcdefgh".chars().zip("abcdefg".chars()) {
        let list = vec![format!("*{previous}"); 10].join(", ");
        text.push_str(&format!("{name}: &{name} [{list}]\n"));
    }
    text
}

/// Runs `make <target>` as a unit of `ecosystem`, whose `files` it may change.
fn run_target(f: &Fixture, ecosystem: &str, files: &[&str], target: &str) -> (Run, Duration) {
    let packages = if ecosystem == "cargo" {
        "crates"
    } else {
        "npm"
    };
    let mut flags = f.custom_mission(
        "hostile",
        json!({ecosystem: {"packages": packages, "versions": "semver",
            "commands": [format!("make {target}")], "files": files}}),
    );
    flags.extend(["--command-timeout".to_string(), "60".to_string()]);
    let mut action = create_mr("quartermaster/hostile", &[greeting()], "batch");
    action["commands"] = json!([format!("make {target}")]);
    action["test_command"] = json!("make quick");
    let mut plan = plan(vec![action]);
    plan["repo_context"]["ecosystems"] = json!([ecosystem]);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let started = Instant::now();
    let run = f.run(&plan, &flags);
    (run, started.elapsed())
}

/// What `yaml-rust2`'s own loader does with the first levels of the bomb: it expands them.
#[test]
fn the_yaml_loader_itself_expands_aliases() {
    let small: String = bomb().lines().take(5).collect::<Vec<_>>().join("\n");
    let docs = yaml_rust2::YamlLoader::load_from_str(&small).unwrap();
    let d = docs[0]["d"].as_vec().unwrap();
    let leaves: usize = d
        .iter()
        .flat_map(|c| c.as_vec().unwrap())
        .flat_map(|b| b.as_vec().unwrap())
        .map(|a| a.as_vec().unwrap().len())
        .sum();
    assert_eq!(leaves, 10_000, "four levels of aliases are 10⁴ copies");
}

#[test]
fn a_billion_laughs_pnpm_lock_is_a_finding_not_an_exhausted_memory() {
    let f = Fixture::new();
    f.commit_file(
        "main",
        "package.json",
        r#"{"name": "app", "version": "1.0.0"}"#,
    );
    f.commit_file(
        "main",
        "pnpm-lock.yaml",
        "lockfileVersion: '9.0'\nimporters:\n  .: {}\n",
    );
    // In a directory the sandbox lets commands read.
    std::fs::write(f.registry.join("bomb.yaml"), bomb()).unwrap();
    let makefile = f.show("main", "Makefile")
        + &format!(
            "\nbomb:\n\tcp {}/bomb.yaml pnpm-lock.yaml\n",
            f.registry.display()
        );
    f.commit_file("main", "Makefile", &makefile);
    let (run, took) = run_target(&f, "pnpm", &["pnpm-lock.yaml", "package.json"], "bomb");
    assert_eq!(run.status(0), "failed", "{}", run.said());
    assert_eq!(
        run.reason(0),
        "change.over_limit: cannot verify what the commands changed: pnpm-lock.yaml uses a YAML alias (at line 3), which pnpm never writes; refusing to parse it"
    );
    assert!(took < Duration::from_secs(120), "{took:?}");
    let peak = run.report["timing"]["peak_memory_kb"].as_u64().unwrap();
    assert!(peak < 512 * 1024, "peak memory {peak} KiB");
    assert!(!f.branches().contains_key("quartermaster/hostile"));
}

#[test]
fn a_fifo_planted_as_a_manifest_does_not_block_the_run() {
    let f = Fixture::new();
    let makefile = f.show("main", "Makefile") + "\nfifo:\n\trm Cargo.toml\n\tmkfifo Cargo.toml\n";
    f.commit_file("main", "Makefile", &makefile);
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let (run, _) = run_target(&f, "cargo", &["Cargo.toml", "Cargo.lock"], "fifo");
        let _ = tx.send(run.reason(0).to_string());
        f
    });
    let reason = rx
        .recv_timeout(Duration::from_secs(300))
        .expect("the run blocked on the FIFO");
    assert_eq!(
        reason,
        "change.unreadable: cannot verify what the commands changed: Cargo.toml is a FIFO; lock files and manifests must be regular files"
    );
    let f = handle.join().unwrap();
    assert!(!f.branches().contains_key("quartermaster/hostile"));
}
