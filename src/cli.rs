//! Command-line interface: `run`, `validate`, `schema`.

use crate::config::{CiEnv, ConfigError, ForgeKind, QmEnv, RunConfig, RunFlags};
use crate::engine::{Engine, Settings};
use crate::finding::Finding;
use crate::forge::Forge;
use crate::forge::github::{GithubForge, GithubSettings};
use crate::forge::gitlab::{GitlabForge, GitlabSettings};
use crate::forge::http::Policy;
use crate::forge::local::LocalForge;
use crate::git::{CredentialGuard, RemoteSpec};
use crate::mission::{self, DEFAULT_MISSION, Mission};
use crate::plan::{self, MAX_PLAN_BYTES};
use crate::progress::Progress;
use crate::report::{REPORT_VERSION, RunReport, Summary, Timing, ValidationReport};
use crate::validate::{self, Validation};
use base64::Engine as _;
use clap::{Args, Parser, Subcommand, ValueEnum};
use secrecy::ExposeSecret;
use serde::Serialize;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

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
    /// Execute a plan: validate it, run its commands and tests, push branches, open PRs/MRs.
    ///
    /// Every flag can also be set with its `QM_*` variable (`--dry-run` is `QM_DRY_RUN`). Exits 0
    /// when every action is done or skipped, 1 when one failed or was denied, 2 when the plan or
    /// the configuration is invalid (then nothing runs).
    Run(Box<RunArgs>),
    /// Check a plan against the schema and the mission's rules; nothing runs.
    ///
    /// Exits 0 when the plan is valid (warnings are printed), 2 when it is not.
    Validate(ValidateArgs),
    /// Print the plan's JSON Schema (draft 2020-12), usable as an LLM structured-output schema.
    Schema,
}

#[derive(Debug, Args)]
pub struct MissionArgs {
    /// Mission whose allowlist applies [env: QM_MISSION] [default: deps].
    #[arg(long)]
    pub mission: Option<String>,
    /// Directory of custom missions (`<DIR>/<name>/allowlist.json`), searched before the embedded
    /// ones [env: QM_MISSIONS_DIR].
    #[arg(long, value_name = "DIR")]
    pub missions_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The plan to execute [env: QM_PLAN].
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// The repository checkout [env: QM_CHECKOUT; default: GITHUB_WORKSPACE, CI_PROJECT_DIR or the
    /// current directory].
    #[arg(long, value_name = "DIR")]
    pub checkout: Option<PathBuf>,
    #[command(flatten)]
    pub mission: MissionArgs,
    /// Where PRs/MRs live: auto (github under GITHUB_ACTIONS, gitlab under GITLAB_CI, else
    /// local), local, github or gitlab [env: QM_FORGE].
    #[arg(long, value_name = "KIND")]
    pub forge: Option<String>,
    /// Directory of the local forge's records [env: QM_FORGE_DIR; default:
    /// <checkout>/.git/quartermaster-forge].
    #[arg(long, value_name = "DIR")]
    pub forge_dir: Option<PathBuf>,
    /// Git remote of the checkout that branches go to, for the local forge [env: QM_REMOTE;
    /// default: origin].
    #[arg(long, value_name = "NAME")]
    pub remote: Option<String>,
    /// Write the JSON report here [env: QM_REPORT].
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Write the Markdown summary here [env: QM_SUMMARY].
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// Validate, run commands and tests, commit locally, but push, open and close nothing
    /// [env: QM_DRY_RUN].
    #[arg(long)]
    pub dry_run: bool,
    /// Actions below this confidence are skipped [env: QM_MIN_CONFIDENCE; default: 0.5].
    #[arg(long, value_name = "0..1")]
    pub min_confidence: Option<f64>,
    /// Time limit of each command and test run, e.g. 600, 10m [env: QM_COMMAND_TIMEOUT;
    /// default: 15m].
    #[arg(long, value_name = "DURATION")]
    pub command_timeout: Option<String>,
    /// Label that marks Quartermaster's PRs and issues [env: QM_BOT_LABEL; default:
    /// quartermaster].
    #[arg(long, value_name = "LABEL")]
    pub bot_label: Option<String>,
    /// Commit identity, `Name <email>` [env: QM_GIT_AUTHOR].
    #[arg(long, value_name = "IDENTITY")]
    pub git_author: Option<String>,
    /// Pass this environment variable to commands and tests (repeatable) [env: QM_EXTRA_ENV,
    /// comma-separated].
    #[arg(long = "extra-env", value_name = "NAME")]
    pub extra_env: Vec<String>,
    /// Open PRs/MRs as drafts [env: QM_DRAFT].
    #[arg(long)]
    pub draft: bool,
    /// Let @mentions and #references in plan text notify people [env: QM_ALLOW_MENTIONS].
    #[arg(long)]
    pub allow_mentions: bool,
    /// Minimum time between two write requests to the forge's API [env: QM_FORGE_WRITE_INTERVAL;
    /// default: 1s].
    #[arg(long, value_name = "DURATION")]
    pub forge_write_interval: Option<String>,
    /// Longest rate-limit wait honoured; beyond it the remaining forge calls fail
    /// [env: QM_FORGE_MAX_WAIT; default: 90s].
    #[arg(long, value_name = "DURATION")]
    pub forge_max_wait: Option<String>,
}

