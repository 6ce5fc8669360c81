//! Whether a PR's updates reached the default branch: its lock files, read with the same readers
//! that verify a unit, in the slot's workspace at the default branch's tip.

use super::super::git_state;
use super::super::record::Record;
use super::super::stop::Stop;
use super::super::workspace;
use super::super::{RunContext, WorkerSlot};
use super::quoted;
use crate::changes::{self, Ecosystem, version};
use std::cmp::Ordering;

/// What the default branch's lock files hold of each update (`` `greeting` `1.0.1` ``), quoted,
/// when every
/// one is at its version or newer; `None` when one is not (or a lock refresh, which never
/// "arrives").
pub(in crate::engine) fn reached(
    run: &RunContext<'_>,
    slot: &mut WorkerSlot,
    record: &Record,
) -> Result<Option<String>, Stop> {
    if !record.moves_versions() {
        return Ok(None);
    }
    let tip = git_state::lock(run)?.default_tip;
    workspace::place(run, slot, tip)?;
    let Some(workspace) = slot.workspace.as_ref() else {
        return Err(Stop::failed("the workspace is gone"));
    };
    let dir = workspace.dir(record.working_dir.as_deref())?;
    let root = workspace
        .root()
        .canonicalize()
        .map_err(|e| Stop::failed(format!("reading the workspace: {e}")))?;
    let ecosystems: Vec<&str> = record.ecosystems.iter().map(String::as_str).collect();
    let default = &run.plan.plan().repo_context.default_branch;
    let snapshot = changes::snapshot(&root, &dir, &ecosystems)
        .map_err(|e| Stop::failed(format!("reading the lock files of {default}: {e}")))?;
    let mut there = Vec::new();
    for u in &record.updates {
        let ecosystem = u
            .ecosystem
            .as_deref()
            .or(match ecosystems.as_slice() {
                [only] => Some(*only),
                _ => None,
            })
            .and_then(Ecosystem::from_name);
        let Some(ecosystem) = ecosystem else {
            return Ok(None);
        };
        let name = ecosystem.normalize_name(&u.package);
        let copies: Vec<_> = snapshot
            .ecosystems
            .get(&ecosystem)
            .map(|s| s.packages.iter().filter(|p| p.name == name).collect())
            .unwrap_or_default();
        let Some(copy) = copies.iter().find(|p| p.direct).or(copies.first()) else {
            return Ok(None);
        };
        match version::compare(ecosystem, &copy.version, &u.to) {
            Some(Ordering::Greater | Ordering::Equal) => {
                there.push(format!("{} {}", quoted(&u.package), quoted(&copy.version)));
            }
            _ => return Ok(None),
        }
    }
    Ok(Some(there.join(", ")))
}
