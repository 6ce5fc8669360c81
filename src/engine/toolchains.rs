//! The toolchains a unit's repository declares, checked before its commands run: each tool is
//! asked its version in the unit's own cell (same environment, same directory), so the answer is
//! what the commands will get. Recorded for the report and the PR; with `--toolchain-policy fail`
//! a mismatch fails the unit before anything runs.

use super::RunContext;
use super::build::{Exec, sandbox_stop};
use super::stop::Stop;
use super::unit::BranchUnit;
use crate::finding::Code;
use crate::report::ActionReport;
use crate::sandbox::{Cell, Program};
use crate::toolchain::{self, Check, Tool, ToolchainPolicy, ToolchainVerdict, machine};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

/// A tool that has not printed its version by then is taken as not found.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Checks the declared toolchains of `unit` in `dir` (the workspace at the base, `root` its
/// top) and records them in `report`; the environment the unit's programs run with.
pub(super) fn check_toolchains(
    run: &RunContext<'_>,
    cell: &Cell<'_>,
    unit: &BranchUnit<'_>,
    (root, dir): (&Path, &Path),
    report: &mut ActionReport,
) -> Result<BTreeMap<OsString, OsString>, Stop> {
    let mut env = run.settings.child_env.clone();
    let tools = toolchain::tools(unit.commands.iter().map(|m| m.ecosystem.as_str()));
    if tools.is_empty() {
        return Ok(env);
    }
    let root = root
        .canonicalize()
        .map_err(|e| Stop::failed(format!("reading the workspace: {e}")))?;
    let declared = toolchain::declared::read(&root, dir, &tools)
        .map_err(|e| Stop::failed(format!("reading the declared toolchains: {e}")))?;
    if let Some(go) = toolchain::env::go_toolchain(&env, &declared) {
        env.insert("GOTOOLCHAIN".into(), go.into());
    }
    let mut found: BTreeMap<Tool, Option<String>> = BTreeMap::new();
    let mut checks = Vec::with_capacity(declared.len());
    for d in &declared {
        let version = match found.get(&d.tool) {
            Some(version) => version.clone(),
            None => {
                let version = probe(run, (cell, &env), d.tool, dir)?;
                found.insert(d.tool, version.clone());
                version
            }
        };
        checks.push(Check::new(&unit.branch, d, version.as_deref()));
    }
    let mismatches: Vec<String> = checks
        .iter()
        .filter(|c| c.verdict == ToolchainVerdict::Mismatch)
        .map(Check::describe)
        .collect();
    for m in &mismatches {
        run.progress.step(&format!(
            "toolchain mismatch [{}]: {m}",
            Code::ToolchainMismatch
        ));
    }
    report.toolchains.extend(checks);
    if run.settings.toolchain_policy == ToolchainPolicy::Fail && !mismatches.is_empty() {
        return Err(Stop::failed(format!(
            "[{}] {}; no command ran",
            Code::ToolchainMismatch,
            mismatches.join("; ")
        )));
    }
    Ok(env)
}

/// The version `tool` reports in the cell; `None` when it cannot be run or says none.
fn probe(
    run: &RunContext<'_>,
    (cell, env): Exec<'_>,
    tool: Tool,
    dir: &Path,
) -> Result<Option<String>, Stop> {
    let outcome = cell
        .run(&Program {
            argv: &tool.probe(),
            cwd: dir,
            env,
            timeout: PROBE_TIMEOUT,
            secrets: &run.settings.secrets,
            log: None,
        })
        .map_err(sandbox_stop)?;
    Ok(outcome
        .exit
        .success()
        .then(|| machine::version_in(&outcome.output_tail))
        .flatten())
}
