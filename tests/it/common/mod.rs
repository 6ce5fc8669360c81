//! A repository to run plans against, built on the spot and with no network: a local cargo
//! registry (greeting 1.0.0 → 1.0.1 is harmless, farewell 2.0.0 → 2.0.1 breaks the app's test), an
//! app depending on both, a bare remote, a clone of it, and a forge: the local one (a directory),
//! or a fake of GitHub's API with the remote served over smart HTTP behind the token.

// Shared with benches/run.rs, which uses only part of it.
#![allow(dead_code)]

pub mod forges;
pub mod gem_source;
pub mod git_http;
pub mod github;
pub mod github_api;
pub mod gitlab;
pub mod gitlab_api;
pub mod go_proxy;
pub mod npm_registry;
pub mod osv;
pub mod pypi_index;
pub mod releases;
pub mod replay;
pub mod skip;

use assert_cmd::Command;
use quartermaster::forge::Forge;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Which forge a fixture runs plans against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Local,
    Github,
    Gitlab,
}

/// The token the fakes accept.
pub const TOKEN: &str = "qm-test-token-7d41c0";

/// Servers a remote forge needs, running while the fixture lives.
pub struct Harness {
    pub runtime: tokio::runtime::Runtime,
    pub git: git_http::GitHttp,
    pub github: Option<github::FakeGithub>,
    pub gitlab: Option<gitlab::FakeGitlab>,
}

pub struct Fixture {
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
pub const LONG_AGO: &str = "2024-01-01T00:00:00Z";

/// An RFC 3339 time `hours` before now, for a version published recently.
pub fn hours_ago(hours: u64) -> String {
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(hours * 3600);
    humantime::format_rfc3339_seconds(then).to_string()
}

/// Live (not zombie) processes whose command line contains `needle`.
pub fn processes_running(needle: &str) -> Vec<u32> {
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

/// A sandbox uid base of its own for every fixture: apart per test process too, since test
/// suites of several checkouts may run at once on one machine.
pub fn next_uid_base() -> u32 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let process = std::process::id() % 1_000_000;
    100_000 + process * 1_000 + 4 * (NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst) % 250)
}

