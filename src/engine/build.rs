//! Building a unit's branch: the slot's workspace at the base (reset, not checked out anew), the
//! update commands, the verification of what they changed (dependency files only, as declared), a
//! commit, the tests' environment built from the committed files ([`super::environment`]), and
//! the test command. Every command runs in a cell: its own HOME and tool configuration, out of
//! reach of Quartermaster's files, and nothing outlives it.

use super::environment;
use super::gates;
use super::millis;
use super::project::{check_project, check_specs};
use super::stop::Stop;
use super::text::{commit_message, short};
use super::toolchains;
use super::unit::{BranchUnit, BuildOutcome};
use super::verify;
use super::verify::refusal;
use super::workspace;
use super::{RunContext, WorkerSlot};
use crate::changes::{self, Snapshot, Verdict};
use crate::git::{NewCommit, Workspace};
use crate::markdown::code;
use crate::mission::TestCommand;
use crate::report::{
    ActionReport, ChangeRecord, CommandRecord, ProcessRecord, TestReport, TestRun,
};
use crate::sandbox::{Cell, ProcessOutcome, Program, SandboxError};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::Path;
use std::time::Instant;

/// Where a unit's programs run: its cell, with the environment its toolchains call for.
pub(super) type Exec<'c> = (&'c Cell<'c>, &'c BTreeMap<OsString, OsString>);

/// One branch to build.
pub(crate) struct BuildJob<'j> {
    pub unit: &'j BranchUnit<'j>,
    pub working_dir: Option<&'j str>,
    pub test: &'j TestCommand,
    /// The commit the branch is built on.
    pub base: git2::Oid,
    /// The build's digest ([`super::digest`]), recorded in the PR.
    pub build: String,
}

/// A unit whose commands changed no file: fine when every declared update was already there,
/// not when something (an `=` pin, a range) held one back, nor when no command could change a
/// file at all (`pip install`).
fn unchanged(
    run: &RunContext<'_>,
    unit: &BranchUnit<'_>,
    before: &Snapshot,
    workspace: &Workspace,
    dir: &Path,
) -> Result<BuildOutcome, Stop> {
    let whys: Option<Vec<&str>> = unit.commands.iter().map(|c| c.changes_no_file()).collect();
    if let Some(why) = whys.and_then(|w| w.first().copied()) {
        return Ok(BuildOutcome::Unverified(Stop::failed(format!(
            "no changes: {why}"
        ))));
    }
    if let Some(stop) = refusal(&verify::verify(run, unit, before, workspace, dir)?.0) {
        return Ok(BuildOutcome::Unverified(stop));
    }
    run.progress.step("no changes");
    Ok(BuildOutcome::NoChanges)
}

/// Commits exactly what was verified: what the commands changed, no file of git's own among
/// it, only dependency files, each one a reader verified (or where readers looked), staged
/// from the bytes the verifier read. `Err` is what the unit came to instead of a commit.
fn commit_verified(
    run: &RunContext<'_>,
    slot: &WorkerSlot,
    job: &BuildJob<'_>,
    before: &Snapshot,
    dir: &Path,
    report: &mut ActionReport,
) -> Result<Result<(NewCommit, Verdict), BuildOutcome>, Stop> {
    let (unit, lap) = (job.unit, Instant::now());
    let Some(workspace) = slot.workspace.as_ref() else {
        return Err(Stop::failed("the workspace is gone"));
    };
    let changed = workspace.changes()?;
    if let Some(f) = changes::git_files(&changed.touched()) {
        return Err(Stop::denied(format!(
            "[{}] {}; nothing was pushed",
            f.code, f.message
        )));
    }
    if changed.paths.is_empty() {
        return unchanged(run, unit, before, workspace, dir).map(Err);
    }
    check_files(run, unit, &changed.files())?;
    let (mut facts, diff, after) = match verify::verify(run, unit, before, workspace, dir) {
        Ok(verified) => verified,
        Err(stop) => return Ok(Err(BuildOutcome::Unverified(stop))),
    };
    let Some(staged) = workspace.stage(&changed, &after.files)? else {
        return unchanged(run, unit, before, workspace, dir).map(Err);
    };
    tracing::debug!(ms = millis(lap.elapsed()), "changes verified and staged");
    let working_dir = job.working_dir.unwrap_or(".");
    facts.findings.extend(changes::unverified_files(
        &staged.files,
        &after,
        working_dir,
    ));
    report.changes.push(ChangeRecord::of(&unit.branch, &facts));
    if let Some(stop) = refusal(&facts) {
        return Ok(Err(BuildOutcome::Unverified(stop)));
    }
    if let Some(stop) = gates::screen(run, unit, &diff, report) {
        return Ok(Err(BuildOutcome::Gated(stop)));
    }
    let message = commit_message(unit, &facts, run.settings.allow_mentions);
    let commit = workspace.commit(staged, &message, &run.settings.author)?;
    Ok(Ok((commit, facts)))
}

