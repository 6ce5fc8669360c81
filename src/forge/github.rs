//! GitHub (and GitHub Enterprise Server) through octocrab.
//!
//! octocrab provides the client: base URL (`GITHUB_API_URL`), bearer authentication with the token
//! marked sensitive, TLS, timeouts. Requests go through its raw methods so that Quartermaster sees
//! status and headers (rate limits) and decides about retries itself: octocrab's own retry layer
//! repeats POSTs, which can duplicate a PR or comment. Responses are parsed into octocrab's models.
//! Branches are pushed with git to `GITHUB_SERVER_URL/GITHUB_REPOSITORY` as `x-access-token`.

use super::http::{Policy, RawResponse, Resilience, recover_create, short_message};
use super::{
    Comment, Forge, ForgeError, Issue, NewIssue, NewPullRequest, PullRequest, PullRequestEdit,
    Result, State, Target,
};
use crate::git::RemoteSpec;
use async_trait::async_trait;
use octocrab::Octocrab;
use octocrab::models::IssueState;
use secrecy::SecretString;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::time::Duration;

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
    pub policy: Policy,
}

pub struct GithubForge {
    client: Octocrab,
    owner: String,
    repo: String,
    remote: RemoteSpec,
    http: Resilience,
}

enum Method {
    Get,
    Post,
    Patch,
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
        let client = Octocrab::builder()
            .base_uri(settings.api_url.as_str())
            .map_err(|e| ForgeError::Local(format!("GITHUB_API_URL `{}`: {e}", settings.api_url)))?
            .personal_token(settings.token.clone())
            .set_connect_timeout(Some(Duration::from_secs(30)))
            .set_read_timeout(Some(Duration::from_secs(60)))
            .build()
            .map_err(|e| ForgeError::Local(format!("GitHub client: {e}")))?;
        Ok(Self {
            client,
            owner: owner.to_string(),
            repo: repo.to_string(),
            remote: RemoteSpec {
                url: format!(
                    "{}/{}.git",
                    settings.server_url.trim_end_matches('/'),
                    settings.repository
                ),
                username: Some("x-access-token".into()),
                token: Some(settings.token),
            },
            http: Resilience::new(settings.policy),
        })
    }

    /// HTTP requests sent so far.
    pub fn requests(&self) -> u64 {
        self.http.requests()
    }

    fn path(&self, rest: &str) -> String {
        format!("/repos/{}/{}{rest}", self.owner, self.repo)
    }

    async fn once(
        &self,
        method: &Method,
        uri: &str,
        body: Option<&Value>,
    ) -> std::result::Result<RawResponse, String> {
        let response = match method {
            Method::Get => self.client._get(uri).await,
            Method::Post => self.client._post(uri, body).await,
            Method::Patch => self.client._patch(uri, body).await,
        }
        .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = self
            .client
            .body_to_string(response)
            .await
            .map_err(|e| e.to_string())?;
        Ok(RawResponse {
            status,
            headers,
            body,
        })
    }

    /// One API call through the retry and pacing policy. A POST is not repeated blindly.
    async fn call(
        &self,
        method: Method,
        uri: &str,
        body: Option<Value>,
        what: &str,
    ) -> Result<RawResponse> {
        let repeatable = !matches!(method, Method::Post);
        self.call_as(method, uri, body, what, repeatable).await
    }

    /// [`Self::call`], saying whether a failed attempt may simply be sent again.
    async fn call_as(
        &self,
        method: Method,
        uri: &str,
        body: Option<Value>,
        what: &str,
        repeatable: bool,
    ) -> Result<RawResponse> {
        let write = !matches!(method, Method::Get);
        let response = self
            .http
            .send(write, repeatable, || self.once(&method, uri, body.as_ref()))
            .await?;
        if response.ok() {
            Ok(response)
        } else {
            Err(self.error(what, &response))
        }
    }

    /// A GET that answers `None` on 404.
    async fn get_optional<T: DeserializeOwned>(&self, uri: &str, what: &str) -> Result<Option<T>> {
        match self.call(Method::Get, uri, None, what).await {
            Ok(r) => parse(&r.body, what).map(Some),
            Err(ForgeError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Every page of a list, following `Link: rel="next"`.
    async fn list<T: DeserializeOwned>(&self, first: String, what: &str) -> Result<Vec<T>> {
        let mut items = Vec::new();
        let mut next = Some(first);
        for _ in 0..MAX_PAGES {
            let Some(uri) = next.take() else { break };
            let r = self.call(Method::Get, &uri, None, what).await?;
            items.extend(parse::<Vec<T>>(&r.body, what)?);
            next = next_page(&r.headers);
        }
        if next.is_some() {
            tracing::warn!(
                "{what}: only the first {MAX_PAGES} pages ({} items) were read",
                items.len()
            );
        }
        Ok(items)
    }

    /// Turns a refusal into an error that says what to fix.
    fn error(&self, what: &str, r: &RawResponse) -> ForgeError {
        let message = short_message(&r.body);
        let details = serde_json::from_str::<Value>(&r.body)
            .ok()
            .and_then(|v| v.get("errors").cloned())
            .and_then(|e| e.as_array().cloned())
            .map(|errors| {
                errors
                    .iter()
                    .filter_map(|e| e.get("message").and_then(Value::as_str).map(String::from))
                    .collect::<Vec<_>>()
                    .join("; ")
            })
            .filter(|d| !d.is_empty())
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        let repo = format!("{}/{}", self.owner, self.repo);
        match r.status {
            401 => ForgeError::Unauthorized(format!(
                "GitHub answered 401 ({message}) while {what}: the token is missing, wrong or expired"
            )),
            403 if message.contains("not permitted to create or approve pull requests") => {
                ForgeError::Forbidden(format!(
                    "{what}: {message}. Turn on \"Allow GitHub Actions to create and approve pull requests\" in the settings of {repo} (or its organization) under Actions > General > Workflow permissions, or use a personal access token or GitHub App token"
                ))
            }
            403 if message.contains("Resource not accessible") => ForgeError::Forbidden(format!(
                "{what}: {message}. The token lacks a permission: grant the workflow `permissions: {{contents: write, pull-requests: write, issues: write}}`, or use a token that has them"
            )),
            403 => ForgeError::Forbidden(format!("{what}: {message}")),
            404 => ForgeError::NotFound(format!(
                "GitHub answered 404 while {what}: {repo} does not exist or the token cannot see it (a fine-grained token must be granted this repository)"
            )),
            status => ForgeError::Api {
                status,
                message: format!("{what}: {message}{details}"),
            },
        }
    }

    fn pull_request_of(&self, pr: octocrab::models::pulls::PullRequest) -> PullRequest {
        let state = match (pr.state, pr.merged_at) {
            (_, Some(_)) => State::Merged,
            (Some(IssueState::Open), None) => State::Open,
            _ => State::Closed,
        };
        // A head repository that differs from the base's, or that is gone (a deleted fork).
        let from_fork = match (&pr.head.repo, &pr.base.repo) {
            (Some(head), Some(base)) => head.id != base.id,
            _ => true,
        };
        PullRequest {
            number: pr.number,
            url: pr.html_url.map(|u| u.to_string()).unwrap_or_default(),
            state,
            head: pr.head.ref_field,
            base: pr.base.ref_field,
            title: pr.title.unwrap_or_default(),
            body: pr.body.unwrap_or_default(),
            labels: pr
                .labels
                .unwrap_or_default()
                .into_iter()
                .map(|l| l.name)
                .collect(),
            draft: pr.draft.unwrap_or(false),
            from_fork,
        }
    }

    fn issue_of(issue: octocrab::models::issues::Issue) -> Issue {
        Issue {
            number: issue.number,
            url: issue.html_url.to_string(),
            state: match issue.state {
                IssueState::Open => State::Open,
                _ => State::Closed,
            },
            title: issue.title,
            body: issue.body.unwrap_or_default(),
            labels: issue.labels.into_iter().map(|l| l.name).collect(),
        }
    }

    /// Adds labels to a PR or issue. Adding a label twice changes nothing, so server and network
    /// errors are retried like a GET's. Right after a PR is created GitHub may answer 422 for a
    /// moment; that is retried briefly.
    async fn add_labels(&self, number: u64, labels: &[String]) -> Result<Vec<String>> {
        let uri = self.path(&format!("/issues/{number}/labels"));
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self
                .call_as(
                    Method::Post,
                    &uri,
                    Some(json!({ "labels": labels })),
                    "adding labels",
                    true,
                )
                .await
            {
                Ok(r) => {
                    let labels: Vec<octocrab::models::Label> = parse(&r.body, "adding labels")?;
                    return Ok(labels.into_iter().map(|l| l.name).collect());
                }
                Err(ForgeError::Api { status: 422, .. } | ForgeError::NotFound(_))
                    if attempt < 4 =>
                {
                    tokio::time::sleep(Duration::from_millis(500) * attempt).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn find_open_pull_request(&self, branch: &str) -> Result<Option<PullRequest>> {
        Ok(self
            .find_pull_request(branch)
            .await?
            .filter(|p| p.state == State::Open))
    }
}

fn parse<T: DeserializeOwned>(body: &str, what: &str) -> Result<T> {
    serde_json::from_str(body).map_err(|e| ForgeError::Api {
        status: 200,
        message: format!("{what}: unexpected answer from GitHub: {e}"),
    })
}

/// The `rel="next"` URL of a `Link` header, as a path (octocrab adds the base and the token only
/// to relative URIs).
fn next_page(headers: &http::HeaderMap) -> Option<String> {
    let link = headers.get("link")?.to_str().ok()?;
    link.split(',').find_map(|part| {
        let (url, rel) = part.split_once(';')?;
        if !rel.contains("rel=\"next\"") {
            return None;
        }
        let url = url.trim().trim_start_matches('<').trim_end_matches('>');
        let without_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
        let path = &without_scheme[without_scheme.find('/')?..];
        Some(path.to_string())
    })
}

fn query(pairs: &[(&str, &str)]) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        q.append_pair(k, v);
    }
    q.finish()
}

#[async_trait]
impl Forge for GithubForge {
    fn kind(&self) -> &'static str {
        "github"
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

    async fn find_open_issue(&self, title: &str, label: &str) -> Result<Option<Issue>> {
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
            .next())
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
            || self.find_open_issue(&new.title, &label),
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
            policy: Policy::default(),
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
