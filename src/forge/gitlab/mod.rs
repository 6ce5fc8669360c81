//! GitLab through the `gitlab` crate.
//!
//! The crate's endpoint builders make each request (path, query and body encoding, project paths
//! escaped), and its async client sends it with the `PRIVATE-TOKEN` header. Requests go through
//! `rest_async`, which returns the whole response, so that the shared policy sees status and
//! headers (`Retry-After`, `RateLimit-Reset`) and decides about retries: the crate's own retry
//! helper only exists for blocking clients. Branches are pushed with git to the project's HTTP
//! URL as `oauth2`.

use super::http::{
    RawResponse, RequestPolicy, Resilience, SendError, recover_create, short_message,
};
use super::{
    ApiCommit, Comment, Forge, ForgeError, ForgeKind, Issue, NewIssue, NewPullRequest, People,
    PullRequest, PullRequestEdit, Result, State, Target,
};
use crate::git::{RemoteSpec, RemoteUrl};
use async_trait::async_trait;
use gitlab::api::{self, AsyncClient, Endpoint, RestClient};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::time::Duration;

mod client;
mod commit;
mod review;

use client::{answered_status, build_error};

/// Pages read at most when listing (100 items each).
const MAX_PAGES: u32 = 10;
/// GitLab has no draft flag on create: a title prefix makes a draft.
const DRAFT: &str = "Draft: ";
/// Longest wait for one answer; the crate's HTTP client sets no time limit of its own.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

pub struct GitlabSettings {
    /// `CI_API_V4_URL`, e.g. `https://gitlab.example.com/api/v4`.
    pub api_url: String,
    /// `CI_SERVER_URL`; branches go to `<server_url>/<project_path>.git`.
    pub server_url: String,
    /// `CI_PROJECT_ID` (or the path), for API calls.
    pub project: String,
    /// `CI_PROJECT_PATH`, `group/project`.
    pub project_path: String,
    pub token: SecretString,
    pub policy: RequestPolicy,
}

pub struct GitlabForge {
    client: gitlab::AsyncGitlab,
    project: String,
    remote: RemoteSpec,
    http: Resilience,
    /// Requests the client sent to check the token (`GET /user`) while connecting.
    connect_requests: u64,
}

#[derive(Deserialize)]
struct Mr {
    iid: u64,
    title: String,
    #[serde(default)]
    description: Option<String>,
    state: String,
    source_branch: String,
    target_branch: String,
    source_project_id: u64,
    target_project_id: u64,
    #[serde(default)]
    labels: Vec<String>,
    web_url: String,
    #[serde(default)]
    draft: bool,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    merge_when_pipeline_succeeds: bool,
    #[serde(default)]
    reviewers: Vec<Someone>,
    #[serde(default)]
    assignees: Vec<Someone>,
}

/// A user as GitLab lists one.
#[derive(Deserialize)]
struct Someone {
    #[serde(default)]
    id: u64,
    username: String,
}

#[derive(Deserialize)]
struct GlIssue {
    iid: u64,
    title: String,
    #[serde(default)]
    description: Option<String>,
    state: String,
    #[serde(default)]
    labels: Vec<String>,
    web_url: String,
}

#[derive(Deserialize)]
struct Note {
    id: u64,
    body: String,
    #[serde(default)]
    system: bool,
}

#[derive(Deserialize)]
struct MrCommit {
    author_email: String,
    committer_email: String,
}