/// Runs the unit's commands in the slot's workspace (at the base), commits, and runs the
/// tests.
pub(super) fn build(
    run: &RunContext<'_>,
    slot: &mut WorkerSlot,
    job: &BuildJob<'_>,
    report: &mut ActionReport,
) -> Result<BuildOutcome, Stop> {
    super::warm_up::ensure(run, slot);
    let lap = Instant::now();
    let fresh = workspace::place(run, slot, job.base)?;
    tracing::debug!(ms = millis(lap.elapsed()), "workspace at the base");
    let Some(workspace) = slot.workspace.as_ref() else {
        return Err(Stop::failed("the workspace is gone"));
    };
    let (unit, working_dir, test, base) = (job.unit, job.working_dir, job.test, job.base);
    let cell = workspace::cell(run, slot.number, workspace, false)?;
    if fresh {
        workspace.refresh_owners()?;
    }
    tracing::debug!(ms = millis(lap.elapsed()), "sandbox unit ready");
    let dir = workspace.dir(working_dir)?;
    let before = verify::snapshot_before(unit, workspace, &dir);
    check_project(unit, test, (&dir, working_dir), before.as_ref().ok())?;
    let before = before?;
    check_specs(unit, &before)?;
    run.progress
        .step(&format!("{}: workspace at {}", unit.branch, short(base)));
    let env = toolchains::check_toolchains(run, &cell, unit, (workspace.root(), &dir), report)?;
    if let Some(why) = run_commands(run, (&cell, &env), unit, &dir, report)? {
        return Ok(BuildOutcome::CommandFailed(why));
    }
    let (commit, facts) = match commit_verified(run, slot, job, &before, &dir, report)? {
        Ok(committed) => committed,
        Err(built) => return Ok(built),
    };
    run.progress.step(&format!(
        "committed {} as {} ({} file{})",
        short(commit.id),
        run.settings.author.name,
        commit.files.len(),
        if commit.files.len() == 1 { "" } else { "s" }
    ));
    // The update commands' unit ends; the tests get a fresh one, on the committed files.
    drop(cell);
    let committed = (commit, Box::new(facts));
    test_committed(run, slot, job, committed, (&env, &before, &dir), report)
}

