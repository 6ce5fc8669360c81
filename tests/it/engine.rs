//! The engine in-process, on the local forge and a real git remote, with a mission whose update
//! command is a `make` target that edits `Cargo.lock`.

use quartermaster::ci::progress::Progress;
use quartermaster::engine::{Engine, Settings};
use quartermaster::forge::local::LocalForge;
use quartermaster::git::{Identity, RemoteSpec, RemoteUrl};
use quartermaster::mission::Mission;
use quartermaster::mission::pattern::splits_on_this_thread;
use quartermaster::report::{Operation, Status};
use quartermaster::sandbox::{Isolation, Sandbox, SandboxConfig};
use std::path::Path;
use std::time::Duration;

const MISSION: &str = r#"{"description": "test", "action_types": ["create_mr"],
  "ecosystems": {"cargo": {"packages": "crates", "versions": "semver",
    "commands": ["make bump"], "files": ["Cargo.lock"]}}}"#;

const PLAN: &str = r#"{"repo_context": {"platform": "github", "ecosystems": ["cargo"],
    "default_branch": "main"},
  "actions": [{"type": "create_mr", "branch": "quartermaster/bump", "title": "Bump",
    "description": "Bumps the version.", "labels": [], "fallback_strategy": "batch",
    "confidence": 1, "commands": ["make bump"], "test_command": "make check",
    "updates": [{"package": "greeting", "from": "1.0.0", "to": "1.0.1",
                 "update_type": "patch"}]}]}"#;

const MANIFEST: &str = "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ngreeting = \"1.0\"\n";

const LOCK: &str = "version = 3\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\n \"greeting\",\n]\n\n[[package]]\nname = \"greeting\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n";

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Maintainer")
        .env("GIT_AUTHOR_EMAIL", "maintainer@example.com")
        .env("GIT_COMMITTER_NAME", "Maintainer")
        .env("GIT_COMMITTER_EMAIL", "maintainer@example.com")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// Commits `seed` (a directory under `root`) as `main` and clones it to a bare remote there.
fn bare_remote_of(root: &Path, seed: &Path) -> std::path::PathBuf {
    git(seed, &["init", "-q", "-b", "main"]);
    git(seed, &["add", "."]);
    git(seed, &["commit", "-q", "-m", "seed"]);
    let bare = root.join("remote.git");
    let name = seed.file_name().unwrap().to_str().unwrap();
    git(
        root,
        &["clone", "-q", "--bare", name, bare.to_str().unwrap()],
    );
    bare
}

/// A bare remote whose `main` holds a cargo project locked at greeting 1.0.0 and a Makefile:
/// `bump` moves the lock to 1.0.1, `check` passes once it did.
fn remote(root: &Path) -> std::path::PathBuf {
    let seed = root.join("seed");
    std::fs::create_dir_all(&seed).unwrap();
    std::fs::write(seed.join("Cargo.toml"), MANIFEST).unwrap();
    std::fs::write(seed.join("Cargo.lock"), LOCK).unwrap();
    std::fs::write(
        seed.join("Makefile"),
        "bump:\n\tsed -i 's/1.0.0/1.0.1/' Cargo.lock\ncheck:\n\tgrep -q 1.0.1 Cargo.lock\n",
    )
    .unwrap();
    bare_remote_of(root, &seed)
}

/// The engine's own behaviour is tested here: the gates ask the fixture's OSV stand-in, and the
/// policy needs no registry (the project's registry is a made-up one).
fn settings(scratch: &Path, osv: &str, runtime: &tokio::runtime::Runtime) -> Settings {
    settings_under(scratch, osv, runtime, "")
}

