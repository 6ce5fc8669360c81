//! Requests to the API through the shared retry and pacing policy, and what the answers mean.

use super::*;

impl GitlabForge {
    /// Sends one endpoint through the retry and pacing policy; `page` adds pagination.
    pub(super) async fn send<E: Endpoint + Sync>(
        &self,
        endpoint: &E,
        page: Option<u32>,
        what: &str,
    ) -> Result<RawResponse> {
        let mut url = self
            .client
            .rest_endpoint(&endpoint.endpoint())
            .map_err(|e| build_error(what, e))?;
        endpoint.parameters().add_to_url(&mut url);
        if let Some(page) = page {
            url.query_pairs_mut()
                .append_pair("per_page", "100")
                .append_pair("page", &page.to_string());
        }
        let body = endpoint.body().map_err(|e| build_error(what, e))?;
        let method = endpoint.method();
        let write = method != http::Method::GET;
        let repeatable = method != http::Method::POST;
        let response = self
            .http
            .send(write, repeatable, || async {
                let mut request = http::Request::builder()
                    .method(method.clone())
                    .uri(url.as_str());
                let data = match &body {
                    Some((mime, data)) => {
                        request = request.header(http::header::CONTENT_TYPE, *mime);
                        data.clone()
                    }
                    None => Vec::new(),
                };
                let r =
                    tokio::time::timeout(REQUEST_TIMEOUT, self.client.rest_async(request, data))
                        .await
                        .map_err(|_| SendError::Timeout(REQUEST_TIMEOUT))?
                        .map_err(SendError::client)?;
                Ok(RawResponse {
                    status: r.status().as_u16(),
                    headers: r.headers().clone(),
                    body: String::from_utf8_lossy(r.body()).into_owned(),
                })
            })
            .await?;
        if response.ok() {
            Ok(response)
        } else {
            Err(self.error(what, &response))
        }
    }

    pub(super) async fn fetch<T: DeserializeOwned, E: Endpoint + Sync>(
        &self,
        endpoint: &E,
        what: &str,
    ) -> Result<T> {
        let r = self.send(endpoint, None, what).await?;
        parse(&r.body, what)
    }

