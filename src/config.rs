//! Inputs: command-line flags, then `QM_*` environment variables, then what the CI environment
//! implies, then defaults.
//!
//! GitHub sets every declared action input, unset ones as `""`; GitLab components map their inputs
//! to `QM_*` themselves. An empty variable therefore means "unset" everywhere. The token is only
//! ever read from the environment (`QM_TOKEN`, else `GITHUB_TOKEN` / `GITLAB_TOKEN`), never from a
//! flag, where it would show in process listings.

use crate::git::Identity;
use secrecy::SecretString;
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// `QM_*` variables, as envy reads them (every value a string, empty meaning unset).
#[derive(Debug, Default, Deserialize)]
pub struct QmEnv {
    pub plan: Option<String>,
    pub checkout: Option<String>,
    pub mission: Option<String>,
    pub missions_dir: Option<String>,
    pub forge: Option<String>,
    pub forge_dir: Option<String>,
    pub remote: Option<String>,
    pub report: Option<String>,
    pub summary: Option<String>,
    pub dry_run: Option<String>,
    pub min_confidence: Option<String>,
    pub command_timeout: Option<String>,
    pub bot_label: Option<String>,
    pub git_author: Option<String>,
    pub token: Option<String>,
    pub extra_env: Option<String>,
    pub draft: Option<String>,
    pub allow_mentions: Option<String>,
    pub forge_write_interval: Option<String>,
    pub forge_max_wait: Option<String>,
    /// Set by the GitHub Action: whether `token` is the workflow's own `GITHUB_TOKEN`.
    pub token_is_default: Option<String>,
}

/// The CI variables Quartermaster looks at.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct CiEnv {
    pub github_actions: Option<String>,
    pub github_workspace: Option<String>,
    pub github_token: Option<String>,
    pub github_api_url: Option<String>,
    pub github_server_url: Option<String>,
    pub github_repository: Option<String>,
    pub github_output: Option<String>,
    pub github_step_summary: Option<String>,
    pub gitlab_ci: Option<String>,
    pub gitlab_token: Option<String>,
    pub ci_job_token: Option<String>,
    pub ci_project_dir: Option<String>,
    pub ci_api_v4_url: Option<String>,
    pub ci_server_url: Option<String>,
    pub ci_project_id: Option<String>,
    pub ci_project_path: Option<String>,
}

fn set(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}

impl CiEnv {
    pub fn from_env() -> Self {
        envy::from_env().unwrap_or_default()
    }

    pub fn on_github(&self) -> bool {
        set(&self.github_actions) == Some("true")
    }

    pub fn on_gitlab(&self) -> bool {
        set(&self.gitlab_ci) == Some("true")
    }
}

impl QmEnv {
    pub fn from_env() -> Result<Self, ConfigError> {
        envy::prefixed("QM_")
            .from_env()
            .map_err(|e| ConfigError::Invalid(format!("QM_* environment: {e}")))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{0}")]
    Invalid(String),
}

fn invalid(message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid(message.into())
}

/// Which forge to talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForgeKind {
    Local,
    Github,
    Gitlab,
}

impl ForgeKind {
    pub fn name(self) -> &'static str {
        match self {
            ForgeKind::Local => "local",
            ForgeKind::Github => "github",
            ForgeKind::Gitlab => "gitlab",
        }
    }
}

/// Flags of `quartermaster run` (all optional: each falls back to its `QM_*` variable).
#[derive(Debug, Default, Clone)]
pub struct RunFlags {
    pub plan: Option<PathBuf>,
    pub checkout: Option<PathBuf>,
    pub mission: Option<String>,
    pub missions_dir: Option<PathBuf>,
    pub forge: Option<String>,
    pub forge_dir: Option<PathBuf>,
    pub remote: Option<String>,
    pub report: Option<PathBuf>,
    pub summary: Option<PathBuf>,
    pub dry_run: bool,
    pub min_confidence: Option<f64>,
    pub command_timeout: Option<String>,
    pub bot_label: Option<String>,
    pub git_author: Option<String>,
    pub extra_env: Vec<String>,
    pub draft: bool,
    pub allow_mentions: bool,
    pub forge_write_interval: Option<String>,
    pub forge_max_wait: Option<String>,
}

