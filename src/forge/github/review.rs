//! What happens to a PR after it is opened: the bot's open PRs listed, auto-merge requested
//! through GraphQL (`enablePullRequestAutoMerge`, the only API for it), reviewers and assignees.

use super::*;

/// GraphQL's answer: data, or errors with a 200 status.
#[derive(serde::Deserialize)]
pub(super) struct GraphQlAnswer {
    #[serde(default)]
    pub data: Option<Value>,
    #[serde(default)]
    pub errors: Vec<GraphQlError>,
}

#[derive(serde::Deserialize)]
pub(super) struct GraphQlError {
    #[serde(default)]
    pub message: String,
}

const AUTO_MERGE: &str = "mutation($pr: ID!, $head: GitObjectID) { enablePullRequestAutoMerge(input: {pullRequestId: $pr, expectedHeadOid: $head}) { pullRequest { number autoMergeRequest { enabledAt } } } }";

impl GithubForge {
    pub(super) async fn labelled_open_pull_requests(
        &self,
        label: &str,
    ) -> Result<Vec<PullRequest>> {
        let uri = format!(
            "{}?{}",
            self.path("/pulls"),
            query(&[
                ("state", "open"),
                ("sort", "created"),
                ("direction", "asc"),
                ("per_page", "100")
            ])
        );
        let pulls: Vec<octocrab::models::pulls::PullRequest> =
            self.list(uri, "listing open PRs").await?;
        let mut open: Vec<PullRequest> = pulls
            .into_iter()
            .map(|p| self.pull_request_of(p))
            .filter(|p| !p.from_fork && p.labels.iter().any(|l| l == label))
            .collect();
        open.sort_by_key(|p| p.number);
        Ok(open)
    }

    /// One GraphQL request; its `data`, or the errors GitHub gave as the failure.
    pub(super) async fn graphql(&self, query: &str, variables: Value, what: &str) -> Result<Value> {
        let r = self
            .call(
                Method::GraphQl,
                "/graphql",
                Some(json!({ "query": query, "variables": variables })),
                what,
            )
            .await?;
        let answer: GraphQlAnswer = parse(&r.body, what)?;
        if !answer.errors.is_empty() {
            let messages: Vec<String> = answer.errors.into_iter().map(|e| e.message).collect();
            return Err(ForgeError::Api {
                status: r.status,
                message: format!("{what}: {}", messages.join("; ")),
            });
        }
        answer.data.ok_or_else(|| ForgeError::Api {
            status: r.status,
            message: format!("{what}: GitHub answered without data"),
        })
    }

    /// `enablePullRequestAutoMerge`, for the PR's node id, as long as its head is still `head`.
    pub(super) async fn enable_auto_merge(&self, number: u64, head: git2::Oid) -> Result<()> {
        let uri = self.path(&format!("/pulls/{number}"));
        let pr: octocrab::models::pulls::PullRequest = self
            .get_optional(&uri, "reading the PR")
            .await?
            .ok_or_else(|| ForgeError::NotFound(format!("PR #{number}")))?;
        let id = pr.node_id.ok_or_else(|| ForgeError::Api {
            status: 200,
            message: format!("PR #{number} has no node id"),
        })?;
        let variables = json!({ "pr": id, "head": head.to_string() });
        match self
            .graphql(AUTO_MERGE, variables, "requesting auto-merge")
            .await
        {
            Ok(_) => Ok(()),
            Err(ForgeError::Api { status, message }) => Err(ForgeError::Api {
                status,
                message: format!("{message}{}", auto_merge_advice(&message)),
            }),
            Err(e) => Err(e),
        }
    }

    /// Requests reviews (users and teams) and adds assignees; the requests GitHub did not take.
    pub(super) async fn ask_people(&self, number: u64, people: &People) -> Result<Vec<String>> {
        let mut notes = Vec::new();
        if !people.reviewers.is_empty() || !people.team_reviewers.is_empty() {
            let uri = self.path(&format!("/pulls/{number}/requested_reviewers"));
            let body = json!({
                "reviewers": people.reviewers, "team_reviewers": people.team_reviewers,
            });
            // Asking twice changes nothing: retried like a GET.
            match self
                .call_as(Method::Post, &uri, Some(body), "requesting reviews", true)
                .await
            {
                Ok(_) => {}
                // "Reviews may only be requested from collaborators."
                Err(ForgeError::Api {
                    status: 422,
                    message,
                }) => notes.push(format!("reviews not requested: {message}")),
                Err(e) => return Err(e),
            }
        }
        if !people.assignees.is_empty() {
            let uri = self.path(&format!("/issues/{number}/assignees"));
            let body = json!({ "assignees": people.assignees });
            let r = self
                .call_as(Method::Post, &uri, Some(body), "adding assignees", true)
                .await?;
            // GitHub drops, without a word, assignees who cannot be assigned.
            let issue: octocrab::models::issues::Issue = parse(&r.body, "adding assignees")?;
            let taken: Vec<String> = issue.assignees.into_iter().map(|a| a.login).collect();
            for who in people.assignees.iter().filter(|a| !taken.contains(a)) {
                notes.push(format!("{who} could not be assigned"));
            }
        }
        Ok(notes)
    }
}

/// What to do about a refused auto-merge request, when GitHub's message says.
fn auto_merge_advice(message: &str) -> &'static str {
    let lower = message.to_ascii_lowercase();
    if lower.contains("not allowed") || lower.contains("auto merge is not") {
        ". Turn on \"Allow auto-merge\" in the repository's settings (General > Pull Requests)"
    } else if lower.contains("clean status") || lower.contains("unstable status") {
        ". GitHub enables auto-merge only while something still blocks the merge: protect the default branch with required status checks or reviews"
    } else {
        ""
    }
}
