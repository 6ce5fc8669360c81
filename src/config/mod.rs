//! Inputs: command-line flags, then `QM_*` environment variables, then what the CI environment
//! implies, then defaults; resolved once into a checked [`RunConfig`].

mod checkout;
mod ci;
pub(crate) mod env_vars;
mod error;
mod forge;
mod inputs;
mod named;
mod values;

pub(crate) use checkout::{checkout, require_repository};
pub(crate) use ci::CiEnv;
pub(crate) use error::ConfigError;
pub(crate) use inputs::Inputs;
pub(crate) use named::{NamedPlanConfig, plans_dir};
pub(crate) use values::{parse_bool, parse_duration};

use crate::forge::ForgeKind;
use crate::git::Identity;
use crate::sandbox::{Isolation, Seed};
use crate::scale::Only;
use secrecy::SecretString;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;
use values::parse_duration_or_zero;

/// Everything `run` needs, resolved and checked.
#[derive(Debug)]
pub(crate) struct RunConfig {
    pub plan: PathBuf,
    /// The docker-agent named plan `plan` names (`docker-agent:<name>`), if it names one.
    pub named_plan: Option<NamedPlanConfig>,
    pub checkout: PathBuf,
    pub mission: String,
    pub(crate) missions_dir: Option<PathBuf>,
    pub forge: ForgeKind,
    pub(crate) forge_dir: Option<PathBuf>,
    /// The checkout's remote branches go to on the local forge; `None`: its own repository.
    pub remote: Option<String>,
    pub report: Option<PathBuf>,
    pub summary: Option<PathBuf>,
    pub dry_run: bool,
    pub min_confidence: f64,
    pub command_timeout: Duration,
    pub bot_label: String,
    pub author: Identity,
    pub token: Option<SecretString>,
    pub extra_env: Vec<String>,
    /// Registry hosts lock files may resolve from, besides those the base already uses.
    pub registry_hosts: Vec<String>,
    /// How commands are contained.
    pub isolation: Isolation,
    /// The first sandbox uid (root only); unset, the first free range from
    /// [`crate::sandbox::DEFAULT_UID_BASE`] on.
    pub(crate) sandbox_uid_base: Option<u32>,
    /// How units' caches are kept.
    pub(crate) caches: CacheSettings,
    /// Whether workspaces are copy-on-write layers where the machine allows them.
    pub(crate) layered_workspaces: bool,
    /// Tool configurations every unit's HOME is seeded with.
    pub(crate) tool_configs: Vec<Seed>,
    /// Directories commands may read where the sandbox would hide them.
    pub(crate) expose_dirs: Vec<PathBuf>,
    /// What each unit's commands may take of the runner.
    pub limits: crate::sandbox::Limits,
    pub draft: bool,
    /// Commits are made by the forge, through its API, so that it signs them.
    pub sign_commits: bool,
    pub allow_mentions: bool,
    /// Minimum time between two write requests to the forge's API.
    pub(crate) forge_write_interval: Duration,
    /// Longest rate-limit wait honoured before the forge budget counts as exhausted.
    pub(crate) forge_max_wait: Duration,
    /// Whether the token is the workflow's default `GITHUB_TOKEN` (PRs it opens run no CI).
    pub(crate) token_is_default: bool,
    /// How many actions may run at once (each in its own sandbox slot).
    pub jobs: NonZeroUsize,
    /// What a declared toolchain that differs from the one found does to a unit.
    pub toolchain_policy: crate::toolchain::ToolchainPolicy,
    /// Whether version managers may download the declared toolchain.
    pub(crate) toolchain_install: bool,
    /// The actions this run is limited to (a shard), checked against the plan once it is read.
    pub only: Option<Only>,
    /// The repository to work on instead of the CI job's own (a fleet job's).
    pub repository: Option<String>,
    /// The operator's policy file, instead of the default branch's `.quartermaster.toml`.
    pub policy: Option<PathBuf>,
    /// The OSV service (no trailing `/`).
    pub(crate) osv_url: String,
    /// Where release notes are read.
    pub(crate) notes_apis: crate::supply::notes::NotesApis,
    pub ci: CiEnv,
}

pub(crate) const DEFAULT_MIN_CONFIDENCE: f64 = 0.5;
pub(crate) const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(900);
pub(crate) const DEFAULT_BOT_LABEL: &str = "quartermaster";
pub(crate) const DEFAULT_FORGE_WRITE_INTERVAL: Duration = Duration::from_secs(1);
pub(crate) const DEFAULT_FORGE_MAX_WAIT: Duration = Duration::from_secs(90);
/// The identity GitHub shows as "github-actions[bot]"; what create-pull-request commits as.
pub(crate) const GITHUB_BOT_AUTHOR: &str =
    "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>";
