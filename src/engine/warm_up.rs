//! The warm-up: before the first unit builds, the base commit's frozen install and the
//! mission's pre-build (`cargo test --no-run`) run for each ecosystem in each working directory,
//! each in a cell of its own (in parallel, up to `--jobs`), and what they leave in the caches
//! (the package managers' caches, cargo's registry and build output) becomes every unit's
//! read-only bottom layers (see [`crate::sandbox::Caches`]).
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
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

/// The branch name the warm-up's output is logged under.
const LOG_NAME: &str = "warm-up";

/// One place to warm: an ecosystem in a working directory.
type Place = (String, Option<String>);

/// The run's warm-up. Its places are handed to the slots as they arrive, each warmed in a cell
/// of its own, so with `--jobs N` up to N places warm at once; every slot waits until all are
/// done, and the one that finishes last makes their layers the units' caches.
#[derive(Default)]
pub(super) struct WarmUp {
    board: Mutex<Board>,
    done: Condvar,
}

#[derive(Default)]
struct Board {
    /// The places not yet taken, the last one first; `None` before the first slot arrives.
    waiting: Option<Vec<(usize, Place)>>,
    running: usize,
    started: Option<Instant>,
    finished: Vec<Finished>,
    /// The warm-up's record, once it is over (`None`: it had nothing to do).
    over: Option<Option<WarmUpReport>>,
}

/// What warming one place left: its commands, and its cache layer or why it failed.
struct Finished {
    index: usize,
    commands: Vec<WarmUpCommand>,
    layer: Result<PathBuf, String>,
}

impl WarmUp {
    fn board(&self) -> MutexGuard<'_, Board> {
        self.board.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The warm-up's record, when it ran.
    pub(super) fn into_report(self) -> Option<WarmUpReport> {
        let board = self
            .board
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        board.over.flatten()
    }
}

/// Takes part in the warm-up unless the run has had it: the units that build first warm its
/// places, and wait for the others (an unchanged re-run, whose units all reuse their PRs, has
/// none).
pub(super) fn ensure(run: &RunContext<'_>, slot: &mut WorkerSlot) {
    let warm_up = run.warm_up;
    let mut board = warm_up.board();
    if board.waiting.is_none() {
        let mut waiting: Vec<(usize, Place)> = places(run).into_iter().enumerate().collect();
        waiting.reverse();
        if waiting.is_empty() {
            board.over = Some(None);
        } else {
            // In the first building action's lines: the warm-up runs when that action needs it.
            run.progress.step("warming the caches on the base commit");
            board.started = Some(Instant::now());
        }
        board.waiting = Some(waiting);
    }
    // The slot's workspace is put at the base once, for every place it takes.
    let mut placed = false;
    while board.over.is_none() {
        let Some((index, place)) = board.waiting.as_mut().and_then(Vec::pop) else {
            board = warm_up
                .done
                .wait(board)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        board.running += 1;
        drop(board);
        // A panic still ends the place, so that the slots waiting for it do not wait forever.
        let warmed = catch_unwind(AssertUnwindSafe(|| {
            warm(run, slot, &mut placed, (index, &place))
        }));
        let (finished, panic) = match warmed {
            Ok(finished) => (finished, None),
            Err(panic) => {
                let layer = Err("the warm-up stopped unexpectedly".to_string());
                let commands = Vec::new();
                let finished = Finished {
                    index,
                    commands,
                    layer,
                };
                (finished, Some(panic))
            }
        };
        board = record(run, warm_up, finished);
        if let Some(panic) = panic {
            drop(board);
            resume_unwind(panic);
        }
    }
}

/// Records a finished place; the last one to finish ends the warm-up.
fn record<'w>(
    run: &RunContext<'_>,
    warm_up: &'w WarmUp,
    finished: Finished,
) -> MutexGuard<'w, Board> {
    let mut board = warm_up.board();
    board.running -= 1;
    if finished.layer.is_err() {
        // The warm-up has failed: the places not yet taken would be of no use.
        board.waiting = Some(Vec::new());
    }
    board.finished.push(finished);
    if board.running == 0 && board.waiting.as_ref().is_some_and(Vec::is_empty) {
        let over = finish(run, &mut board);
        board.over = Some(Some(over));
        warm_up.done.notify_all();
    }
    board
}

