//! Toolchain fidelity: the versions a repository declares are compared with what its commands
//! get in the sandbox, recorded in the report and the PR, and with `--toolchain-policy fail` a
//! mismatch fails the unit before anything runs. Nothing is downloaded by default.

use crate::common::go_proxy::GoProxy;
use crate::common::npm_registry::NpmRegistry;
use crate::common::*;
use serde_json::{Value, json};

/// The rustup toolchain the tests run with, passed to the commands so that a
/// rust-toolchain.toml naming another one is recorded rather than obeyed (rustup would look for
/// it, and the commands could not run).
fn active_toolchain() -> String {
    if let Ok(toolchain) = std::env::var("RUSTUP_TOOLCHAIN") {
        return toolchain;
    }
    // Without rustup the variable is ignored, as rust-toolchain.toml is.
    std::process::Command::new("rustup")
        .args(["show", "active-toolchain"])
        .current_dir(std::env::temp_dir())
        .output()
        .ok()
        .and_then(|out| {
            let text = String::from_utf8_lossy(&out.stdout);
            text.split_whitespace().next().map(String::from)
        })
        .unwrap_or_else(|| "stable".into())
}

/// The version the commands' rustc reports.
fn machine_rustc() -> String {
    let out = std::process::Command::new("rustc")
        .arg("--version")
        .env("RUSTUP_TOOLCHAIN", active_toolchain())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().nth(1).unwrap().to_string()
}

/// Declares `channel` in rust-toolchain.toml on the default branch.
fn declare_rust(f: &Fixture, channel: &str) {
    f.commit_file(
        "main",
        "rust-toolchain.toml",
        &format!("[toolchain]\nchannel = \"{channel}\"\n"),
    );
}

/// Runs the greeting update on a repository whose rust-toolchain.toml names `channel`.
fn run_rust(f: &Fixture, channel: &str, args: &[&str]) -> Run {
    declare_rust(f, channel);
    rerun_rust(f, args)
}

/// Runs the greeting update with the tests' rustup toolchain.
fn rerun_rust(f: &Fixture, args: &[&str]) -> Run {
    let mut args: Vec<&str> = args.to_vec();
    args.extend(["--extra-env", "RUSTUP_TOOLCHAIN"]);
    let toolchain = active_toolchain();
    f.run_with(&one_pr(), &args, &[("RUSTUP_TOOLCHAIN", &toolchain)])
}

fn check(tool: &str, file: &str, declared: &str, rule: &str, found: &str, verdict: &str) -> Value {
    json!({
        "branch": "quartermaster/cargo",
        "tool": tool,
        "file": file,
        "declared": declared,
        "rule": rule,
        "found": found,
        "verdict": verdict,
    })
}

#[test]
fn warn_records_a_mismatch_in_the_report_and_the_pr() {
    let f = Fixture::new();
    let found = machine_rustc();
    let run = run_rust(&f, "1.70.0", &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(run.status(0), "done", "{}", run.said());
    assert_eq!(
        run.action(0)["toolchains"],
        json!([check(
            "rustc",
            "rust-toolchain.toml",
            "1.70.0",
            "prefix",
            &found,
            "mismatch"
        )])
    );
    let body = f.pulls()[0]["body"].as_str().unwrap().to_string();
    assert!(
        body.contains(&format!(
            "**Toolchains**\n\n| Tool | Declared in | Declared | Found | |\n|---|---|---|---|---|\n| rustc | `rust-toolchain.toml` | `1.70.0` | `{found}` | ⚠️ mismatch |\n"
        )),
        "{body}"
    );
    assert!(
        run.summary.contains(&format!(
            "### Toolchain mismatches\n\n- #0 `quartermaster/cargo`: rustc: rust-toolchain.toml declares 1.70.0, found {found}\n"
        )),
        "{}",
        run.summary
    );
}

#[test]
fn fail_stops_the_unit_before_its_commands() {
    let f = Fixture::new();
    let found = machine_rustc();
    let run = run_rust(&f, "1.70.0", &["--toolchain-policy", "fail"]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "failed");
    assert_eq!(
        run.reason(0),
        format!(
            "[toolchain.mismatch] rustc: rust-toolchain.toml declares 1.70.0, found {found}; no command ran"
        )
    );
    assert_eq!(run.action(0)["commands"], json!([]));
    assert!(f.pulls().is_empty());
}

/// A branch built under `warn` is not reused under `fail`: it is checked, and fails.
#[test]
fn a_build_made_under_warn_is_checked_again_under_fail() {
    let f = Fixture::new();
    let run = run_rust(&f, "1.70.0", &[]);
    assert_eq!(run.status(0), "done", "{}", run.said());
    let run = rerun_rust(&f, &[]);
    assert_eq!(run.reason(0), "PR #1 unchanged", "{}", run.said());
    let run = rerun_rust(&f, &["--toolchain-policy", "fail"]);
    assert_eq!(run.status(0), "failed", "{}", run.said());
    assert!(
        run.reason(0).starts_with("[toolchain.mismatch] rustc: "),
        "{}",
        run.said()
    );
}

#[test]
fn a_matching_declaration_is_a_match() {
    let f = Fixture::new();
    let found = machine_rustc();
    let run = run_rust(&f, &found, &["--toolchain-policy", "fail"]);
    assert_eq!(run.status(0), "done", "{}", run.said());
    assert_eq!(
        run.action(0)["toolchains"],
        json!([check(
            "rustc",
            "rust-toolchain.toml",
            &found,
            "prefix",
            &found,
            "match"
        )])
    );
    assert!(
        !run.summary.contains("Toolchain mismatches"),
        "{}",
        run.summary
    );
}

#[test]
fn a_bad_policy_is_refused() {
    let f = Fixture::new();
    let run = f.run(&one_pr(), &["--toolchain-policy", "strict"]);
    assert_eq!(run.code, 2, "{}", run.said());
    assert!(
        run.stderr
            .contains("--toolchain-policy must be warn or fail, not `strict`"),
        "{}",
        run.said()
    );
}

/// Without the opt-in, rustup does not fetch the toolchain rust-toolchain.toml names: rustc is
/// not found there, and the commands fail rather than download.
#[test]
fn rustup_installs_nothing_by_default() {
    let Some(f) = Fixture::with_tool(&["rustup", "--version"]) else {
        return;
    };
    f.commit_file(
        "main",
        "rust-toolchain.toml",
        "[toolchain]\nchannel = \"1.70.0\"\n",
    );
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.status(0), "failed", "{}", run.said());
    let checks = &run.action(0)["toolchains"];
    assert_eq!(checks[0]["found"], Value::Null, "{}", run.said());
    assert_eq!(checks[0]["verdict"], "mismatch");
    let tail = run.action(0)["commands"][0]["output_tail"]
        .as_str()
        .unwrap();
    assert!(tail.contains("is not installed"), "{tail}");
}

