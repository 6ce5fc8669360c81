//! One layer of inputs for `run`: each value given as a flag, else as its `QM_*` variable.
//!
//! Flags and variables fill the same struct (clap for the one, envy for the other) and
//! [`Inputs::combine`] is the one rule that layers them; [`super::RunConfig::resolve`] then parses
//! and checks the result and adds what the CI environment implies. GitHub sets every declared
//! action input, unset ones as `""`, and GitLab components map their inputs to `QM_*` themselves,
//! so an empty variable means "unset" everywhere.

use super::env_vars;
use super::error::ConfigError;
use clap::Args;
use serde::{Deserialize, Deserializer};
use std::path::PathBuf;

/// Every input of `quartermaster run`. The token is only ever read from the environment, never
/// from a flag, where it would show in process listings.
#[derive(Debug, Default, Clone, Args, Deserialize)]
#[serde(default)]
pub struct Inputs {
    /// Required: the plan to execute: a file, `-` for standard input, or `docker-agent:<name>` for
    /// a docker-agent named plan [env: QM_PLAN].
    #[arg(long, value_name = "FILE|-")]
    #[serde(deserialize_with = "set")]
    pub plan: Option<PathBuf>,
    /// docker-agent's plans directory, for `--plan docker-agent:<name>` [env: QM_PLANS_DIR;
    /// default: ~/.cagent/plans].
    #[arg(long, value_name = "DIR")]
    #[serde(deserialize_with = "set")]
    pub plans_dir: Option<PathBuf>,
    /// The status a named plan must have to be claimed [env: QM_CLAIM_STATUS; default: ready].
    #[arg(long, value_name = "STATUS")]
    #[serde(deserialize_with = "set")]
    pub(crate) claim_status: Option<String>,
    /// The named plan that receives a named plan's result [env: QM_RESULT_PLAN; default:
    /// <name>-result].
    #[arg(long, value_name = "NAME")]
    #[serde(deserialize_with = "set")]
    pub(crate) result_plan: Option<String>,
    /// The repository checkout [env: QM_CHECKOUT; default: GITHUB_WORKSPACE, CI_PROJECT_DIR, or the
    /// clone the current directory is in].
    #[arg(long, value_name = "DIR")]
    #[serde(deserialize_with = "set")]
    pub checkout: Option<PathBuf>,
    /// Mission whose allowlist applies [env: QM_MISSION] [default: deps].
    #[arg(long)]
    #[serde(deserialize_with = "set")]
    pub mission: Option<String>,
    /// Directory of custom missions (`<DIR>/<name>/allowlist.json`), searched before the embedded
    /// ones [env: QM_MISSIONS_DIR].
    #[arg(long, value_name = "DIR")]
    #[serde(deserialize_with = "set")]
    pub(crate) missions_dir: Option<PathBuf>,
    /// Where PRs/MRs live: auto (github under GITHUB_ACTIONS, gitlab under GITLAB_CI, else
    /// local), local, github or gitlab [env: QM_FORGE].
    #[arg(long, value_name = "KIND")]
    #[serde(deserialize_with = "set")]
    pub forge: Option<String>,
    /// Directory of the local forge's records [env: QM_FORGE_DIR; default:
    /// <checkout>/.git/quartermaster-forge].
    #[arg(long, value_name = "DIR")]
    #[serde(deserialize_with = "set")]
    pub(crate) forge_dir: Option<PathBuf>,
    /// Git remote of the checkout that branches go to, for the local forge [env: QM_REMOTE;
    /// default: a bare repository of the local forge's own, in its directory].
    #[arg(long, value_name = "NAME")]
    #[serde(deserialize_with = "set")]
    pub remote: Option<String>,
    /// Write the JSON report here [env: QM_REPORT].
    #[arg(long, value_name = "FILE")]
    #[serde(deserialize_with = "set")]
    pub report: Option<PathBuf>,
    /// Write the Markdown summary here [env: QM_SUMMARY].
    #[arg(long, value_name = "FILE")]
    #[serde(deserialize_with = "set")]
    pub summary: Option<PathBuf>,
    /// Validate, run commands and tests, commit locally, but push, open and close nothing
    /// [env: QM_DRY_RUN].
    #[arg(long, num_args = 0, default_missing_value = "true")]
    #[serde(deserialize_with = "set")]
    pub dry_run: Option<String>,
    /// Actions below this confidence are skipped [env: QM_MIN_CONFIDENCE; default: 0.5].
    #[arg(long, value_name = "0..1")]
    #[serde(deserialize_with = "set")]
    pub min_confidence: Option<String>,
    /// Time limit of each command and test run, e.g. 600, 10m [env: QM_COMMAND_TIMEOUT;
    /// default: 15m].
    #[arg(long, value_name = "DURATION")]
    #[serde(deserialize_with = "set")]
    pub command_timeout: Option<String>,
    /// Label that marks Quartermaster's PRs and issues [env: QM_BOT_LABEL; default:
    /// quartermaster].
    #[arg(long, value_name = "LABEL")]
    #[serde(deserialize_with = "set")]
    pub bot_label: Option<String>,
    /// Commit identity, `Name <email>` [env: QM_GIT_AUTHOR].
    #[arg(long, value_name = "IDENTITY")]
    #[serde(deserialize_with = "set")]
    pub(crate) git_author: Option<String>,
    /// Pass this environment variable to commands and tests (repeatable) [env: QM_EXTRA_ENV,
    /// comma-separated].
    #[arg(long = "extra-env", value_name = "NAME")]
    #[serde(deserialize_with = "list")]
    pub extra_env: Vec<String>,
    /// A registry host lock files may resolve from, besides those the base lock files already use
    /// (repeatable) [env: QM_REGISTRY_HOSTS, comma-separated].
    #[arg(long = "registry-host", value_name = "HOST")]
    #[serde(deserialize_with = "list")]
    pub registry_hosts: Vec<String>,
    /// How commands are contained: auto (the strongest available), uid (root: a dedicated user
    /// per slot), namespaces (user, mount and PID namespaces) or none [env: QM_ISOLATION; default:
    /// auto].
    #[arg(long, value_name = "LEVEL")]
    #[serde(deserialize_with = "set")]
    pub isolation: Option<String>,
    /// First uid of the sandbox users, one per concurrent slot, when Quartermaster runs as root;
    /// refused when another run on the host holds it [env: QM_SANDBOX_UID_BASE; default: the
    /// first free range of 16 from 60900].
    #[arg(long, value_name = "UID")]
    #[serde(deserialize_with = "set")]
    pub(crate) sandbox_uid_base: Option<String>,
    /// warm: every unit starts from caches a warm-up filled on the base commit, each through a
    /// copy-on-write layer of its own (root with namespaces; elsewhere cold); cold: every unit
    /// starts from empty caches [env: QM_CACHES; default: warm].
    #[arg(long, value_name = "warm|cold")]
    #[serde(deserialize_with = "set")]
    pub(crate) caches: Option<String>,
    /// layered: each unit's workspace is a copy-on-write layer over one checkout of the base
    /// (root with namespaces; elsewhere checkouts); checkouts: each slot keeps a checkout of its
    /// own, brought back to the base between units [env: QM_WORKSPACES; default: layered].
    #[arg(long, value_name = "layered|checkouts")]
    #[serde(deserialize_with = "set")]
    pub(crate) workspaces: Option<String>,
    /// A directory the CI's cache restores and saves: the warm-up starts from it and leaves its
    /// result there for the next run [env: QM_CACHE_DIR].
    #[arg(long, value_name = "DIR")]
    #[serde(deserialize_with = "set")]
    pub(crate) cache_dir: Option<PathBuf>,
    /// A tool configuration copied read-only into every unit's fresh HOME, `TOOL=PATH`
    /// (repeatable; npmrc, yarnrc, yarnrc-yml, pnpm, cargo, pip, uv, poetry, go, bundle, gemrc)
    /// [env: QM_TOOL_CONFIG, comma-separated].
    #[arg(long = "tool-config", value_name = "TOOL=PATH")]
    #[serde(deserialize_with = "list")]
    pub tool_config: Vec<String>,
    /// A resource limit of every unit, `KEY=VALUE`: processes, memory, file-size, open-files,
    /// tmpfs or cpu-weight; `off` lifts one (repeatable) [env: QM_LIMITS, comma-separated;
    /// defaults: processes=8192, memory=3/4 of the machine's, file-size=8GiB, open-files=65536,
    /// tmpfs=1GiB, cpu-weight=50].
    #[arg(long = "limit", value_name = "KEY=VALUE")]
    #[serde(deserialize_with = "list")]
    pub limits: Vec<String>,
    /// A directory commands may read although it sits where the sandbox hides or replaces
    /// things (under HOME or /tmp): an on-disk registry or mirror (repeatable) [env:
    /// QM_EXPOSE_DIRS, comma-separated].
    #[arg(long = "expose-dir", value_name = "DIR")]
    #[serde(deserialize_with = "list")]
    pub(crate) expose_dirs: Vec<PathBuf>,
    /// Open PRs/MRs as drafts [env: QM_DRAFT].
    #[arg(long, num_args = 0, default_missing_value = "true")]
    #[serde(deserialize_with = "set")]
    pub draft: Option<String>,
    /// Have the forge make the commits through its API, so that it signs them (GitHub and
    /// GitLab) [env: QM_SIGN_COMMITS].
    #[arg(long, num_args = 0, default_missing_value = "true")]
    #[serde(deserialize_with = "set")]
    pub sign_commits: Option<String>,
    /// Let @mentions and #references in plan text notify people [env: QM_ALLOW_MENTIONS].
    #[arg(long, num_args = 0, default_missing_value = "true")]
    #[serde(deserialize_with = "set")]
    pub allow_mentions: Option<String>,
    /// Minimum time between two write requests to the forge's API [env: QM_FORGE_WRITE_INTERVAL;
    /// default: 1s].
    #[arg(long, value_name = "DURATION")]
    #[serde(deserialize_with = "set")]
    pub(crate) forge_write_interval: Option<String>,
    /// Longest rate-limit wait honoured; beyond it the remaining forge calls fail
    /// [env: QM_FORGE_MAX_WAIT; default: 90s].
    #[arg(long, value_name = "DURATION")]
    #[serde(deserialize_with = "set")]
    pub(crate) forge_max_wait: Option<String>,
    /// How many actions may run at once; actions that could touch the same branch, PR, issue or
    /// lock file never do [env: QM_JOBS; default: the machine's cores, at most 4].
    #[arg(long, value_name = "N")]
    #[serde(deserialize_with = "set")]
    pub jobs: Option<String>,
    /// What a toolchain the repository declares (go.mod, .nvmrc, engines, packageManager,
    /// rust-toolchain.toml, ...) that differs from the one commands get does: warn (record it in
    /// the report and the PR) or fail (the unit fails before its commands run) [env:
    /// QM_TOOLCHAIN_POLICY; default: warn].
    #[arg(long, value_name = "POLICY")]
    #[serde(deserialize_with = "set")]
    pub toolchain_policy: Option<String>,
    /// Let version managers that verify their downloads fetch the declared toolchain: Go
    /// (GOTOOLCHAIN), rustup and corepack [env: QM_TOOLCHAIN_INSTALL].
    #[arg(long, num_args = 0, default_missing_value = "true")]
    #[serde(deserialize_with = "set")]
    pub(crate) toolchain_install: Option<String>,
    /// Run only these actions, by index in the plan: a shard, as `quartermaster shards` cuts them
    /// [env: QM_ONLY, e.g. 0,3,5; default: every action].
    #[arg(long, value_name = "I,J,...")]
    #[serde(deserialize_with = "set")]
    pub only: Option<String>,
    /// The repository to work on, GitHub `owner/name` or GitLab `group/project` [env:
    /// QM_REPOSITORY; default: GITHUB_REPOSITORY or CI_PROJECT_PATH, the CI job's own].
    #[arg(long, value_name = "PATH")]
    #[serde(deserialize_with = "set")]
    pub repository: Option<String>,
    /// The repository's policy, read from this file instead of `.quartermaster.toml` at the tip of
    /// the default branch [env: QM_POLICY].
    #[arg(long, value_name = "FILE")]
    #[serde(deserialize_with = "set")]
    pub policy: Option<PathBuf>,
    /// The OSV service known advisories come from, without a trailing `/` [env: QM_OSV_URL;
    /// default: https://api.osv.dev].
    #[arg(long, value_name = "URL")]
    #[serde(deserialize_with = "set")]
    pub(crate) osv_url: Option<String>,
    /// GitHub's REST API, where release notes of repositories on github.com are read [env:
    /// QM_RELEASE_NOTES_GITHUB_API; default: https://api.github.com].
    #[arg(long, value_name = "URL")]
    #[serde(deserialize_with = "set")]
    pub(crate) release_notes_github_api: Option<String>,
    /// GitLab's REST API, where release notes of repositories on gitlab.com are read [env:
    /// QM_RELEASE_NOTES_GITLAB_API; default: https://gitlab.com/api/v4].
    #[arg(long, value_name = "URL")]
    #[serde(deserialize_with = "set")]
    pub(crate) release_notes_gitlab_api: Option<String>,
    /// The forge token: `QM_TOKEN` only.
    #[arg(skip)]
    #[serde(deserialize_with = "set")]
    pub token: Option<String>,
    /// `QM_TOKEN_IS_DEFAULT`: set by the GitHub Action when the token is the workflow's own.
    #[arg(skip)]
    #[serde(deserialize_with = "set")]
    pub(crate) token_is_default: Option<String>,
    /// The variables whose values held the token (raw or encoded) when Quartermaster started; they
    /// are gone from its environment, and never passed to commands.
    #[arg(skip)]
    #[serde(skip)]
    pub(crate) token_holders: Vec<String>,
    /// Variables that held one of the run's CI credentials (see
    /// [`super::env_vars::CI_CREDENTIALS`]) when Quartermaster started: (variable, credential).
    #[arg(skip)]
    #[serde(skip)]
    pub(crate) credential_holders: Vec<(String, String)>,
}

