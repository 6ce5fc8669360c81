//! Facts, not claims: what a unit's commands really changed, read from the lock files and
//! manifests before and after them and checked against the updates the plan declared. A unit is
//! only published as what its lock files show.

use super::RunContext;
use super::stop::Stop;
use super::unit::BranchUnit;
use crate::changes::{self, ChangesError, Code, DeclaredUpdate, Snapshot, Trust, Verdict};
use crate::git::Workspace;
use crate::sandbox::ToolConfig;
use std::collections::BTreeSet;
use std::path::Path;

/// The dependency state of the working directory before the unit's commands, for their
/// ecosystems. A lock file of another ecosystem where theirs is missing means the plan names
/// the wrong ecosystem.
pub(super) fn snapshot_before(
    unit: &BranchUnit<'_>,
    workspace: &Workspace,
    dir: &Path,
) -> Result<Snapshot, Stop> {
    read_state(unit, workspace, dir)?.map_err(|e| match e {
        ChangesError::OtherEcosystem { .. } => {
            Stop::failed(format!("[{}] {e}; nothing ran", Code::EcosystemMismatch))
        }
        e => unreadable(&e),
    })
}

/// The dependency state of the working directory now, for the ecosystems of the unit's
/// commands.
pub(super) fn snapshot(
    unit: &BranchUnit<'_>,
    workspace: &Workspace,
    dir: &Path,
) -> Result<Snapshot, Stop> {
    read_state(unit, workspace, dir)?.map_err(|e| unreadable(&e))
}

fn read_state(
    unit: &BranchUnit<'_>,
    workspace: &Workspace,
    dir: &Path,
) -> Result<Result<Snapshot, ChangesError>, Stop> {
    let ecosystems: BTreeSet<&str> = unit.commands.iter().map(|m| m.ecosystem.as_str()).collect();
    let ecosystems: Vec<&str> = ecosystems.into_iter().collect();
    Ok(changes::snapshot(
        &canonical_root(workspace)?,
        dir,
        &ecosystems,
    ))
}

/// What changed between `before` and now, checked against the unit's declared updates; the
/// difference it checked; and the snapshot of now, with the bytes it read.
pub(super) fn verify(
    run: &RunContext<'_>,
    unit: &BranchUnit<'_>,
    before: &Snapshot,
    workspace: &Workspace,
    dir: &Path,
) -> Result<(Verdict, changes::Diff, Snapshot), Stop> {
    let after = snapshot(unit, workspace, dir)?;
    let declared: Vec<DeclaredUpdate> = unit
        .updates
        .iter()
        .map(|u| DeclaredUpdate {
            package: u.package.clone(),
            from: u.from.clone(),
            to: u.to.clone(),
            update_type: u.update_type,
        })
        .collect();
    let diff = changes::diff(before, &after);
    let verdict = changes::check(&diff, &declared, &trust(run, workspace, dir)?);
    for finding in verdict.findings.iter().filter(|f| !f.blocking) {
        run.progress
            .step(&format!("note [{}]: {}", finding.code, finding.message));
    }
    Ok((verdict, diff, after))
}

/// Where this unit's lock files may newly resolve from: besides the hosts the operator
/// allows, the registries the unit's configuration names (read from the workspace, whose
/// configuration files no command may change, and the operator's seeded files).
fn trust(run: &RunContext<'_>, workspace: &Workspace, dir: &Path) -> Result<Trust, Stop> {
    let seed = |tool: ToolConfig| {
        let seeds = &run.sandbox.config.seeds;
        seeds
            .iter()
            .find(|s| s.tool == tool)
            .map(|s| s.source.as_path())
    };
    let config = changes::Configuration {
        env: &run.settings.child_env,
        npmrc: seed(ToolConfig::Npmrc),
        yarnrc_yml: seed(ToolConfig::YarnrcYml),
    };
    let root = canonical_root(workspace)?;
    let configured = changes::configured_registries(&root, dir, &config).map_err(|e| {
        Stop::failed(format!(
            "{}: cannot read the registry configuration: {e}",
            e.code()
        ))
    })?;
    Ok(Trust {
        hosts: run.settings.registry_hosts.clone(),
        configured,
    })
}

/// The workspace's root with every link resolved, as the readers need it.
pub(super) fn canonical_root(workspace: &Workspace) -> Result<std::path::PathBuf, Stop> {
    workspace
        .root()
        .canonicalize()
        .map_err(|e| Stop::failed(format!("reading the workspace: {e}")))
}

fn unreadable(e: &ChangesError) -> Stop {
    Stop::failed(format!(
        "{}: cannot verify what the commands changed: {e}",
        e.code()
    ))
}

/// The refusal a verdict's blocking findings make, if any: `denied` when the commands did
/// something the plan did not declare, `failed` when a declared update did not land where it
/// said.
pub(super) fn refusal(verdict: &Verdict) -> Option<Stop> {
    let blocking: Vec<_> = verdict.findings.iter().filter(|f| f.blocking).collect();
    if blocking.is_empty() {
        return None;
    }
    let reason = blocking
        .iter()
        .map(|f| format!("[{}] {}", f.code, f.message))
        .collect::<Vec<_>>()
        .join("; ");
    let only_unreached = blocking.iter().all(|f| f.code == Code::UpdateNotReached);
    Some(if only_unreached {
        Stop::failed(reason)
    } else {
        Stop::denied(format!("{reason}; nothing was pushed"))
    })
}