impl GitlabForge {
    /// Connects (the client checks the token with `GET /user`). Network failures, time-outs and
    /// server errors are retried as the policy says; a refusal says what to fix.
    pub async fn connect(settings: GitlabSettings) -> Result<Self> {
        let url = settings.api_url.trim_end_matches('/');
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| ForgeError::Local(format!("CI_API_V4_URL `{url}` is not a URL")))?;
        let host = rest.strip_suffix("/api/v4").unwrap_or(rest);
        let mut builder = gitlab::GitlabBuilder::new(host, settings.token.expose_secret());
        if scheme == "http" {
            builder.insecure();
        }
        let server = format!("GitLab at {scheme}://{host}");
        let mut attempt = 0;
        let client = loop {
            attempt += 1;
            let outcome = tokio::time::timeout(REQUEST_TIMEOUT, builder.build_async()).await;
            let (status, text) = match outcome {
                Ok(Ok(client)) => break client,
                Ok(Err(e)) => (answered_status(&e), e.to_string()),
                Err(_) => (
                    None,
                    format!("no answer within {}s", REQUEST_TIMEOUT.as_secs()),
                ),
            };
            let transient = status.is_none_or(|s| s >= 500 || s == 429);
            if transient && attempt < settings.policy.attempts {
                tracing::warn!("connecting to {server} failed ({text}); retrying");
                tokio::time::sleep(settings.policy.backoff(attempt)).await;
                continue;
            }
            return Err(match status {
                Some(401) => ForgeError::Unauthorized(format!(
                    "{server} refused the token ({text}): it is invalid, expired or revoked"
                )),
                Some(403) => ForgeError::Forbidden(format!(
                    "{server} answered 403 when Quartermaster checked the token with GET /user ({text}): the token lacks a scope; give the project or group access token the `api` and `write_repository` scopes"
                )),
                Some(status) if !transient => ForgeError::Api {
                    status,
                    message: format!("connecting to {server}: {text}"),
                },
                _ => ForgeError::Transport(format!("connecting to {server}: {text}").into()),
            });
        };
        let forge = Self {
            client,
            project: settings.project,
            remote: RemoteSpec {
                url: RemoteUrl::new(format!(
                    "{}/{}.git",
                    settings.server_url.trim_end_matches('/'),
                    settings.project_path
                )),
                username: Some("oauth2".into()),
                token: Some(settings.token),
            },
            http: Resilience::new(settings.policy),
            connect_requests: u64::from(attempt),
        };
        // Fail before any work when the project is missing or invisible to the token.
        let project = api::projects::Project::builder()
            .project(forge.project.as_str())
            .build()
            .map_err(|e| build_error("reading the project", e))?;
        forge.send(&project, None, "reading the project").await?;
        Ok(forge)
    }
}