/// go.mod asks for go 1.99 and toolchain go1.99.0: with the default GOTOOLCHAIN=local (whatever
/// the operator's environment says) Go runs the installed toolchain, nothing is fetched, and the
/// mismatch is recorded.
#[test]
fn go_fetches_no_toolchain_by_default() {
    let Some(f) = Fixture::with_tool(&["go", "version"]) else {
        return;
    };
    let proxy = GoProxy::lib_app(&f);
    let go_mod = f
        .show("main", "go.mod")
        .replace("go 1.19\n", "go 1.99\n\ntoolchain go1.99.0\n");
    f.commit_file("main", "go.mod", &go_mod);
    let machine = std::process::Command::new("go")
        .arg("version")
        .env("GOTOOLCHAIN", "local")
        .output()
        .unwrap();
    let machine = String::from_utf8_lossy(&machine.stdout);
    let machine = machine
        .split_whitespace()
        .nth(2)
        .unwrap()
        .trim_start_matches("go")
        .to_string();
    let run = proxy.run_update(&f, "auto");
    let checks = &run.action(0)["toolchains"];
    let row = |declared: &str, rule: &str| {
        json!({
            "branch": "quartermaster/go-lib",
            "tool": "go",
            "file": "go.mod",
            "declared": declared,
            "rule": rule,
            "found": machine,
            "verdict": "mismatch",
        })
    };
    assert_eq!(
        checks,
        &json!([row("1.99", "minimum"), row("1.99.0", "exact")]),
        "{}",
        run.said()
    );
    assert!(
        !run.said().contains("go: downloading go1.99.0"),
        "{}",
        run.said()
    );
}

/// What `argv` prints, trimmed of a leading `v`.
fn version_of(argv: &[&str]) -> String {
    let out = std::process::Command::new(argv[0])
        .args(&argv[1..])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim().trim_start_matches('v').to_string()
}

/// node and npm are asked in the sandbox: an alias in `.nvmrc` is unchecked, and under
/// `--toolchain-policy fail` matching `engines` and `packageManager` let the update land.
#[test]
fn node_and_npm_declarations_are_checked_in_the_sandbox() {
    if !tool_present(&["npm", "--version"]) {
        return;
    }
    let (node, npm) = (
        version_of(&["node", "--version"]),
        version_of(&["npm", "--version"]),
    );
    let f = Fixture::new();
    let registry = NpmRegistry::async_app(&f);
    let mut manifest: Value = serde_json::from_str(&f.show("main", "package.json")).unwrap();
    manifest["engines"] = json!({"node": ">=14 || ^12.22", "npm": ">=6"});
    manifest["packageManager"] = json!(format!("npm@{npm}"));
    f.commit_file(
        "main",
        "package.json",
        &(serde_json::to_string_pretty(&manifest).unwrap() + "\n"),
    );
    f.commit_file("main", ".nvmrc", "lts/*\n");
    let mut action = create_mr(
        "quartermaster/async",
        &[json!({"package": "async", "from": "3.2.5", "to": "3.2.6", "update_type": "patch"})],
        "batch",
    );
    action["commands"] = json!(["npm update async"]);
    action["test_command"] = json!("npm test");
    let npm_plan = plan_tested_by("npm", "package-lock.json", "npm test", vec![action]);
    let npmrc = format!("npmrc={}", f.npmrc(&registry).display());
    let run = f.run_with(
        &npm_plan,
        &["--toolchain-policy", "fail"],
        &[("QM_TOOL_CONFIG", &npmrc)],
    );
    assert_eq!(run.status(0), "done", "{}", run.said());
    let row = |tool: &str, file: &str, declared: &str, rule: &str, found: &str, verdict: &str| {
        let mut row = json!({
            "branch": "quartermaster/async", "tool": tool, "file": file, "declared": declared,
            "rule": rule, "found": found, "verdict": verdict,
        });
        if verdict == "unchecked" {
            row["note"] = json!("names no version number (an alias or a channel)");
        }
        row
    };
    assert_eq!(
        run.action(0)["toolchains"],
        json!([
            row("node", ".nvmrc", "lts/*", "prefix", &node, "unchecked"),
            row(
                "node",
                "package.json",
                ">=14 || ^12.22",
                "range",
                &node,
                "match"
            ),
            row("npm", "package.json", ">=6", "range", &npm, "match"),
            row("npm", "package.json", &npm, "exact", &npm, "match"),
        ])
    );
}
