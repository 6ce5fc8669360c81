//! Requests to the API through the shared retry and pacing policy, and what the answers mean.

use super::*;

impl GithubForge {
    /// HTTP requests sent so far.
    pub fn requests(&self) -> u64 {
        self.http.requests()
    }

    pub(super) fn path(&self, rest: &str) -> String {
        format!("/repos/{}/{}{rest}", self.owner, self.repo)
    }

    pub(super) async fn once(
        &self,
        method: &Method,
        uri: &str,
        body: Option<&Value>,
    ) -> std::result::Result<RawResponse, SendError> {
        let response = match method {
            Method::Get => self.client._get(uri).await,
            Method::Post => self.client._post(uri, body).await,
            Method::Patch => self.client._patch(uri, body).await,
            Method::GraphQl => self.graphql._post(uri, body).await,
        }
        .map_err(SendError::client)?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = self
            .client
            .body_to_string(response)
            .await
            .map_err(SendError::client)?;
        Ok(RawResponse {
            status,
            headers,
            body,
        })
    }

    /// One API call through the retry and pacing policy. A POST is not repeated blindly.
    pub(super) async fn call(
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
    pub(super) async fn call_as(
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
    pub(super) async fn get_optional<T: DeserializeOwned>(
        &self,
        uri: &str,
        what: &str,
    ) -> Result<Option<T>> {
        match self.call(Method::Get, uri, None, what).await {
            Ok(r) => parse(&r.body, what).map(Some),
            Err(ForgeError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Every page of a list, following `Link: rel="next"`.
    pub(super) async fn list<T: DeserializeOwned>(
        &self,
        first: String,
        what: &str,
    ) -> Result<Vec<T>> {
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
    pub(super) fn error(&self, what: &str, r: &RawResponse) -> ForgeError {
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

    pub(super) fn pull_request_of(&self, pr: octocrab::models::pulls::PullRequest) -> PullRequest {
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
        let logins = |people: Option<Vec<octocrab::models::Author>>| -> Vec<String> {
            people
                .unwrap_or_default()
                .into_iter()
                .map(|p| p.login)
                .collect()
        };
        PullRequest {
            created_at: pr
                .created_at
                .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string()),
            auto_merge: pr.auto_merge.is_some(),
            reviewers: logins(pr.requested_reviewers),
            team_reviewers: pr
                .requested_teams
                .unwrap_or_default()
                .into_iter()
                .map(|t| t.slug)
                .collect(),
            assignees: logins(pr.assignees),
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

    pub(super) fn issue_of(issue: octocrab::models::issues::Issue) -> Issue {
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
    pub(super) async fn add_labels(&self, number: u64, labels: &[String]) -> Result<Vec<String>> {
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

    pub(super) async fn find_open_pull_request(&self, branch: &str) -> Result<Option<PullRequest>> {
        Ok(self
            .find_pull_request(branch)
            .await?
            .filter(|p| p.state == State::Open))
    }
}

pub(super) fn parse<T: DeserializeOwned>(body: &str, what: &str) -> Result<T> {
    serde_json::from_str(body).map_err(|e| ForgeError::Api {
        status: 200,
        message: format!("{what}: unexpected answer from GitHub: {e}"),
    })
}

/// The `rel="next"` URL of a `Link` header, as a path (octocrab adds the base and the token only
/// to relative URIs).
pub(super) fn next_page(headers: &http::HeaderMap) -> Option<String> {
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

pub(super) fn query(pairs: &[(&str, &str)]) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        q.append_pair(k, v);
    }
    q.finish()
}
