//! Which forge to talk to and how: the URLs and the token policy of each.

use super::{ConfigError, RunConfig};
use crate::forge::github::GithubSettings;
use crate::forge::gitlab::GitlabSettings;
use crate::forge::http::RequestPolicy;
use crate::forge::local::LocalSettings;
use crate::forge::{ForgeConfig, ForgeKind};
use crate::scale::export::path_segment;
use secrecy::{ExposeSecret, SecretString};

/// How to make a token GitLab accepts for merge requests.
const GITLAB_TOKEN_ADVICE: &str = "create a project (or group) access token with the `api` and `write_repository` scopes and at least the Developer role, store it as a masked CI/CD variable (for example QUARTERMASTER_TOKEN), and name that variable in the component's `token-variable` input";

impl RunConfig {
    /// The forge this configuration names, with what its CI environment says about it. Checked
    /// when the run starts, after the plan was read, so that the report can say what went wrong.
    pub(crate) fn forge_config(&self) -> Result<ForgeConfig, ConfigError> {
        let config = self;
        Ok(match config.forge {
            ForgeKind::Local if config.repository.is_some() => {
                return Err(ConfigError::with_hint(
                    "--repository names a GitHub or GitLab repository, and the forge is local",
                    "the local forge works on the checkout (--checkout) and its remote (--remote); leave QM_REPOSITORY unset, or choose --forge github or gitlab",
                ));
            }
            ForgeKind::Local if config.sign_commits => {
                return Err(ConfigError::with_hint(
                    "--sign-commits has the forge make and sign Quartermaster's commits, and the local forge has no API to do that",
                    "sign commits on GitHub or GitLab (--forge github or gitlab), or leave QM_SIGN_COMMITS unset on the local forge",
                ));
            }
            ForgeKind::Local => {
                // The local forge works on the checkout's branches.
                super::require_repository(&config.checkout)?;
                ForgeConfig::Local(LocalSettings {
                    checkout: config.checkout.clone(),
                    remote: config.remote.clone(),
                    dir: config.forge_dir.clone(),
                    token: config.token.clone(),
                })
            }
            ForgeKind::Github => ForgeConfig::Github(github(config)?),
            ForgeKind::Gitlab => ForgeConfig::Gitlab(gitlab(config)?),
        })
    }
}

fn policy(config: &RunConfig) -> RequestPolicy {
    RequestPolicy {
        write_interval: config.forge_write_interval,
        max_wait: config.forge_max_wait,
        ..RequestPolicy::default()
    }
}

/// The repository an input names: `owner/name` on GitHub, `group/.../project` on GitLab.
fn repository_input(config: &RunConfig, github: bool) -> Result<Option<String>, ConfigError> {
    let Some(path) = &config.repository else {
        return Ok(None);
    };
    let segments: Vec<&str> = path.split('/').collect();
    let shape = if github {
        segments.len() == 2
    } else {
        segments.len() >= 2
    };
    if shape && segments.iter().all(|s| path_segment(s)) {
        return Ok(Some(path.clone()));
    }
    let (form, example) = if github {
        ("an owner/name", "octo/widgets")
    } else {
        ("a group/project", "tools/widgets or group/subgroup/project")
    };
    Err(ConfigError::with_hint(
        format!(
            "--repository `{}` is not {form}",
            crate::finding::clip(path)
        ),
        format!("name the repository as the forge shows it, for example {example}"),
    ))
}

fn github(config: &RunConfig) -> Result<GithubSettings, ConfigError> {
    let ci = &config.ci;
    let repository = match repository_input(config, true)? {
        Some(repository) => repository,
        None => ci.github_repository.clone().ok_or_else(|| {
            ConfigError::with_hint(
                "the github forge needs the repository, and GITHUB_REPOSITORY is not set (GitHub Actions sets it)",
                "outside GitHub Actions, name it with --repository OWNER/NAME (QM_REPOSITORY)",
            )
        })?,
    };
    let token = config.token.clone().ok_or_else(|| {
        ConfigError::with_hint(
            "no token: set QM_TOKEN or GITHUB_TOKEN",
            "the action's `token` input defaults to the workflow's GITHUB_TOKEN",
        )
    })?;
    Ok(GithubSettings {
        api_url: ci
            .github_api_url
            .clone()
            .unwrap_or_else(|| "https://api.github.com".into()),
        server_url: ci
            .github_server_url
            .clone()
            .unwrap_or_else(|| "https://github.com".into()),
        repository,
        token,
        policy: policy(config),
    })
}

/// The token for GitLab: never the job token, which cannot create merge requests.
fn gitlab_token(config: &RunConfig) -> Result<SecretString, ConfigError> {
    let job_token = config.ci.ci_job_token.as_deref();
    match &config.token {
        None if job_token.is_some() => Err(ConfigError::with_hint(
            "only the CI job token is available, and it cannot create merge requests: a project or group access token is needed",
            GITLAB_TOKEN_ADVICE,
        )),
        None => Err(ConfigError::with_hint(
            "no token: set QM_TOKEN or GITLAB_TOKEN",
            GITLAB_TOKEN_ADVICE,
        )),
        Some(token) => {
            let value = token.expose_secret();
            if value.starts_with("glcbt-") || job_token == Some(value) {
                return Err(ConfigError::with_hint(
                    "the token is the CI job token, which cannot create merge requests: a project or group access token is needed",
                    GITLAB_TOKEN_ADVICE,
                ));
            }
            Ok(token.clone())
        }
    }
}

fn gitlab(config: &RunConfig) -> Result<GitlabSettings, ConfigError> {
    let ci = &config.ci;
    let token = gitlab_token(config)?;
    let server_url = ci.ci_server_url.clone();
    let api_url = ci
        .ci_api_v4_url
        .clone()
        .or_else(|| {
            server_url
                .as_ref()
                .map(|s| format!("{}/api/v4", s.trim_end_matches('/')))
        })
        .ok_or_else(|| {
            ConfigError::new(
                "CI_API_V4_URL and CI_SERVER_URL are not set: the gitlab forge needs them, as GitLab CI sets them",
            )
        })?;
    let server_url = server_url
        .or_else(|| api_url.strip_suffix("/api/v4").map(String::from))
        .unwrap_or_else(|| api_url.clone());
    // Another project than the job's (a fleet job) is named by its path: CI_PROJECT_ID is the
    // job's own project.
    let (project, project_path) = match repository_input(config, false)? {
        Some(path) => (path.clone(), path),
        None => {
            let path = ci.ci_project_path.clone().ok_or_else(|| {
                ConfigError::new(
                    "CI_PROJECT_PATH is not set: the gitlab forge needs it (group/project), as GitLab CI sets it",
                )
            })?;
            (
                ci.ci_project_id.clone().unwrap_or_else(|| path.clone()),
                path,
            )
        }
    };
    Ok(GitlabSettings {
        api_url,
        server_url,
        project,
        project_path,
        token,
        policy: policy(config),
    })
}