pub fn sh(dir: &Path, script: &str) -> String {
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
pub fn succeed(command: &mut std::process::Command) {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{command:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether `argv` (a tool asked for its version) runs here.
pub fn runs(argv: &[&str]) -> bool {
    std::process::Command::new(argv[0])
        .args(&argv[1..])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Whether the real tool `argv` names runs here, for a test that drives it. Without it the test
/// skips, saying so; but where `QM_TEST_REQUIRE_TOOLS` is set (`.ci/run`, which installs every
/// tool) a missing tool fails the test, so that CI cannot pass by skipping.
pub fn tool_present(argv: &[&str]) -> bool {
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

impl Fixture {
    pub fn new() -> Self {
        Self::on(Backend::Local)
    }

    pub fn on(backend: Backend) -> Self {
        Self::build(backend, "", TOKEN)
    }

    /// `clone_args` go to `git clone` for the checkout (e.g. `--depth 1`); `token` is what the
    /// forge fakes accept.
    pub fn build(backend: Backend, clone_args: &str, token: &str) -> Self {
        let root = tempfile::tempdir().unwrap();
        // Sandbox users read the registry in here.
        std::fs::set_permissions(
            root.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let base = root.path().canonicalize().unwrap();
        let remote = match backend {
            Backend::Local => base.join("remote.git"),
            Backend::Github => base
                .join(github::OWNER)
                .join(format!("{}.git", github::REPO)),
            Backend::Gitlab => base.join(format!("{}.git", gitlab::PROJECT_PATH)),
        };
        let mut f = Self {
            backend,
            token: token.to_string(),
            harness: None,
            registry: base.join("registry"),
            cargo_home: base.join("cargo-home"),
            remote,
            checkout: base.join("checkout"),
            forge: base.join("forge"),
            uid_base: next_uid_base(),
            osv: osv::OsvStandIn::start(),
            releases: releases::ReleasesStandIn::start(),
            root,
        };
        std::fs::create_dir_all(f.registry.join("index")).unwrap();
        std::fs::create_dir_all(&f.cargo_home).unwrap();
        std::fs::write(
            f.cargo_home.join("config.toml"),
            format!(
                "[source.crates-io]\nreplace-with = \"fixture\"\n\n[source.fixture]\nlocal-registry = \"{}\"\n",
                f.registry.display()
            ),
        )
        .unwrap();
        f.publish(
            "greeting",
            "1.0.0",
            r#"pub fn greet(name: &str) -> String { format!("Hello, {name}!") }"#,
        );
        f.publish(
            "greeting",
            "1.0.1",
            "/// Greets.\npub fn greet(name: &str) -> String { format!(\"Hello, {name}!\") }",
        );
        f.publish(
            "farewell",
            "2.0.0",
            r#"pub fn bye(name: &str) -> String { format!("Goodbye, {name}.") }"#,
        );
        f.publish(
            "farewell",
            "2.0.1",
            r#"pub fn bye(name: &str) -> String { format!("Bye {name}") }"#,
        );

        sh(
            &base,
            &format!(
                "git init -q --bare -b main {} && mkdir seed",
                f.remote.display()
            ),
        );
        let seed = base.join("seed");
        std::fs::create_dir_all(seed.join("src")).unwrap();
        std::fs::write(
            seed.join("Cargo.toml"),
            "[package]\nname = \"hello-app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ngreeting = \"1.0\"\nfarewell = \"2.0\"\n",
        )
        .unwrap();
        std::fs::write(
            seed.join("src/lib.rs"),
            "pub fn message(name: &str) -> String {\n    format!(\"{} {}\", greeting::greet(name), farewell::bye(name))\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn greets_and_says_goodbye() {\n        assert_eq!(super::message(\"Ada\"), \"Hello, Ada! Goodbye, Ada.\");\n    }\n}\n",
        )
        .unwrap();
        std::fs::write(seed.join(".gitignore"), "/target\n").unwrap();
        std::fs::write(
            seed.join("Makefile"),
            "test:\n\tcargo test\n\nquick:\n\tgrep -q 1.0.1 Cargo.lock\n\npause:\n\tsleep 3\n\tcargo test\n\nslow:\n\tsleep 60 & sleep 60\n\nhang:\n\texec sleep 1213\n\nescape:\n\tmkdir -p .github/workflows\n\techo 'on: push' > .github/workflows/release.yml\n\techo '// edited' >> src/lib.rs\n\techo '# edited' >> Cargo.toml\n\ninject:\n\t@echo '::add-mask::everything'\n\t@echo '::error::injected by a test'\n\t@exit 1\n\nansi:\n\t@printf '\\033]0;pwned\\007\\033[2Jcleared\\n'\n\t@exit 1\n",
        )
        .unwrap();
        f.cargo(&seed, &["generate-lockfile", "--quiet"]);
        f.cargo(
            &seed,
            &["update", "--quiet", "-p", "greeting", "--precise", "1.0.0"],
        );
        f.cargo(
            &seed,
            &["update", "--quiet", "-p", "farewell", "--precise", "2.0.0"],
        );
        sh(
            &seed,
            &format!(
                "git init -q -b main && git add . && git commit -qm 'hello-app' && git remote add origin {} && git push -q origin main",
                f.remote.display()
            ),
        );
        sh(
            &base,
            &format!(
                "git clone -q {clone_args} file://{} checkout",
                f.remote.display()
            ),
        );
        if backend != Backend::Local {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            let user = if backend == Backend::Github {
                "x-access-token"
            } else {
                "oauth2"
            };
            let git = git_http::GitHttp::start(&base, user, token);
            let (github, gitlab) = match backend {
                Backend::Github => (
                    Some(runtime.block_on(github::FakeGithub::start(token, f.remote.clone()))),
                    None,
                ),
                _ => (
                    None,
                    Some(runtime.block_on(gitlab::FakeGitlab::start(token, f.remote.clone()))),
                ),
            };
            f.harness = Some(Harness {
                runtime,
                git,
                github,
                gitlab,
            });
        }
        f
    }

    pub fn gitlab(&self) -> &gitlab::FakeGitlab {
        self.harness
            .as_ref()
            .and_then(|h| h.gitlab.as_ref())
            .expect("a GitLab fixture")
    }

    /// Requests the GitLab fake received.
    pub fn gitlab_requests(&self) -> Vec<gitlab::Seen> {
        let h = self.harness.as_ref().unwrap();
        h.runtime.block_on(self.gitlab().requests())
    }

    pub fn forget_gitlab_requests(&self) {
        let h = self.harness.as_ref().unwrap();
        h.runtime.block_on(self.gitlab().forget_requests());
    }

    pub fn github(&self) -> &github::FakeGithub {
        self.harness
            .as_ref()
            .and_then(|h| h.github.as_ref())
            .expect("a GitHub fixture")
    }

    /// Requests the GitHub fake received.
    pub fn github_requests(&self) -> Vec<github::Seen> {
        let h = self.harness.as_ref().unwrap();
        h.runtime.block_on(self.github().requests())
    }

    pub fn forget_github_requests(&self) {
        let h = self.harness.as_ref().unwrap();
        h.runtime.block_on(self.github().forget_requests());
    }

    /// The identity Quartermaster commits as by default on this forge.
    pub fn bot(&self) -> &'static str {
        match self.backend {
            Backend::Local | Backend::Gitlab => "Quartermaster <quartermaster@noreply.invalid>",
            Backend::Github => {
                "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>"
            }
        }
    }

    /// A PR a human opened.
    pub fn seed_pull(&self, head: &str, labels: &[&str]) -> u64 {
        match self.backend {
            Backend::Local => {
                let forge = self.local_forge();
                block(
                    forge.create_pull_request(&quartermaster::forge::NewPullRequest {
                        head: head.into(),
                        base: "main".into(),
                        title: format!("PR on {head}"),
                        body: String::new(),
                        labels: labels.iter().map(|l| l.to_string()).collect(),
                        draft: false,
                    }),
                )
                .unwrap()
                .number
            }
            Backend::Github => self.github().state.lock().unwrap().seed_pull(head, labels),
            Backend::Gitlab => self.gitlab().state.lock().unwrap().seed_pull(head, labels),
        }
    }

    /// A PR from a fork, on a branch named like one of Quartermaster's (GitHub and GitLab only).
    pub fn seed_fork_pull(&self, head: &str, labels: &[&str]) -> u64 {
        match self.backend {
            Backend::Local => panic!("the local forge has no forks"),
            Backend::Github => self
                .github()
                .state
                .lock()
                .unwrap()
                .seed_fork_pull(head, labels),
            Backend::Gitlab => self
                .gitlab()
                .state
                .lock()
                .unwrap()
                .seed_fork_pull(head, labels),
        }
    }

    /// An issue a human opened.
    pub fn seed_issue(&self, labels: &[&str]) -> u64 {
        match self.backend {
            Backend::Local => {
                let forge = self.local_forge();
                block(forge.create_issue(&quartermaster::forge::NewIssue {
                    title: "A human's issue".into(),
                    body: String::new(),
                    labels: labels.iter().map(|l| l.to_string()).collect(),
                }))
                .unwrap()
                .number
            }
            Backend::Github => self.github().state.lock().unwrap().seed_issue(labels),
            Backend::Gitlab => self.gitlab().state.lock().unwrap().seed_issue(labels),
        }
    }

    fn local_forge(&self) -> quartermaster::forge::local::LocalForge {
        quartermaster::forge::local::LocalForge::open(
            &self.forge,
            quartermaster::git::RemoteSpec {
                url: quartermaster::git::RemoteUrl::new(self.remote.display().to_string()),
                username: None,
                token: None,
            },
        )
        .unwrap()
    }

    pub fn cargo(&self, dir: &Path, args: &[&str]) {
        succeed(
            std::process::Command::new("cargo")
                .args(args)
                .current_dir(dir)
                .env("CARGO_HOME", &self.cargo_home),
        );
    }

    /// Adds a crate version to the local registry (cargo's `local-registry` layout), published
    /// long ago.
    pub fn publish(&self, name: &str, version: &str, code: &str) {
        self.publish_crate(name, version, code, &Crate::default());
    }

    /// [`Fixture::publish`] for a crate depending on `dependencies` (name, requirement).
    pub fn publish_with(
        &self,
        name: &str,
        version: &str,
        code: &str,
        dependencies: &[(&str, &str)],
    ) {
        let deps = dependencies
            .iter()
            .map(|(dep, req)| (dep.to_string(), req.to_string()))
            .collect();
        self.publish_crate(
            name,
            version,
            code,
            &Crate {
                deps,
                ..Crate::default()
            },
        );
    }

    /// Adds a crate version with the index line's `pubtime`, dependencies and `yanked` flag.
    pub fn publish_crate(&self, name: &str, version: &str, code: &str, line: &Crate) {
        let work = tempfile::tempdir().unwrap();
        let dir = work.path().join(format!("{name}-{version}"));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        let requires: String = line
            .deps
            .iter()
            .map(|(dep, req)| format!("{dep} = \"{req}\"\n"))
            .collect();
        std::fs::write(
            dir.join("Cargo.toml"),
            format!("[package]\nname = \"{name}\"\nversion = \"{version}\"\nedition = \"2021\"\n\n[dependencies]\n{requires}"),
        )
        .unwrap();
        std::fs::write(dir.join("src/lib.rs"), code).unwrap();
        let archive = self.registry.join(format!("{name}-{version}.crate"));
        sh(
            work.path(),
            &format!("tar -czf {} {name}-{version}", archive.display()),
        );
        let sum: String = Sha256::digest(std::fs::read(&archive).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let index = self
            .registry
            .join("index")
            .join(&name[..2])
            .join(&name[2..4]);
        std::fs::create_dir_all(&index).unwrap();
        let deps: Vec<Value> = line
            .deps
            .iter()
            .map(|(dep, req)| json!({"name": dep, "req": req, "features": [], "optional": false, "default_features": true, "target": null, "kind": "normal"}))
            .collect();
        let pubtime = line.pubtime.clone().unwrap_or_else(|| LONG_AGO.to_string());
        let mut line = json!({"name": name, "vers": version, "deps": deps, "cksum": sum, "features": {}, "yanked": line.yanked, "pubtime": pubtime});
        if pubtime.is_empty() {
            // An index written before registries recorded publish times.
            line.as_object_mut().unwrap().remove("pubtime");
        }
        let path = index.join(name);
        let mut text = std::fs::read_to_string(&path).unwrap_or_default();
        text.push_str(&format!("{line}\n"));
        std::fs::write(path, text).unwrap();
    }

    /// Quartermaster's temporary directory in this fixture, so that each run's scratch
    /// repositories can be inspected and shown to be cleaned up.
    pub fn tmp(&self) -> PathBuf {
        self.root.path().join("tmp")
    }

    /// The binary with a clean environment: no CI variables, an isolated cargo home.
    pub fn qm(&self) -> Command {
        Command::from_std(self.qm_process())
    }

    /// [`Fixture::qm`] as a plain process, for tests that signal it while it runs.
    pub fn qm_process(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin!("quartermaster"));
        std::fs::create_dir_all(self.tmp()).unwrap();
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", std::env::var_os("HOME").unwrap_or_default())
            .env("TMPDIR", self.tmp())
            .env("CARGO_HOME", &self.cargo_home)
            // The sandbox gives every unit a fresh cargo home: the registry comes in as the
            // operator's configuration, and its directory as one commands may read.
            .env(
                "QM_TOOL_CONFIG",
                format!("cargo={}", self.cargo_home.join("config.toml").display()),
            )
            .env("QM_EXPOSE_DIRS", &self.registry)
            .env("QM_OSV_URL", &self.osv.url)
            .env("QM_RELEASE_NOTES_GITHUB_API", &self.releases.url)
            .env(
                "QM_RELEASE_NOTES_GITLAB_API",
                format!("{}/api/v4", self.releases.url),
            )
            // Tests run in parallel; a sandbox user belongs to one run at a time.
            .env("QM_SANDBOX_UID_BASE", self.uid_base.to_string())
            .current_dir(self.root.path());
        if let Some(rustup) = std::env::var_os("RUSTUP_HOME") {
            cmd.env("RUSTUP_HOME", rustup);
        }
        if let Some(toolchain) = std::env::var_os("RUSTUP_TOOLCHAIN") {
            cmd.env("RUSTUP_TOOLCHAIN", toolchain);
        }
        cmd
    }

    pub fn write_plan(&self, plan: &Value) -> PathBuf {
        let path = self.root.path().join("plan.json");
        std::fs::write(&path, serde_json::to_vec_pretty(plan).unwrap()).unwrap();
        path
    }

    /// Runs a plan on the local forge; returns the exit code, the report and everything printed.
    pub fn run(&self, plan: &Value, extra: &[&str]) -> Run {
        self.run_with(plan, extra, &[])
    }

    pub fn run_with(&self, plan: &Value, extra: &[&str], env: &[(&str, &str)]) -> Run {
        let plan_path = self.write_plan(plan);
        let report_path = self.root.path().join("report.json");
        let summary_path = self.root.path().join("summary.md");
        let _ = std::fs::remove_file(&report_path);
        let mut cmd = self.qm();
        cmd.arg("run")
            .arg("--plan")
            .arg(&plan_path)
            .arg("--checkout")
            .arg(&self.checkout)
            .arg("--report")
            .arg(&report_path)
            .arg("--summary")
            .arg(&summary_path)
            .args(extra);
        match self.backend {
            Backend::Local => {
                // The fixture's remote stands in for the forge's repository.
                cmd.arg("--forge")
                    .arg("local")
                    .arg("--forge-dir")
                    .arg(&self.forge)
                    .arg("--remote")
                    .arg("origin");
            }
            Backend::Github => {
                let h = self.harness.as_ref().unwrap();
                cmd.env("GITHUB_ACTIONS", "true")
                    .env("GITHUB_API_URL", self.github().uri())
                    .env("GITHUB_SERVER_URL", &h.git.url)
                    .env(
                        "GITHUB_REPOSITORY",
                        format!("{}/{}", github::OWNER, github::REPO),
                    )
                    .env("GITHUB_OUTPUT", self.root.path().join("github-output"))
                    .env(
                        "GITHUB_STEP_SUMMARY",
                        self.root.path().join("step-summary.md"),
                    )
                    .env("QM_TOKEN", &self.token)
                    .env("QM_FORGE_WRITE_INTERVAL", "0");
            }
            Backend::Gitlab => {
                let h = self.harness.as_ref().unwrap();
                cmd.env("GITLAB_CI", "true")
                    .env("CI_API_V4_URL", format!("{}/api/v4", self.gitlab().uri()))
                    .env("CI_SERVER_URL", &h.git.url)
                    .env("CI_PROJECT_ID", gitlab::PROJECT_ID.to_string())
                    .env("CI_PROJECT_PATH", gitlab::PROJECT_PATH)
                    .env("CI_PROJECT_DIR", &self.checkout)
                    // What GitLab Runner always sets, and what must never be used.
                    .env("CI_JOB_TOKEN", "glcbt-64_fixture-job-token")
                    .env("QM_TOKEN", &self.token)
                    .env("QM_FORGE_WRITE_INTERVAL", "0");
            }
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let report = std::fs::read(&report_path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null);
        let run = Run {
            code: out.status.code().unwrap_or(-1),
            report,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            summary: std::fs::read_to_string(summary_path).unwrap_or_default(),
        };
        // Every PR this run says passed its tests must pass them again on a clean clone.
        self.replay(&run, plan, &replay::Operator::of(self, extra, env));
        run
    }

    /// Remote branches and their tips.
    pub fn branches(&self) -> BTreeMap<String, String> {
        sh(
            &self.remote,
            "git for-each-ref --format='%(refname:short) %(objectname)' refs/heads",
        )
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(b, s)| (b.to_string(), s.to_string()))
        .collect()
    }

    /// A file's content on a remote branch.
    pub fn show(&self, branch: &str, path: &str) -> String {
        sh(&self.remote, &format!("git show {branch}:{path}"))
    }

    fn records(&self, kind: &str) -> Vec<Value> {
        match self.backend {
            Backend::Github => {
                let state = self.github().state.lock().unwrap();
                return if kind == "pulls" {
                    state.pulls()
                } else {
                    state.issues()
                };
            }
            Backend::Gitlab => {
                let state = self.gitlab().state.lock().unwrap();
                return if kind == "pulls" {
                    state.pulls()
                } else {
                    state.issues()
                };
            }
            Backend::Local => {}
        }
        let mut out: Vec<(u64, Value)> = std::fs::read_dir(self.forge.join(kind))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| {
                        let v: Value =
                            serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap();
                        (v["number"].as_u64().unwrap(), v)
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.sort_by_key(|(n, _)| *n);
        out.into_iter().map(|(_, v)| v).collect()
    }

    pub fn pulls(&self) -> Vec<Value> {
        self.records("pulls")
    }

    pub fn issues(&self) -> Vec<Value> {
        self.records("issues")
    }

    /// A commit by a human on a remote branch (clone, commit, push).
    pub fn human_commit(&self, branch: &str, file: &str) {
        self.commit_file(branch, file, "edited by a human\n");
    }

    /// Writes `file` on a remote branch as a human would: clone, commit, push.
    pub fn commit_file(&self, branch: &str, file: &str, content: &str) {
        let work = self
            .root
            .path()
            .join(format!("human-{}", file.replace('/', "-")));
        let _ = std::fs::remove_dir_all(&work);
        sh(
            self.root.path(),
            &format!(
                "git clone -q -b {branch} file://{} {}",
                self.remote.display(),
                work.display()
            ),
        );
        std::fs::write(work.join(file), content).unwrap();
        sh(
            &work,
            &format!(
                "git add {file} && git commit -qm 'human edit' && git push -q origin {branch}"
            ),
        );
    }

    /// A fresh clone of the remote in the fixture, named `name`, to commit and push from.
    fn clone_main(&self, name: &str) -> PathBuf {
        let work = self.root.path().join(name);
        let _ = std::fs::remove_dir_all(&work);
        sh(
            self.root.path(),
            &format!(
                "git clone -q file://{} {}",
                self.remote.display(),
                work.display()
            ),
        );
        work
    }

    /// Adds to the default branch one cargo project per name, each in its own directory with its
    /// own `Cargo.lock` (greeting 1.0.0) and a `make check` that takes `seconds`.
    pub fn add_projects(&self, names: &[&str], seconds: u32) {
        let work = self.clone_main("projects");
        for name in names {
            let dir = work.join(name);
            std::fs::create_dir_all(dir.join("src")).unwrap();
            std::fs::write(
                dir.join("Cargo.toml"),
                format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ngreeting = \"1.0\"\n"),
            )
            .unwrap();
            std::fs::write(dir.join("src/lib.rs"), "pub use greeting::greet;\n").unwrap();
            std::fs::write(dir.join("Makefile"), format!("check:\n\tsleep {seconds}\n")).unwrap();
            self.cargo(&dir, &["generate-lockfile", "--quiet"]);
            self.cargo(
                &dir,
                &["update", "--quiet", "-p", "greeting", "--precise", "1.0.0"],
            );
        }
        sh(
            &work,
            "git add . && git commit -qm 'more projects' && git push -q origin main",
        );
    }

    /// Adds `count` small tracked files to the default branch (`pad/<dir>/<file>`, 500 a
    /// directory), as a large repository has.
    pub fn pad(&self, count: usize) {
        if count == 0 {
            return;
        }
        let work = self.clone_main("padding");
        for i in 0..count {
            let dir = work.join("pad").join(format!("d{:03}", i / 500));
            if i % 500 == 0 {
                std::fs::create_dir_all(&dir).unwrap();
            }
            std::fs::write(dir.join(format!("f{i:05}.txt")), format!("{i}\n")).unwrap();
        }
        sh(
            &work,
            "git add . && git commit -qm padding && git push -q origin main",
        );
    }

    /// Writes a mission `name` with these ecosystems under the fixture; returns the `run` flags
    /// that select it.
    pub fn custom_mission(&self, name: &str, ecosystems: Value) -> Vec<String> {
        let dir = self.root.path().join("missions");
        std::fs::create_dir_all(dir.join(name)).unwrap();
        let mission =
            json!({"description": name, "action_types": ["create_mr"], "ecosystems": ecosystems});
        std::fs::write(
            dir.join(name).join("allowlist.json"),
            serde_json::to_vec(&mission).unwrap(),
        )
        .unwrap();
        vec![
            "--mission".into(),
            name.into(),
            "--missions-dir".into(),
            dir.display().to_string(),
        ]
    }

    /// Opens PR #1 on `quartermaster/cargo` with the greeting update.
    pub fn open_cargo_pr(&self) {
        let run = self.run(
            &plan(vec![create_mr(
                "quartermaster/cargo",
                &[greeting()],
                "batch",
            )]),
            &[],
        );
        assert_eq!(run.code, 0, "{}", run.said());
    }
}

/// How a crate version's index line reads.
#[derive(Debug, Clone, Default)]
pub struct Crate {
    /// `pubtime`; [`LONG_AGO`] when `None`; no `pubtime` at all when empty.
    pub pubtime: Option<String>,
    /// Dependencies: (name, requirement).
    pub deps: Vec<(String, String)>,
    pub yanked: bool,
}

pub struct Run {
    pub code: i32,
    pub report: Value,
    pub stdout: String,
    pub stderr: String,
    pub summary: String,
}

impl Run {
    pub fn action(&self, i: usize) -> &Value {
        &self.report["actions"][i]
    }

    pub fn status(&self, i: usize) -> &str {
        self.action(i)["status"].as_str().unwrap_or("?")
    }

    pub fn reason(&self, i: usize) -> &str {
        self.action(i)["reason"].as_str().unwrap_or("?")
    }

    /// Progress and summary together (on GitHub Actions, progress goes to stdout).
    pub fn output(&self) -> String {
        format!("{}{}", self.stderr, self.stdout)
    }

    /// Everything Quartermaster said, for assertions in failure messages.
    pub fn said(&self) -> String {
        format!(
            "exit {}\n--- stderr\n{}\n--- stdout\n{}",
            self.code, self.stderr, self.stdout
        )
    }
}

pub fn block<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

pub fn greeting() -> Value {
    json!({"package": "greeting", "from": "1.0.0", "to": "1.0.1", "update_type": "patch"})
}

pub fn farewell() -> Value {
    json!({"package": "farewell", "from": "2.0.0", "to": "2.0.1", "update_type": "patch"})
}

pub fn command(update: &Value) -> String {
    format!(
        "cargo update -p {} --precise {}",
        update["package"].as_str().unwrap(),
        update["to"].as_str().unwrap()
    )
}

/// A `create_mr` for the given updates.
pub fn create_mr(branch: &str, updates: &[Value], strategy: &str) -> Value {
    json!({
        "type": "create_mr",
        "branch": branch,
        "title": "chore(deps): update cargo patch dependencies",
        "description": "Patch releases.",
        "updates": updates,
        "commands": updates.iter().map(command).collect::<Vec<_>>(),
        "test_command": "cargo test",
        "labels": ["dependencies"],
        "fallback_strategy": strategy,
        "confidence": 0.9
    })
}

pub fn plan(actions: Vec<Value>) -> Value {
    json!({
        "repo_context": {
            "platform": "github",
            "ecosystems": ["cargo"],
            "test_command": "cargo test",
            "default_branch": "main",
            "lock_files": ["Cargo.lock"]
        },
        "actions": actions
    })
}

/// `value` without what differs from one run to the next: times, and the order of cargo's
/// parallel log lines.
pub fn strip_timings(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for key in [
                "timing",
                "started_at",
                "finished_at",
                "started_ms",
                "duration_ms",
                "forge_requests",
                // How old a version was when the gates checked it.
                "age_seconds",
                // Each fixture's runs have a sandbox uid range of their own.
                "uid_base",
            ] {
                map.remove(key);
            }
            // Cargo compiles crates in parallel: its log lines come in any order.
            if let Some(Value::String(tail)) = map.get_mut("output_tail") {
                let mut lines: Vec<&str> = tail.lines().collect();
                lines.sort_unstable();
                *tail = lines.join("\n");
            }
            map.values_mut().for_each(strip_timings);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_timings),
        _ => {}
    }
}
