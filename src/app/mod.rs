//! One run, from a resolved configuration to its report: validate the plan, harden the process,
//! open the forge, hide the checkout's persisted credentials, probe the sandbox, run the engine,
//! conclude.

mod error;
mod gates;
pub(crate) mod named;
mod sandbox;
mod subject;

use crate::ci::github;
use crate::ci::progress::Progress;
use crate::config::RunConfig;
use crate::engine::{Engine, OpenedRemote, Settings};
use crate::finding::Finding;
use crate::forge::{self, ForgeKind};
use crate::git::{CredentialGuard, Mirror, RemoteSpec};
use crate::hint::Hint;
use crate::mission::Mission;
use crate::report::{
    ActionReport, IsolationReport, IssueRef, REPORT_VERSION, RunReport, Summary, Timing,
    UpkeepReport, ValidationReport,
};
use crate::schedule::KeyContext;
use crate::validate::{self, ValidatedPlan, Validation};
use secrecy::ExposeSecret;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

pub(crate) use error::SetupError;

/// Validates and runs the plan `bytes`; the report says what happened, including why the run
/// could not start.
pub(crate) fn run(
    config: &RunConfig,
    mission: &Mission,
    bytes: &[u8],
    progress: &Progress,
) -> RunReport {
    let started = Instant::now();
    let started_at = SystemTime::now();
    for mask in github::masks(&secret_forms(config)) {
        progress.command(&mask);
    }
    let validation = validate::validate(bytes, mission);
    show_findings(config, &validation, progress);
    let mut report = new_report(config, mission, &validation, bytes, started_at);
    if let Some(plan) = &validation.plan {
        progress.line(&format!(
            "quartermaster: plan {} is valid ({} actions{}; mission {}, forge {}{})",
            config.plan.display(),
            plan.plan().actions.len(),
            shard_text(config),
            mission.name,
            config.forge,
            if config.dry_run { ", dry run" } else { "" }
        ));
        if config.token_is_default && config.forge == ForgeKind::Github {
            progress.command(&github::warning(
                "The token is the workflow's GITHUB_TOKEN: PRs it opens do not trigger other workflows, so no CI runs on them. Pass a GitHub App token or a personal access token as `token` to have CI check Quartermaster's PRs.",
            ));
        }
        match shard_fits(config, plan).and_then(|()| execute(config, plan, mission, progress)) {
            Ok(ran) => {
                report.actions = ran.actions;
                report.upkeep = ran.upkeep;
                report.dashboard = ran.dashboard;
                report.forge_requests = ran.forge_requests;
                report.isolation = Some(ran.isolation);
            }
            Err(e) => {
                eprintln!("{}", crate::sink::terminal(&crate::hint::render(&e)));
                report.error = Some(e.to_string());
                report.hint = e.hint().map(std::borrow::Cow::into_owned);
            }
        }
    } else {
        progress.line("quartermaster: the plan is invalid; nothing ran");
    }
    report.signal = crate::harden::cancelled();
    report.finished_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    report.conclude(started.elapsed().as_millis() as u64);
    report
}

/// Every finding in the log (quoted: plan text is untrusted), and as annotations on GitHub.
fn show_findings(config: &RunConfig, validation: &Validation, progress: &Progress) {
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
    for annotation in github::annotations(&findings, &config.plan) {
        progress.command(&annotation);
    }
}

/// `, running 0, 3 (--only)` when the run is a shard.
fn shard_text(config: &RunConfig) -> String {
    config.only.as_ref().map_or_else(String::new, |only| {
        let indices: Vec<String> = only.indices().iter().map(usize::to_string).collect();
        format!(", running {} (--only)", indices.join(", "))
    })
}

/// Refuses a shard naming actions the plan does not have.
fn shard_fits(config: &RunConfig, plan: &ValidatedPlan) -> Result<(), SetupError> {
    match &config.only {
        Some(only) => Ok(only.fits(plan.plan().actions.len())?),
        None => Ok(()),
    }
}

