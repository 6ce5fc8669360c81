//! `quartermaster mcp`: the MCP server on standard input and output.

use super::{McpArgs, fail};
use crate::config::{CiEnv, ConfigError, Inputs, plans_dir};
use crate::mcp::{McpConfig, McpError, serve_stdio};
use crate::mission::DEFAULT_MISSION;
use std::process::ExitCode;

pub fn command(args: McpArgs) -> ExitCode {
    let flags = Inputs {
        plans_dir: args.plans_dir,
        mission: args.mission,
        missions_dir: args.missions_dir,
        ..Inputs::default()
    };
    let inputs = match Inputs::from_env() {
        Ok(env) => flags.combine(env),
        Err(e) => return fail(&e),
    };
    let config = McpConfig {
        plans_dir: plans_dir(inputs.plans_dir, &CiEnv::from_env()),
        mission: inputs.mission.unwrap_or_else(|| DEFAULT_MISSION.into()),
        missions_dir: inputs.missions_dir,
    };
    match serve_stdio(config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ McpError::Mission(_)) => fail(&ConfigError::new(e.to_string())),
        Err(e) => {
            eprintln!("{}", crate::sink::terminal(&format!("error: {e}")));
            ExitCode::FAILURE
        }
    }
}