impl RunArgs {
    fn flags(&self) -> RunFlags {
        RunFlags {
            plan: self.plan.clone(),
            checkout: self.checkout.clone(),
            mission: self.mission.mission.clone(),
            missions_dir: self.mission.missions_dir.clone(),
            forge: self.forge.clone(),
            forge_dir: self.forge_dir.clone(),
            remote: self.remote.clone(),
            report: self.report.clone(),
            summary: self.summary.clone(),
            dry_run: self.dry_run,
            min_confidence: self.min_confidence,
            command_timeout: self.command_timeout.clone(),
            bot_label: self.bot_label.clone(),
            git_author: self.git_author.clone(),
            extra_env: self.extra_env.clone(),
            draft: self.draft,
            allow_mentions: self.allow_mentions,
            forge_write_interval: self.forge_write_interval.clone(),
            forge_max_wait: self.forge_max_wait.clone(),
        }
    }
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
        Command::Run(args) => run_command(&args),
        Command::Validate(args) => validate_command(&args),
        Command::Schema => {
            let schema = serde_json::to_string_pretty(&plan::json_schema())
                .expect("a JSON value serialises");
            println!("{schema}");
            ExitCode::SUCCESS
        }
    }
}

/// The mission named by flags, else by `QM_MISSION`/`QM_MISSIONS_DIR`, else `deps`.
fn load_mission(name: Option<&str>, dir: Option<&Path>) -> Result<Mission, String> {
    let name = name.unwrap_or(DEFAULT_MISSION);
    mission::load(name, dir).map_err(|e| format!("mission: {e}"))
}