#[async_trait]
impl Forge for GitlabForge {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Gitlab
    }

    fn remote(&self) -> &RemoteSpec {
        &self.remote
    }

    fn requests(&self) -> u64 {
        // The client's own token checks (`GET /user`) when it connected, then ours.
        self.http.requests() + self.connect_requests
    }

    fn explain_push_rejection(&self, message: &str) -> Option<String> {
        let lower = message.to_ascii_lowercase();
        (lower.contains("protected branch") || lower.contains("not allowed to push")).then(|| {
            format!(
                "GitLab refused the push ({message}): the branch is protected or the token's role may not push; unprotect `quartermaster/*` or give the token the Developer role and `write_repository`"
            )
        })
    }

    async fn find_pull_request(&self, branch: &str) -> Result<Option<PullRequest>> {
        let e = api::projects::merge_requests::MergeRequests::builder()
            .project(self.project.as_str())
            .source_branch(branch)
            .build()
            .map_err(|e| build_error("listing MRs", e))?;
        let mrs: Vec<Mr> = self.fetch(&e, "looking for the branch's MR").await?;
        Ok(super::choose_pull_request(
            mrs.into_iter().map(Self::pull_request_of),
            branch,
        ))
    }

    async fn pull_request(&self, number: u64) -> Result<Option<PullRequest>> {
        let e = api::projects::merge_requests::MergeRequest::builder()
            .project(self.project.as_str())
            .merge_request(number)
            .build()
            .map_err(|e| build_error("reading an MR", e))?;
        Ok(self
            .fetch_optional::<Mr, _>(&e, "reading an MR")
            .await?
            .map(Self::pull_request_of))
    }

    async fn create_pull_request(&self, new: &NewPullRequest) -> Result<PullRequest> {
        let title = if new.draft {
            format!("{DRAFT}{}", new.title)
        } else {
            new.title.clone()
        };
        let e = api::projects::merge_requests::CreateMergeRequest::builder()
            .project(self.project.as_str())
            .source_branch(new.head.as_str())
            .target_branch(new.base.as_str())
            .title(title.as_str())
            .description(new.body.as_str())
            .labels(new.labels.iter().map(String::as_str))
            .remove_source_branch(true)
            .build()
            .map_err(|e| build_error("opening the MR", e))?;
        recover_create(
            3,
            Duration::from_secs(1),
            || async {
                match self.fetch::<Mr, _>(&e, "opening the MR").await {
                    Ok(mr) => Ok(Self::pull_request_of(mr)),
                    // "Another open merge request already exists for this source branch."
                    Err(ForgeError::Api { status: 409, .. }) => {
                        let open = self.find_open_pull_request(&new.head).await?.ok_or_else(
                            || ForgeError::Api {
                                status: 409,
                                message: format!(
                                    "opening the MR: GitLab reports an MR for {} that it does not list",
                                    new.head
                                ),
                            },
                        )?;
                        super::bring_up_to_date(self, open, new).await
                    }
                    Err(other) => Err(other),
                }
            },
            || self.find_open_pull_request(&new.head),
        )
        .await
    }

    async fn update_pull_request(
        &self,
        number: u64,
        edit: &PullRequestEdit,
    ) -> Result<PullRequest> {
        let current = self
            .pull_request(number)
            .await?
            .ok_or_else(|| ForgeError::NotFound(format!("MR !{number}")))?;
        if edit.is_empty() {
            return Ok(current);
        }
        let mut builder = api::projects::merge_requests::EditMergeRequest::builder();
        builder.project(self.project.as_str()).merge_request(number);
        let title = edit.title.as_ref().map(|t| {
            if current.draft {
                format!("{DRAFT}{t}")
            } else {
                t.clone()
            }
        });
        if let Some(title) = &title {
            builder.title(title.as_str());
        }
        if let Some(body) = &edit.body {
            builder.description(body.as_str());
        }
        for label in &edit.add_labels {
            builder.add_label(label.as_str());
        }
        let e = builder
            .build()
            .map_err(|e| build_error("updating the MR", e))?;
        Ok(Self::pull_request_of(
            self.fetch(&e, "updating the MR").await?,
        ))
    }

    async fn close_pull_request(&self, number: u64) -> Result<PullRequest> {
        let e = api::projects::merge_requests::EditMergeRequest::builder()
            .project(self.project.as_str())
            .merge_request(number)
            .state_event(api::projects::merge_requests::MergeRequestStateEvent::Close)
            .build()
            .map_err(|e| build_error("closing the MR", e))?;
        Ok(Self::pull_request_of(
            self.fetch(&e, "closing the MR").await?,
        ))
    }

    async fn open_pull_requests(&self, label: &str) -> Result<Vec<PullRequest>> {
        self.labelled_open_merge_requests(label).await
    }

    async fn request_auto_merge(&self, number: u64, head: git2::Oid) -> Result<()> {
        self.merge_when_pipeline_succeeds(number, head).await
    }

    async fn request_review(&self, number: u64, people: &People) -> Result<Vec<String>> {
        self.ask_people(number, people).await
    }

    async fn create_commit(&self, commit: &ApiCommit) -> Result<git2::Oid> {
        self.commit_through_api(commit).await
    }

    async fn commit_authors(&self, pr: &PullRequest) -> Result<Option<Vec<String>>> {
        let e = api::projects::merge_requests::MergeRequestCommits::builder()
            .project(self.project.as_str())
            .merge_request(pr.number)
            .build()
            .map_err(|e| build_error("reading the MR's commits", e))?;
        let commits: Vec<MrCommit> = self.list(&e, "reading the MR's commits").await?;
        Ok(Some(
            commits
                .into_iter()
                .flat_map(|c| [c.author_email, c.committer_email])
                .collect(),
        ))
    }

    async fn find_open_issue(
        &self,
        title: &str,
        label: &str,
        marker: &str,
    ) -> Result<Option<Issue>> {
        let e = api::issues::ProjectIssues::builder()
            .project(self.project.as_str())
            .label(label)
            .state(api::issues::IssueState::Opened)
            .search(title)
            .search_in(api::issues::IssueSearchScope::Title)
            .build()
            .map_err(|e| build_error("looking for the issue", e))?;
        let issues: Vec<GlIssue> = self.list(&e, "looking for the issue").await?;
        Ok(issues
            .into_iter()
            .filter(|i| i.title == title)
            .map(Self::issue_of)
            .find(|i| i.body.contains(marker)))
    }

    async fn issue(&self, number: u64) -> Result<Option<Issue>> {
        let e = api::projects::issues::Issue::builder()
            .project(self.project.as_str())
            .issue(number)
            .build()
            .map_err(|e| build_error("reading an issue", e))?;
        Ok(self
            .fetch_optional::<GlIssue, _>(&e, "reading an issue")
            .await?
            .map(Self::issue_of))
    }

    async fn create_issue(&self, new: &NewIssue) -> Result<Issue> {
        let e = api::projects::issues::CreateIssue::builder()
            .project(self.project.as_str())
            .title(new.title.as_str())
            .description(new.body.as_str())
            .labels(new.labels.iter().map(String::as_str))
            .build()
            .map_err(|e| build_error("opening the issue", e))?;
        let label = new.labels.first().cloned().unwrap_or_default();
        recover_create(
            3,
            Duration::from_secs(1),
            || async { Ok(Self::issue_of(self.fetch(&e, "opening the issue").await?)) },
            || self.find_open_issue(&new.title, &label, &new.body),
        )
        .await
    }

    async fn update_issue_body(&self, number: u64, body: &str) -> Result<Issue> {
        let e = api::projects::issues::EditIssue::builder()
            .project(self.project.as_str())
            .issue(number)
            .description(body)
            .build()
            .map_err(|e| build_error("updating the issue", e))?;
        Ok(Self::issue_of(self.fetch(&e, "updating the issue").await?))
    }

    async fn comments(&self, target: Target) -> Result<Vec<Comment>> {
        Ok(self
            .notes(target)
            .await?
            .into_iter()
            .map(|n| self.comment_of(target, n))
            .collect())
    }

    async fn create_comment(&self, target: Target, body: &str) -> Result<Comment> {
        let project = self.project.as_str();
        let create = || async {
            let note: Note = match target {
                Target::PullRequest(iid) => {
                    let e = api::projects::merge_requests::notes::CreateMergeRequestNote::builder()
                        .project(project)
                        .merge_request(iid)
                        .body(body)
                        .build()
                        .map_err(|e| build_error("commenting", e))?;
                    self.fetch(&e, "commenting").await?
                }
                Target::Issue(iid) => {
                    let e = api::projects::issues::notes::CreateIssueNote::builder()
                        .project(project)
                        .issue(iid)
                        .body(body)
                        .build()
                        .map_err(|e| build_error("commenting", e))?;
                    self.fetch(&e, "commenting").await?
                }
            };
            Ok(self.comment_of(target, note))
        };
        recover_create(3, Duration::from_secs(1), create, || {
            super::posted_comment(self, target, body)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mr(state: &str, source_project_id: u64) -> Mr {
        serde_json::from_value(serde_json::json!({
            "iid": 7, "title": "Draft: bump", "description": null, "state": state,
            "source_branch": "quartermaster/x", "target_branch": "main",
            "source_project_id": source_project_id, "target_project_id": 3,
            "labels": ["quartermaster"], "web_url": "https://gitlab.example.com/g/p/-/merge_requests/7"
        }))
        .unwrap()
    }

    #[test]
    fn merge_requests_map_states_drafts_and_forks() {
        let states: Vec<State> = ["opened", "locked", "merged", "closed"]
            .into_iter()
            .map(|s| GitlabForge::pull_request_of(mr(s, 3)).state)
            .collect();
        // `locked` is a merge in progress: never something to push to.
        assert_eq!(
            states,
            [State::Open, State::Merged, State::Merged, State::Closed]
        );
        let pr = GitlabForge::pull_request_of(mr("opened", 3));
        assert_eq!(
            (pr.title.as_str(), pr.draft, pr.from_fork),
            ("bump", true, false)
        );
        assert!(GitlabForge::pull_request_of(mr("opened", 2)).from_fork);
    }
}
