//! `export`, `shards` and `report merge`: a plan handed to other engines, and the shards' reports
//! put back together.

use super::validate::{load_mission, read_plan, render_text};
use super::{EXIT_INVALID, fail};
use crate::ci::github;
use crate::ci::progress::Progress;
use crate::config::{self, CiEnv, Inputs};
use crate::scale::export::{self, ExportOptions, Repository};
use crate::scale::{merge, plan_sha256, shards};
use crate::schedule::{self, KeyContext};
use crate::sink::terminal;
use crate::validate::{self, ValidatedPlan};
use clap::{Args, Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// The plan whose lock keys are read, and what decides them.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Plan file, or `-` for standard input.
    #[arg(value_name = "PLAN|-")]
    pub plan: PathBuf,
    /// Mission whose allowlist applies [env: QM_MISSION] [default: deps].
    #[arg(long)]
    pub mission: Option<String>,
    /// Directory of custom missions [env: QM_MISSIONS_DIR].
    #[arg(long, value_name = "DIR")]
    pub(crate) missions_dir: Option<PathBuf>,
    /// The repository checkout, read for workspaces whose members share lock files [env:
    /// QM_CHECKOUT; default: GITHUB_WORKSPACE, CI_PROJECT_DIR or the current directory].
    #[arg(long, value_name = "DIR")]
    pub checkout: Option<PathBuf>,
    /// As the run will have it: it changes the issue titles posted [env: QM_ALLOW_MENTIONS].
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub allow_mentions: Option<String>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// The engine's format.
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// The repository, HOST/OWNER/NAME, that prefixes the lock keys [default: the CI job's].
    #[arg(long, value_name = "HOST/OWNER/NAME")]
    pub repo: Option<String>,
    /// The pangolin queue [default: default].
    #[arg(long)]
    pub queue: Option<String>,
    /// The pangolin executor that runs `quartermaster run --only` [default: quartermaster].
    #[arg(long)]
    pub executor: Option<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    Pangolin,
}

#[derive(Debug, Args)]
pub struct ShardsArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// The most shards (CI jobs) to cut.
    #[arg(long)]
    pub max: usize,
    /// `github-matrix`: a matrix for `fromJSON`; `gitlab-pipeline`: a child pipeline; `json`.
    #[arg(long, value_enum)]
    pub format: ShardFormat,
    /// gitlab-pipeline: the parent pipeline's job whose artifacts hold the plan.
    #[arg(long, default_value = "plan")]
    pub(crate) plan_job: String,
    /// gitlab-pipeline: the masked CI/CD variable holding the project access token.
    #[arg(long, default_value = "QUARTERMASTER_TOKEN")]
    pub(crate) token_variable: String,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ShardFormat {
    GithubMatrix,
    GitlabPipeline,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Merge the reports of a plan's shards into the report of the whole plan.
    ///
    /// Refuses reports of different plans or settings, or two reports of one action. Prints the
    /// Markdown summary and exits like the whole run would (1 also when actions are missing).
    Merge(MergeArgs),
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shard reports (`run --report`).
    #[arg(required = true, value_name = "REPORT")]
    pub reports: Vec<PathBuf>,
    /// Write the merged JSON report here.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Write the merged Markdown summary here.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
}

pub(super) fn export(args: &ExportArgs) -> ExitCode {
    let (plan, bytes, ctx) = match valid_plan(&args.plan) {
        Ok(found) => found,
        Err(code) => return code,
    };
    let options = args
        .repo
        .as_deref()
        .map_or_else(
            || Repository::from_ci(|name| std::env::var(name).ok()),
            str::parse,
        )
        .and_then(|repository| {
            ExportOptions::new(repository, args.queue.clone(), args.executor.clone())
        });
    match options {
        Ok(options) => {
            let ExportFormat::Pangolin = args.format;
            let run = export::export(plan.plan(), &plan_sha256(&bytes), &ctx, &options);
            print(&export::to_json(&run))
        }
        Err(e) => fail(&e),
    }
}

