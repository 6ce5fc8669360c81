//! The command line: `run`, `validate`, `schema`, `explain`, `mcp`, and for many jobs `export`,
//! `shards` and `report merge`. Parses arguments, hands them to the library's modules, and turns
//! results into output and exit codes.

mod explain;
mod mcp;
mod run;
mod scale;
mod validate;

pub use scale::{
    ExportArgs, ExportFormat, MergeArgs, PlanArgs, ReportCommand, ShardFormat, ShardsArgs,
};

pub use validate::{read_plan, render_json, render_text};

use crate::config::Inputs;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit code: the plan or configuration is invalid and nothing ran.
pub(crate) const EXIT_INVALID: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "quartermaster",
    version,
    about = "Trusted executor for agent-written dependency-update plans",
    long_about = "Validates an agent's JSON plan, runs only allowlisted update commands and an allowed \
                  test runner in isolated workspaces, and opens or updates labelled PRs/MRs."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Execute a plan: validate it, run its commands and tests, push branches, open PRs/MRs.
    ///
    /// Every flag can also be set with its `QM_*` variable (`--dry-run` is `QM_DRY_RUN`). Exits 0
    /// when every action is done or skipped, 1 when one failed or was denied, 2 when the plan or
    /// the configuration is invalid (then nothing runs).
    #[command(override_usage = "quartermaster run --plan <FILE|-> [OPTIONS]")]
    Run(Box<Inputs>),
    /// Check a plan against the schema and the mission's rules; nothing runs.
    ///
    /// Exits 0 when the plan is valid (warnings are printed), 2 when it is not.
    Validate(ValidateCliArgs),
    /// Print the plan's JSON Schema (draft 2020-12), usable as an LLM structured-output schema.
    Schema,
    /// Write a plan as another engine's work: `--format pangolin`, a pangolin-orchestrator run.
    ///
    /// One work item per action; `resourceLocks` are the actions' lock keys prefixed with the
    /// repository. Exits 2 when the plan is invalid.
    Export(ExportArgs),
    /// Cut a plan into at most `--max` shards that CI jobs run at once with `run --only`.
    ///
    /// Actions sharing a lock key (branch, PR, issue, lock files) stay in one shard. Exits 2 when
    /// the plan is invalid.
    Shards(ShardsArgs),
    /// Work with run reports.
    #[command(subcommand)]
    Report(ReportCommand),
    /// Say what a finding code means and how to fix the plan; without a code, list every code.
    ///
    /// A code is what `validate` and the report show in brackets: `error[json.syntax]`. Exits 2
    /// for an unknown code, naming the closest one.
    Explain(ExplainCliArgs),
    /// Serve MCP on standard input and output: tools to check a plan and submit it as a
    /// docker-agent named plan. Runs nothing.
    ///
    /// Tools: get_schema, validate_plan, describe_mission (with the repository's policy),
    /// explain_code, check_update (a candidate version against the policy: its age, advisories
    /// and deprecation), submit_plan. Exits 0 when the client closes its end, 1 when the session
    /// fails, 2 when the mission cannot be loaded.
    Mcp(McpArgs),
}

#[derive(Debug, Args)]
pub struct ValidateCliArgs {
    /// Plan file, `-` for standard input, or `docker-agent:<name>` for a named plan (read, not
    /// claimed).
    #[arg(value_name = "PLAN|-")]
    pub plan: PathBuf,
    /// docker-agent's plans directory [env: QM_PLANS_DIR; default: ~/.cagent/plans].
    #[arg(long, value_name = "DIR")]
    pub plans_dir: Option<PathBuf>,
    /// Mission whose allowlist applies [env: QM_MISSION] [default: deps].
    #[arg(long)]
    pub mission: Option<String>,
    /// Directory of custom missions (`<DIR>/<name>/allowlist.json`), searched before the embedded
    /// ones [env: QM_MISSIONS_DIR].
    #[arg(long, value_name = "DIR")]
    pub(crate) missions_dir: Option<PathBuf>,
    /// The repository checkout, whose lock files decide what only they can (a cargo package
    /// locked in several versions) [env: QM_CHECKOUT; default: GITHUB_WORKSPACE or
    /// CI_PROJECT_DIR; none outside CI].
    #[arg(long, value_name = "DIR")]
    pub checkout: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct ExplainCliArgs {
    /// The finding code, such as `branch.prefix` (or as shown: `error[branch.prefix]`).
    pub code: Option<String>,
    /// Output format (`json`: the MCP `explain_code` tool's answer).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Where submit_plan writes named plans: docker-agent's plans directory [env: QM_PLANS_DIR;
    /// default: ~/.cagent/plans].
    #[arg(long, value_name = "DIR")]
    pub plans_dir: Option<PathBuf>,
    /// Mission the tools apply when a call names none [env: QM_MISSION] [default: deps].
    #[arg(long)]
    pub mission: Option<String>,
    /// Directory of custom missions (`<DIR>/<name>/allowlist.json`), searched before the embedded
    /// ones [env: QM_MISSIONS_DIR].
    #[arg(long, value_name = "DIR")]
    pub(crate) missions_dir: Option<PathBuf>,
    /// The repository's policy file, instead of `.quartermaster.toml` at the tip of the
    /// checkout's default branch [env: QM_POLICY].
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// The repository checkout whose committed policy applies [env: QM_CHECKOUT; default:
    /// GITHUB_WORKSPACE, CI_PROJECT_DIR or the current directory].
    #[arg(long, value_name = "DIR")]
    pub checkout: Option<PathBuf>,
    /// The OSV service check_update asks [env: QM_OSV_URL; default: https://api.osv.dev].
    #[arg(long, value_name = "URL")]
    pub(crate) osv_url: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Runs the command line; the binary's whole `main`.
pub fn main() -> ExitCode {
    // A panic message can quote hostile input (a parser's, which the readers contain): it reaches
    // the job log through the text sink like everything else.
    std::panic::set_hook(Box::new(|info| {
        eprintln!(
            "{}",
            crate::sink::terminal(&format!("quartermaster: {info}"))
        );
    }));
    let cli = Cli::parse();
    match cli.command {
        Command::Run(inputs) => run::command(*inputs),
        Command::Validate(args) => validate::command(&args),
        Command::Export(args) => scale::export(&args),
        Command::Shards(args) => scale::shards(&args),
        Command::Report(command) => scale::report(&command),
        Command::Explain(args) => explain::command(&args),
        Command::Schema => {
            let schema = serde_json::to_string_pretty(&crate::plan::json_schema())
                .expect("a JSON value serialises");
            println!("{schema}");
            ExitCode::SUCCESS
        }
        Command::Mcp(args) => mcp::command(args),
    }
}

/// Says why nothing ran, and exits 2.
fn fail(error: &dyn crate::hint::Hint) -> ExitCode {
    eprintln!("{}", crate::sink::terminal(&crate::hint::render(error)));
    ExitCode::from(EXIT_INVALID)
}
