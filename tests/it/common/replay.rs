//! Replaying what a PR claims. For every PR a run opened or updated whose body says its tests
//! passed, a clean clone of its branch from the bare remote gets each ecosystem's frozen install
//! and the test command the body names, run as plain processes outside Quartermaster, with the
//! operator's tool configuration and passed variables and nothing else; both must pass. This is
//! what a user's CI does with the branch, written here apart from Quartermaster's own install
//! code. Every PR of a run under the `deps` mission is replayed; under a test's own mission, only
//! those that say a frozen install built their environment (such missions run synthetic updates,
//! and test commands that attack the sandbox, which are not for running outside it).

use super::{Fixture, Run, sh};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What a PR body says of a test environment built by a frozen install.
const FROZEN_CLAIM: &str = ", on an environment built from the committed files alone (";

/// What a run handed the tools: the variables passed by name and the configuration files copied
/// into each unit's HOME (`tool`, path).
#[derive(Debug, Default)]
pub(crate) struct Operator {
    vars: Vec<(String, String)>,
    seeds: Vec<(String, PathBuf)>,
    /// Whether the run was under the embedded `deps` mission, whose commands are the real
    /// ecosystems' (a test's own mission may run synthetic updates and attacks).
    deps: bool,
}

impl Operator {
    /// What a run started with `extra` arguments and `env` variables (over the fixture's own
    /// defaults) handed the tools.
    pub(crate) fn of(f: &Fixture, extra: &[&str], env: &[(&str, &str)]) -> Self {
        let var = |name: &str| {
            env.iter()
                .rev()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
                .or_else(|| std::env::var(name).ok())
        };
        let mut names: Vec<String> = extra
            .windows(2)
            .filter(|w| w[0] == "--extra-env")
            .map(|w| w[1].to_string())
            .collect();
        names.extend(var("QM_EXTRA_ENV").iter().flat_map(|l| list(l)));
        let default = format!("cargo={}", f.cargo_home.join("config.toml").display());
        let mut seeds: Vec<String> = env
            .iter()
            .rev()
            .find(|(k, _)| *k == "QM_TOOL_CONFIG")
            .map_or_else(|| list(&default), |(_, v)| list(v));
        seeds.extend(
            extra
                .windows(2)
                .filter(|w| w[0] == "--tool-config")
                .map(|w| w[1].to_string()),
        );
        let mission = extra
            .windows(2)
            .rev()
            .find(|w| w[0] == "--mission")
            .map(|w| w[1].to_string())
            .or_else(|| var("QM_MISSION"));
        let mut vars: Vec<(String, String)> = names
            .iter()
            .filter_map(|n| Some((n.clone(), var(n)?)))
            .collect();
        vars.extend(var("PATH").map(|p| ("PATH".to_string(), p)));
        Self {
            vars,
            deps: mission.is_none_or(|m| m == "deps"),
            seeds: seeds
                .iter()
                .filter_map(|s| s.split_once('='))
                .map(|(tool, path)| (tool.to_string(), PathBuf::from(path)))
                .collect(),
        }
    }
}

fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Where each tool reads the operator's configuration, under HOME (as the sandbox seeds it).
fn seed_target(tool: &str) -> &'static str {
    match tool {
        "npmrc" => ".npmrc",
        "yarnrc" => ".yarnrc",
        "yarnrc-yml" => ".yarnrc.yml",
        "pnpm" => ".config/pnpm/rc",
        "cargo" => ".cargo/config.toml",
        "pip" => ".config/pip/pip.conf",
        "uv" => ".config/uv/uv.toml",
        "poetry" => ".config/pypoetry/config.toml",
        "go" => ".config/go/env",
        "bundle" => ".bundle/config",
        "gemrc" => ".gemrc",
        other => panic!("no seed target for {other}"),
    }
}

/// What a PR body says passed: the test command and its working directory.
pub(crate) fn claimed_test(body: &str) -> Option<(String, Option<String>)> {
    let line = body
        .lines()
        .find_map(|l| l.strip_prefix("Tests passed: "))?;
    let (test, rest) = code_span(line)?;
    let dir = rest
        .strip_prefix(" in ")
        .and_then(code_span)
        .map(|(d, _)| d);
    Some((test, dir))
}