pub(crate) const DEFAULT_AUTHOR: &str = "Quartermaster <quartermaster@noreply.invalid>";

impl RunConfig {
    /// Resolves combined inputs (flags over `QM_*` variables) over CI defaults, and checks them.
    pub(crate) fn resolve(inputs: Inputs, ci: CiEnv, cwd: PathBuf) -> Result<Self, ConfigError> {
        let plan = inputs
            .plan
            .clone()
            .ok_or_else(|| ConfigError::new("no plan given: pass --plan FILE or set QM_PLAN"))?;
        let forge = forge_kind(inputs.forge.as_deref(), &ci)?;
        let (token, token_source) = token(&inputs, &ci, forge);
        let extra_env = extra_env(
            inputs.extra_env.clone(),
            &inputs.token_holders,
            &inputs.credential_holders,
        )?;
        let flag = |name: &str, value: &Option<String>| -> Result<bool, ConfigError> {
            value.as_deref().map_or(Ok(false), |v| parse_bool(name, v))
        };
        Ok(Self {
            named_plan: named::resolve(&inputs, &ci)?,
            checkout: checkout(&inputs, &ci, cwd),
            mission: inputs
                .mission
                .clone()
                .unwrap_or_else(|| crate::mission::DEFAULT_MISSION.into()),
            missions_dir: inputs.missions_dir.clone(),
            forge_dir: inputs.forge_dir.clone(),
            remote: inputs.remote.clone(),
            report: inputs.report.clone(),
            summary: inputs.summary.clone(),
            dry_run: flag("QM_DRY_RUN", &inputs.dry_run)?,
            min_confidence: min_confidence(inputs.min_confidence.as_deref())?,
            command_timeout: match inputs.command_timeout.as_deref() {
                Some(v) => parse_duration("command-timeout", v)?,
                None => DEFAULT_COMMAND_TIMEOUT,
            },
            bot_label: bot_label(inputs.bot_label.clone())?,
            author: author(inputs.git_author.clone(), forge)?,
            token_is_default: token_source == Some("GITHUB_TOKEN")
                || flag(env_vars::QM_TOKEN_IS_DEFAULT, &inputs.token_is_default)?,
            token: token.map(SecretString::from),
            extra_env,
            registry_hosts: inputs.registry_hosts.clone(),
            isolation: parsed(inputs.isolation.as_deref().unwrap_or("auto"))?,
            sandbox_uid_base: uid_base(inputs.sandbox_uid_base.as_deref())?,
            caches: CacheSettings::of(&inputs)?,
            layered_workspaces: layered_workspaces(&inputs)?,
            expose_dirs: inputs.expose_dirs.clone(),
            limits: limits(&inputs.limits)?,
            tool_configs: inputs
                .tool_config
                .iter()
                .map(|s| parsed(s))
                .collect::<Result<_, _>>()?,
            draft: flag("QM_DRAFT", &inputs.draft)?,
            sign_commits: flag("QM_SIGN_COMMITS", &inputs.sign_commits)?,
            allow_mentions: flag("QM_ALLOW_MENTIONS", &inputs.allow_mentions)?,
            forge_write_interval: duration(
                &inputs.forge_write_interval,
                "forge-write-interval",
                DEFAULT_FORGE_WRITE_INTERVAL,
            )?,
            forge_max_wait: duration(
                &inputs.forge_max_wait,
                "forge-max-wait",
                DEFAULT_FORGE_MAX_WAIT,
            )?,
            jobs: jobs(inputs.jobs.as_deref())?,
            toolchain_policy: toolchain_policy(inputs.toolchain_policy.as_deref())?,
            toolchain_install: flag("QM_TOOLCHAIN_INSTALL", &inputs.toolchain_install)?,
            only: only(inputs.only.as_deref())?,
            repository: inputs.repository.clone(),
            policy: inputs.policy.clone(),
            osv_url: service_url(
                "osv-url",
                inputs.osv_url.as_deref(),
                crate::supply::osv::DEFAULT_URL,
            )?,
            notes_apis: notes_apis(&inputs)?,
            plan,
            forge,
            ci,
        })
    }
}

/// `--only` (`None`: every action).
fn only(value: Option<&str>) -> Result<Option<Only>, ConfigError> {
    Ok(Only::parse(value.unwrap_or(""))?)
}

/// `--sandbox-uid-base`, when given.
fn uid_base(value: Option<&str>) -> Result<Option<u32>, ConfigError> {
    value
        .map(|v| {
            v.parse().map_err(|_| {
                ConfigError::new(format!("--sandbox-uid-base must be a uid, not `{v}`"))
            })
        })
        .transpose()
}