    pub(super) async fn fetch_optional<T: DeserializeOwned, E: Endpoint + Sync>(
        &self,
        endpoint: &E,
        what: &str,
    ) -> Result<Option<T>> {
        match self.send(endpoint, None, what).await {
            Ok(r) => parse(&r.body, what).map(Some),
            Err(ForgeError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Every page of a list, following `X-Next-Page`.
    pub(super) async fn list<T: DeserializeOwned, E: Endpoint + Sync>(
        &self,
        endpoint: &E,
        what: &str,
    ) -> Result<Vec<T>> {
        let mut items = Vec::new();
        let mut page = 1;
        loop {
            let r = self.send(endpoint, Some(page), what).await?;
            items.extend(parse::<Vec<T>>(&r.body, what)?);
            match r
                .headers
                .get("x-next-page")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u32>().ok())
            {
                Some(_) if page == MAX_PAGES => {
                    tracing::warn!(
                        "{what}: only the first {MAX_PAGES} pages ({} items) were read",
                        items.len()
                    );
                    break;
                }
                Some(next) if next > page => page = next,
                _ => break,
            }
        }
        Ok(items)
    }

    pub(super) fn error(&self, what: &str, r: &RawResponse) -> ForgeError {
        let message = short_message(&r.body);
        match r.status {
            401 => ForgeError::Unauthorized(format!(
                "GitLab answered 401 ({message}) while {what}: the token is invalid, expired or revoked"
            )),
            403 => ForgeError::Forbidden(format!(
                "{what}: GitLab answered 403 ({message}): the token needs the `api` scope and at least the Developer role on project {}",
                self.project
            )),
            404 => ForgeError::NotFound(format!(
                "GitLab answered 404 while {what}: project {} does not exist or the token cannot see it",
                self.project
            )),
            status => ForgeError::Api {
                status,
                message: format!("{what}: {message}"),
            },
        }
    }

    pub(super) fn pull_request_of(mr: Mr) -> PullRequest {
        let draft = mr.draft || mr.title.starts_with(DRAFT);
        PullRequest {
            number: mr.iid,
            url: mr.web_url,
            state: match mr.state.as_str() {
                "opened" => State::Open,
                // `locked`: being merged right now; nothing may touch it.
                "merged" | "locked" => State::Merged,
                _ => State::Closed,
            },
            head: mr.source_branch,
            base: mr.target_branch,
            title: mr
                .title
                .strip_prefix(DRAFT)
                .unwrap_or(&mr.title)
                .to_string(),
            body: mr.description.unwrap_or_default(),
            labels: mr.labels,
            draft,
            from_fork: mr.source_project_id != mr.target_project_id,
            created_at: mr.created_at,
            auto_merge: mr.merge_when_pipeline_succeeds,
            reviewers: mr.reviewers.into_iter().map(|u| u.username).collect(),
            team_reviewers: Vec::new(),
            assignees: mr.assignees.into_iter().map(|u| u.username).collect(),
        }
    }

    pub(super) fn issue_of(issue: GlIssue) -> Issue {
        Issue {
            number: issue.iid,
            url: issue.web_url,
            state: if issue.state == "opened" {
                State::Open
            } else {
                State::Closed
            },
            title: issue.title,
            body: issue.description.unwrap_or_default(),
            labels: issue.labels,
        }
    }

    pub(super) async fn find_open_pull_request(&self, branch: &str) -> Result<Option<PullRequest>> {
        Ok(self
            .find_pull_request(branch)
            .await?
            .filter(|p| p.state == State::Open))
    }

    pub(super) async fn notes(&self, target: Target) -> Result<Vec<Note>> {
        let project = self.project.as_str();
        let notes: Vec<Note> = match target {
            Target::PullRequest(iid) => {
                let e = api::projects::merge_requests::notes::MergeRequestNotes::builder()
                    .project(project)
                    .merge_request(iid)
                    .build()
                    .map_err(|e| build_error("reading notes", e))?;
                self.list(&e, "reading notes").await?
            }
            Target::Issue(iid) => {
                let e = api::projects::issues::notes::IssueNotes::builder()
                    .project(project)
                    .issue(iid)
                    .build()
                    .map_err(|e| build_error("reading notes", e))?;
                self.list(&e, "reading notes").await?
            }
        };
        Ok(notes.into_iter().filter(|n| !n.system).collect())
    }

    pub(super) fn comment_of(&self, target: Target, note: Note) -> Comment {
        let (kind, iid) = match target {
            Target::PullRequest(n) => ("merge_requests", n),
            Target::Issue(n) => ("issues", n),
        };
        let url = self.remote.url.to_string();
        let base = url.trim_end_matches(".git");
        Comment {
            id: note.id,
            body: note.body,
            url: format!("{base}/-/{kind}/{iid}#note_{}", note.id),
        }
    }
}

/// The HTTP status GitLab answered a failed request with, if it answered at all.
pub(super) fn answered_status(e: &gitlab::GitlabError) -> Option<u16> {
    use gitlab::api::ApiError;
    match e {
        gitlab::GitlabError::Http { status } => Some(status.as_u16()),
        gitlab::GitlabError::Api { source } => match source {
            ApiError::GitlabService { status, .. }
            | ApiError::GitlabWithStatus { status, .. }
            | ApiError::GitlabObjectWithStatus { status, .. }
            | ApiError::GitlabUnrecognizedWithStatus { status, .. } => Some(status.as_u16()),
            ApiError::GitlabRateLimited { .. } => Some(429),
            _ => None,
        },
        _ => None,
    }
}

pub(super) fn build_error(what: &str, e: impl std::fmt::Display) -> ForgeError {
    ForgeError::Local(format!("{what}: {e}"))
}

pub(super) fn parse<T: DeserializeOwned>(body: &str, what: &str) -> Result<T> {
    serde_json::from_str(body).map_err(|e| ForgeError::Api {
        status: 200,
        message: format!("{what}: unexpected answer from GitLab: {e}"),
    })
}
