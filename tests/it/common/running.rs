//! Running the binary in a fixture, and what a run left.

use super::*;

impl Fixture {
    /// Quartermaster's temporary directory in this fixture, so that each run's scratch
    /// repositories can be inspected and shown to be cleaned up.
    pub(crate) fn tmp(&self) -> PathBuf {
        self.root.path().join("tmp")
    }

    /// The binary with a clean environment: no CI variables, an isolated cargo home.
    pub(crate) fn qm(&self) -> Command {
        Command::from_std(self.qm_process())
    }

    /// [`Fixture::qm`] as a plain process, for tests that signal it while it runs.
    pub(crate) fn qm_process(&self) -> std::process::Command {
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

    /// [`Fixture::qm_process`] set to `run --plan <plan>` in the checkout, on the local forge with
    /// the remote `origin`.
    pub(crate) fn local_run(&self, plan: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
        let mut cmd = self.qm_process();
        cmd.arg("run")
            .arg("--plan")
            .arg(plan)
            .arg("--checkout")
            .arg(&self.checkout)
            .args(["--remote", "origin", "--forge", "local", "--forge-dir"])
            .arg(&self.forge);
        cmd
    }

    /// [`Fixture::local_run`] of `plan`, started, its stdout dropped and its stderr piped.
    pub(crate) fn spawn_local_run(&self, plan: &Value) -> std::process::Child {
        self.local_run(self.write_plan(plan))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    pub(crate) fn write_plan(&self, plan: &Value) -> PathBuf {
        let path = self.root.path().join("plan.json");
        std::fs::write(&path, serde_json::to_vec_pretty(plan).unwrap()).unwrap();
        path
    }

    /// Runs a plan on the local forge; returns the exit code, the report and everything printed.
    pub(crate) fn run(&self, plan: &Value, extra: &[&str]) -> Run {
        self.run_with(plan, extra, &[])
    }

    pub(crate) fn run_with(&self, plan: &Value, extra: &[&str], env: &[(&str, &str)]) -> Run {
        let run = self.run_unreplayed(plan, extra, env);
        // Every PR this run says passed its tests must pass them again on a clean clone.
        self.replay(&run, plan, &replay::Operator::of(self, extra, env));
        run
    }

    /// [`Fixture::run_with`] without the replay of its PRs, for a benchmark whose figures a
    /// replay's builds would only delay.
    pub(crate) fn run_unreplayed(&self, plan: &Value, extra: &[&str], env: &[(&str, &str)]) -> Run {
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
        Run {
            code: out.status.code().unwrap_or(-1),
            report,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            summary: std::fs::read_to_string(summary_path).unwrap_or_default(),
        }
    }
}

pub(crate) struct Run {
    pub code: i32,
    pub report: Value,
    pub stdout: String,
    pub stderr: String,
    pub summary: String,
}

impl Run {
    pub(crate) fn action(&self, i: usize) -> &Value {
        &self.report["actions"][i]
    }

    pub(crate) fn status(&self, i: usize) -> &str {
        self.action(i)["status"].as_str().unwrap_or("?")
    }

    pub(crate) fn reason(&self, i: usize) -> &str {
        self.action(i)["reason"].as_str().unwrap_or("?")
    }

    /// The branches action `i`'s test runs were on, in order.
    pub(crate) fn tested_branches(&self, i: usize) -> Vec<&str> {
        self.action(i)["test"]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["branch"].as_str().unwrap())
            .collect()
    }

    /// Progress and summary together (on GitHub Actions, progress goes to stdout).
    pub(crate) fn output(&self) -> String {
        format!("{}{}", self.stderr, self.stdout)
    }

    /// Everything Quartermaster said, for assertions in failure messages.
    pub(crate) fn said(&self) -> String {
        format!(
            "exit {}\n--- stderr\n{}\n--- stdout\n{}",
            self.code, self.stderr, self.stdout
        )
    }
}
