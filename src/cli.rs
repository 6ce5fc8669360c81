//! Command-line interface: `validate`, `schema` (and `run`, see the engine).

use crate::finding::Finding;
use crate::mission::{self, DEFAULT_MISSION};
use crate::plan::{self, MAX_PLAN_BYTES};
use crate::validate::{self, Validation};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde::Serialize;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit code: the plan or configuration is invalid and nothing ran.
pub const EXIT_INVALID: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "quartermaster",
    version,
    about = "Trusted executor for agent-written dependency-update plans",
    long_about = "Validates an agent's JSON plan, runs only allowlisted update commands and an allowed \
                  test runner in isolated workspaces, and opens or updates labelled PRs/MRs."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check a plan against the schema and the mission's rules; nothing runs.
    ///
    /// Exits 0 when the plan is valid (warnings are printed), 2 when it is not.
    Validate(ValidateArgs),
    /// Print the plan's JSON Schema (draft 2020-12), usable as an LLM structured-output schema.
    Schema,
}

#[derive(Debug, Args)]
pub struct MissionArgs {
    /// Mission whose allowlist applies.
    #[arg(long, env = "QM_MISSION", default_value = DEFAULT_MISSION)]
    pub mission: String,
    /// Directory of custom missions (`<DIR>/<name>/allowlist.json`), searched before the embedded ones.
    #[arg(long, env = "QM_MISSIONS_DIR", value_name = "DIR")]
    pub missions_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Plan file, or `-` for standard input.
    #[arg(value_name = "PLAN|-")]
    pub plan: PathBuf,
    #[command(flatten)]
    pub mission: MissionArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Runs the command line; the binary's whole `main`.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Validate(args) => validate_command(&args),
        Command::Schema => {
            let schema = serde_json::to_string_pretty(&plan::json_schema())
                .expect("a JSON value serialises");
            println!("{schema}");
            ExitCode::SUCCESS
        }
    }
}

fn validate_command(args: &ValidateArgs) -> ExitCode {
    let mission = match mission::load(&args.mission.mission, args.mission.missions_dir.as_deref()) {
        Ok(m) => m,
        Err(e) => return fail(&format!("mission: {e}")),
    };
    let bytes = match read_plan(&args.plan) {
        Ok(b) => b,
        Err(e) => return fail(&e),
    };
    let result = validate::validate(&bytes, &mission);
    let name = if args.plan.as_os_str() == "-" {
        "<stdin>".to_string()
    } else {
        args.plan.display().to_string()
    };
    let out = match args.format {
        Format::Text => render_text(&name, &result),
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

/// Reads a plan from a file or `-` (stdin), never more than the size limit plus one byte, so an
/// endless stream cannot exhaust memory and an oversized plan is still recognised as such.
pub fn read_plan(path: &Path) -> Result<Vec<u8>, String> {
    let limit = MAX_PLAN_BYTES as u64 + 1;
    let mut bytes = Vec::new();
    let result = if path.as_os_str() == "-" {
        std::io::stdin().lock().take(limit).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(limit).read_to_end(&mut bytes))
    };
    result.map_err(|e| format!("cannot read plan {}: {e}", path.display()))?;
    Ok(bytes)
}

fn fail(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_INVALID)
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
