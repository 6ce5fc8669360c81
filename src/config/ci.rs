//! What the CI environment says: which CI this is, where the checkout is, the forge's URLs, and
//! where docker-agent keeps its plans by default.

use serde::{Deserialize, Deserializer};

/// The CI variables Quartermaster looks at; empty ones count as unset.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub(crate) struct CiEnv {
    #[serde(deserialize_with = "set")]
    pub(crate) github_actions: Option<String>,
    #[serde(deserialize_with = "set")]
    pub(crate) github_workspace: Option<String>,
    #[serde(deserialize_with = "set")]
    pub(crate) github_token: Option<String>,
    #[serde(deserialize_with = "set")]
    pub(crate) github_api_url: Option<String>,
    #[serde(deserialize_with = "set")]
    pub(crate) github_server_url: Option<String>,
    #[serde(deserialize_with = "set")]
    pub(crate) github_repository: Option<String>,
    #[serde(deserialize_with = "set")]
    pub(crate) github_output: Option<String>,
    #[serde(deserialize_with = "set")]
    pub(crate) github_step_summary: Option<String>,
    #[serde(deserialize_with = "set")]
    pub(crate) gitlab_ci: Option<String>,
    #[serde(deserialize_with = "set")]
    pub(crate) gitlab_token: Option<String>,
    #[serde(deserialize_with = "set")]
    pub(crate) ci_job_token: Option<String>,
    #[serde(deserialize_with = "set")]
    pub(crate) ci_project_dir: Option<String>,
    #[serde(deserialize_with = "set")]
    pub(crate) ci_api_v4_url: Option<String>,
    #[serde(deserialize_with = "set")]
    pub(crate) ci_server_url: Option<String>,
    #[serde(deserialize_with = "set")]
    pub(crate) ci_project_id: Option<String>,
    #[serde(deserialize_with = "set")]
    pub(crate) ci_project_path: Option<String>,
    /// Where docker-agent's default plans directory is (`$HOME/.cagent/plans`).
    #[serde(deserialize_with = "set")]
    pub home: Option<String>,
    /// docker-agent's data directory without a `HOME`: `$TMPDIR/.cagent`.
    #[serde(deserialize_with = "set")]
    pub(crate) tmpdir: Option<String>,
}

fn set<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.filter(|v| !v.is_empty()))
}

impl CiEnv {
    pub(crate) fn from_env() -> Self {
        Self::from_vars(std::env::vars())
    }

    /// The CI variables among `vars`.
    pub(crate) fn from_vars(vars: impl IntoIterator<Item = (String, String)>) -> Self {
        envy::from_iter(vars).unwrap_or_default()
    }

    pub(crate) fn on_github(&self) -> bool {
        self.github_actions.as_deref() == Some("true")
    }

    pub(crate) fn on_gitlab(&self) -> bool {
        self.gitlab_ci.as_deref() == Some("true")
    }
}