/// `--caches` and `--cache-dir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CacheSettings {
    /// Whether units get warm caches where the machine allows them (unless `cold` is asked for).
    pub warm: bool,
    /// The CI's cache directory the warm-up starts from and leaves its result in.
    pub dir: Option<PathBuf>,
}

impl CacheSettings {
    fn of(inputs: &Inputs) -> Result<CacheSettings, ConfigError> {
        let warm = match inputs.caches.as_deref().unwrap_or("warm") {
            "warm" => true,
            "cold" => false,
            other => {
                return Err(ConfigError::new(format!(
                    "--caches must be warm or cold, not `{other}`"
                )));
            }
        };
        Ok(CacheSettings {
            warm,
            dir: inputs.cache_dir.clone(),
        })
    }
}

/// `--workspaces`: layered unless `checkouts` is asked for.
fn layered_workspaces(inputs: &Inputs) -> Result<bool, ConfigError> {
    match inputs.workspaces.as_deref().unwrap_or("layered") {
        "layered" => Ok(true),
        "checkouts" => Ok(false),
        other => Err(ConfigError::new(format!(
            "--workspaces must be layered or checkouts, not `{other}`"
        ))),
    }
}

/// A service's base URL: `http(s)://…`, without a trailing `/` (`QM_OSV_URL` is documented so).
fn service_url(name: &str, value: Option<&str>, default: &str) -> Result<String, ConfigError> {
    let Some(value) = value else {
        return Ok(default.to_string());
    };
    let trimmed = value.trim().trim_end_matches('/');
    let valid = url::Url::parse(trimmed)
        .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
    if !valid {
        return Err(ConfigError::with_hint(
            format!(
                "--{name} must be an http(s) URL, not `{}`",
                crate::finding::clip(value)
            ),
            "give the service's base URL, such as https://api.osv.dev",
        ));
    }
    Ok(trimmed.to_string())
}

fn notes_apis(inputs: &Inputs) -> Result<crate::supply::notes::NotesApis, ConfigError> {
    let defaults = crate::supply::notes::NotesApis::default();
    Ok(crate::supply::notes::NotesApis {
        github: service_url(
            "release-notes-github-api",
            inputs.release_notes_github_api.as_deref(),
            &defaults.github,
        )?,
        gitlab: service_url(
            "release-notes-gitlab-api",
            inputs.release_notes_gitlab_api.as_deref(),
            &defaults.gitlab,
        )?,
    })
}

/// The most actions at once that `--jobs` accepts: the forge's write pacing, not the machine, is
/// what limits a run beyond it.
pub(crate) const MAX_JOBS: usize = 16;

/// `--limit`s over the defaults.
fn limits(items: &[String]) -> Result<crate::sandbox::Limits, ConfigError> {
    let mut limits = crate::sandbox::Limits::default();
    for item in items {
        limits.set(item).map_err(|e| {
            ConfigError::with_hint(
                e.to_string(),
                "give a limit as KEY=VALUE, such as memory=4GiB or processes=2048; `off` lifts it",
            )
        })?;
    }
    Ok(limits)
}

/// `--jobs`: given, else the machine's cores, at most 4.
fn jobs(value: Option<&str>) -> Result<NonZeroUsize, ConfigError> {
    let Some(value) = value else {
        let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
        return Ok(NonZeroUsize::new(cores.min(4)).unwrap_or(NonZeroUsize::MIN));
    };
    value
        .trim()
        .parse::<NonZeroUsize>()
        .ok()
        .filter(|n| n.get() <= MAX_JOBS)
        .ok_or_else(|| {
            ConfigError::with_hint(
                format!("--jobs must be a number from 1 to {MAX_JOBS}, not `{value}`"),
                "give how many actions may run at once, such as 4; 1 runs them one after another",
            )
        })
}

/// `--toolchain-policy`: given, else `warn`.
fn toolchain_policy(value: Option<&str>) -> Result<crate::toolchain::ToolchainPolicy, ConfigError> {
    value.map_or(Ok(crate::toolchain::ToolchainPolicy::Warn), |v| {
        v.parse().map_err(|e: crate::toolchain::UnknownPolicy| {
            ConfigError::with_hint(
                e.to_string(),
                "warn records a mismatch in the report and the PR; fail stops the unit",
            )
        })
    })
}

/// A value parsed by its own type, whose error names the problem.
fn parsed<T: std::str::FromStr<Err = crate::sandbox::SandboxError>>(
    value: &str,
) -> Result<T, ConfigError> {
    Ok(value.parse()?)
}

