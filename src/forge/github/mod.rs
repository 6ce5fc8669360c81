//! GitHub (and GitHub Enterprise Server) through octocrab.
//!
//! octocrab provides the client: base URL (`GITHUB_API_URL`), bearer authentication with the token
//! marked sensitive, TLS, timeouts. Requests go through its raw methods so that Quartermaster sees
//! status and headers (rate limits) and decides about retries itself: octocrab's own retry layer
//! repeats POSTs, which can duplicate a PR or comment. Responses are parsed into octocrab's models.
//! Branches are pushed with git to `GITHUB_SERVER_URL/GITHUB_REPOSITORY` as `x-access-token`.

use super::http::{
    RawResponse, RequestPolicy, Resilience, SendError, recover_create, short_message,
};
use super::{
    ApiCommit, Comment, Forge, ForgeError, ForgeKind, Issue, NewIssue, NewPullRequest, People,
    PullRequest, PullRequestEdit, Result, State, Target,
};
use crate::git::{RemoteSpec, RemoteUrl};
use async_trait::async_trait;
use octocrab::Octocrab;
use octocrab::models::IssueState;
use secrecy::SecretString;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::time::Duration;

mod client;
mod commit;
mod review;

#[cfg(test)]
use client::next_page;
use client::{parse, query};

/// Pages read at most when listing (100 items each).
const MAX_PAGES: usize = 10;

pub struct GithubSettings {
    /// `GITHUB_API_URL`, e.g. `https://api.github.com` or `https://ghe.example.com/api/v3`.
    pub api_url: String,
    /// `GITHUB_SERVER_URL`, e.g. `https://github.com`; branches are pushed to
    /// `<server_url>/<repository>.git`.
    pub server_url: String,
    /// `GITHUB_REPOSITORY`, `owner/name`.
    pub repository: String,
    pub token: SecretString,
    pub policy: RequestPolicy,
}

pub struct GithubForge {
    client: Octocrab,
    /// The same token against the GraphQL endpoint, which GitHub Enterprise Server serves at
    /// `/api/graphql` beside the REST API's `/api/v3`.
    graphql: Octocrab,
    owner: String,
    repo: String,
    remote: RemoteSpec,
    http: Resilience,
}

enum Method {
    Get,
    Post,
    Patch,
    /// A POST to the GraphQL endpoint.
    GraphQl,
}

impl GithubForge {
    pub fn new(settings: GithubSettings) -> Result<Self> {
        let (owner, repo) = settings
            .repository
            .split_once('/')
            .filter(|(o, r)| !o.is_empty() && !r.is_empty() && !r.contains('/'))
            .ok_or_else(|| {
                ForgeError::Local(format!(
                    "GITHUB_REPOSITORY must be `owner/name`, not `{}`",
                    settings.repository
                ))
            })?;
        let client = |base: &str| {
            Octocrab::builder()
                .base_uri(base)
                .map_err(|e| ForgeError::Local(format!("GITHUB_API_URL `{base}`: {e}")))?
                .personal_token(settings.token.clone())
                .set_connect_timeout(Some(Duration::from_secs(30)))
                .set_read_timeout(Some(Duration::from_secs(60)))
                .build()
                .map_err(|e| ForgeError::Local(format!("GitHub client: {e}")))
        };
        let api = settings.api_url.trim_end_matches('/');
        let graphql_base = api.strip_suffix("/v3").unwrap_or(api);
        Ok(Self {
            client: client(api)?,
            graphql: client(graphql_base)?,
            owner: owner.to_string(),
            repo: repo.to_string(),
            remote: RemoteSpec {
                url: RemoteUrl::new(format!(
                    "{}/{}.git",
                    settings.server_url.trim_end_matches('/'),
                    settings.repository
                )),
                username: Some("x-access-token".into()),
                token: Some(settings.token),
            },
            http: Resilience::new(settings.policy),
        })
    }
}

