//! One run, from a resolved configuration to its report: validate the plan, harden the process,
//! open the forge, hide the checkout's persisted credentials, probe the sandbox, run the engine,
//! conclude.

pub mod named;
mod sandbox;

use crate::ci::github;
use crate::ci::progress::Progress;
use crate::config::{ConfigError, RunConfig};
use crate::finding::Finding;
use crate::forge::{self, ForgeKind};
use crate::git::CredentialGuard;
use crate::mission::Mission;
use crate::report::{
    ActionReport, IsolationReport, REPORT_VERSION, RunReport, Summary, Timing, ValidationReport,
};
use crate::run::{Engine, Settings};
use crate::schedule::KeyContext;
use crate::validate::{self, ValidatedPlan, Validation};
use secrecy::ExposeSecret;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

/// Validates and runs the plan `bytes`; the report says what happened, including why the run
/// could not start.
pub fn run(config: &RunConfig, mission: &Mission, bytes: &[u8], progress: &Progress) -> RunReport {
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
        match shard_fits(config, plan).and_then(|()| execute(config, plan, progress)) {
            Ok(ran) => {
                report.actions = ran.actions;
                report.forge_requests = ran.forge_requests;
                report.isolation = Some(ran.isolation);
            }
            Err(e) => {
                eprintln!("{}", crate::sink::terminal(&e.render()));
                report.error = Some(e.message);
                report.hint = e.hint;
            }
        }
    } else {
        progress.line("quartermaster: the plan is invalid; nothing ran");
    }
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
fn shard_fits(config: &RunConfig, plan: &ValidatedPlan) -> Result<(), ConfigError> {
    match &config.only {
        Some(only) => only
            .fits(plan.plan().actions.len())
            .map_err(|e| ConfigError::with_hint(e.to_string(), e.hint())),
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
        isolation: None,
        actions: Vec::new(),
    }
}

/// What running a valid plan produced.
struct Ran {
    actions: Vec<ActionReport>,
    forge_requests: u64,
    isolation: IsolationReport,
}

/// Runs a valid plan: hardens the process, opens the forge, hides persisted credentials, probes
/// the sandbox, and hands the actions to the engine.
fn execute(
    config: &RunConfig,
    plan: &ValidatedPlan,
    progress: &Progress,
) -> Result<Ran, ConfigError> {
    let guard_slot: Arc<Mutex<Option<CredentialGuard>>> = Arc::default();
    let _isolation = crate::harden::process(guard_slot.clone())?;
    // Workers drive their actions' requests from their own threads; the runtime's one thread
    // drives the connections.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| ConfigError::new(format!("async runtime: {e}")))?;
    // The HTTP clients spawn their connection tasks when they are built.
    let _context = runtime.enter();
    let forge = runtime
        .block_on(forge::open(config.forge_config()?))
        .map_err(|e| ConfigError::new(e.to_string()))?;
    let guard = guard_checkout(config, progress)?;
    *crate::harden::lock(&guard_slot) = Some(guard);
    let scratch = crate::harden::scratch()?;
    let settings = settings(config, scratch.path());
    let sandbox = sandbox::open(config, plan, scratch.path(), settings.child_env.clone())?;
    progress.line(&format!(
        "quartermaster: commands run sandboxed ({})",
        sandbox.level()
    ));
    let keys = KeyContext::discover(plan.plan(), &config.checkout, config.allow_mentions);
    let actions = Engine::new(plan, forge.as_ref(), &settings, progress, &sandbox)
        .only(config.only.as_ref())
        .jobs(config.jobs, keys)
        .run(runtime.handle());
    let isolation = IsolationReport {
        level: sandbox.level(),
        fallbacks: sandbox.fallbacks().to_vec(),
        uid_base: sandbox.uid_base(),
        limits: Some(crate::report::LimitsReport {
            by: sandbox.limits_by().0.to_string(),
            note: sandbox.limits_by().1.map(str::to_string),
            limits: *sandbox.limits(),
        }),
    };
    drop(sandbox);
    drop(crate::harden::lock(&guard_slot).take());
    Ok(Ran {
        actions,
        forge_requests: forge.requests(),
        isolation,
    })
}

/// Hides the credentials CI persisted in the checkout while commands run.
fn guard_checkout(config: &RunConfig, progress: &Progress) -> Result<CredentialGuard, ConfigError> {
    let guard = CredentialGuard::neutralise(&config.checkout).map_err(|e| {
        ConfigError::new(format!(
            "cannot hide the credentials persisted in the checkout: {e}"
        ))
    })?;
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

fn settings(config: &RunConfig, scratch: &std::path::Path) -> Settings {
    let mut child_env = crate::process::child_env(std::env::vars_os(), &config.extra_env);
    crate::toolchain::env::apply(&mut child_env, config.toolchain_install, &config.extra_env);
    Settings {
        dry_run: config.dry_run,
        min_confidence: config.min_confidence,
        command_timeout: config.command_timeout,
        bot_label: config.bot_label.clone(),
        author: config.author.clone(),
        draft: config.draft,
        allow_mentions: config.allow_mentions,
        child_env,
        secrets: secret_forms(config),
        registry_hosts: config.registry_hosts.clone(),
        scratch: scratch.to_path_buf(),
        toolchain_policy: config.toolchain_policy,
    }
}

/// The token in the forms it may travel in.
fn secret_forms(config: &RunConfig) -> Vec<String> {
    config
        .token
        .as_ref()
        .map(|t| crate::config::secret_forms(t.expose_secret()))
        .unwrap_or_default()
}