/// [`settings`] with `more` added to the policy (another table of `.quartermaster.toml`).
fn settings_under(
    scratch: &Path,
    osv: &str,
    runtime: &tokio::runtime::Runtime,
    more: &str,
) -> Settings {
    let policy = quartermaster::policy::parse(
        &format!("[release-age]\nminimum = \"0\"\n[deprecated]\nblock = false\n[release-notes]\nenabled = false\n{more}"),
        "the engine test's policy",
    )
    .unwrap();
    let screener = quartermaster::supply::Screener::new(
        std::sync::Arc::new(policy),
        Default::default(),
        osv,
        Default::default(),
        runtime.handle().clone(),
    )
    .unwrap();
    Settings {
        dry_run: false,
        min_confidence: 0.5,
        command_timeout: Duration::from_secs(60),
        bot_label: "quartermaster".into(),
        author: Identity::parse("Bot <bot@example.com>").unwrap(),
        draft: false,
        allow_mentions: false,
        child_env: quartermaster::process::child_env(std::env::vars_os(), &[]),
        extra_env: vec![],
        secrets: vec![],
        registry_hosts: vec![],
        scratch: scratch.to_path_buf(),
        toolchain_policy: Default::default(),
        screener: std::sync::Arc::new(screener),
        sign_commits: false,
        logs: None,
    }
}

/// The sandbox, with the `quartermaster` binary as its helper (this test binary is not one).
fn sandbox(settings: &Settings) -> Sandbox {
    let own = std::env::vars_os().collect();
    let mut config = SandboxConfig::new(Isolation::Auto, &own, settings.child_env.clone());
    config.helper = env!("CARGO_BIN_EXE_quartermaster").into();
    config.hidden.push(settings.scratch.clone());
    config.uid_base = crate::common::next_uid_base();
    Sandbox::probe(config).unwrap()
}

/// Validation splits every command string once; the engine runs the typed argv it was handed and
/// never splits (or matches) a command again.
#[test]
fn the_engine_never_reads_a_command_string_again() {
    let root = tempfile::tempdir().unwrap();
    let bare = remote(root.path());
    let mission = Mission::from_json("test", MISSION, "test").unwrap();
    let before = splits_on_this_thread();
    let validation = quartermaster::validate::validate(PLAN.as_bytes(), &mission);
    let plan = validation.plan.expect("the plan is valid");
    // One update command and one test command.
    assert_eq!(splits_on_this_thread() - before, 2);
    let forge = LocalForge::open(
        &root.path().join("forge"),
        RemoteSpec {
            url: RemoteUrl::new(bare.display().to_string()),
            username: None,
            token: None,
        },
    )
    .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    // As the binary does: workspaces belong to the sandbox's user, not to this process's.
    let empty = tempfile::tempdir().unwrap();
    quartermaster::git::isolate_from_user_config(empty.path()).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let osv = crate::common::osv::OsvStandIn::start();
    let settings = settings(scratch.path(), &osv.url, &runtime);
    let sandbox = sandbox(&settings);
    let progress = Progress::to(|_| {});
    let split = splits_on_this_thread();
    let engine = Engine::new(&plan, &forge, &settings, &progress, &sandbox);
    let reports = engine.execute(runtime.handle()).actions;
    assert_eq!(splits_on_this_thread(), split, "the engine split a command");
    assert_eq!(reports[0].status, Status::Done, "{}", reports[0].reason);
    assert_eq!(reports[0].pull_requests[0].operation, Operation::Created);
    assert_eq!(reports[0].commands[0].command, "make bump");
    assert_eq!(reports[0].changes[0].direct[0].to.as_deref(), Some("1.0.1"));
    assert_eq!(
        osv.queried_sorted(),
        crate::common::osv::greeting_queries(),
        "the gates ran"
    );
}

const TWO_CRATES: &str = r#"{"description": "test", "action_types": ["create_mr"],
  "ecosystems": {"cargo": {"packages": "crates", "versions": "semver",
    "commands": ["make <pkg>"], "files": ["Cargo.lock"]}}}"#;

/// A patch and a minor update, each on its own branch.
const TWO_UPDATES: &str = r#"{"repo_context": {"platform": "github", "ecosystems": ["cargo"],
    "default_branch": "main"},
  "actions": [
   {"type": "create_mr", "branch": "quartermaster/greeting", "title": "Bump greeting",
    "description": "A patch.", "labels": [], "fallback_strategy": "batch", "confidence": 1,
    "commands": ["make greeting"], "test_command": "make check",
    "updates": [{"package": "greeting", "from": "1.0.0", "to": "1.0.1", "update_type": "patch"}]},
   {"type": "create_mr", "branch": "quartermaster/farewell", "title": "Bump farewell",
    "description": "A minor.", "labels": [], "fallback_strategy": "batch", "confidence": 1,
    "commands": ["make farewell"], "test_command": "make check",
    "updates": [{"package": "farewell", "from": "2.0.0", "to": "2.1.0", "update_type": "minor"}]}]}"#;

