//! Where PRs/MRs, issues and comments live: the `Forge` trait and its implementations.
//!
//! The engine only talks to this trait, so every behaviour (create-or-update, ownership, idempotent
//! comments) is written once and tested against every forge: `local` (files, the default), and the
//! GitHub and GitLab adapters. Branches themselves go through git (see [`crate::git`]); the forge
//! only says where the repository is and how to authenticate.

pub mod github;
pub mod gitlab;
pub mod http;
pub mod local;

use crate::git::RemoteSpec;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// Which forge: where PRs/MRs live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ForgeKind {
    Local,
    Github,
    Gitlab,
}

impl ForgeKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            ForgeKind::Local => "local",
            ForgeKind::Github => "github",
            ForgeKind::Gitlab => "gitlab",
        }
    }
}

impl std::fmt::Display for ForgeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A forge, configured: what [`open`] connects to.
pub enum ForgeConfig {
    Local(local::LocalSettings),
    Github(github::GithubSettings),
    Gitlab(gitlab::GitlabSettings),
}

/// Connects to the configured forge. GitLab's client checks the token and the project right away,
/// so a refused token stops the run before any work.
pub async fn open(config: ForgeConfig) -> Result<Box<dyn Forge>> {
    Ok(match config {
        ForgeConfig::Local(settings) => Box::new(local::LocalForge::open_checkout(settings)?),
        ForgeConfig::Github(settings) => Box::new(github::GithubForge::new(settings)?),
        ForgeConfig::Gitlab(settings) => Box::new(gitlab::GitlabForge::connect(settings).await?),
    })
}

/// State of a PR/MR or issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Open,
    Closed,
    Merged,
}

impl State {
    pub const fn as_str(self) -> &'static str {
        match self {
            State::Open => "open",
            State::Closed => "closed",
            State::Merged => "merged",
        }
    }
}

/// A pull request (GitHub) or merge request (GitLab).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequest {
    pub number: u64,
    pub url: String,
    pub state: State,
    /// Head (source) branch.
    pub head: String,
    /// Base (target) branch.
    pub base: String,
    pub title: String,
    pub body: String,
    pub labels: Vec<String>,
    pub draft: bool,
    /// Whether the head branch lives in another repository (a fork): never Quartermaster's, even
    /// when its branch has a `quartermaster/` name.
    #[serde(default)]
    pub from_fork: bool,
    /// When it was opened (RFC 3339), where the forge says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Whether the forge will merge it on its own once its checks pass (GitHub's auto-merge,
    /// GitLab's merge when the pipeline succeeds).
    #[serde(default)]
    pub auto_merge: bool,
    /// Users asked to review it.
    #[serde(default)]
    pub reviewers: Vec<String>,
    /// Teams asked to review it (GitHub).
    #[serde(default)]
    pub team_reviewers: Vec<String>,
    #[serde(default)]
    pub assignees: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issue {
    pub number: u64,
    pub url: String,
    pub state: State,
    pub title: String,
    pub body: String,
    pub labels: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comment {
    pub id: u64,
    pub body: String,
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPullRequest {
    pub head: String,
    pub base: String,
    pub title: String,
    pub body: String,
    pub labels: Vec<String>,
    pub draft: bool,
}

/// Changes to an existing PR/MR; `None` leaves a field alone. Labels are only ever added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PullRequestEdit {
    pub title: Option<String>,
    pub body: Option<String>,
    pub add_labels: Vec<String>,
}

impl PullRequestEdit {
    pub fn is_empty(&self) -> bool {
        self.title.is_none() && self.body.is_none() && self.add_labels.is_empty()
    }
}

/// Who is asked to look at a PR: reviewers (users), team reviewers (GitHub teams, by slug) and
/// assignees (users), by user name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct People {
    pub reviewers: Vec<String>,
    pub team_reviewers: Vec<String>,
    pub assignees: Vec<String>,
}

impl People {
    pub fn is_empty(&self) -> bool {
        self.reviewers.is_empty() && self.team_reviewers.is_empty() && self.assignees.is_empty()
    }
}

/// One file of a commit created through the forge's API: its content, or `None` when the
/// commit deletes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    /// Whether the base tree has the file (GitLab tells a create from an update).
    pub in_base: bool,
    /// Git's file mode: `0o100644`, `0o100755` or `0o120000` (a symbolic link).
    pub mode: u32,
    pub content: Option<Vec<u8>>,
}

/// A commit the forge makes itself (and so signs), on top of `base`, moving `branch` from
/// `expected` (`None`: the branch must not exist) to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiCommit {
    pub branch: String,
    pub base: git2::Oid,
    /// The tree of the base commit.
    pub base_tree: git2::Oid,
    /// The tree the commit must have: the verified one, as Quartermaster committed it.
    pub tree: git2::Oid,
    pub expected: Option<git2::Oid>,
    pub message: String,
    /// The files that differ from the base tree.
    pub files: Vec<FileChange>,
    /// Who the commit names as its author (GitLab; GitHub makes the token's identity the author
    /// of the commits it signs).
    pub author: crate::git::Identity,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewIssue {
    pub title: String,
    pub body: String,
    pub labels: Vec<String>,
}

/// What a comment is posted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "on", content = "number", rename_all = "snake_case")]
pub enum Target {
    PullRequest(u64),
    Issue(u64),
}