fn validate_command(args: &ValidateArgs) -> ExitCode {
    let qm = match QmEnv::from_env() {
        Ok(qm) => qm,
        Err(e) => return fail(&e.to_string()),
    };
    let name = args
        .mission
        .mission
        .clone()
        .or(qm.mission.filter(|m| !m.is_empty()));
    let dir = args
        .mission
        .missions_dir
        .clone()
        .or(qm.missions_dir.filter(|d| !d.is_empty()).map(PathBuf::from));
    let mission = match load_mission(name.as_deref(), dir.as_deref()) {
        Ok(m) => m,
        Err(e) => return fail(&e),
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

fn run_command(args: &RunArgs) -> ExitCode {
    init_logging();
    let started = Instant::now();
    let started_at = SystemTime::now();
    let config = match QmEnv::from_env().and_then(|qm| {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        RunConfig::resolve(args.flags(), &qm, CiEnv::from_env(), cwd)
    }) {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string()),
    };
    let mission = match load_mission(Some(&config.mission), config.missions_dir.as_deref()) {
        Ok(m) => m,
        Err(e) => return fail(&e),
    };
    let bytes = match read_plan(&config.plan) {
        Ok(b) => b,
        Err(e) => return fail(&e),
    };
    let progress = if config.ci.on_github() {
        Progress::github_actions()
    } else {
        Progress::stderr()
    };
    for secret in secret_forms(&config) {
        progress.command(&format!("::add-mask::{secret}"));
    }
    let validation = validate::validate(&bytes, &mission);
    let findings: Vec<Finding> = validation
        .errors()
        .chain(validation.warnings())
        .cloned()
        .collect();
    progress.quoted(
        &findings
            .iter()
            .map(Finding::to_string)
            .collect::<Vec<_>>()
            .join("\n"),
    );
    for annotation in crate::report::github::annotations(&findings, &config.plan) {
        progress.command(&annotation);
    }
    let mut report = RunReport {
        version: REPORT_VERSION,
        quartermaster: env!("CARGO_PKG_VERSION"),
        started_at: humantime::format_rfc3339_seconds(started_at).to_string(),
        finished_at: String::new(),
        dry_run: config.dry_run,
        forge: config.forge.name().to_string(),
        mission: mission.name.clone(),
        plan: config.plan.display().to_string(),
        validation: ValidationReport {
            valid: validation.is_valid(),
            errors: validation.errors().cloned().collect(),
            warnings: validation.warnings().cloned().collect(),
        },
        summary: Summary::default(),
        timing: Timing::default(),
        forge_requests: 0,
        exit_code: 0,
        error: None,
        actions: Vec::new(),
    };
    if let Some(plan) = &validation.plan {
        progress.line(&format!(
            "quartermaster: plan {} is valid ({} actions; mission {}, forge {}{})",
            config.plan.display(),
            plan.actions.len(),
            mission.name,
            config.forge.name(),
            if config.dry_run { ", dry run" } else { "" }
        ));
        if config.token_is_default && config.forge == ForgeKind::Github {
            progress.command(
                "::warning title=Quartermaster::The token is the workflow's GITHUB_TOKEN: PRs it opens do not trigger other workflows, so no CI runs on them. Pass a GitHub App token or a personal access token as `token` to have CI check Quartermaster's PRs.",
            );
        }
        match execute(&config, &mission, plan, &progress) {
            Ok((actions, requests)) => {
                report.actions = actions;
                report.forge_requests = requests;
            }
            Err(e) => {
                eprintln!("error: {e}");
                report.error = Some(e.to_string());
            }
        }
    } else {
        progress.line("quartermaster: the plan is invalid; nothing ran");
    }
    report.finished_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    report.conclude(started.elapsed().as_millis() as u64);
    let markdown = report.to_markdown();
    // Every output is attempted: one that cannot be written does not cost the others.
    let mut unwritten = false;
    for (path, text) in [
        (&config.report, report.to_json()),
        (&config.summary, markdown.clone()),
    ] {
        if let Some(path) = path
            && let Err(e) = std::fs::write(path, text)
        {
            eprintln!("error: cannot write {}: {e}", path.display());
            unwritten = true;
        }
    }
    if let Err(e) = publish_to_ci(&config, &report, &markdown) {
        eprintln!("error: {e}");
        unwritten = true;
    }
    if progress.is_github() {
        progress.quoted(&markdown);
    } else {
        let _ = std::io::stdout().write_all(markdown.as_bytes());
    }
    ExitCode::from(if unwritten {
        report.exit_code.max(1)
    } else {
        report.exit_code
    })
}

/// GitHub Actions: the job summary and the step outputs.
fn publish_to_ci(config: &RunConfig, report: &RunReport, markdown: &str) -> Result<(), String> {
    use crate::report::github;
    let ci = &config.ci;
    let mut errors = Vec::new();
    if let Some(path) = ci.github_step_summary.as_deref().filter(|p| !p.is_empty())
        && let Err(e) = github::append(Path::new(path), markdown)
    {
        errors.push(format!("cannot write the job summary {path}: {e}"));
    }
    if let Some(path) = ci.github_output.as_deref().filter(|p| !p.is_empty())
        && let Err(e) = github::append(
            Path::new(path),
            &github::outputs(report, config.report.as_deref()),
        )
    {
        errors.push(format!("cannot write the step outputs {path}: {e}"));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// Runs a valid plan: hardens the process, opens the forge, hides persisted credentials, and
/// hands the actions to the engine.
fn execute(
    config: &RunConfig,
    mission: &Mission,
    plan: &plan::Plan,
    progress: &Progress,
) -> Result<(Vec<crate::report::ActionReport>, u64), ConfigError> {
    let invalid = |m: String| ConfigError::Invalid(m);
    // Children run as the same user; a non-dumpable process keeps them out of /proc/<pid>/environ
    // and memory, where the token lives.
    let _ = nix::sys::prctl::set_dumpable(false);
    if let Err(e) = crate::process::become_subreaper() {
        tracing::warn!(
            "cannot become a child subreaper; daemons a command starts may outlive it: {e}"
        );
    }
    let guard_slot: Arc<Mutex<Option<CredentialGuard>>> = Arc::default();
    exit_on_signals(guard_slot.clone()).map_err(|e| invalid(format!("signal handlers: {e}")))?;
    let empty = tempfile::tempdir().map_err(|e| invalid(format!("temporary directory: {e}")))?;
    crate::git::isolate_from_user_config(empty.path()).map_err(|e| invalid(e.to_string()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| invalid(format!("async runtime: {e}")))?;
    // The HTTP clients spawn their connection tasks when they are built.
    let _context = runtime.enter();
    let forge = runtime.block_on(open_forge(config))?;
    let guard = CredentialGuard::neutralise(&config.checkout).map_err(|e| {
        invalid(format!(
            "cannot hide the credentials persisted in the checkout: {e}"
        ))
    })?;
    if guard.is_active() {
        progress.line(
            "quartermaster: credentials persisted in the checkout are hidden while commands run",
        );
        progress.command(
            "::warning title=Quartermaster::The checkout holds persisted credentials. Quartermaster hides them while agent commands run, but set `persist-credentials: false` on actions/checkout so that no step can read them.",
        );
    }
    let settings = Settings {
        dry_run: config.dry_run,
        min_confidence: config.min_confidence,
        command_timeout: config.command_timeout,
        bot_label: config.bot_label.clone(),
        author: config.author.clone(),
        draft: config.draft,
        allow_mentions: config.allow_mentions,
        child_env: crate::process::child_env(std::env::vars_os(), &config.extra_env),
        secrets: secret_forms(config),
    };
    *lock(&guard_slot) = Some(guard);
    let engine = Engine::new(plan, mission, forge.as_ref(), &settings, progress);
    let actions = runtime.block_on(engine.run());
    drop(lock(&guard_slot).take());
    Ok((actions, forge.requests()))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// On SIGINT, SIGTERM or SIGHUP (a cancelled job), stops the running command and its descendants,
/// puts the checkout's credentials back, and exits with 128 + the signal. Without a handler, a
/// container's PID 1 would ignore SIGTERM until the runtime's SIGKILL, which leaves no chance to
/// restore anything.
fn exit_on_signals(guard: Arc<Mutex<Option<CredentialGuard>>>) -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            // Held until exit: the main thread, done with its actions, waits here instead of
            // finishing the run as if nothing happened.
            let mut guard = lock(&guard);
            crate::process::interrupt();
            if let Some(guard) = guard.as_mut() {
                guard.restore();
            }
            eprintln!(
                "quartermaster: interrupted by signal {signal}; the running command was killed and the run stopped"
            );
            std::process::exit(128 + signal);
        }
    });
    Ok(())
}

/// The token as it may travel: raw, and base64 in HTTP basic credentials.
fn secret_forms(config: &RunConfig) -> Vec<String> {
    let Some(token) = &config.token else {
        return Vec::new();
    };
    let token = token.expose_secret();
    let b64 = |s: String| base64::engine::general_purpose::STANDARD.encode(s);
    vec![
        token.to_string(),
        b64(format!("x-access-token:{token}")),
        b64(format!("oauth2:{token}")),
        b64(format!(":{token}")),
    ]
}

async fn open_forge(config: &RunConfig) -> Result<Box<dyn Forge>, ConfigError> {
    let invalid = |m: String| ConfigError::Invalid(m);
    match config.forge {
        ForgeKind::Local => {
            let repo = git2::Repository::open(&config.checkout).map_err(|e| {
                invalid(format!(
                    "checkout {} is not a git repository: {}",
                    config.checkout.display(),
                    e.message()
                ))
            })?;
            let remote = repo.find_remote(&config.remote).map_err(|_| {
                invalid(format!(
                    "checkout {} has no remote `{}`; pass --remote NAME",
                    config.checkout.display(),
                    config.remote
                ))
            })?;
            let url = remote
                .url()
                .map_err(|_| invalid(format!("remote `{}` has no usable URL", config.remote)))?;
            let url = match url.strip_prefix("file://") {
                Some(_) => url.to_string(),
                None if !url.contains("://") && !url.contains(':') => {
                    // A relative path is relative to the checkout, not to where we run.
                    let p = Path::new(url);
                    if p.is_absolute() {
                        url.to_string()
                    } else {
                        config.checkout.join(p).display().to_string()
                    }
                }
                None => url.to_string(),
            };
            let dir = config
                .forge_dir
                .clone()
                .unwrap_or_else(|| repo.path().join("quartermaster-forge"));
            let spec = RemoteSpec {
                url,
                username: None,
                token: config.token.clone(),
            };
            let forge = LocalForge::open(&dir, spec).map_err(|e| invalid(e.to_string()))?;
            Ok(Box::new(forge))
        }
        ForgeKind::Github => {
            let ci = &config.ci;
            let set = |v: &Option<String>| v.clone().filter(|v| !v.is_empty());
            let repository = set(&ci.github_repository).ok_or_else(|| {
                invalid("GITHUB_REPOSITORY is not set: the github forge needs GITHUB_REPOSITORY (owner/name), as GitHub Actions sets it".into())
            })?;
            let token = config.token.clone().ok_or_else(|| {
                invalid("no token: set QM_TOKEN or GITHUB_TOKEN (the action's `token` input defaults to the workflow's GITHUB_TOKEN)".into())
            })?;
            let forge = GithubForge::new(GithubSettings {
                api_url: set(&ci.github_api_url).unwrap_or_else(|| "https://api.github.com".into()),
                server_url: set(&ci.github_server_url)
                    .unwrap_or_else(|| "https://github.com".into()),
                repository,
                token,
                policy: Policy {
                    write_interval: config.forge_write_interval,
                    max_wait: config.forge_max_wait,
                    ..Policy::default()
                },
            })
            .map_err(|e| invalid(e.to_string()))?;
            Ok(Box::new(forge))
        }
        ForgeKind::Gitlab => {
            let ci = &config.ci;
            let set = |v: &Option<String>| v.clone().filter(|v| !v.is_empty());
            const TOKEN_ADVICE: &str = "create a project (or group) access token with the `api` and `write_repository` scopes and at least the Developer role, store it as a masked CI/CD variable (for example QUARTERMASTER_TOKEN), and name that variable in the component's `token-variable` input";
            let job_token = set(&ci.ci_job_token);
            let token = match &config.token {
                None if job_token.is_some() => {
                    return Err(invalid(format!(
                        "only the CI job token is available, and it cannot create merge requests: {TOKEN_ADVICE}"
                    )));
                }
                None => {
                    return Err(invalid(format!(
                        "no token: set QM_TOKEN or GITLAB_TOKEN; {TOKEN_ADVICE}"
                    )));
                }
                Some(token) => {
                    let value = token.expose_secret();
                    if value.starts_with("glcbt-") || job_token.as_deref() == Some(value) {
                        return Err(invalid(format!(
                            "the token is the CI job token, which cannot create merge requests: {TOKEN_ADVICE}"
                        )));
                    }
                    token.clone()
                }
            };
            let server_url = set(&ci.ci_server_url);
            let api_url = set(&ci.ci_api_v4_url)
                .or_else(|| server_url.as_ref().map(|s| format!("{}/api/v4", s.trim_end_matches('/'))))
                .ok_or_else(|| invalid("CI_API_V4_URL and CI_SERVER_URL are not set: the gitlab forge needs them, as GitLab CI sets them".into()))?;
            let server_url = server_url
                .or_else(|| api_url.strip_suffix("/api/v4").map(String::from))
                .unwrap_or_else(|| api_url.clone());
            let project_path = set(&ci.ci_project_path).ok_or_else(|| {
                invalid("CI_PROJECT_PATH is not set: the gitlab forge needs it (group/project), as GitLab CI sets it".into())
            })?;
            let forge = GitlabForge::connect(GitlabSettings {
                api_url,
                server_url,
                project: set(&ci.ci_project_id).unwrap_or_else(|| project_path.clone()),
                project_path,
                token,
                policy: Policy {
                    write_interval: config.forge_write_interval,
                    max_wait: config.forge_max_wait,
                    ..Policy::default()
                },
            })
            .await
            .map_err(|e| invalid(e.to_string()))?;
            Ok(Box::new(forge))
        }
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("QM_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .without_time()
        .try_init();
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
