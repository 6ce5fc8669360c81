//! The warm-up: before the first unit builds, the base commit's frozen install and the
//! mission's pre-build (`cargo test --no-run`) run in a cell of their own, and what they leave
//! in the caches (the package managers' caches, cargo's registry and build output) becomes every
//! unit's read-only bottom layer (see [`crate::sandbox::Caches`]).
//!
//! What the warm-up installs is what the default branch already runs: the base commit's own lock
//! files. It is sandboxed like any unit; what it writes among the files goes with the
//! workspace's reset before the first unit. If it fails, the units start from the caches it
//! started from: none, or the operator's cache directory.

use super::build::{self, sandbox_stop};
use super::environment::{InstallConditions, install_dir, install_env};
use super::stop::Stop;
use super::verify::canonical_root;
use super::workspace;
use super::{RunContext, WorkerSlot, git_state};
use crate::mission::InstallPlace;
use crate::report::{ProcessRecord, WarmUpCommand, WarmUpReport};
use crate::sandbox::{Caches, Cell};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::Path;
use std::time::Instant;

/// The branch name the warm-up's output is logged under.
const LOG_NAME: &str = "warm-up";

/// Runs the warm-up in `slot` unless the run has had it: the first unit that builds runs it,
/// and the others wait for it (an unchanged re-run, whose units all reuse their PRs, has none).
pub(super) fn ensure(run: &RunContext<'_>, slot: &mut WorkerSlot) {
    run.warm_up.get_or_init(|| warm_up(run, slot));
}

/// The warm-up, when the run's caches are layered and some unit installs; the record says what
/// ran and how it went.
fn warm_up(run: &RunContext<'_>, slot: &mut WorkerSlot) -> Option<WarmUpReport> {
    if run.sandbox.caches() != Caches::Warm {
        return None;
    }
    let places: BTreeSet<(&str, Option<&str>)> = run
        .plan
        .ecosystem_dirs()
        .into_iter()
        .filter(|(ecosystem, _)| !run.plan.install(ecosystem).is_empty())
        .collect();
    if places.is_empty() {
        return None;
    }
    let started = Instant::now();
    let mut report = WarmUpReport::default();
    // In the first building action's lines: the warm-up runs when that action needs it.
    run.progress.step("warming the caches on the base commit");
    let result = fill(run, slot, &places, &mut report);
    let elapsed = started.elapsed();
    report.duration_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
    match result {
        Ok(()) => {
            report.ok = true;
            run.progress.step(&format!(
                "caches warm in {:.1}s; every unit starts from them",
                elapsed.as_secs_f64()
            ));
        }
        Err(stop) => {
            run.progress.step(&format!(
                "the warm-up failed ({}); units start from the caches it started from",
                stop.reason
            ));
            report.failed = Some(stop.reason);
        }
    }
    Some(report)
}

/// The warm-up's steps: the workspace at the base, a warm-up cell, each ecosystem's frozen
/// install and pre-build in each working directory; then the result is the units' layer.
fn fill(
    run: &RunContext<'_>,
    slot: &mut WorkerSlot,
    places: &BTreeSet<(&str, Option<&str>)>,
    report: &mut WarmUpReport,
) -> Result<(), Stop> {
    let base = git_state::lock(run)?.default_tip;
    let lap = Instant::now();
    let fresh = workspace::place(run, slot, base)?;
    tracing::debug!(
        ms = super::millis(lap.elapsed()),
        "warm-up workspace at the base"
    );
    let Some(workspace) = slot.workspace.as_ref() else {
        return Err(Stop::failed("the workspace is gone"));
    };
    let root = canonical_root(workspace)?;
    let cell = workspace::cell(run, slot.number, workspace, true)?;
    if fresh {
        workspace.refresh_owners()?;
    }
    for (ecosystem, working_dir) in places {
        let dir = workspace.dir(*working_dir)?;
        install(run, &cell, ecosystem, (&root, &dir), report)?;
    }
    run.sandbox.warmed(&cell).map_err(sandbox_stop)
}

/// One ecosystem's frozen install and pre-build in `dir`, as a unit's tests get them.
fn install(
    run: &RunContext<'_>,
    cell: &Cell<'_>,
    ecosystem: &str,
    (root, dir): (&Path, &Path),
    report: &mut WarmUpReport,
) -> Result<(), Stop> {
    let before = crate::changes::snapshot(root, dir, &[ecosystem])
        .map_err(|e| Stop::failed(format!("reading the base's {ecosystem} files: {e}")))?;
    let run_dir = install_dir(ecosystem, &before, root, dir);
    let place = InstallConditions::read(&run_dir, dir)?;
    let venv = cell.home().join("venv");
    let install = InstallPlace {
        env: &venv,
        requirements: &place.requirements,
        hashed: place.hashed,
        yarn_berry: place.yarn_berry,
    };
    let ecosystems = BTreeSet::from([ecosystem]);
    let env: BTreeMap<OsString, OsString> =
        install_env(run, &run.settings.child_env, &ecosystems, &venv);
    let commands = run.plan.install(ecosystem).iter();
    for command in commands.chain(run.plan.prebuild(ecosystem)) {
        if !command.applies(&install) {
            continue;
        }
        let argv = command.argv(&install);
        let outcome = build::execute(run, (cell, &env), &argv, &run_dir, LOG_NAME)?;
        let shown = argv.join(" ").replace(&venv.display().to_string(), "<env>");
        run.progress.step(&format!(
            "$ {shown}  ({}, {:.1}s) warm-up",
            outcome.exit,
            outcome.duration.as_secs_f64()
        ));
        let ok = outcome.exit.success();
        if !ok {
            run.progress.failure_output(&outcome.output_tail);
        }
        let process = ProcessRecord::of(outcome);
        let failed = format!("`{shown}` failed: {}", process.result);
        report.commands.push(WarmUpCommand {
            ecosystem: ecosystem.to_string(),
            command: shown,
            process,
        });
        if !ok {
            return Err(Stop::failed(failed));
        }
    }
    Ok(())
}