/// Everything `run` needs, resolved and checked.
#[derive(Debug)]
pub struct RunConfig {
    pub plan: PathBuf,
    pub checkout: PathBuf,
    pub mission: String,
    pub missions_dir: Option<PathBuf>,
    pub forge: ForgeKind,
    pub forge_dir: Option<PathBuf>,
    pub remote: String,
    pub report: Option<PathBuf>,
    pub summary: Option<PathBuf>,
    pub dry_run: bool,
    pub min_confidence: f64,
    pub command_timeout: Duration,
    pub bot_label: String,
    pub author: Identity,
    pub token: Option<SecretString>,
    /// Where the token came from, for messages (`QM_TOKEN`, `GITHUB_TOKEN`, ...).
    pub token_source: Option<&'static str>,
    pub extra_env: Vec<String>,
    pub draft: bool,
    pub allow_mentions: bool,
    /// Minimum time between two write requests to the forge's API.
    pub forge_write_interval: Duration,
    /// Longest rate-limit wait honoured before the forge budget counts as exhausted.
    pub forge_max_wait: Duration,
    /// Whether the token is the workflow's default `GITHUB_TOKEN` (PRs it opens run no CI).
    pub token_is_default: bool,
    pub ci: CiEnv,
}

pub const DEFAULT_MIN_CONFIDENCE: f64 = 0.5;
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(900);
pub const DEFAULT_BOT_LABEL: &str = "quartermaster";
pub const DEFAULT_FORGE_WRITE_INTERVAL: Duration = Duration::from_secs(1);
pub const DEFAULT_FORGE_MAX_WAIT: Duration = Duration::from_secs(90);
/// The identity GitHub shows as "github-actions[bot]"; what create-pull-request commits as.
pub const GITHUB_BOT_AUTHOR: &str =
    "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>";
pub const DEFAULT_AUTHOR: &str = "Quartermaster <quartermaster@noreply.invalid>";

/// Variables that hold forge credentials: never handed to agent commands, whatever extra-env says.
pub const TOKEN_VARIABLES: &[&str] = &[
    "QM_TOKEN",
    "GITHUB_TOKEN",
    "GITLAB_TOKEN",
    "CI_JOB_TOKEN",
    "INPUT_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "CI_REGISTRY_PASSWORD",
];

fn parse_bool(name: &str, value: &str) -> Result<bool, ConfigError> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(invalid(format!(
            "{name} must be true or false, not `{value}`"
        ))),
    }
}

/// Parses `90`, `90s`, `15m`, `1h` (humantime).
pub fn parse_duration(name: &str, value: &str) -> Result<Duration, ConfigError> {
    let d = parse_duration_or_zero(name, value)?;
    if d.is_zero() || d > Duration::from_secs(24 * 3600) {
        return Err(invalid(format!("{name} must be between 1s and 24h")));
    }
    Ok(d)
}

/// Like [`parse_duration`], but `0` is allowed (no delay).
fn parse_duration_or_zero(name: &str, value: &str) -> Result<Duration, ConfigError> {
    let d = if value.bytes().all(|b| b.is_ascii_digit()) {
        value
            .parse::<u64>()
            .map(Duration::from_secs)
            .map_err(|e| invalid(format!("{name}: {e}")))?
    } else {
        humantime::parse_duration(value).map_err(|e| {
            invalid(format!(
                "{name} must be a duration like 600, 10m or 1h: {e}"
            ))
        })?
    };
    if d > Duration::from_secs(24 * 3600) {
        return Err(invalid(format!("{name} must be at most 24h")));
    }
    Ok(d)
}