/// The places to warm: each ecosystem the plan installs in each working directory, when the
/// run's caches are layered, by ecosystem, then working directory.
fn places(run: &RunContext<'_>) -> Vec<Place> {
    if run.sandbox.caches() != Caches::Warm {
        return Vec::new();
    }
    let places: BTreeSet<(&str, Option<&str>)> = run
        .plan
        .ecosystem_dirs()
        .into_iter()
        .filter(|(ecosystem, _)| !run.plan.install(ecosystem).is_empty())
        .collect();
    places
        .into_iter()
        .map(|(ecosystem, dir)| (ecosystem.to_string(), dir.map(str::to_string)))
        .collect()
}

/// The warm-up's record, from every place's: its commands in the order of its places, and, when every
/// place was warmed, their layers made the units' caches.
fn finish(run: &RunContext<'_>, board: &mut Board) -> WarmUpReport {
    let mut finished = std::mem::take(&mut board.finished);
    finished.sort_by_key(|f| f.index);
    let elapsed = board.started.map(|s| s.elapsed()).unwrap_or_default();
    let mut report = WarmUpReport {
        duration_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        ..WarmUpReport::default()
    };
    let mut layers = Vec::new();
    for place in finished {
        report.commands.extend(place.commands);
        match place.layer {
            Ok(layer) => layers.push(layer),
            Err(why) => report.failed = report.failed.or(Some(why)),
        }
    }
    if report.failed.is_none()
        && let Err(e) = run.sandbox.warmed(&layers)
    {
        report.failed = Some(sandbox_stop(e).reason);
    }
    match &report.failed {
        None => {
            report.ok = true;
            run.progress.step(&format!(
                "caches warm in {:.1}s; every unit starts from them",
                elapsed.as_secs_f64()
            ));
        }
        Some(why) => run.progress.step(&format!(
            "the warm-up failed ({why}); units start from the caches it started from"
        )),
    }
    report
}

/// Warms one place in the slot: its workspace at the base (once for all the places the slot
/// takes, as `placed` records), a warm-up cell, the ecosystem's frozen install and pre-build in
/// the working directory.
fn warm(
    run: &RunContext<'_>,
    slot: &mut WorkerSlot,
    placed: &mut bool,
    (index, place): (usize, &Place),
) -> Finished {
    let mut commands = Vec::new();
    let layer = warm_in(run, slot, placed, place, &mut commands).map_err(|stop| stop.reason);
    Finished {
        index,
        commands,
        layer,
    }
}

fn warm_in(
    run: &RunContext<'_>,
    slot: &mut WorkerSlot,
    placed: &mut bool,
    (ecosystem, working_dir): &Place,
    commands: &mut Vec<WarmUpCommand>,
) -> Result<PathBuf, Stop> {
    let mut fresh = false;
    if !*placed {
        let base = git_state::lock(run)?.default_tip;
        let lap = Instant::now();
        fresh = workspace::place(run, slot, base)?;
        tracing::debug!(
            ms = super::millis(lap.elapsed()),
            "warm-up workspace at the base"
        );
        *placed = true;
    }
    let Some(workspace) = slot.workspace.as_ref() else {
        return Err(Stop::failed("the workspace is gone"));
    };
    let root = canonical_root(workspace)?;
    let cell = workspace::cell(run, slot.number, workspace, true)?;
    if fresh {
        workspace.refresh_owners()?;
    }
    let dir = workspace.dir(working_dir.as_deref())?;
    install(run, &cell, ecosystem, (&root, &dir), commands)?;
    cell.warm_layer()
        .map(Path::to_path_buf)
        .ok_or_else(|| Stop::failed("the warm-up's cell has no cache layer"))
}

/// One ecosystem's frozen install and pre-build in `dir`, as a unit's tests get them.
fn install(
    run: &RunContext<'_>,
    cell: &Cell<'_>,
    ecosystem: &str,
    (root, dir): (&Path, &Path),
    record: &mut Vec<WarmUpCommand>,
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
        record.push(WarmUpCommand {
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
