//! Building a unit's branch: the slot's workspace at the base (reset, not checked out anew), the
//! update commands, the verification of what they changed (dependency files only, as declared), a
//! commit, and the test command. Every command runs in the cell: its own HOME and tool
//! configuration, out of reach of Quartermaster's files, and nothing outlives it.

use super::project::check_project;
use super::stop::Stop;
use super::text::{commit_message, short};
use super::unit::{Built, Unit};
use super::verify::refusal;
use super::{Worker, millis};
use crate::changes::Snapshot;
use crate::git::Workspace;
use crate::markdown::code;
use crate::mission::TestCommand;
use crate::report::{
    ActionReport, ChangeRecord, CommandRecord, ProcessRecord, TestReport, TestRun,
};
use crate::sandbox::{Command, Outcome, SandboxError, Unit as Cell, UnitSpec};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::Path;
use std::time::Instant;

/// Where a unit's programs run: its cell, with the environment its toolchains call for.
pub(super) type Exec<'c> = (&'c Cell<'c>, &'c BTreeMap<OsString, OsString>);

/// One branch to build.
pub struct Job<'j> {
    pub unit: &'j Unit<'j>,
    pub working_dir: Option<&'j str>,
    pub test: &'j TestCommand,
    /// The commit the branch is built on.
    pub base: git2::Oid,
    /// The build's digest ([`super::digest`]), recorded in the PR.
    pub build: String,
}

