//! `--jobs`: the actions run on worker threads, one per sandbox slot. The [`Scheduler`] hands each
//! free worker the first action in plan order whose lock keys no earlier unfinished action holds,
//! so `--jobs 1` is plan order, two actions that could touch the same branch, PR, issue or lock
//! file never overlap, and the reports come back in plan order whatever finished first.

use super::turn::InTurn;
use super::{Engine, RunContext, WorkerSlot};
use crate::forge::Forge;
use crate::plan::Action;
use crate::report::ActionReport;
use crate::schedule::{Scheduler, plan_keys};
use std::collections::BTreeSet;
use std::num::NonZeroUsize;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Instant;

/// What the workers share: the schedule, the reports, the remote's state.
pub(super) struct Board {
    schedule: Mutex<Scheduler>,
    /// Signalled whenever an action finishes, freeing its keys.
    freed: Condvar,
    reports: Mutex<Vec<Option<ActionReport>>>,
    started: Instant,
}

impl Board {
    /// The next action for a free worker, waiting while every startable one is blocked by a
    /// running action's key; `None` when nothing is left to start.
    fn next(&self) -> Option<usize> {
        let mut schedule = self.schedule.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            // After a signal no action starts.
            if crate::harden::cancelled().is_some() {
                return None;
            }
            if let Some(next) = schedule.start_one() {
                return Some(next);
            }
            if !schedule.is_waiting() {
                return None;
            }
            schedule = self
                .freed
                .wait(schedule)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Waits until every action before `position` has finished: see [`super::turn`].
    pub(super) fn await_turn(&self, position: usize) {
        let mut schedule = self.schedule.lock().unwrap_or_else(PoisonError::into_inner);
        while !schedule.finished_before(position) {
            schedule = self
                .freed
                .wait(schedule)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn finish(&self, position: usize, report: ActionReport) {
        self.reports.lock().unwrap_or_else(PoisonError::into_inner)[position] = Some(report);
        let mut schedule = self.schedule.lock().unwrap_or_else(PoisonError::into_inner);
        // Only this worker runs `position`, and it started it: finishing cannot be refused.
        let _ = schedule.finish(position);
        self.freed.notify_all();
    }
}

fn builds(action: &Action) -> bool {
    matches!(action, Action::CreateMr(_) | Action::UpdateMr(_))
}

/// Runs the engine's actions on its workers and returns their reports in plan order, after the
/// warm-up of the units' caches (whose record comes along).
pub(super) fn execute_actions(
    engine: &Engine<'_>,
    runtime: &tokio::runtime::Handle,
) -> Vec<ActionReport> {
    let count = engine.plan.plan().actions.len();
    let indices: Vec<usize> = (0..count)
        .filter(|&i| engine.only.is_none_or(|only| only.contains(i)))
        .collect();
    let all = plan_keys(engine.plan.plan(), &engine.keys);
    let keys: Vec<BTreeSet<_>> = indices.iter().map(|&i| all[i].clone()).collect();
    // One worker per sandbox slot at most: each needs a slot of its own.
    let slots = usize::try_from(engine.sandbox.slots()).unwrap_or(usize::MAX);
    let workers = engine.jobs.get().min(slots).min(indices.len()).max(1);
    let board = Board {
        schedule: Mutex::new(Scheduler::new(
            &keys,
            NonZeroUsize::new(workers).unwrap_or(NonZeroUsize::MIN),
        )),
        freed: Condvar::new(),
        reports: Mutex::new(vec![None; indices.len()]),
        started: Instant::now(),
    };
    let work = |slot: usize| {
        let forge = InTurn::new(engine.forge, &board);
        let run = context(engine, &forge, workers > 1);
        let mut slot = WorkerSlot::new(u32::try_from(slot).unwrap_or(u32::MAX));
        while let Some(position) = board.next() {
            let index = indices[position];
            forge.set_position(position);
            // Only building a branch takes long enough to run ahead of earlier actions.
            if !builds(&engine.plan.plan().actions[index]) {
                board.await_turn(position);
            }
            let report =
                runtime.block_on(super::execute_action(&run, &mut slot, index, board.started));
            board.finish(position, report);
        }
    };
    if workers == 1 {
        // One at a time, on this thread: exactly the order of the plan.
        work(0);
    } else {
        std::thread::scope(|scope| {
            for slot in 0..workers {
                scope.spawn(move || work(slot));
            }
        });
    }
    let reports = board
        .reports
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    reports
        .into_iter()
        .zip(&indices)
        .map(|(report, &index)| report.unwrap_or_else(|| never_started(engine, index)))
        .collect()
}

/// What a worker's steps work with, `forge` standing for the engine's (`scoped`: its progress
/// lines name the action, as several run at once).
pub(super) fn context<'e>(
    engine: &'e Engine<'_>,
    forge: &'e dyn Forge,
    scoped: bool,
) -> RunContext<'e> {
    RunContext {
        plan: engine.plan,
        forge,
        settings: engine.settings,
        progress: engine.progress.scoped(scoped),
        sandbox: engine.sandbox,
        git: &engine.git,
        warm_up: &engine.warm_up,
        bases: &engine.bases,
    }
}

/// The report of an action a signal kept from starting.
fn never_started(engine: &Engine<'_>, index: usize) -> ActionReport {
    let action = &engine.plan.plan().actions[index];
    let mut report = ActionReport::new(index, action.action_type());
    let signal = crate::harden::cancelled().unwrap_or_default();
    report.finish(
        crate::report::Status::Cancelled,
        format!("not started: the run was stopped by signal {signal}"),
    );
    report
}