/// Why a forge call failed. The messages are meant for the person running Quartermaster: they say
/// which permission, setting or input to fix.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    #[error("{0} was not found")]
    NotFound(String),
    #[error("the forge refused the token: {0}")]
    Unauthorized(String),
    #[error("permission denied: {0}")]
    Forbidden(String),
    #[error("rate limited: {0}")]
    RateLimited(String),
    #[error("the forge rejected the request ({status}): {message}")]
    Api { status: u16, message: String },
    #[error("could not reach the forge: {0}")]
    Transport(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("{0}")]
    Local(String),
    #[error("the run was stopped by signal {0} before the forge answered")]
    Cancelled(i32),
    /// The forge made something else than what it was sent (signed commits).
    #[error("{0}")]
    Differs(String),
}

impl ForgeError {
    /// Whether trying again may help: a network failure or a server error.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            ForgeError::Transport(_) => true,
            ForgeError::Api { status, .. } => *status >= 500,
            _ => false,
        }
    }
}

pub type Result<T> = std::result::Result<T, ForgeError>;

/// Of the PRs whose head is `branch` in this repository (not a fork's branch of the same name), the
/// open one if any, else the most recent: what [`Forge::find_pull_request`] answers.
pub(crate) fn choose_pull_request(
    candidates: impl IntoIterator<Item = PullRequest>,
    branch: &str,
) -> Option<PullRequest> {
    candidates
        .into_iter()
        .filter(|p| p.head == branch && !p.from_fork)
        .min_by_key(|p| (p.state != State::Open, std::cmp::Reverse(p.number)))
}

/// An open PR found where one was about to be created, given the title, body and labels the new
/// one would have had.
pub(crate) async fn bring_up_to_date(
    forge: &dyn Forge,
    open: PullRequest,
    new: &NewPullRequest,
) -> Result<PullRequest> {
    let edit = PullRequestEdit {
        title: (open.title != new.title).then(|| new.title.clone()),
        body: (open.body != new.body).then(|| new.body.clone()),
        add_labels: new
            .labels
            .iter()
            .filter(|l| !open.labels.contains(l))
            .cloned()
            .collect(),
    };
    if edit.is_empty() {
        Ok(open)
    } else {
        forge.update_pull_request(open.number, &edit).await
    }
}

/// The comment on `target` whose body is exactly `body`, if there is one: what a comment whose
/// create answer was lost is looked for by.
pub(crate) async fn posted_comment(
    forge: &dyn Forge,
    target: Target,
    body: &str,
) -> Result<Option<Comment>> {
    Ok(forge
        .comments(target)
        .await?
        .into_iter()
        .find(|c| c.body == body))
}

/// The operations the engine needs from a forge.
#[async_trait]
pub trait Forge: Send + Sync {
    fn kind(&self) -> ForgeKind;

    /// The git remote branches are fetched from and pushed to.
    fn remote(&self) -> &RemoteSpec;

    /// HTTP requests sent so far (0 for forges without an API).
    fn requests(&self) -> u64 {
        0
    }

    /// What to do about a push the forge's git server refused, when the forge recognises the
    /// refusal (workflow files without the permission, protected branches, ...).
    fn explain_push_rejection(&self, _message: &str) -> Option<String> {
        None
    }

    /// The PR whose head is `branch`: the open one if there is one, else the most recent one
    /// (so that a PR a human closed is not silently opened again).
    async fn find_pull_request(&self, branch: &str) -> Result<Option<PullRequest>>;

    async fn pull_request(&self, number: u64) -> Result<Option<PullRequest>>;

    async fn create_pull_request(&self, new: &NewPullRequest) -> Result<PullRequest>;

    async fn update_pull_request(&self, number: u64, edit: &PullRequestEdit)
    -> Result<PullRequest>;

    async fn close_pull_request(&self, number: u64) -> Result<PullRequest>;

    /// Every open PR of this repository (not a fork's) that carries `label`, oldest first.
    async fn open_pull_requests(&self, label: &str) -> Result<Vec<PullRequest>>;

    /// Asks the forge to merge the PR once its required checks pass, if its head is still
    /// `head`: GitHub's auto-merge, GitLab's merge when the pipeline succeeds, the local forge's
    /// `auto_merge` field.
    async fn request_auto_merge(&self, number: u64, head: git2::Oid) -> Result<()>;

    /// Asks `people` to review the PR and assigns it; what could not be applied, and why (a
    /// user the forge does not know, team reviewers on a forge without them).
    async fn request_review(&self, number: u64, people: &People) -> Result<Vec<String>>;

    /// Makes `commit` through the forge's API, so that the forge signs it, and moves its branch
    /// there under the lease; the new commit's id. Forges without such an API refuse.
    async fn create_commit(&self, commit: &ApiCommit) -> Result<git2::Oid> {
        Err(ForgeError::Local(format!(
            "the {} forge cannot create commits through an API, so it cannot sign {}",
            self.kind(),
            commit.branch
        )))
    }

    /// Author and committer e-mail addresses of the PR's own commits, or `None` when the forge
    /// cannot tell and git must (the local forge: the engine reads its branches directly).
    async fn commit_authors(&self, _pr: &PullRequest) -> Result<Option<Vec<String>>> {
        Ok(None)
    }

    /// The open issue with exactly this title that carries `label` and whose body holds `marker`
    /// (Quartermaster's hidden marker: a human's issue with the same title and label is never
    /// Quartermaster's to rewrite), if any.
    async fn find_open_issue(
        &self,
        title: &str,
        label: &str,
        marker: &str,
    ) -> Result<Option<Issue>>;

    async fn issue(&self, number: u64) -> Result<Option<Issue>>;

    async fn create_issue(&self, new: &NewIssue) -> Result<Issue>;

    async fn update_issue_body(&self, number: u64, body: &str) -> Result<Issue>;

    async fn comments(&self, target: Target) -> Result<Vec<Comment>>;

    async fn create_comment(&self, target: Target, body: &str) -> Result<Comment>;
}