fn new_report(
    config: &RunConfig,
    mission: &Mission,
    validation: &Validation,
    bytes: &[u8],
    started_at: SystemTime,
) -> RunReport {
    RunReport {
        version: REPORT_VERSION,
        quartermaster: env!("CARGO_PKG_VERSION").into(),
        started_at: humantime::format_rfc3339_seconds(started_at).to_string(),
        finished_at: String::new(),
        dry_run: config.dry_run,
        forge: config.forge,
        mission: mission.name.clone(),
        plan: config.plan.display().to_string(),
        plan_sha256: Some(crate::scale::plan_sha256(bytes)),
        plan_actions: validation
            .plan
            .as_ref()
            .map_or(0, |p| p.plan().actions.len()),
        only: config.only.as_ref().map(|only| only.indices()),
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
        hint: None,
        signal: None,
        isolation: None,
        actions: Vec::new(),
        upkeep: Vec::new(),
        dashboard: None,
    }
}

/// What running a valid plan produced.
struct Ran {
    actions: Vec<ActionReport>,
    upkeep: Vec<UpkeepReport>,
    dashboard: Option<IssueRef>,
    forge_requests: u64,
    isolation: IsolationReport,
}

/// Workers drive their actions' requests from their own threads; the runtime's one thread drives
/// the connections.
fn runtime() -> Result<tokio::runtime::Runtime, SetupError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(SetupError::Runtime)
}

/// Runs a valid plan: hardens the process, opens the forge, hides persisted credentials, probes
/// the sandbox, and hands the actions to the engine.
fn execute(
    config: &RunConfig,
    plan: &ValidatedPlan,
    mission: &Mission,
    progress: &Progress,
) -> Result<Ran, SetupError> {
    let guard_slot: Arc<Mutex<Option<CredentialGuard>>> = Arc::default();
    let _isolation = crate::harden::process(guard_slot.clone())?;
    let runtime = runtime()?;
    // The HTTP clients spawn their connection tasks when they are built.
    let _context = runtime.enter();
    let forge = runtime.block_on(forge::open(config.forge_config()?))?;
    let guard = guard_checkout(config, progress)?;
    *crate::harden::lock(&guard_slot) = Some(guard);
    let scratch = crate::harden::scratch()?;
    default_branch_exists(plan, forge.remote(), scratch.path())?;
    // The remote is read before any unit, so that the policy comes from the very commit the
    // units start from.
    let opened = gates::builds(config, plan)
        .then(|| OpenedRemote::open(forge.remote(), scratch.path(), plan.plan(), progress));
    let policy = gates::policy(config, plan, opened.as_ref())?;
    if opened.is_some() {
        progress.line(&format!("quartermaster: {}", policy.summary()));
    }
    let carried = gates::carry(config, plan, progress);
    let settings = settings(config, scratch.path(), &carried, policy, runtime.handle())?;
    if let Some(dir) = &settings.logs {
        fresh_logs(dir)?;
    }
    let lap = Instant::now();
    let sandbox = sandbox::open(
        config,
        plan,
        scratch.path(),
        settings.child_env.clone(),
        &carried,
    )?;
    tracing::debug!(ms = lap.elapsed().as_millis(), "sandbox ready");
    progress.line(&format!(
        "quartermaster: commands run sandboxed ({})",
        sandbox.level()
    ));
    progress.line(&format!("quartermaster: caches {}", sandbox.caches()));
    progress.line(&format!(
        "quartermaster: workspaces {}",
        sandbox.workspaces()
    ));
    let keys = KeyContext::discover(plan.plan(), &config.checkout, config.allow_mentions);
    let mut engine = Engine::new(plan, forge.as_ref(), &settings, progress, &sandbox)
        .only(config.only.as_ref())
        .jobs(config.jobs, keys)
        .upkeep(mission);
    if let Some(opened) = opened {
        engine = engine.remote(opened);
    }
    let mut ran = engine.execute(runtime.handle());
    for report in &mut ran.actions {
        if let Some(action) = plan.plan().actions.get(report.index) {
            report.subject = subject::subject(action);
        }
    }
    let isolation = IsolationReport {
        level: sandbox.level(),
        fallbacks: sandbox.fallbacks().to_vec(),
        uid_base: sandbox.uid_base(),
        limits: Some(crate::report::LimitsReport {
            by: sandbox.limits_by().0.to_string(),
            note: sandbox.limits_by().1.map(str::to_string),
            limits: *sandbox.limits(),
        }),
        caches: Some(crate::report::CachesReport {
            mode: sandbox.caches(),
            warm_up: ran.warm_up,
        }),
        workspaces: Some(sandbox.workspaces()),
    };
    drop(sandbox);
    drop(crate::harden::lock(&guard_slot).take());
    Ok(Ran {
        actions: ran.actions,
        upkeep: ran.upkeep,
        dashboard: ran.dashboard,
        forge_requests: forge.requests(),
        isolation,
    })
}

