//! Before the first unit: the repository's policy (from the default branch's tip the units start
//! from, or `--policy`), and the operator's registry configuration carried into the units; both
//! announced on the start-up lines. A policy that does not parse stops the run (exit 2).

use super::SetupError;
use crate::changes::Ecosystem;
use crate::ci::progress::Progress;
use crate::config::RunConfig;
use crate::engine::OpenedRemote;
use crate::plan::Action;
use crate::policy::{self, POLICY_FILE, Policy};
use crate::supply::Screener;
use crate::supply::carry::{self, Carried};
use crate::supply::registries::Registries;
use crate::validate::ValidatedPlan;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::sync::Arc;

/// The policy's file is read from git up to this size (larger is refused by the parser).
const POLICY_LIMIT: usize = 64 * 1024;

/// Whether the run builds branches (a shard's actions only).
pub(super) fn builds(config: &RunConfig, plan: &ValidatedPlan) -> bool {
    plan.plan().actions.iter().enumerate().any(|(i, a)| {
        matches!(a, Action::CreateMr(_) | Action::UpdateMr(_))
            && config.only.as_ref().is_none_or(|only| only.contains(i))
    })
}

/// The policy in force: `--policy FILE`, else `.quartermaster.toml` at the tip of the default
/// branch as `opened` read it, else the defaults.
pub(super) fn policy(
    config: &RunConfig,
    plan: &ValidatedPlan,
    opened: Option<&OpenedRemote>,
) -> Result<Policy, SetupError> {
    if let Some(path) = &config.policy {
        return Ok(policy::from_file(path)?);
    }
    let branch = &plan.plan().repo_context.default_branch;
    let Some((opened, tip)) = opened.and_then(|o| Some((o, o.default_tip()?))) else {
        // No unit can start without the remote; its actions say why.
        return Ok(Policy::default());
    };
    let entry = opened
        .default_branch_file(POLICY_FILE, POLICY_LIMIT)
        .map_err(|e| SetupError::PolicyRead {
            branch: branch.clone(),
            source: e.into(),
        })?;
    Ok(policy::from_tree(entry, branch, &tip.to_string())?)
}

/// The operator's registry configuration for the plan's ecosystems, announced.
pub(super) fn carry(config: &RunConfig, plan: &ValidatedPlan, progress: &Progress) -> Carried {
    let ecosystems: BTreeSet<Ecosystem> = plan
        .plan()
        .repo_context
        .ecosystems
        .iter()
        .filter_map(|e| Ecosystem::from_name(e))
        .collect();
    let own: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    let carried = carry::discover(&ecosystems, &config.tool_configs, &config.extra_env, &own);
    let given: Vec<&str> = config.tool_configs.iter().map(|s| s.tool.name()).collect();
    if carried.found.is_empty() {
        progress.line(&if given.is_empty() {
            "quartermaster: registries: no operator registry configuration to carry into units (official registries need none)".to_string()
        } else {
            format!(
                "quartermaster: registries: as --tool-config gives them ({}); nothing more to carry into units",
                given.join(", ")
            )
        });
    } else {
        let hosts: Vec<&str> = carried.hosts.iter().map(String::as_str).collect();
        progress.line(&format!(
            "quartermaster: registry configuration carried into units (read-only): {}{}",
            carried.found.join(", "),
            if hosts.is_empty() {
                String::new()
            } else {
                format!(
                    "; lock files may therefore also resolve from {}",
                    hosts.join(", ")
                )
            }
        ));
    }
    carried
}

/// The gates of the run: the policy, the registries the units' configuration points at, OSV.
pub(super) fn screener(
    config: &RunConfig,
    policy: Policy,
    carried: &Carried,
    child_env: &BTreeMap<OsString, OsString>,
    runtime: tokio::runtime::Handle,
) -> Result<Arc<Screener>, SetupError> {
    let own: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    let seeds: Vec<_> = config
        .tool_configs
        .iter()
        .chain(&carried.seeds)
        .cloned()
        .collect();
    let registries = Registries::from_config(&seeds, child_env, &own);
    Screener::new(
        Arc::new(policy),
        registries,
        &config.osv_url,
        config.notes_apis.clone(),
        runtime,
    )
    .map(Arc::new)
    .map_err(SetupError::Screener)
}