impl RunConfig {
    /// Resolves flags over `QM_*` variables over CI defaults, and checks the result.
    pub fn resolve(
        flags: RunFlags,
        qm: &QmEnv,
        ci: CiEnv,
        cwd: PathBuf,
    ) -> Result<Self, ConfigError> {
        let plan = flags
            .plan
            .or_else(|| set(&qm.plan).map(PathBuf::from))
            .ok_or_else(|| invalid("no plan given: pass --plan FILE or set QM_PLAN"))?;
        let checkout = flags
            .checkout
            .or_else(|| set(&qm.checkout).map(PathBuf::from))
            .or_else(|| set(&ci.github_workspace).map(PathBuf::from))
            .or_else(|| set(&ci.ci_project_dir).map(PathBuf::from))
            .unwrap_or(cwd);
        let forge_name = flags
            .forge
            .or_else(|| set(&qm.forge).map(String::from))
            .unwrap_or_else(|| "auto".into());
        let forge = match forge_name.as_str() {
            "auto" if ci.on_github() => ForgeKind::Github,
            "auto" if ci.on_gitlab() => ForgeKind::Gitlab,
            "auto" | "local" => ForgeKind::Local,
            "github" => ForgeKind::Github,
            "gitlab" => ForgeKind::Gitlab,
            other => {
                return Err(invalid(format!(
                    "--forge must be auto, local, github or gitlab, not `{other}`"
                )));
            }
        };
        let dry_run = flags.dry_run
            || set(&qm.dry_run)
                .map(|v| parse_bool("QM_DRY_RUN", v))
                .transpose()?
                .unwrap_or(false);
        let min_confidence = match flags.min_confidence {
            Some(v) => v,
            None => set(&qm.min_confidence)
                .map(|v| {
                    v.parse::<f64>().map_err(|_| {
                        invalid(format!("QM_MIN_CONFIDENCE must be a number, not `{v}`"))
                    })
                })
                .transpose()?
                .unwrap_or(DEFAULT_MIN_CONFIDENCE),
        };
        if !(0.0..=1.0).contains(&min_confidence) {
            return Err(invalid(format!(
                "min-confidence must be between 0 and 1, not {min_confidence}"
            )));
        }
        let command_timeout = match flags
            .command_timeout
            .as_deref()
            .or_else(|| set(&qm.command_timeout))
        {
            Some(v) => parse_duration("command-timeout", v)?,
            None => DEFAULT_COMMAND_TIMEOUT,
        };
        let bot_label = flags
            .bot_label
            .or_else(|| set(&qm.bot_label).map(String::from))
            .unwrap_or_else(|| DEFAULT_BOT_LABEL.into());
        if bot_label.is_empty()
            || bot_label.chars().count() > 50
            || bot_label.contains(',')
            || bot_label.trim() != bot_label
            || bot_label.chars().any(char::is_control)
        {
            return Err(invalid(format!(
                "bot label `{bot_label}` must be 1-50 characters, without commas or surrounding spaces"
            )));
        }
        let author_text = flags
            .git_author
            .or_else(|| set(&qm.git_author).map(String::from))
            .unwrap_or_else(|| {
                if forge == ForgeKind::Github {
                    GITHUB_BOT_AUTHOR.into()
                } else {
                    DEFAULT_AUTHOR.into()
                }
            });
        let author = Identity::parse(&author_text).ok_or_else(|| {
            invalid(format!(
                "git author `{author_text}` must look like `Name <email@example.com>`"
            ))
        })?;
        let (token, token_source) = if let Some(t) = set(&qm.token) {
            (Some(t.to_string()), Some("QM_TOKEN"))
        } else if let Some(t) = set(&ci.github_token).filter(|_| forge != ForgeKind::Gitlab) {
            (Some(t.to_string()), Some("GITHUB_TOKEN"))
        } else if let Some(t) = set(&ci.gitlab_token).filter(|_| forge != ForgeKind::Github) {
            (Some(t.to_string()), Some("GITLAB_TOKEN"))
        } else {
            (None, None)
        };
        let mut extra_env = flags.extra_env;
        if let Some(list) = set(&qm.extra_env) {
            extra_env.extend(
                list.split([',', '\n', ' '])
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from),
            );
        }
        for name in &extra_env {
            let valid = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(invalid(format!(
                    "extra-env: `{name}` is not a variable name"
                )));
            }
            if TOKEN_VARIABLES.contains(&name.as_str()) {
                return Err(invalid(format!(
                    "extra-env: `{name}` holds forge credentials and is never passed to agent commands"
                )));
            }
            if let (Some(t), Ok(value)) = (&token, std::env::var(name))
                && !value.is_empty()
                && value == *t
            {
                return Err(invalid(format!(
                    "extra-env: `{name}` holds the forge token and is never passed to agent commands"
                )));
            }
        }
        let duration =
            |flag: Option<String>, env: &Option<String>, name: &str, default: Duration| match flag
                .as_deref()
                .or_else(|| set(env))
            {
                Some(v) => parse_duration_or_zero(name, v),
                None => Ok(default),
            };
        let forge_write_interval = duration(
            flags.forge_write_interval,
            &qm.forge_write_interval,
            "forge-write-interval",
            DEFAULT_FORGE_WRITE_INTERVAL,
        )?;
        let forge_max_wait = duration(
            flags.forge_max_wait,
            &qm.forge_max_wait,
            "forge-max-wait",
            DEFAULT_FORGE_MAX_WAIT,
        )?;
        let bool_flag =
            |flag: bool, name: &str, value: &Option<String>| -> Result<bool, ConfigError> {
                Ok(flag
                    || set(value)
                        .map(|v| parse_bool(name, v))
                        .transpose()?
                        .unwrap_or(false))
            };
        Ok(Self {
            plan,
            checkout,
            mission: flags
                .mission
                .or_else(|| set(&qm.mission).map(String::from))
                .unwrap_or_else(|| crate::mission::DEFAULT_MISSION.into()),
            missions_dir: flags
                .missions_dir
                .or_else(|| set(&qm.missions_dir).map(PathBuf::from)),
            forge,
            forge_dir: flags
                .forge_dir
                .or_else(|| set(&qm.forge_dir).map(PathBuf::from)),
            remote: flags
                .remote
                .or_else(|| set(&qm.remote).map(String::from))
                .unwrap_or_else(|| "origin".into()),
            report: flags.report.or_else(|| set(&qm.report).map(PathBuf::from)),
            summary: flags
                .summary
                .or_else(|| set(&qm.summary).map(PathBuf::from)),
            dry_run,
            min_confidence,
            command_timeout,
            bot_label,
            author,
            token: token.map(SecretString::from),
            token_source,
            extra_env,
            draft: bool_flag(flags.draft, "QM_DRAFT", &qm.draft)?,
            allow_mentions: bool_flag(
                flags.allow_mentions,
                "QM_ALLOW_MENTIONS",
                &qm.allow_mentions,
            )?,
            forge_write_interval,
            forge_max_wait,
            token_is_default: token_source == Some("GITHUB_TOKEN")
                || bool_flag(false, "QM_TOKEN_IS_DEFAULT", &qm.token_is_default)?,
            ci,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret;

    fn flags(plan: &str) -> RunFlags {
        RunFlags {
            plan: Some(plan.into()),
            ..RunFlags::default()
        }
    }

    #[test]
    fn defaults() {
        let c = RunConfig::resolve(
            flags("p.json"),
            &QmEnv::default(),
            CiEnv::default(),
            "/w".into(),
        )
        .unwrap();
        assert_eq!(c.checkout, PathBuf::from("/w"));
        assert_eq!(c.forge, ForgeKind::Local);
        assert_eq!(c.min_confidence, 0.5);
        assert_eq!(c.command_timeout, Duration::from_secs(900));
        assert_eq!(c.bot_label, "quartermaster");
        assert_eq!(c.author.to_string(), DEFAULT_AUTHOR);
        assert_eq!(c.mission, "deps");
        assert!(c.token.is_none());
    }

    #[test]
    fn flags_beat_environment_which_beats_ci() {
        let qm = QmEnv {
            checkout: Some("/from-env".into()),
            min_confidence: Some("0.7".into()),
            dry_run: Some("".into()),
            token: Some("qm-token".into()),
            ..QmEnv::default()
        };
        let ci = CiEnv {
            github_actions: Some("true".into()),
            github_workspace: Some("/github/workspace".into()),
            github_token: Some("gh-token".into()),
            ..CiEnv::default()
        };
        let mut f = flags("p.json");
        f.min_confidence = Some(0.9);
        let c = RunConfig::resolve(f, &qm, ci.clone(), "/w".into()).unwrap();
        assert_eq!(c.checkout, PathBuf::from("/from-env"));
        assert_eq!(c.min_confidence, 0.9);
        assert!(!c.dry_run, "an empty variable is unset");
        assert_eq!(c.forge, ForgeKind::Github);
        assert_eq!(c.author.to_string(), GITHUB_BOT_AUTHOR);
        assert_eq!(c.token.unwrap().expose_secret(), "qm-token");
        let c = RunConfig::resolve(flags("p.json"), &QmEnv::default(), ci, "/w".into()).unwrap();
        assert_eq!(c.checkout, PathBuf::from("/github/workspace"));
        assert_eq!(c.token_source, Some("GITHUB_TOKEN"));
    }

    #[test]
    fn refusals_name_the_input() {
        let cases: Vec<(QmEnv, &str)> = vec![
            (
                QmEnv {
                    forge: Some("bitbucket".into()),
                    ..Default::default()
                },
                "--forge must be auto, local, github or gitlab",
            ),
            (
                QmEnv {
                    min_confidence: Some("2".into()),
                    ..Default::default()
                },
                "min-confidence must be between 0 and 1",
            ),
            (
                QmEnv {
                    min_confidence: Some("high".into()),
                    ..Default::default()
                },
                "QM_MIN_CONFIDENCE must be a number",
            ),
            (
                QmEnv {
                    dry_run: Some("maybe".into()),
                    ..Default::default()
                },
                "QM_DRY_RUN must be true or false",
            ),
            (
                QmEnv {
                    command_timeout: Some("0".into()),
                    ..Default::default()
                },
                "between 1s and 24h",
            ),
            (
                QmEnv {
                    forge_max_wait: Some("2d".into()),
                    ..Default::default()
                },
                "forge-max-wait must be at most 24h",
            ),
            (
                QmEnv {
                    command_timeout: Some("soon".into()),
                    ..Default::default()
                },
                "must be a duration",
            ),
            (
                QmEnv {
                    bot_label: Some("a,b".into()),
                    ..Default::default()
                },
                "bot label `a,b`",
            ),
            (
                QmEnv {
                    git_author: Some("bot".into()),
                    ..Default::default()
                },
                "must look like `Name <email@example.com>`",
            ),
            (
                QmEnv {
                    extra_env: Some("GITHUB_TOKEN".into()),
                    ..Default::default()
                },
                "holds forge credentials",
            ),
            (
                QmEnv {
                    extra_env: Some("A-B".into()),
                    ..Default::default()
                },
                "is not a variable name",
            ),
        ];
        for (qm, expected) in cases {
            let err = RunConfig::resolve(flags("p.json"), &qm, CiEnv::default(), "/w".into())
                .unwrap_err();
            assert!(err.to_string().contains(expected), "{err} / {expected}");
        }
        let err = RunConfig::resolve(
            RunFlags::default(),
            &QmEnv::default(),
            CiEnv::default(),
            "/w".into(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "no plan given: pass --plan FILE or set QM_PLAN"
        );
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("t", "90").unwrap(), Duration::from_secs(90));
        assert_eq!(
            parse_duration("t", "15m").unwrap(),
            Duration::from_secs(900)
        );
    }
}