/// Stops the run before any action when the plan's default branch is not on the remote: every
/// branch would start from it and every PR target it. The remote's branches are listed, to pick
/// from. A remote that cannot be listed is left to the actions, which each report it.
fn default_branch_exists(
    plan: &ValidatedPlan,
    remote: &RemoteSpec,
    scratch: &std::path::Path,
) -> Result<(), SetupError> {
    const SHOWN: usize = 20;
    let default = &plan.plan().repo_context.default_branch;
    let Ok(heads) = Mirror::new(remote.clone(), scratch).and_then(|mirror| mirror.list()) else {
        return Ok(());
    };
    if heads.contains_key(default) {
        return Ok(());
    }
    let mut branches: Vec<String> = heads.keys().take(SHOWN).map(|b| format!("`{b}`")).collect();
    if heads.len() > SHOWN {
        branches.push(format!("and {} more", heads.len() - SHOWN));
    }
    let branches = if branches.is_empty() {
        "it has none".to_string()
    } else {
        format!("its branches are {}", branches.join(", "))
    };
    Err(SetupError::NoDefaultBranch {
        branch: crate::finding::clip(default),
        branches,
    })
}

/// Hides the credentials CI persisted in the checkout while commands run.
fn guard_checkout(config: &RunConfig, progress: &Progress) -> Result<CredentialGuard, SetupError> {
    let guard = CredentialGuard::neutralise(&config.checkout).map_err(SetupError::Credentials)?;
    if guard.is_active() {
        progress.line(
            "quartermaster: credentials persisted in the checkout are hidden while commands run",
        );
        progress.command(&github::warning(
            "The checkout holds persisted credentials. Quartermaster hides them while agent commands run, but set `persist-credentials: false` on actions/checkout so that no step can read them.",
        ));
    }
    Ok(guard)
}

fn settings(
    config: &RunConfig,
    scratch: &std::path::Path,
    carried: &crate::supply::carry::Carried,
    policy: crate::policy::Policy,
    runtime: &tokio::runtime::Handle,
) -> Result<Settings, SetupError> {
    let extra_env: Vec<String> = config
        .extra_env
        .iter()
        .chain(&carried.env)
        .cloned()
        .collect();
    let mut child_env = crate::process::child_env(std::env::vars_os(), &extra_env);
    crate::toolchain::env::apply(&mut child_env, config.toolchain_install, &extra_env);
    let screener = gates::screener(config, policy, carried, &child_env, runtime.clone())?;
    let mut secrets = secret_forms(config);
    secrets.extend(carried.secrets.iter().cloned());
    let mut registry_hosts = config.registry_hosts.clone();
    registry_hosts.extend(carried.hosts.iter().cloned());
    Ok(Settings {
        dry_run: config.dry_run,
        min_confidence: config.min_confidence,
        command_timeout: config.command_timeout,
        bot_label: config.bot_label.clone(),
        author: config.author.clone(),
        draft: config.draft,
        allow_mentions: config.allow_mentions,
        child_env,
        extra_env: config.extra_env.clone(),
        secrets,
        registry_hosts,
        scratch: scratch.to_path_buf(),
        toolchain_policy: config.toolchain_policy,
        screener,
        sign_commits: config.sign_commits,
        logs: config.report.as_deref().map(logs_dir),
    })
}

/// Where the units' logs go: `<report>-logs/` beside the report (`report.json`: `report-logs/`).
pub(crate) fn logs_dir(report: &std::path::Path) -> std::path::PathBuf {
    let stem = report
        .file_stem()
        .map_or_else(|| "report".into(), |s| s.to_string_lossy().into_owned());
    report.with_file_name(format!("{stem}-logs"))
}

/// Makes the logs' directory, without the logs of an earlier run.
fn fresh_logs(dir: &std::path::Path) -> Result<(), SetupError> {
    let failed = |source| SetupError::Logs {
        dir: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(failed)?;
    for entry in std::fs::read_dir(dir).map_err(failed)?.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "log") && path.is_file() {
            std::fs::remove_file(&path).map_err(failed)?;
        }
    }
    Ok(())
}

/// The token in the forms it may travel in.
fn secret_forms(config: &RunConfig) -> Vec<String> {
    config
        .token
        .as_ref()
        .map(|t| crate::config::secret_forms(t.expose_secret()))
        .unwrap_or_default()
}