/// A remote locked at greeting 1.0.0 and farewell 2.0.0, with a `make` target moving each.
fn two_crates(root: &Path) -> std::path::PathBuf {
    let seed = root.join("seed");
    std::fs::create_dir_all(&seed).unwrap();
    std::fs::write(
        seed.join("Cargo.toml"),
        format!("{MANIFEST}farewell = \"2.0\"\n"),
    )
    .unwrap();
    let source = "source = \"registry+https://github.com/rust-lang/crates.io-index\"\n";
    std::fs::write(
        seed.join("Cargo.lock"),
        format!(
            "version = 3\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\n \"farewell\",\n \"greeting\",\n]\n\n[[package]]\nname = \"farewell\"\nversion = \"2.0.0\"\n{source}\n[[package]]\nname = \"greeting\"\nversion = \"1.0.0\"\n{source}"
        ),
    )
    .unwrap();
    std::fs::write(
        seed.join("Makefile"),
        "greeting:\n\tsed -i 's/\"1.0.0\"/\"1.0.1\"/' Cargo.lock\nfarewell:\n\tsed -i 's/\"2.0.0\"/\"2.1.0\"/' Cargo.lock\ncheck:\n\ttrue\n",
    )
    .unwrap();
    bare_remote_of(root, &seed)
}

/// Runs the two updates on a fresh remote and local forge under `policy` (a table of
/// `.quartermaster.toml`); the forge's PR records.
fn opened_under(policy: &str) -> Vec<serde_json::Value> {
    let root = tempfile::tempdir().unwrap();
    let bare = two_crates(root.path());
    let mission = Mission::from_json("test", TWO_CRATES, "test").unwrap();
    let plan = quartermaster::validate::validate(TWO_UPDATES.as_bytes(), &mission)
        .plan
        .expect("the plan is valid");
    let spec = RemoteSpec {
        url: RemoteUrl::new(bare.display().to_string()),
        username: None,
        token: None,
    };
    let forge = LocalForge::open(&root.path().join("forge"), spec).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    quartermaster::git::isolate_from_user_config(empty.path()).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let osv = crate::common::osv::OsvStandIn::start();
    let settings = settings_under(scratch.path(), &osv.url, &runtime, policy);
    let sandbox = sandbox(&settings);
    let progress = Progress::to(|_| {});
    let ran = Engine::new(&plan, &forge, &settings, &progress, &sandbox).execute(runtime.handle());
    for a in &ran.actions {
        assert_eq!(a.status, Status::Done, "{}", a.reason);
    }
    let auto: Vec<bool> = ran
        .actions
        .iter()
        .map(|a| a.pull_requests[0].auto_merge)
        .collect();
    let records: Vec<serde_json::Value> = (1..=2)
        .map(|n| {
            let path = root.path().join(format!("forge/pulls/{n}.json"));
            serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
        })
        .collect();
    let recorded: Vec<bool> = records.iter().map(|r| r["auto_merge"] == true).collect();
    assert_eq!(auto, recorded, "the report says what the forge holds");
    records
}

/// The repository's automerge rules, as engine settings: auto-merge for the patch PR only,
/// reviewers and assignees on both; without rules, neither.
#[test]
fn automerge_is_requested_for_the_update_types_the_policy_names() {
    let records = opened_under(
        "[automerge]\nupdate-types = [\"patch\"]\nreviewers = [\"alice\"]\nteam-reviewers = [\"core\"]\nassignees = [\"bob\"]\n",
    );
    assert_eq!(records[0]["head"], "quartermaster/greeting");
    assert_eq!(records[0]["auto_merge"], true);
    assert!(records[1].get("auto_merge").is_none(), "{}", records[1]);
    for r in &records {
        assert_eq!(r["reviewers"], serde_json::json!(["alice"]));
        assert_eq!(r["team_reviewers"], serde_json::json!(["core"]));
        assert_eq!(r["assignees"], serde_json::json!(["bob"]));
    }
    for r in opened_under("") {
        assert!(
            r.get("auto_merge").is_none() && r.get("reviewers").is_none(),
            "{r}"
        );
    }
}