/// A variable's value; empty means unset.
fn set<'de, D: Deserializer<'de>, T: From<String>>(d: D) -> Result<Option<T>, D::Error> {
    Ok(Option::<String>::deserialize(d)?
        .filter(|v| !v.is_empty())
        .map(T::from))
}

/// A list variable: names separated by commas, spaces or line breaks.
fn list<'de, D: Deserializer<'de>, T: From<String>>(d: D) -> Result<Vec<T>, D::Error> {
    Ok(Option::<String>::deserialize(d)?
        .map(|v| {
            v.split([',', '\n', ' '])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| T::from(s.to_string()))
                .collect()
        })
        .unwrap_or_default())
}

impl Inputs {
    /// The `QM_*` variables of the process environment.
    pub(crate) fn from_env() -> Result<Self, ConfigError> {
        Self::from_vars(std::env::vars())
    }

    /// The `QM_*` variables among `vars`.
    pub(crate) fn from_vars(
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, ConfigError> {
        Ok(envy::prefixed(env_vars::PREFIX).from_iter(vars)?)
    }

    /// These inputs over `fallback`: a value given here wins; extra-env names add up.
    pub(crate) fn combine(self, fallback: Inputs) -> Inputs {
        let mut extra_env = self.extra_env;
        extra_env.extend(fallback.extra_env);
        let mut registry_hosts = self.registry_hosts;
        registry_hosts.extend(fallback.registry_hosts);
        let mut tool_config = self.tool_config;
        tool_config.extend(fallback.tool_config);
        let mut expose_dirs = self.expose_dirs;
        expose_dirs.extend(fallback.expose_dirs);
        // The variable's first, so that a flag given for the same limit wins.
        let limits = [fallback.limits, self.limits].concat();
        Inputs {
            plan: self.plan.or(fallback.plan),
            plans_dir: self.plans_dir.or(fallback.plans_dir),
            claim_status: self.claim_status.or(fallback.claim_status),
            result_plan: self.result_plan.or(fallback.result_plan),
            checkout: self.checkout.or(fallback.checkout),
            mission: self.mission.or(fallback.mission),
            missions_dir: self.missions_dir.or(fallback.missions_dir),
            forge: self.forge.or(fallback.forge),
            forge_dir: self.forge_dir.or(fallback.forge_dir),
            remote: self.remote.or(fallback.remote),
            report: self.report.or(fallback.report),
            summary: self.summary.or(fallback.summary),
            dry_run: self.dry_run.or(fallback.dry_run),
            min_confidence: self.min_confidence.or(fallback.min_confidence),
            command_timeout: self.command_timeout.or(fallback.command_timeout),
            bot_label: self.bot_label.or(fallback.bot_label),
            git_author: self.git_author.or(fallback.git_author),
            extra_env,
            registry_hosts,
            isolation: self.isolation.or(fallback.isolation),
            sandbox_uid_base: self.sandbox_uid_base.or(fallback.sandbox_uid_base),
            caches: self.caches.or(fallback.caches),
            cache_dir: self.cache_dir.or(fallback.cache_dir),
            workspaces: self.workspaces.or(fallback.workspaces),
            tool_config,
            limits,
            expose_dirs,
            draft: self.draft.or(fallback.draft),
            sign_commits: self.sign_commits.or(fallback.sign_commits),
            allow_mentions: self.allow_mentions.or(fallback.allow_mentions),
            forge_write_interval: self.forge_write_interval.or(fallback.forge_write_interval),
            forge_max_wait: self.forge_max_wait.or(fallback.forge_max_wait),
            jobs: self.jobs.or(fallback.jobs),
            toolchain_policy: self.toolchain_policy.or(fallback.toolchain_policy),
            toolchain_install: self.toolchain_install.or(fallback.toolchain_install),
            only: self.only.or(fallback.only),
            repository: self.repository.or(fallback.repository),
            policy: self.policy.or(fallback.policy),
            osv_url: self.osv_url.or(fallback.osv_url),
            release_notes_github_api: self
                .release_notes_github_api
                .or(fallback.release_notes_github_api),
            release_notes_gitlab_api: self
                .release_notes_gitlab_api
                .or(fallback.release_notes_gitlab_api),
            token: self.token.or(fallback.token),
            token_holders: [self.token_holders, fallback.token_holders].concat(),
            credential_holders: [self.credential_holders, fallback.credential_holders].concat(),
            token_is_default: self.token_is_default.or(fallback.token_is_default),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Inputs {
        Inputs::from_vars(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string()))).unwrap()
    }

    #[test]
    fn empty_variables_are_unset_and_lists_split() {
        let env = vars(&[
            ("QM_DRY_RUN", ""),
            ("QM_MISSION", "deps"),
            ("QM_EXTRA_ENV", "A, B\nC"),
            ("QM_TOKEN", "t"),
            ("GITHUB_TOKEN", "ignored"),
        ]);
        assert_eq!(env.dry_run, None);
        assert_eq!(env.mission.as_deref(), Some("deps"));
        assert_eq!(env.extra_env, vec!["A", "B", "C"]);
        assert_eq!(env.token.as_deref(), Some("t"));
    }

    #[test]
    fn flags_win_and_extra_env_adds_up() {
        let flags = Inputs {
            mission: Some("docs-drift".into()),
            extra_env: vec!["X".into()],
            ..Inputs::default()
        };
        let env = vars(&[
            ("QM_MISSION", "deps"),
            ("QM_REMOTE", "up"),
            ("QM_EXTRA_ENV", "Y"),
        ]);
        let both = flags.combine(env);
        assert_eq!(both.mission.as_deref(), Some("docs-drift"));
        assert_eq!(both.remote.as_deref(), Some("up"));
        assert_eq!(both.extra_env, vec!["X", "Y"]);
    }
}