#[async_trait]
impl Forge for GithubForge {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Github
    }

    fn remote(&self) -> &RemoteSpec {
        &self.remote
    }

    fn requests(&self) -> u64 {
        self.http.requests()
    }

    fn explain_push_rejection(&self, message: &str) -> Option<String> {
        let lower = message.to_ascii_lowercase();
        if lower.contains("workflow") && (lower.contains("permission") || lower.contains("scope")) {
            Some(format!(
                "GitHub refused the push because it changes files under .github/workflows ({message}). The default GITHUB_TOKEN can never do that: use a personal access token with the `workflow` scope or a GitHub App token with the `workflows` permission"
            ))
        } else if lower.contains("protected branch")
            || lower.contains("gh006")
            || lower.contains("gh013")
        {
            Some(format!(
                "GitHub refused the push: a branch protection rule or ruleset covers this branch ({message}). Exempt `quartermaster/*` from it or let the token bypass it"
            ))
        } else {
            None
        }
    }

    async fn find_pull_request(&self, branch: &str) -> Result<Option<PullRequest>> {
        // `head` must be `owner:branch`: a bare branch is ignored and every PR comes back.
        let head = format!("{}:{branch}", self.owner);
        let uri = format!(
            "{}?{}",
            self.path("/pulls"),
            query(&[("head", &head), ("state", "all"), ("per_page", "10")])
        );
        let r = self
            .call(Method::Get, &uri, None, "looking for the branch's PR")
            .await?;
        let pulls: Vec<octocrab::models::pulls::PullRequest> = parse(&r.body, "listing PRs")?;
        Ok(super::choose_pull_request(
            pulls.into_iter().map(|p| self.pull_request_of(p)),
            branch,
        ))
    }

    async fn pull_request(&self, number: u64) -> Result<Option<PullRequest>> {
        let uri = self.path(&format!("/pulls/{number}"));
        Ok(self
            .get_optional::<octocrab::models::pulls::PullRequest>(&uri, "reading a PR")
            .await?
            .map(|p| self.pull_request_of(p)))
    }

    async fn create_pull_request(&self, new: &NewPullRequest) -> Result<PullRequest> {
        let uri = self.path("/pulls");
        let body = json!({
            "title": new.title, "head": new.head, "base": new.base, "body": new.body,
            "draft": new.draft, "maintainer_can_modify": true,
        });
        let mut pr = recover_create(
            3,
            Duration::from_secs(1),
            || async {
                match self
                    .call(Method::Post, &uri, Some(body.clone()), "opening the PR")
                    .await
                {
                    Ok(r) => Ok(self.pull_request_of(parse(&r.body, "opening the PR")?)),
                    // "A pull request already exists for owner:branch": one the lookup missed
                    // (an answer lost earlier, a listing not yet up to date) is adopted.
                    Err(ForgeError::Api {
                        status: 422,
                        message,
                    }) if message.contains("already exists") => {
                        let open = self.find_open_pull_request(&new.head).await?;
                        let open = open.ok_or_else(|| ForgeError::Api {
                            status: 422,
                            message: format!(
                                "{message}; but GitHub lists no open PR for {}",
                                new.head
                            ),
                        })?;
                        super::bring_up_to_date(self, open, new).await
                    }
                    Err(other) => Err(other),
                }
            },
            || self.find_open_pull_request(&new.head),
        )
        .await?;
        let missing: Vec<String> = new
            .labels
            .iter()
            .filter(|l| !pr.labels.contains(l))
            .cloned()
            .collect();
        if !missing.is_empty() {
            pr.labels = self.add_labels(pr.number, &missing).await?;
        }
        Ok(pr)
    }

    async fn update_pull_request(
        &self,
        number: u64,
        edit: &PullRequestEdit,
    ) -> Result<PullRequest> {
        let mut fields = serde_json::Map::new();
        if let Some(title) = &edit.title {
            fields.insert("title".into(), json!(title));
        }
        if let Some(body) = &edit.body {
            fields.insert("body".into(), json!(body));
        }
        let mut pr = if fields.is_empty() {
            self.pull_request(number)
                .await?
                .ok_or_else(|| ForgeError::NotFound(format!("PR #{number}")))?
        } else {
            let r = self
                .call(
                    Method::Patch,
                    &self.path(&format!("/pulls/{number}")),
                    Some(Value::Object(fields)),
                    "updating the PR",
                )
                .await?;
            self.pull_request_of(parse(&r.body, "updating the PR")?)
        };
        if !edit.add_labels.is_empty() {
            pr.labels = self.add_labels(number, &edit.add_labels).await?;
        }
        Ok(pr)
    }

    async fn close_pull_request(&self, number: u64) -> Result<PullRequest> {
        let r = self
            .call(
                Method::Patch,
                &self.path(&format!("/pulls/{number}")),
                Some(json!({ "state": "closed" })),
                "closing the PR",
            )
            .await?;
        Ok(self.pull_request_of(parse(&r.body, "closing the PR")?))
    }

    async fn open_pull_requests(&self, label: &str) -> Result<Vec<PullRequest>> {
        self.labelled_open_pull_requests(label).await
    }

    async fn request_auto_merge(&self, number: u64, head: git2::Oid) -> Result<()> {
        self.enable_auto_merge(number, head).await
    }

    async fn request_review(&self, number: u64, people: &People) -> Result<Vec<String>> {
        self.ask_people(number, people).await
    }

    async fn create_commit(&self, commit: &ApiCommit) -> Result<git2::Oid> {
        self.commit_through_api(commit).await
    }

    async fn commit_authors(&self, pr: &PullRequest) -> Result<Option<Vec<String>>> {
        let uri = format!(
            "{}?per_page=100",
            self.path(&format!("/pulls/{}/commits", pr.number))
        );
        let commits: Vec<octocrab::models::repos::RepoCommit> =
            self.list(uri, "reading the PR's commits").await?;
        Ok(Some(
            commits
                .into_iter()
                .flat_map(|c| {
                    [c.commit.author, c.commit.committer]
                        .map(|who| who.and_then(|w| w.email).unwrap_or_default())
                })
                .collect(),
        ))
    }

    async fn find_open_issue(
        &self,
        title: &str,
        label: &str,
        marker: &str,
    ) -> Result<Option<Issue>> {
        let uri = format!(
            "{}?{}",
            self.path("/issues"),
            query(&[("labels", label), ("state", "open"), ("per_page", "100")])
        );
        let issues: Vec<octocrab::models::issues::Issue> =
            self.list(uri, "looking for the issue").await?;
        Ok(issues
            .into_iter()
            .filter(|i| i.pull_request.is_none() && i.title == title)
            .map(Self::issue_of)
            .find(|i| i.body.contains(marker)))
    }

    async fn issue(&self, number: u64) -> Result<Option<Issue>> {
        let uri = self.path(&format!("/issues/{number}"));
        Ok(self
            .get_optional::<octocrab::models::issues::Issue>(&uri, "reading an issue")
            .await?
            .filter(|i| i.pull_request.is_none())
            .map(Self::issue_of))
    }

    async fn create_issue(&self, new: &NewIssue) -> Result<Issue> {
        let uri = self.path("/issues");
        let body = json!({ "title": new.title, "body": new.body, "labels": new.labels });
        let label = new.labels.first().cloned().unwrap_or_default();
        recover_create(
            3,
            Duration::from_secs(1),
            || async {
                let r = self
                    .call(Method::Post, &uri, Some(body.clone()), "opening the issue")
                    .await?;
                Ok(Self::issue_of(parse(&r.body, "opening the issue")?))
            },
            || self.find_open_issue(&new.title, &label, &new.body),
        )
        .await
    }

    async fn update_issue_body(&self, number: u64, body: &str) -> Result<Issue> {
        let r = self
            .call(
                Method::Patch,
                &self.path(&format!("/issues/{number}")),
                Some(json!({ "body": body })),
                "updating the issue",
            )
            .await?;
        Ok(Self::issue_of(parse(&r.body, "updating the issue")?))
    }

    async fn comments(&self, target: Target) -> Result<Vec<Comment>> {
        let number = match target {
            Target::PullRequest(n) | Target::Issue(n) => n,
        };
        let uri = format!(
            "{}?per_page=100",
            self.path(&format!("/issues/{number}/comments"))
        );
        let comments: Vec<octocrab::models::issues::Comment> =
            self.list(uri, "reading comments").await?;
        Ok(comments
            .into_iter()
            .map(|c| Comment {
                id: c.id.into_inner(),
                body: c.body.unwrap_or_default(),
                url: c.html_url.to_string(),
            })
            .collect())
    }

    async fn create_comment(&self, target: Target, body: &str) -> Result<Comment> {
        let number = match target {
            Target::PullRequest(n) | Target::Issue(n) => n,
        };
        let uri = self.path(&format!("/issues/{number}/comments"));
        recover_create(
            3,
            Duration::from_secs(1),
            || async {
                let r = self
                    .call(
                        Method::Post,
                        &uri,
                        Some(json!({ "body": body })),
                        "commenting",
                    )
                    .await?;
                let c: octocrab::models::issues::Comment = parse(&r.body, "commenting")?;
                Ok(Comment {
                    id: c.id.into_inner(),
                    body: c.body.unwrap_or_default(),
                    url: c.html_url.to_string(),
                })
            },
            || super::posted_comment(self, target, body),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_page_is_made_relative() {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            "link",
            "<https://ghe.example.com/api/v3/repos/o/r/issues?page=2>; rel=\"next\", <https://ghe.example.com/api/v3/repos/o/r/issues?page=5>; rel=\"last\""
                .parse()
                .unwrap(),
        );
        assert_eq!(
            next_page(&headers).as_deref(),
            Some("/api/v3/repos/o/r/issues?page=2")
        );
        assert_eq!(next_page(&http::HeaderMap::new()), None);
    }

    #[tokio::test]
    async fn repository_must_be_owner_and_name() {
        let settings = |repository: &str| GithubSettings {
            api_url: "https://api.github.com".into(),
            server_url: "https://github.com".into(),
            repository: repository.into(),
            token: SecretString::from("t"),
            policy: RequestPolicy::default(),
        };
        assert!(GithubForge::new(settings("o/r")).is_ok());
        for bad in ["o", "/r", "o/", "o/r/x"] {
            let err = GithubForge::new(settings(bad)).err().unwrap().to_string();
            assert!(
                err.contains("GITHUB_REPOSITORY must be `owner/name`"),
                "{err}"
            );
        }
    }
}