fn forge_kind(name: Option<&str>, ci: &CiEnv) -> Result<ForgeKind, ConfigError> {
    Ok(match name.unwrap_or("auto") {
        "auto" if ci.on_github() => ForgeKind::Github,
        "auto" if ci.on_gitlab() => ForgeKind::Gitlab,
        "auto" | "local" => ForgeKind::Local,
        "github" => ForgeKind::Github,
        "gitlab" => ForgeKind::Gitlab,
        other => {
            return Err(ConfigError::new(format!(
                "--forge must be auto, local, github or gitlab, not `{other}`"
            )));
        }
    })
}

fn min_confidence(value: Option<&str>) -> Result<f64, ConfigError> {
    let value = match value {
        Some(v) => v.parse::<f64>().map_err(|_| {
            ConfigError::new(format!(
                "--min-confidence or QM_MIN_CONFIDENCE must be a number, not `{v}`"
            ))
        })?,
        None => DEFAULT_MIN_CONFIDENCE,
    };
    if !(0.0..=1.0).contains(&value) {
        return Err(ConfigError::new(format!(
            "min-confidence must be between 0 and 1, not {value}"
        )));
    }
    Ok(value)
}

fn bot_label(value: Option<String>) -> Result<String, ConfigError> {
    let label = value.unwrap_or_else(|| DEFAULT_BOT_LABEL.into());
    match crate::plan::label::problem(&label) {
        Some((_, why)) => Err(ConfigError::new(format!("bot label `{label}`: {why}"))),
        None => Ok(label),
    }
}

fn author(value: Option<String>, forge: ForgeKind) -> Result<Identity, ConfigError> {
    let text = value.unwrap_or_else(|| {
        if forge == ForgeKind::Github {
            GITHUB_BOT_AUTHOR.into()
        } else {
            DEFAULT_AUTHOR.into()
        }
    });
    Identity::parse(&text).ok_or_else(|| {
        ConfigError::new(format!(
            "git author `{text}` must look like `Name <email@example.com>`"
        ))
    })
}

/// The token and the variable it came from: `QM_TOKEN`, else the forge's own variable.
fn token(inputs: &Inputs, ci: &CiEnv, forge: ForgeKind) -> (Option<String>, Option<&'static str>) {
    if let Some(t) = &inputs.token {
        (Some(t.clone()), Some(env_vars::QM_TOKEN))
    } else if let Some(t) = ci
        .github_token
        .clone()
        .filter(|_| forge != ForgeKind::Gitlab)
    {
        (Some(t), Some("GITHUB_TOKEN"))
    } else if let Some(t) = ci
        .gitlab_token
        .clone()
        .filter(|_| forge != ForgeKind::Github)
    {
        (Some(t), Some("GITLAB_TOKEN"))
    } else {
        (None, None)
    }
}

/// The token as it may travel: raw, and base64 in HTTP basic credentials (what logs and captured
/// output are redacted of, and what no variable handed to a command may hold).
pub(crate) fn secret_forms(token: &str) -> Vec<String> {
    use base64::Engine as _;
    let b64 = |s: String| base64::engine::general_purpose::STANDARD.encode(s);
    vec![
        token.to_string(),
        b64(format!("x-access-token:{token}")),
        b64(format!("oauth2:{token}")),
        b64(format!(":{token}")),
        b64(token.to_string()),
    ]
}

/// Checks the extra variables for children: names only, and never one holding credentials
/// (`holders`: the variables whose values contained the token, raw or encoded, when Quartermaster
/// started; `credentials`: those that held one of the run's CI credentials).
fn extra_env(
    names: Vec<String>,
    holders: &[String],
    credentials: &[(String, String)],
) -> Result<Vec<String>, ConfigError> {
    for name in &names {
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(ConfigError::new(format!(
                "extra-env: `{name}` is not a variable name"
            )));
        }
        if env_vars::TOKEN_VARIABLES.contains(&name.as_str()) {
            return Err(ConfigError::new(format!(
                "extra-env: `{name}` holds forge credentials and is never passed to agent commands"
            )));
        }
        if let Some((_, credential)) = credentials.iter().find(|(holder, _)| holder == name) {
            return Err(ConfigError::with_hint(
                format!(
                    "extra-env: `{name}` holds the run's CI credential {credential} and is never passed to agent commands"
                ),
                "pass only variables that hold no credential; a command that needs a registry token gets it through --tool-config",
            ));
        }
        if holders.contains(name) {
            return Err(ConfigError::new(format!(
                "extra-env: `{name}` holds the forge token and is never passed to agent commands"
            )));
        }
    }
    Ok(names)
}

fn duration(
    value: &Option<String>,
    name: &str,
    default: Duration,
) -> Result<Duration, ConfigError> {
    match value.as_deref() {
        Some(v) => parse_duration_or_zero(name, v),
        None => Ok(default),
    }
}

#[cfg(test)]
mod tests;