impl Worker<'_> {
    /// A unit whose commands changed no file: fine when every declared update was already there,
    /// not when something (an `=` pin, a range) held one back, nor when no command could change a
    /// file at all (`pip install`).
    fn unchanged(
        &self,
        unit: &Unit<'_>,
        before: &Snapshot,
        workspace: &Workspace,
        dir: &Path,
    ) -> Result<Built, Stop> {
        let whys: Option<Vec<&str>> = unit.commands.iter().map(|c| c.changes_no_file()).collect();
        if let Some(why) = whys.and_then(|w| w.first().copied()) {
            return Ok(Built::Unverified(Stop::failed(format!(
                "no changes: {why}"
            ))));
        }
        if let Some(stop) = refusal(&self.verify(unit, before, workspace, dir)?) {
            return Ok(Built::Unverified(stop));
        }
        Ok(Built::NoChanges)
    }

    /// Runs the unit's commands in the slot's workspace (at the base), commits, and runs the
    /// tests.
    pub(super) fn build(
        &mut self,
        job: &Job<'_>,
        report: &mut ActionReport,
    ) -> Result<Built, Stop> {
        let lap = Instant::now();
        let fresh = self.place_workspace(job.base)?;
        tracing::debug!(ms = millis(lap.elapsed()), "workspace at the base");
        let Some(workspace) = self.workspace.as_ref() else {
            return Err(Stop::failed("the workspace is gone"));
        };
        let (unit, working_dir, test, base) = (job.unit, job.working_dir, job.test, job.base);
        let cell = self
            .sandbox
            .unit(UnitSpec {
                slot: self.slot,
                writable: vec![workspace.root().to_path_buf()],
                ..UnitSpec::default()
            })
            .map_err(sandbox_stop)?;
        if fresh {
            workspace.refresh_owners()?;
        }
        tracing::debug!(ms = millis(lap.elapsed()), "sandbox unit ready");
        let dir = workspace.dir(working_dir)?;
        check_project(unit, test, &dir, working_dir)?;
        self.progress
            .step(&format!("{}: workspace at {}", unit.branch, short(base)));
        let env = self.check_toolchains(&cell, unit, (workspace.root(), &dir), report)?;
        let before = self.snapshot(unit, workspace, &dir)?;
        if let Some(why) = self.run_commands((&cell, &env), unit, &dir, report)? {
            return Ok(Built::CommandFailed(why));
        }
        let lap = Instant::now();
        let staged = workspace.stage()?;
        tracing::debug!(ms = millis(lap.elapsed()), "changes staged");
        let Some(staged) = staged else {
            let built = self.unchanged(unit, &before, workspace, &dir)?;
            if matches!(built, Built::NoChanges) {
                self.progress.step("no changes");
            }
            return Ok(built);
        };
        self.check_files(unit, &staged.files)?;
        let facts = match self.verify(unit, &before, workspace, &dir) {
            Ok(facts) => facts,
            Err(stop) => return Ok(Built::Unverified(stop)),
        };
        report.changes.push(ChangeRecord::of(&unit.branch, &facts));
        if let Some(stop) = refusal(&facts) {
            return Ok(Built::Unverified(stop));
        }
        let message = commit_message(unit, &facts, self.settings.allow_mentions);
        let commit = workspace.commit(staged, &message, &self.settings.author)?;
        self.progress.step(&format!(
            "committed {} as {} ({} file{})",
            short(commit.id),
            self.settings.author.name,
            commit.files.len(),
            if commit.files.len() == 1 { "" } else { "s" }
        ));
        tracing::debug!(ms = millis(lap.elapsed()), "verified and committed");
        // Validation saw the test command's paths as text; now they exist, in this workspace.
        crate::mission::check_test_paths(test, workspace.root(), &dir).map_err(|r| {
            Stop::denied(format!(
                "[{}] test command is not allowed: {}",
                r.code, r.message
            ))
        })?;
        match self.run_tests((&cell, &env), unit, test, &dir, report)? {
            None => Ok(Built::Ready(commit, Box::new(facts))),
            Some(why) => Ok(Built::TestsFailed(why)),
        }
    }

    /// Puts the slot's workspace at `base`: the one the last unit used, brought back to exactly
    /// the base tree, or a new checkout the first time (or when the old one cannot be trusted).
    /// Whether the workspace is a new checkout.
    fn place_workspace(&mut self, base: git2::Oid) -> Result<bool, Stop> {
        if let Some(workspace) = self.workspace.as_mut() {
            match workspace.reset(base) {
                Ok(()) => return Ok(false),
                Err(e) => {
                    self.progress
                        .step(&format!("workspace not reused ({e}); checking out anew"));
                    self.workspace = None;
                }
            }
        }
        let tree = self
            .sandbox
            .slot_workspace(self.slot)
            .map_err(sandbox_stop)?;
        // The checkout (the costly part) goes on without a hold on the shared mirror.
        let source = self.git()?.mirror.source();
        self.workspace = Some(Workspace::create(&source, base, &tree)?);
        Ok(true)
    }

    /// Runs `argv` in the cell, with the unit's environment.
    fn execute(&self, (cell, env): Exec<'_>, argv: &[String], dir: &Path) -> Result<Outcome, Stop> {
        cell.run(&Command {
            argv,
            cwd: dir,
            env,
            timeout: self.settings.command_timeout,
            secrets: &self.settings.secrets,
        })
        .map_err(sandbox_stop)
    }

    /// Runs the update commands in order; why the first that failed did.
    fn run_commands(
        &self,
        cell: Exec<'_>,
        unit: &Unit<'_>,
        dir: &Path,
        report: &mut ActionReport,
    ) -> Result<Option<String>, Stop> {
        for command in &unit.commands {
            let outcome = self.execute(cell, &command.argv, dir)?;
            let ok = outcome.exit.success();
            self.progress.step(&format!(
                "$ {}  ({}, {:.1}s)",
                command.text,
                outcome.result(),
                outcome.duration.as_secs_f64()
            ));
            if !ok {
                self.progress.failure_output(&outcome.output_tail);
            }
            let process = ProcessRecord::of(outcome);
            let failed = (!ok).then(|| format!("`{}` failed: {}", command.text, process.result));
            report.commands.push(CommandRecord {
                command: command.text.clone(),
                branch: unit.branch.clone(),
                ok,
                process,
            });
            if failed.is_some() {
                return Ok(failed);
            }
        }
        Ok(None)
    }

    /// Only the dependency files of the commands' ecosystems may change.
    fn check_files(&self, unit: &Unit<'_>, changed: &[String]) -> Result<(), Stop> {
        let ecosystems: BTreeSet<&str> =
            unit.commands.iter().map(|m| m.ecosystem.as_str()).collect();
        let files = self.plan.files();
        let foreign: Vec<String> = changed
            .iter()
            .filter(|f| !files.owns(ecosystems.iter().copied(), f))
            .map(|f| code(f))
            .collect();
        if foreign.is_empty() {
            return Ok(());
        }
        let shown = foreign.len().min(10);
        let one = foreign.len() == 1;
        Err(Stop::denied(format!(
            "the commands changed {} that {} not dependency files ({}): {}{}; nothing was pushed",
            if one { "a file" } else { "files" },
            if one { "is" } else { "are" },
            files.describe(ecosystems.iter().copied()),
            foreign[..shown].join(", "),
            if foreign.len() > shown {
                format!(" and {} more", foreign.len() - shown)
            } else {
                String::new()
            }
        )))
    }

    /// Runs the test command and records the run; why it failed, if it did.
    fn run_tests(
        &self,
        cell: Exec<'_>,
        unit: &Unit<'_>,
        test: &TestCommand,
        dir: &Path,
        report: &mut ActionReport,
    ) -> Result<Option<String>, Stop> {
        let outcome = self.execute(cell, &test.argv, dir)?;
        let passed = outcome.exit.success();
        self.progress.step(&format!(
            "$ {}  ({}, {:.1}s) {}",
            test.text,
            outcome.result(),
            outcome.duration.as_secs_f64(),
            if passed {
                "tests passed"
            } else {
                "TESTS FAILED"
            }
        ));
        if !passed {
            self.progress.failure_output(&outcome.output_tail);
        }
        let failed = (!passed).then(|| format!("`{}` failed: {}", test.text, outcome.result()));
        report
            .test
            .get_or_insert_with(|| TestReport {
                command: test.text.clone(),
                runs: Vec::new(),
            })
            .runs
            .push(TestRun {
                branch: unit.branch.clone(),
                updates: unit.updates.iter().map(|u| u.package.clone()).collect(),
                passed,
                process: ProcessRecord::of(outcome),
            });
        Ok(failed)
    }
}

/// A sandbox that could not run a command, or a command that reached for what the sandbox
/// protects, stops the unit: nothing it touched is published.
pub(super) fn sandbox_stop(e: SandboxError) -> Stop {
    match e {
        SandboxError::FileCommandChanged { .. }
        | SandboxError::SeedChanged { .. }
        | SandboxError::Reachable { .. }
        | SandboxError::Survivors { .. } => {
            Stop::denied(format!("sandbox: {e}; nothing was pushed"))
        }
        _ => Stop::failed(format!("sandbox: {e}")),
    }
}