pub(super) fn shards(args: &ShardsArgs) -> ExitCode {
    let (plan, _, ctx) = match valid_plan(&args.plan) {
        Ok(found) => found,
        Err(code) => return code,
    };
    let keys = schedule::plan_keys(plan.plan(), &ctx);
    let options = shards::GitlabOptions {
        plan: args.plan.plan.display().to_string(),
        plan_job: args.plan_job.clone(),
        token_variable: args.token_variable.clone(),
    };
    let text = shards::shards(&keys, args.max).and_then(|cut| match args.format {
        ShardFormat::GithubMatrix => shards::github_matrix(&cut, args.max).map(|m| m + "\n"),
        ShardFormat::GitlabPipeline => shards::gitlab_pipeline(&cut, &options),
        ShardFormat::Json => Ok(shards::to_json(&cut, plan.plan().actions.len())),
    });
    match text {
        Ok(text) => print(&text),
        Err(e) => fail(&e),
    }
}

pub(super) fn report(command: &ReportCommand) -> ExitCode {
    let ReportCommand::Merge(args) = command;
    let merged = args
        .reports
        .iter()
        .map(|path| merge::read(path).map(|r| (path.display().to_string(), r)))
        .collect::<Result<Vec<_>, _>>()
        .and_then(merge::merge);
    let merged = match merged {
        Ok(merged) => merged,
        Err(e) => return fail(&e),
    };
    let markdown = merged.to_markdown();
    let mut written = true;
    let outputs = [
        (Some(&args.output), merged.to_json()),
        (args.summary.as_ref(), markdown.clone()),
    ];
    for (path, text) in outputs {
        if let Some(path) = path
            && let Err(e) = std::fs::write(path, text)
        {
            eprintln!(
                "{}",
                terminal(&format!("error: cannot write {}: {e}", path.display()))
            );
            written = false;
        }
    }
    let ci = CiEnv::from_env();
    if let Err(e) = github::publish(&ci, &merged, Some(&args.output), &markdown) {
        eprintln!("{}", terminal(&format!("error: {e}")));
        written = false;
    }
    // The shards' failures hold their tests' output: shown as `run` shows it.
    let progress = if ci.on_github() {
        Progress::github_actions()
    } else {
        Progress::stderr()
    };
    progress.summary(&markdown);
    ExitCode::from(if written {
        merged.exit_code
    } else {
        merged.exit_code.max(1)
    })
}

/// The plan, validated against its mission, with its bytes and the context of its lock keys;
/// an invalid plan's findings are printed and its exit code returned.
fn valid_plan(args: &PlanArgs) -> Result<(ValidatedPlan, Vec<u8>, KeyContext), ExitCode> {
    let flags = Inputs {
        mission: args.mission.clone(),
        missions_dir: args.missions_dir.clone(),
        checkout: args.checkout.clone(),
        allow_mentions: args.allow_mentions.clone(),
        ..Inputs::default()
    };
    let inputs = Inputs::from_env()
        .map(|env| flags.combine(env))
        .map_err(|e| fail(&e))?;
    let allow_mentions = inputs
        .allow_mentions
        .as_deref()
        .map_or(Ok(false), |v| config::parse_bool("QM_ALLOW_MENTIONS", v))
        .map_err(|e| fail(&e))?;
    let mission = load_mission(inputs.mission.as_deref(), inputs.missions_dir.as_deref())
        .map_err(|e| fail(&e))?;
    let bytes = read_plan(&args.plan).map_err(|e| fail(&e))?;
    let validation = validate::validate(&bytes, &mission);
    let Some(plan) = validation.plan.clone() else {
        let name = args.plan.display().to_string();
        eprint!("{}", terminal(&render_text(&name, &validation)));
        return Err(ExitCode::from(EXIT_INVALID));
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let checkout = config::checkout(&inputs, &CiEnv::from_env(), cwd);
    let ctx = KeyContext::discover(plan.plan(), &checkout, allow_mentions);
    Ok((plan, bytes, ctx))
}

fn print(text: &str) -> ExitCode {
    // A closed pipe (`| head`) is not worth a panic.
    let _ = std::io::stdout().write_all(text.as_bytes());
    ExitCode::SUCCESS
}
