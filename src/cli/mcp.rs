//! `quartermaster mcp`: the MCP server on standard input and output.

use super::{McpArgs, fail};
use crate::changes::Ecosystem;
use crate::config::{CiEnv, ConfigError, Inputs, plans_dir};
use crate::mcp::{McpConfig, McpError, serve_stdio};
use crate::mission::DEFAULT_MISSION;
use crate::sandbox::Seed;
use crate::supply::{carry, registries::Registries};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

pub(super) fn command(args: McpArgs) -> ExitCode {
    let flags = Inputs {
        plans_dir: args.plans_dir,
        mission: args.mission,
        missions_dir: args.missions_dir,
        policy: args.policy,
        checkout: args.checkout,
        osv_url: args.osv_url,
        ..Inputs::default()
    };
    let inputs = match Inputs::from_env() {
        Ok(env) => flags.combine(env),
        Err(e) => return fail(&e),
    };
    let config = match config(inputs) {
        Ok(config) => config,
        Err(e) => return fail(&e),
    };
    match serve_stdio(config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ McpError::Mission(_)) => fail(&e),
        Err(e) => {
            eprintln!("{}", crate::sink::terminal(&format!("error: {e}")));
            ExitCode::FAILURE
        }
    }
}

/// The server's configuration: its mission, the repository's policy, and the registries
/// `check_update` asks, found as `run` finds them.
fn config(inputs: Inputs) -> Result<McpConfig, ConfigError> {
    let ci = CiEnv::from_env();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let checkout = crate::config::checkout(&inputs, &ci, cwd);
    let seeds = inputs
        .tool_config
        .iter()
        .map(|s| s.parse::<Seed>().map_err(ConfigError::from))
        .collect::<Result<Vec<_>, _>>()?;
    let own: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    let all: BTreeSet<Ecosystem> = Ecosystem::ALL.into_iter().collect();
    let carried = carry::discover(&all, &seeds, &inputs.extra_env, &own);
    let seeds: Vec<Seed> = seeds.into_iter().chain(carried.seeds).collect();
    let osv_url = inputs
        .osv_url
        .as_deref()
        .unwrap_or(crate::supply::osv::DEFAULT_URL)
        .trim_end_matches('/')
        .to_string();
    Ok(McpConfig {
        plans_dir: plans_dir(inputs.plans_dir, &ci),
        mission: inputs.mission.unwrap_or_else(|| DEFAULT_MISSION.into()),
        missions_dir: inputs.missions_dir,
        policy: crate::mcp::policy::read(inputs.policy.as_deref(), &checkout),
        registries: Registries::from_config(&seeds, &own, &own),
        osv_url,
    })
}
