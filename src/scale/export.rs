//! `quartermaster export --format pangolin`: a plan as a pangolin-orchestrator run.
//!
//! One work item per action, `a<index>-<type>`, with no `depends_on`: pangolin skips the dependants
//! of an item that failed, while Quartermaster's actions are independent (one failing never stops
//! the next). Order and exclusion come from `resourceLocks` alone: the actions' lock keys, made
//! order-keeping (see [`schedule::ordered`]) because pangolin lets a later item overtake a blocked
//! earlier one, and prefixed with the repository, because pangolin does not namespace lock keys
//! by run: two runs on one repository then exclude each other, runs on two repositories never do.
//!
//! The executor (default `quartermaster`) is the user's, registered in their pangolin config. An
//! item's `inputs` carry what it needs to run exactly that action of exactly that plan: the
//! repository, the plan's SHA-256 (to fetch the plan and to check it), the action's index (for
//! `quartermaster run --only`), and the action itself (for display and review).

use crate::plan::{Action, Plan};
use crate::schedule::{self, KeyContext};
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// The queue a run goes to unless `--queue` says otherwise: pangolin's own default queue name.
pub(crate) const DEFAULT_QUEUE: &str = "default";
/// The executor id unless `--executor` says otherwise.
pub(crate) const DEFAULT_EXECUTOR: &str = "quartermaster";

/// Why an export cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ExportError {
    #[error("`{0}` is not a repository as HOST/OWNER/NAME")]
    InvalidRepository(String),
    #[error("no repository to prefix the lock keys with")]
    NoRepository,
    #[error("--{0} is empty")]
    Empty(&'static str),
}

impl crate::hint::Hint for ExportError {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some(match self {
            ExportError::InvalidRepository(_) => {
                "for example github.com/octo/widgets or gitlab.com/group/subgroup/project".into()
            }
            ExportError::NoRepository => "pass --repo HOST/OWNER/NAME; in GitHub Actions or GitLab CI it is read from GITHUB_SERVER_URL and GITHUB_REPOSITORY, or CI_SERVER_FQDN and CI_PROJECT_PATH".into(),
            ExportError::Empty(what) => format!("name a pangolin {what}, or leave the flag out").into(),
        })
    }
}

/// A repository, `HOST/OWNER/NAME` (GitLab subgroups allowed: `HOST/GROUP/SUB/NAME`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Repository(String);

impl FromStr for Repository {
    type Err = ExportError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut parts = s.split('/');
        let host = parts.next().unwrap_or_default();
        let (name, port) = host.split_once(':').unwrap_or((host, "1"));
        let host_ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
            && !port.is_empty()
            && port.chars().all(|c| c.is_ascii_digit());
        let path: Vec<&str> = parts.collect();
        let path_ok = path.len() >= 2 && path.iter().all(|p| path_segment(p));
        if host_ok && path_ok {
            Ok(Self(s.to_string()))
        } else {
            Err(ExportError::InvalidRepository(
                s.chars().take(200).collect(),
            ))
        }
    }
}

/// One name of an owner, group or project path, as GitHub and GitLab allow them.
pub(crate) fn path_segment(p: &str) -> bool {
    !p.is_empty()
        && p != "."
        && p != ".."
        && p.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

impl Repository {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    /// The repository the CI job runs for: GitHub's `GITHUB_SERVER_URL` and `GITHUB_REPOSITORY`,
    /// or GitLab's `CI_SERVER_FQDN` (else `CI_SERVER_HOST`) and `CI_PROJECT_PATH`.
    pub(crate) fn from_ci(var: impl Fn(&str) -> Option<String>) -> Result<Self, ExportError> {
        let var = |name: &str| var(name).filter(|v| !v.is_empty());
        if let Some(repository) = var("GITHUB_REPOSITORY") {
            let server = var("GITHUB_SERVER_URL").unwrap_or_else(|| "https://github.com".into());
            let host = server
                .parse::<http::Uri>()
                .ok()
                .and_then(|u| {
                    let port = u.port_u16().map(|p| format!(":{p}")).unwrap_or_default();
                    Some(format!("{}{port}", u.host()?))
                })
                .ok_or_else(|| ExportError::InvalidRepository(format!("{server}/{repository}")))?;
            return format!("{host}/{repository}").parse();
        }
        match (
            var("CI_SERVER_FQDN").or_else(|| var("CI_SERVER_HOST")),
            var("CI_PROJECT_PATH"),
        ) {
            (Some(host), Some(path)) => format!("{host}/{path}").parse(),
            _ => Err(ExportError::NoRepository),
        }
    }

    /// How lock keys name the repository: forges compare owner and project names without regard
    /// to case, so keys must too, or two spellings of one repository would not exclude each other.
    fn lock_prefix(&self) -> String {
        self.0.to_ascii_lowercase()
    }
}

/// Where and how the run is submitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExportOptions {
    pub repository: Repository,
    pub queue: String,
    pub executor: String,
}