/// The text of the code span `text` starts with, and what follows it.
fn code_span(text: &str) -> Option<(String, &str)> {
    let ticks = text.len() - text.trim_start_matches('`').len();
    if ticks == 0 {
        return None;
    }
    let fence = "`".repeat(ticks);
    let end = text[ticks..].find(&fence)? + ticks;
    let inner = &text[ticks..end];
    let inner = inner
        .strip_prefix(' ')
        .and_then(|i| i.strip_suffix(' '))
        .filter(|i| i.starts_with('`') || i.ends_with('`'))
        .unwrap_or(inner);
    Some((inner.to_string(), &text[end + ticks..]))
}

/// A clean clone of a PR's branch, and the environment a CI job would give it.
struct Replay {
    clone: PathBuf,
    home: PathBuf,
    venv: PathBuf,
    env: Vec<(String, String)>,
}

impl Fixture {
    /// Replays every PR that `run` created or updated and whose body says its tests passed; the
    /// plan's `repo_context.ecosystems` say which frozen installs may apply.
    pub(crate) fn replay(&self, run: &Run, plan: &Value, operator: &Operator) {
        let ecosystems: Vec<String> = plan["repo_context"]["ecosystems"]
            .as_array()
            .map(|e| {
                e.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        let touched: Vec<&Value> = run.report["actions"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|a| a["pull_requests"].as_array().into_iter().flatten())
            .filter(|p| matches!(p["operation"].as_str(), Some("created" | "updated")))
            .collect();
        if touched.is_empty() {
            return;
        }
        let pulls = self.pulls();
        for pr in touched {
            let branch = pr["branch"].as_str().unwrap();
            let Some(pull) = pulls.iter().find(|p| p["number"] == pr["number"]) else {
                continue;
            };
            let body = pull["body"].as_str().unwrap_or_default();
            // A test's own mission without a frozen install claims nothing of an environment,
            // and its test commands (attacks on the sandbox, some) are not for running outside
            // it; under the deps mission every PR is replayed.
            if !operator.deps && !body.contains(FROZEN_CLAIM) {
                continue;
            }
            let Some((test, dir)) = claimed_test(body) else {
                panic!("PR #{} says no test passed: {body}", pr["number"]);
            };
            self.replay_branch(branch, &test, dir.as_deref(), &ecosystems, operator);
        }
    }

    /// Clones `branch`, runs the frozen install of each of `ecosystems` whose lock governs
    /// `dir`, then `test` in `dir`; panics with what failed.
    pub(crate) fn replay_branch(
        &self,
        branch: &str,
        test: &str,
        dir: Option<&str>,
        ecosystems: &[String],
        operator: &Operator,
    ) {
        let replay = Replay::new(self, branch, operator);
        let work = replay.clone.join(dir.unwrap_or("."));
        for ecosystem in ecosystems {
            for (cwd, argv) in replay.frozen_install(ecosystem, &work) {
                replay.must_pass(branch, &cwd, &argv.join(" "));
            }
        }
        replay.must_pass(branch, &work, test);
        let _ = std::fs::remove_dir_all(replay.clone.parent().unwrap());
    }
}

impl Replay {
    fn new(f: &Fixture, branch: &str, operator: &Operator) -> Self {
        let root = f.root.path().join("replay").join(branch.replace('/', "-"));
        let _ = std::fs::remove_dir_all(&root);
        let (clone, home) = (root.join("clone"), root.join("home"));
        std::fs::create_dir_all(&home).unwrap();
        sh(
            f.root.path(),
            &format!(
                "git clone -q -b {branch} file://{} {}",
                f.remote.display(),
                clone.display()
            ),
        );
        for (tool, source) in &operator.seeds {
            let target = home.join(seed_target(tool));
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(source, target).unwrap();
        }
        let venv = root.join("venv");
        let h = |rel: &str| home.join(rel).display().to_string();
        let path = operator.vars.iter().find(|(k, _)| k == "PATH").map_or_else(
            || std::env::var("PATH").unwrap_or_default(),
            |(_, v)| v.clone(),
        );
        // The operator's variables first: the clone's own environment below wins over them.
        let mut env: Vec<(String, String)> = operator
            .vars
            .iter()
            .filter(|(k, _)| k != "PATH")
            .cloned()
            .collect();
        env.extend([
            ("HOME".into(), h("")),
            ("TMPDIR".into(), h("")),
            ("XDG_CONFIG_HOME".into(), h(".config")),
            ("XDG_CACHE_HOME".into(), h(".cache")),
            ("XDG_DATA_HOME".into(), h(".local/share")),
            ("CARGO_HOME".into(), h(".cargo")),
            ("GOPATH".into(), h("go")),
            ("GOFLAGS".into(), "-mod=readonly".into()),
            ("GOTOOLCHAIN".into(), "local".into()),
            ("GEM_HOME".into(), h(".gem")),
            ("BUNDLE_FROZEN".into(), "true".into()),
            ("VIRTUAL_ENV".into(), venv.display().to_string()),
            ("UV_PROJECT_ENVIRONMENT".into(), venv.display().to_string()),
            ("UV_PYTHON_DOWNLOADS".into(), "never".into()),
            ("PATH".into(), format!("{}/bin:{path}", venv.display())),
        ]);
        for name in ["RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "PYENV_ROOT"] {
            if let Ok(value) = std::env::var(name) {
                env.push((name.into(), value));
            }
        }
        Self {
            clone,
            home,
            venv,
            env,
        }
    }

    /// The frozen install of `ecosystem` for the working directory `dir`, as a user's CI runs it:
    /// `(directory, argv)` in order; none when no lock of the ecosystem governs `dir`.
    fn frozen_install(&self, ecosystem: &str, dir: &Path) -> Vec<(PathBuf, Vec<String>)> {
        let locks: &[&str] = match ecosystem {
            "npm" => &["package-lock.json", "npm-shrinkwrap.json"],
            "yarn" => &["yarn.lock"],
            "pnpm" => &["pnpm-lock.yaml"],
            "bun" => &["bun.lock", "bun.lockb"],
            "uv" => &["uv.lock"],
            "poetry" => &["poetry.lock"],
            "bundle" => &["Gemfile.lock", "gems.locked"],
            "cargo" => &["Cargo.lock"],
            "go" => &["go.mod"],
            "pip" => &[],
            other => panic!("no frozen install known for {other}"),
        };
        let venv = self.venv.display().to_string();
        let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        if ecosystem == "pip" {
            let mut files: Vec<String> = std::fs::read_dir(dir)
                .unwrap()
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with("requirements") && n.ends_with(".txt"))
                .collect();
            files.sort();
            if files.is_empty() {
                return vec![];
            }
            let mut pip = words("pip install");
            for file in files {
                pip.extend(["-r".into(), file]);
            }
            return vec![
                (dir.into(), words(&format!("python3 -m venv {venv}"))),
                (dir.into(), pip),
            ];
        }
        let Some(lock_dir) = dir
            .ancestors()
            .take_while(|d| d.starts_with(&self.clone))
            .find(|d| locks.iter().any(|l| d.join(l).is_file()))
        else {
            return vec![];
        };
        let at = |command: &str| (lock_dir.to_path_buf(), words(command));
        match ecosystem {
            "npm" => vec![at("npm ci")],
            "yarn" => {
                let lock = std::fs::read_to_string(lock_dir.join("yarn.lock")).unwrap();
                if lock.contains("\n__metadata:") {
                    vec![at("yarn install --immutable")]
                } else {
                    vec![at("yarn install --frozen-lockfile")]
                }
            }
            "pnpm" => vec![at("pnpm install --frozen-lockfile")],
            "bun" => vec![at("bun install --frozen-lockfile")],
            "uv" => vec![at("uv sync --frozen --all-groups --all-extras")],
            "poetry" => vec![
                at(&format!("python3 -m venv {venv}")),
                at("poetry install --sync"),
            ],
            "bundle" => vec![at("bundle install")],
            "cargo" => vec![at("cargo fetch --locked")],
            _ => vec![(dir.into(), words("go mod download"))],
        }
    }

    /// Runs `command` (through a shell, as a CI job's script line) in `dir`; panics with its
    /// output when it fails.
    fn must_pass(&self, branch: &str, dir: &Path, command: &str) {
        let out = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(dir)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "replaying {branch}: `{command}` in {} failed (HOME {}):\n{}{}",
            dir.display(),
            self.home.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
