//! `--plan docker-agent:<name>`: which named plan, in which directory, the status it must have to
//! be claimed, and the plan its result goes to.

use super::{CiEnv, ConfigError, Inputs};
use crate::named_plan::{self, PlanName, READY};
use std::path::{Path, PathBuf};

/// A docker-agent named plan to claim, run and answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NamedPlanConfig {
    pub name: PlanName,
    /// docker-agent's plans directory.
    pub dir: PathBuf,
    /// The status the plan must have to be claimed.
    pub(crate) claim_status: String,
    /// The plan that receives the run's summary and report.
    pub result: PlanName,
}

/// The named plan `--plan` names, if it uses the `docker-agent:` scheme; `None` for a file.
pub(super) fn resolve(inputs: &Inputs, ci: &CiEnv) -> Result<Option<NamedPlanConfig>, ConfigError> {
    let Some(reference) = inputs
        .plan
        .as_deref()
        .and_then(Path::to_str)
        .and_then(named_plan::parse_reference)
    else {
        return Ok(None);
    };
    let name = reference?;
    let result = match inputs.result_plan.as_deref() {
        Some(result) => PlanName::parse(result).map_err(ConfigError::ResultPlan)?,
        None => name.result(),
    };
    if result == name {
        return Err(ConfigError::with_hint(
            format!("--result-plan `{result}` is the plan itself"),
            "name another plan, or leave --result-plan unset to write `<name>-result`",
        ));
    }
    Ok(Some(NamedPlanConfig {
        dir: plans_dir(inputs.plans_dir.clone(), ci),
        claim_status: inputs
            .claim_status
            .clone()
            .unwrap_or_else(|| READY.to_string()),
        name,
        result,
    }))
}

/// `--plans-dir`, else docker-agent's default: `$HOME/.cagent/plans`.
pub(crate) fn plans_dir(flag: Option<PathBuf>, ci: &CiEnv) -> PathBuf {
    flag.unwrap_or_else(|| {
        named_plan::plans_dir_for(
            ci.home.clone().map(Into::into),
            ci.tmpdir.clone().map(Into::into),
        )
    })
}
