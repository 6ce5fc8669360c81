//! The sandbox a run's commands go through: configured from the run, probed once.

use super::SetupError;
use crate::config::RunConfig;
use crate::sandbox::{Sandbox, SandboxConfig};
use crate::validate::ValidatedPlan;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

/// Probes the strongest isolation the configuration allows. Quartermaster's private `scratch`
/// directory, the checkout and the local forge's records are out of every command's reach.
pub(super) fn open(
    config: &RunConfig,
    plan: &ValidatedPlan,
    scratch: &Path,
    child_env: BTreeMap<OsString, OsString>,
    carried: &crate::supply::carry::Carried,
) -> Result<Sandbox, SetupError> {
    let own: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    let mut sandbox = SandboxConfig::new(config.isolation, &own, child_env);
    if let Some(base) = config.sandbox_uid_base {
        sandbox.uid_base = base;
        sandbox.uid_search = false;
    }
    // One slot (and so one uid) per action that may run at once.
    sandbox.slots = u32::try_from(config.jobs.get()).unwrap_or(u32::MAX);
    sandbox.hidden.push(scratch.to_path_buf());
    sandbox.hidden.extend(config.forge_dir.iter().cloned());
    sandbox.checkout = Some(config.checkout.clone());
    sandbox.programs = plan.programs();
    sandbox.seeds = config.tool_configs.clone();
    sandbox.seeds.extend(carried.seeds.iter().cloned());
    sandbox.limits = config.limits;
    sandbox.warm_caches = config.caches.warm;
    sandbox.cache_dir = config.caches.dir.clone();
    sandbox.layered_workspaces = config.layered_workspaces;
    sandbox.toolchain_dirs = config.expose_dirs.clone();
    sandbox
        .toolchain_dirs
        .extend(carried.expose.iter().cloned());
    Sandbox::probe(sandbox).map_err(SetupError::Sandbox)
}
