//! `quartermaster run`: inputs to configuration, the run, and its outputs: the report, the summary,
//! the CI's files, and the exit code.

use super::fail;
use super::validate::{load_mission, read_plan};
use crate::ci::github;
use crate::ci::progress::Progress;
use crate::config::{CiEnv, ConfigError, Inputs, RunConfig, env_vars};
use crate::report::RunReport;
use crate::sandbox;
use crate::sink::terminal;
use secrecy::ExposeSecret;
use std::path::PathBuf;
use std::process::ExitCode;

pub(super) fn command(flags: Inputs) -> ExitCode {
    // Before the job token leaves the environment with every variable that holds it.
    let credentials = credential_holders();
    let (tokens, holders) = match take_tokens() {
        Ok(taken) => taken,
        Err(e) => return fail(&e),
    };
    init_logging();
    let vars = || std::env::vars().chain(tokens.iter().cloned());
    let config = match Inputs::from_vars(vars()).and_then(|mut env| {
        env.token_holders = holders;
        env.credential_holders = credentials;
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        RunConfig::resolve(flags.combine(env), CiEnv::from_vars(vars()), cwd)
    }) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let mission = match load_mission(Some(&config.mission), config.missions_dir.as_deref()) {
        Ok(m) => m,
        Err(e) => return fail(&e),
    };
    let progress = if config.ci.on_github() {
        Progress::github_actions()
    } else {
        Progress::stderr()
    };
    let (bytes, claimed) = match &config.named_plan {
        None => match read_plan(&config.plan) {
            Ok(b) => (b, None),
            Err(e) => return fail(&e),
        },
        Some(named) => match crate::app::named::claim(named, &progress) {
            Ok(claimed) => (claimed.plan().to_vec(), Some(claimed)),
            Err(e) => return fail(&e),
        },
    };
    if let Some(token) = &config.token
        && let Some(warning) = sandbox::parent_env(token.expose_secret()).warning()
    {
        eprintln!("{}", terminal(&format!("warning: {warning}")));
        progress.command(&github::warning(&warning));
    }
    let report = crate::app::run(&config, &mission, &bytes, &progress);
    // The named plan is answered like any other output: a write that fails is an error.
    let mut written = true;
    for e in claimed.map_or_else(Vec::new, |c| c.finish(&report, &progress)) {
        eprintln!("{}", terminal(&crate::hint::render(&e)));
        written = false;
    }
    written &= write_outputs(&config, &report, &progress);
    if report.signal.is_some() {
        crate::harden::wound_down();
    }
    ExitCode::from(if written {
        report.exit_code
    } else {
        report.exit_code.max(1)
    })
}

/// Writes the report, the summary and the CI's files, and shows the summary. Every output is
/// attempted: one that cannot be written does not cost the others. Whether all were written.
fn write_outputs(config: &RunConfig, report: &RunReport, progress: &Progress) -> bool {
    let markdown = report.to_markdown();
    let mut written = true;
    for (path, text) in [
        (&config.report, report.to_json()),
        (&config.summary, markdown.clone()),
    ] {
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
    if let Err(e) = github::publish(&config.ci, report, config.report.as_deref(), &markdown) {
        eprintln!("{}", terminal(&format!("error: {e}")));
        written = false;
    }
    progress.summary(&markdown);
    written
}

/// The token variables taken out of the environment, and the names of every variable that held
/// one of their values.
type TakenTokens = (Vec<(String, String)>, Vec<String>);

/// Takes the token variables out of the environment before any thread starts, and every other
/// variable holding one of their values: children, and anything reading `/proc/<pid>/environ`,
/// find none of them. Returns the tokens, and the names of the variables that held one (raw or
/// encoded), for the configuration.
fn take_tokens() -> Result<TakenTokens, ConfigError> {
    let setup = ConfigError::TokenHygiene;
    let mut taken = Vec::new();
    for name in env_vars::TAKEN_AT_START {
        if let Some(value) = sandbox::take_env(name).map_err(setup)? {
            taken.push((name.to_string(), value.to_string_lossy().into_owned()));
        }
    }
    // A short value would match unrelated variables; real tokens are long.
    let forms: Vec<String> = taken
        .iter()
        .filter(|(_, v)| v.len() >= 8)
        .flat_map(|(_, v)| crate::config::secret_forms(v))
        .collect();
    let holders: Vec<String> = std::env::vars_os()
        .filter(|(_, value)| {
            let value = value.to_string_lossy();
            forms.iter().any(|f| value.contains(f.as_str()))
        })
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect();
    for form in &forms {
        sandbox::wipe_value(form).map_err(setup)?;
    }
    Ok((taken, holders))
}

/// The variables that hold one of the run's CI credentials (raw or base64-encoded), and which:
/// `(variable, credential)`.
fn credential_holders() -> Vec<(String, String)> {
    let mut found = Vec::new();
    for credential in env_vars::CI_CREDENTIALS {
        // A short value would match unrelated variables; real credentials are long.
        let Some(secret) = std::env::var(credential).ok().filter(|v| v.len() >= 8) else {
            continue;
        };
        let forms = crate::config::secret_forms(&secret);
        for (name, held) in std::env::vars_os() {
            let held = held.to_string_lossy();
            if name != *credential && forms.iter().any(|f| held.contains(f.as_str())) {
                found.push((name.to_string_lossy().into_owned(), credential.to_string()));
            }
        }
    }
    found
}

fn init_logging() {
    let builder = tracing_subscriber::fmt().with_writer(std::io::stderr);
    // A log asked for (QM_LOG) says when each event happened since the start, to see where the
    // time goes; the default one (warnings) needs no clock.
    let _ = match tracing_subscriber::EnvFilter::try_from_env(env_vars::QM_LOG) {
        Ok(filter) => builder
            .with_env_filter(filter)
            .with_timer(tracing_subscriber::fmt::time::Uptime::default())
            .try_init(),
        Err(_) => builder
            .with_env_filter(tracing_subscriber::EnvFilter::new("warn"))
            .without_time()
            .try_init(),
    };
}