impl ExportOptions {
    /// Options with pangolin's default queue and the `quartermaster` executor where not given.
    pub(crate) fn new(
        repository: Repository,
        queue: Option<String>,
        executor: Option<String>,
    ) -> Result<Self, ExportError> {
        let queue = queue.unwrap_or_else(|| DEFAULT_QUEUE.into());
        let executor = executor.unwrap_or_else(|| DEFAULT_EXECUTOR.into());
        if queue.trim().is_empty() {
            return Err(ExportError::Empty("queue"));
        }
        if executor.trim().is_empty() {
            return Err(ExportError::Empty("executor"));
        }
        Ok(Self {
            repository,
            queue,
            executor,
        })
    }
}

/// pangolin's `Run`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Run {
    pub id: String,
    pub queue: String,
    pub items: Vec<WorkItem>,
}

/// pangolin's `WorkItem` (without `subagentShape` and `needs`, which Quartermaster never sets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct WorkItem {
    pub id: String,
    pub executor: String,
    pub inputs: ActionInputs,
    pub depends_on: Vec<String>,
    #[serde(rename = "resourceLocks")]
    pub(crate) resource_locks: Vec<String>,
}

/// What the executor receives for one action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ActionInputs {
    pub repository: String,
    pub plan_sha256: String,
    pub action_index: usize,
    pub action: Action,
}

/// The run for a validated plan. Its id, `qm-<repository>-<digest>`, is a function of the
/// repository and the plan: pangolin ignores the submission of a run id it already holds, so the
/// same plan submitted twice runs once, and a new plan is a new run. The id uses only
/// `[a-z0-9.-]`, as pangolin puts run ids into storage paths.
pub(crate) fn export(
    plan: &Plan,
    plan_sha256: &str,
    ctx: &KeyContext,
    options: &ExportOptions,
) -> Run {
    let prefix = options.repository.lock_prefix();
    let keys = schedule::ordered(&schedule::plan_keys(plan, ctx));
    let items = plan
        .actions
        .iter()
        .zip(keys)
        .enumerate()
        .map(|(index, (action, keys))| WorkItem {
            id: format!("a{index}-{}", action.action_type()),
            executor: options.executor.clone(),
            inputs: ActionInputs {
                repository: options.repository.as_str().to_string(),
                plan_sha256: plan_sha256.to_string(),
                action_index: index,
                action: action.clone(),
            },
            depends_on: Vec::new(),
            resource_locks: keys.iter().map(|k| format!("{prefix}#{k}")).collect(),
        })
        .collect();
    Run {
        id: run_id(&prefix, plan_sha256),
        queue: options.queue.clone(),
        items,
    }
}

fn run_id(repository: &str, plan_sha256: &str) -> String {
    let slug: String = repository
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    // Two repositories can slug alike (`a-b/c`, `a/b-c`): the digest covers the exact name.
    let digest = super::plan_sha256(format!("{repository}\n{plan_sha256}").as_bytes());
    format!("qm-{slug}-{}", &digest[..12])
}

/// The run as pangolin's `plan.json`.
pub(crate) fn to_json(run: &Run) -> String {
    let mut text = serde_json::to_string_pretty(run).expect("a run serialises");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests;
