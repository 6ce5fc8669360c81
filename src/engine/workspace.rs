//! A slot's workspace: copy-on-write layers over the run's one checkout of the base, or, where
//! the sandbox has no layers, a checkout of the slot's own brought back to the base between
//! units. Either way, a unit's commands get it in a cell of their own.

use super::build::sandbox_stop;
use super::git_state;
use super::stop::Stop;
use super::{RunContext, WorkerSlot};
use crate::git::{BaseCheckout, GitError, LayerSpec, Workspace};
use crate::sandbox::{Cell, UnitSpec};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

/// The run's checkouts of base commits, each the bottom layer of every workspace made over it.
pub(super) type Bases = Mutex<Vec<Arc<BaseCheckout>>>;

/// Puts the slot's workspace at `base`: the one the last unit used, brought back to exactly
/// the base tree, or a new one the first time (or when the old one cannot be trusted).
/// Whether the workspace is new.
pub(super) fn place(
    run: &RunContext<'_>,
    slot: &mut WorkerSlot,
    base: git2::Oid,
) -> Result<bool, Stop> {
    if let Some(workspace) = slot.workspace.as_mut() {
        match workspace.reset(base) {
            Ok(()) => return Ok(false),
            Err(e) => {
                run.progress
                    .step(&format!("workspace not reused ({e}); making it anew"));
                slot.workspace = None;
            }
        }
    }
    let view = run
        .sandbox
        .slot_workspace(slot.number)
        .map_err(sandbox_stop)?;
    // The checkout (the costly part) goes on without a hold on the shared mirror.
    let source = git_state::lock(run)?.mirror.source();
    let workspace = match run.sandbox.workspace_layers(slot.number) {
        Some(layers) => {
            let spec = LayerSpec {
                base: base_checkout(run, &source, base, &layers.bases)?,
                view,
                dir: layers.dir,
                mounter: Box::new(layers.mounter),
            };
            Workspace::layered(&source, base, spec)?
        }
        None => Workspace::create(&source, base, &view)?,
    };
    slot.workspace = Some(workspace);
    Ok(true)
}

/// The run's checkout of `commit`, made the first time a workspace needs it (the other slots
/// wait for it rather than check it out too): in the first of `places` it fits in.
fn base_checkout(
    run: &RunContext<'_>,
    source: &crate::git::WorkspaceSource,
    commit: git2::Oid,
    places: &[PathBuf],
) -> Result<Arc<BaseCheckout>, Stop> {
    let mut bases = run.bases.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(known) = bases.iter().find(|b| b.commit() == commit) {
        return Ok(known.clone());
    }
    let lap = std::time::Instant::now();
    let mut failed = None;
    for place in places {
        match BaseCheckout::create(source, commit, &place.join(commit.to_string())) {
            Ok(made) => {
                tracing::debug!(ms = super::millis(lap.elapsed()), place = %place.display(), "base checked out");
                let made = Arc::new(made);
                bases.push(made.clone());
                return Ok(made);
            }
            // Out of room (what it wrote went with it): the next place is tried. A tree that
            // cannot be checked out anywhere is not tried again.
            Err(e @ GitError::Io { .. }) => failed = Some(e),
            Err(e) => return Err(e.into()),
        }
    }
    Err(failed.map_or_else(
        || Stop::failed("no place for the base checkout"),
        Stop::from,
    ))
}

/// A fresh cell in `slot` whose commands may write `workspace` (the run's warm-up cell when
/// `warm_up`).
pub(super) fn cell<'a>(
    run: &RunContext<'a>,
    slot: u32,
    workspace: &Workspace,
    warm_up: bool,
) -> Result<Cell<'a>, Stop> {
    run.sandbox
        .unit(UnitSpec {
            slot,
            writable: vec![workspace.root().to_path_buf()],
            warm_up,
            layered: workspace.is_layered(),
            ..UnitSpec::default()
        })
        .map_err(sandbox_stop)
}
