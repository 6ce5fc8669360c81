//! `quartermaster validate`: findings as text or JSON, and the exit code.

use super::{EXIT_INVALID, Format, ValidateCliArgs, fail};
use crate::config::{CiEnv, ConfigError, Inputs, plans_dir};
use crate::finding::Finding;
use crate::mission::{self, DEFAULT_MISSION, Mission};
use crate::named_plan::{self, PlanName, PlanStore, StoreError};
use crate::plan::MAX_PLAN_BYTES;
use crate::validate::{self, Validation};
use serde::Serialize;
use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

pub(super) fn command(args: &ValidateCliArgs) -> ExitCode {
    let flags = Inputs {
        mission: args.mission.clone(),
        missions_dir: args.missions_dir.clone(),
        plans_dir: args.plans_dir.clone(),
        checkout: args.checkout.clone(),
        ..Inputs::default()
    };
    let inputs = match Inputs::from_env() {
        Ok(env) => flags.combine(env),
        Err(e) => return fail(&e),
    };
    let mission = match load_mission(inputs.mission.as_deref(), inputs.missions_dir.as_deref()) {
        Ok(m) => m,
        Err(e) => return fail(&e),
    };
    let named = args.plan.to_str().and_then(named_plan::parse_reference);
    let bytes = match named {
        None => read_plan(&args.plan),
        Some(name) => read_named(
            name,
            plans_dir(inputs.plans_dir.clone(), &CiEnv::from_env()),
        ),
    };
    let bytes = match bytes {
        Ok(b) => b,
        Err(e) => return fail(&e),
    };
    let mut result = validate::validate(&bytes, &mission);
    let ci = CiEnv::from_env();
    if let Some(checkout) = inputs
        .checkout
        .clone()
        .or_else(|| ci.github_workspace.clone().map(Into::into))
        .or_else(|| ci.ci_project_dir.clone().map(Into::into))
    {
        result = validate::against_checkout(result, &checkout);
    }
    let name = if args.plan.as_os_str() == "-" {
        "<stdin>".to_string()
    } else {
        args.plan.display().to_string()
    };
    let out = match args.format {
        Format::Text => crate::sink::terminal(&render_text(&name, &result)),
        Format::Json => render_json(&result),
    };
    // A closed pipe (`| head`) is not worth a panic.
    let _ = std::io::stdout().write_all(out.as_bytes());
    if result.is_valid() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_INVALID)
    }
}

/// The mission named, else `deps`.
pub(crate) fn load_mission(name: Option<&str>, dir: Option<&Path>) -> Result<Mission, ConfigError> {
    Ok(mission::load(name.unwrap_or(DEFAULT_MISSION), dir)?)
}

/// The plan JSON a named plan holds, read without claiming it.
fn read_named(
    name: Result<PlanName, StoreError>,
    dir: std::path::PathBuf,
) -> Result<Vec<u8>, ConfigError> {
    let plan = PlanStore::new(dir).read(&name?)?;
    Ok(named_plan::plan_json(plan.content())
        .into_owned()
        .into_bytes())
}

/// Reads a plan from a file or `-` (stdin), never more than the size limit plus one byte, so an
/// endless stream cannot exhaust memory and an oversized plan is still recognised as such.
pub fn read_plan(path: &Path) -> Result<Vec<u8>, ConfigError> {
    let limit = MAX_PLAN_BYTES as u64 + 1;
    let mut bytes = Vec::new();
    let result = if path.as_os_str() == "-" {
        std::io::stdin().lock().take(limit).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(limit).read_to_end(&mut bytes))
    };
    result.map_err(|source| ConfigError::PlanUnreadable {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(bytes)
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Human-readable report: a verdict line, then one line per finding.
pub fn render_text(name: &str, result: &Validation) -> String {
    let errors = result.errors().count();
    let warnings = result.warnings().count();
    let mut out = if result.is_valid() {
        match warnings {
            0 => format!("{name}: valid\n"),
            n => format!("{name}: valid, {}\n", plural(n, "warning")),
        }
    } else {
        format!(
            "{name}: invalid, {}, {}\n",
            plural(errors, "error"),
            plural(warnings, "warning")
        )
    };
    for f in result.errors().chain(result.warnings()) {
        out.push_str(&format!("  {f}\n"));
    }
    out
}

#[derive(Serialize)]
struct JsonFinding<'a> {
    pointer: &'a str,
    code: &'a str,
    message: &'a str,
}

impl<'a> From<&'a Finding> for JsonFinding<'a> {
    fn from(f: &'a Finding) -> Self {
        Self {
            pointer: &f.pointer,
            code: f.code.as_str(),
            message: &f.message,
        }
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    valid: bool,
    errors: Vec<JsonFinding<'a>>,
    warnings: Vec<JsonFinding<'a>>,
}

/// Machine-readable report: `{"valid", "errors": [{pointer, code, message}], "warnings": [...]}`.
pub fn render_json(result: &Validation) -> String {
    let report = JsonReport {
        valid: result.is_valid(),
        errors: result.errors().map(JsonFinding::from).collect(),
        warnings: result.warnings().map(JsonFinding::from).collect(),
    };
    let mut s = serde_json::to_string_pretty(&report).expect("findings serialise");
    s.push('\n');
    s
}