/// Tests a committed unit on the environment a frozen install builds from the commit.
fn test_committed(
    run: &RunContext<'_>,
    slot: &mut WorkerSlot,
    job: &BuildJob<'_>,
    (commit, facts): (NewCommit, Box<Verdict>),
    (env, before, dir): (&BTreeMap<OsString, OsString>, &Snapshot, &Path),
    report: &mut ActionReport,
) -> Result<BuildOutcome, Stop> {
    let (unit, test) = (job.unit, job.test);
    let tested = match environment::test_environment(
        run,
        slot,
        unit,
        &commit,
        (env, before, dir),
        test,
        report,
    )? {
        Ok(tested) => tested,
        Err(why) => return Ok(BuildOutcome::InstallFailed(why.to_string())),
    };
    let Some(root) = slot.workspace.as_ref().map(|w| w.root().to_path_buf()) else {
        return Err(Stop::failed("the workspace is gone"));
    };
    // Validation saw the test command's paths as text; now they exist, in this workspace.
    crate::mission::check_test_paths(test, &root, dir).map_err(|r| {
        Stop::denied(format!(
            "[{}] test command is not allowed: {}",
            r.code, r.message
        ))
    })?;
    match run_tests(run, (&tested.cell, &tested.env), unit, test, dir, report)? {
        None => Ok(BuildOutcome::Ready(commit, facts)),
        Some(why) => Ok(BuildOutcome::TestsFailed(why)),
    }
}

/// Runs `argv` in the cell, with the unit's environment, its output kept in the unit's log
/// on `branch`, and a line every [`super::heartbeat::EVERY`] while it runs.
pub(super) fn execute(
    run: &RunContext<'_>,
    (cell, env): Exec<'_>,
    argv: &[String],
    dir: &Path,
    branch: &str,
) -> Result<ProcessOutcome, Stop> {
    let log = unit_log(run, branch);
    let command = Program {
        argv,
        cwd: dir,
        env,
        timeout: run.settings.command_timeout,
        secrets: &run.settings.secrets,
        log: log.as_deref(),
    };
    super::heartbeat::while_running(&run.progress, &argv.join(" "), || cell.run(&command))
        .map_err(sandbox_stop)
}

/// The log of the unit on `branch`, next to the report (none without a report).
pub(super) fn unit_log(run: &RunContext<'_>, branch: &str) -> Option<std::path::PathBuf> {
    let dir = run.settings.logs.as_ref()?;
    Some(dir.join(format!("{}.log", branch.replace('/', "__"))))
}

/// Runs the update commands in order; why the first that failed did.
fn run_commands(
    run: &RunContext<'_>,
    cell: Exec<'_>,
    unit: &BranchUnit<'_>,
    dir: &Path,
    report: &mut ActionReport,
) -> Result<Option<String>, Stop> {
    for command in &unit.commands {
        let outcome = execute(run, cell, &command.argv, dir, &unit.branch)?;
        let ok = outcome.exit.success();
        run.progress.step(&format!(
            "$ {}  ({}, {:.1}s)",
            command.text,
            outcome.result(),
            outcome.duration.as_secs_f64()
        ));
        if !ok {
            run.progress.failure_output(&outcome.output_tail);
        }
        let warnings = super::warnings::resolver_warnings(&outcome.output_tail);
        let process = ProcessRecord::of(outcome);
        let failed = (!ok).then(|| format!("`{}` failed: {}", command.text, process.result));
        report.commands.push(CommandRecord {
            command: command.text.clone(),
            branch: unit.branch.clone(),
            ok,
            process,
            warnings,
        });
        if failed.is_some() {
            return Ok(failed);
        }
    }
    Ok(None)
}

/// Only the dependency files of the commands' ecosystems may change.
fn check_files(
    run: &RunContext<'_>,
    unit: &BranchUnit<'_>,
    changed: &[String],
) -> Result<(), Stop> {
    let ecosystems: BTreeSet<&str> = unit.commands.iter().map(|m| m.ecosystem.as_str()).collect();
    let files = run.plan.files();
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
    run: &RunContext<'_>,
    cell: Exec<'_>,
    unit: &BranchUnit<'_>,
    test: &TestCommand,
    dir: &Path,
    report: &mut ActionReport,
) -> Result<Option<String>, Stop> {
    let outcome = execute(run, cell, &test.argv, dir, &unit.branch)?;
    let passed = outcome.exit.success();
    run.progress.step(&format!(
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
        run.progress.failure_output(&outcome.output_tail);
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
            log: unit_log(run, &unit.branch).map(|p| p.display().to_string()),
        });
    Ok(failed)
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
