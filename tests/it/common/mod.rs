//! A repository to run plans against, built on the spot and with no network: a local cargo
//! registry (greeting 1.0.0 → 1.0.1 is harmless, farewell 2.0.0 → 2.0.1 breaks the app's test), an
//! app depending on both, a bare remote, a clone of it, and a forge: the local one (a directory),
//! or a fake of GitHub's API with the remote served over smart HTTP behind the token.

// Shared with benches/run.rs, which uses only part of it.
#![allow(dead_code)]

pub(crate) mod fake_forge;
pub(crate) mod fixture;
pub(crate) mod forges;
pub(crate) mod gem_source;
pub(crate) mod git_http;
pub(crate) mod github;
pub(crate) mod github_api;
pub(crate) mod gitlab;
pub(crate) mod gitlab_api;
pub(crate) mod go_proxy;
pub(crate) mod npm_registry;
pub(crate) mod on_forge;
pub(crate) mod osv;
pub(crate) mod plans;
pub(crate) mod pypi_index;
pub(crate) mod registry;
pub(crate) mod releases;
pub(crate) mod replay;
pub(crate) mod repo;
pub(crate) mod running;
pub(crate) mod skip;

pub(crate) use plans::*;
pub(crate) use running::Run;

use assert_cmd::Command;
use quartermaster::forge::Forge;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Which forge a fixture runs plans against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    Local,
    Github,
    Gitlab,
}

/// The token the fakes accept.
pub(crate) const TOKEN: &str = "qm-test-token-7d41c0";

/// Servers a remote forge needs, running while the fixture lives.
pub(crate) struct Harness {
    pub runtime: tokio::runtime::Runtime,
    pub git: git_http::GitHttp,
    pub github: Option<github::FakeGithub>,
    pub gitlab: Option<gitlab::FakeGitlab>,
}

pub(crate) struct Fixture {
    pub backend: Backend,
    pub token: String,
    pub harness: Option<Harness>,
    pub root: tempfile::TempDir,
    pub registry: PathBuf,
    pub cargo_home: PathBuf,
    pub remote: PathBuf,
    pub checkout: PathBuf,
    pub forge: PathBuf,
    /// The first sandbox uid of this fixture's runs (as root).
    pub uid_base: u32,
    /// The advisory database the fixture's runs ask (`QM_OSV_URL`): none known unless a test
    /// adds one.
    pub osv: osv::OsvStandIn,
    /// Where the fixture's runs read release notes: GitHub's and GitLab's APIs stood in.
    pub releases: releases::ReleasesStandIn,
}

/// When the stand-in registries say a version was published, unless a test says otherwise:
/// long before any minimum release age, so that runs pass the release-age gate for real.
pub(crate) const LONG_AGO: &str = "2024-01-01T00:00:00Z";

/// An RFC 3339 time `hours` before now, for a version published recently.
pub(crate) fn hours_ago(hours: u64) -> String {
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(hours * 3600);
    humantime::format_rfc3339_seconds(then).to_string()
}

/// Live (not zombie) processes whose command line contains `needle`.
pub(crate) fn processes_running(needle: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            cmdline.contains(needle) && !stat.contains(") Z ")
        })
        .collect()
}

/// The first live process whose command line contains `needle`, once one runs; fails the test
/// with `never` if none does within `within`.
pub(crate) fn first_process_running(needle: &str, within: std::time::Duration, never: &str) -> u32 {
    let started = std::time::Instant::now();
    loop {
        if let Some(pid) = processes_running(needle).first() {
            return *pid;
        }
        assert!(started.elapsed() < within, "{never}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A sandbox uid base of its own for every fixture: apart per test process too, since test
/// suites of several checkouts may run at once on one machine.
pub(crate) fn next_uid_base() -> u32 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let process = std::process::id() % 1_000_000;
    100_000 + process * 1_000 + 4 * (NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst) % 250)
}

pub(crate) fn sh(dir: &Path, script: &str) -> String {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Human Maintainer")
        .env("GIT_AUTHOR_EMAIL", "human@example.com")
        .env("GIT_COMMITTER_NAME", "Human Maintainer")
        .env("GIT_COMMITTER_EMAIL", "human@example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Runs `command` to success, or fails the test with all it printed.
pub(crate) fn succeed(command: &mut std::process::Command) {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{command:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Fails the test, with what it printed on stderr, unless the process `out` is from succeeded.
pub(crate) fn assert_succeeded(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether `argv` (a tool asked for its version) runs here.
pub(crate) fn runs(argv: &[&str]) -> bool {
    std::process::Command::new(argv[0])
        .args(&argv[1..])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Whether the real tool `argv` names runs here, for a test that drives it. Without it the test
/// skips, saying so; but where `QM_TEST_REQUIRE_TOOLS` is set (`.ci/run`, which installs every
/// tool) a missing tool fails the test, so that CI cannot pass by skipping.
pub(crate) fn tool_present(argv: &[&str]) -> bool {
    if runs(argv) {
        return true;
    }
    assert!(
        std::env::var_os("QM_TEST_REQUIRE_TOOLS").is_none(),
        "`{}` does not run here, and QM_TEST_REQUIRE_TOOLS is set",
        argv.join(" ")
    );
    skip::skipped(&format!("`{}` does not run here", argv.join(" ")));
    false
}

/// How a crate version's index line reads.
#[derive(Debug, Clone, Default)]
pub(crate) struct Crate {
    /// `pubtime`; [`LONG_AGO`] when `None`; no `pubtime` at all when empty.
    pub pubtime: Option<String>,
    /// Dependencies: (name, requirement).
    pub deps: Vec<(String, String)>,
    pub yanked: bool,
}
