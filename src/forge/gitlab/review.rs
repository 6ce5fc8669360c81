//! What happens to an MR after it is opened: the bot's open MRs listed, auto-merge (merge when
//! the pipeline succeeds) requested, reviewers and assignees set by user id.

use super::*;
use gitlab::api::common::NameOrId;
use gitlab::api::endpoint_prelude::{BodyError, Cow, FormParams, Method};

/// `PUT /projects/:id/merge_requests/:iid/merge` asking for auto-merge. The crate's endpoint
/// predates `auto_merge`, which GitLab 17.11 introduced in place of
/// `merge_when_pipeline_succeeds`: both are sent, so that older and newer servers understand.
struct AutoMerge<'a> {
    project: NameOrId<'a>,
    iid: u64,
    /// The head the MR must still have.
    sha: String,
}

impl Endpoint for AutoMerge<'_> {
    fn method(&self) -> Method {
        Method::PUT
    }

    fn endpoint(&self) -> Cow<'static, str> {
        format!(
            "projects/{}/merge_requests/{}/merge",
            self.project, self.iid
        )
        .into()
    }

    fn body(&self) -> std::result::Result<Option<(&'static str, Vec<u8>)>, BodyError> {
        let mut params = FormParams::default();
        params
            .push("auto_merge", true)
            .push("merge_when_pipeline_succeeds", true)
            .push("should_remove_source_branch", true)
            .push("sha", self.sha.as_str());
        params.into_body()
    }
}

impl GitlabForge {
    pub(super) async fn labelled_open_merge_requests(
        &self,
        label: &str,
    ) -> Result<Vec<PullRequest>> {
        let e = api::projects::merge_requests::MergeRequests::builder()
            .project(self.project.as_str())
            .state(api::projects::merge_requests::MergeRequestState::Opened)
            .label(label)
            .order_by(api::projects::merge_requests::MergeRequestOrderBy::CreatedAt)
            .sort(api::common::SortOrder::Ascending)
            .build()
            .map_err(|e| build_error("listing open MRs", e))?;
        let mrs: Vec<Mr> = self.list(&e, "listing open MRs").await?;
        let mut open: Vec<PullRequest> = mrs
            .into_iter()
            .map(Self::pull_request_of)
            .filter(|p| !p.from_fork && p.labels.iter().any(|l| l == label))
            .collect();
        open.sort_by_key(|p| p.number);
        Ok(open)
    }

    pub(super) async fn merge_when_pipeline_succeeds(
        &self,
        number: u64,
        head: git2::Oid,
    ) -> Result<()> {
        let e = AutoMerge {
            project: self.project.as_str().into(),
            iid: number,
            sha: head.to_string(),
        };
        match self.send(&e, None, "requesting auto-merge").await {
            Ok(_) => Ok(()),
            // 405: nothing can be merged now (a failed pipeline, a draft, a conflict).
            Err(ForgeError::Api {
                status: 405,
                message,
            }) => Err(ForgeError::Api {
                status: 405,
                message: format!(
                    "{message}: GitLab cannot set this MR to merge (a failed pipeline, a draft, or a conflict)"
                ),
            }),
            Err(e) => Err(e),
        }
    }

    /// Sets reviewers and assignees, found by user name; who was not found, and that GitLab has
    /// no team reviewers.
    pub(super) async fn ask_people(&self, number: u64, people: &People) -> Result<Vec<String>> {
        let mut notes = Vec::new();
        if !people.team_reviewers.is_empty() {
            notes.push(format!(
                "team reviewers ({}) are GitHub's; GitLab has none",
                people.team_reviewers.join(", ")
            ));
        }
        let reviewers = self.user_ids(&people.reviewers, &mut notes).await?;
        let assignees = self.user_ids(&people.assignees, &mut notes).await?;
        if reviewers.is_empty() && assignees.is_empty() {
            return Ok(notes);
        }
        let mut builder = api::projects::merge_requests::EditMergeRequest::builder();
        builder.project(self.project.as_str()).merge_request(number);
        if !reviewers.is_empty() {
            builder.reviewers(reviewers.into_iter());
        }
        if !assignees.is_empty() {
            builder.assignees(assignees.into_iter());
        }
        let e = builder
            .build()
            .map_err(|e| build_error("setting reviewers", e))?;
        self.send(&e, None, "setting reviewers and assignees")
            .await?;
        Ok(notes)
    }

    /// The ids of the users named; a name GitLab does not know is noted and left out.
    async fn user_ids(&self, names: &[String], notes: &mut Vec<String>) -> Result<Vec<u64>> {
        let mut ids = Vec::new();
        for name in names {
            let e = api::users::Users::builder()
                .username(name.as_str())
                .build()
                .map_err(|e| build_error("looking up a user", e))?;
            let found: Vec<Someone> = self.fetch(&e, "looking up a user").await?;
            match found.into_iter().find(|u| u.username == *name) {
                Some(user) => ids.push(user.id),
                None => notes.push(format!("GitLab has no user {name}")),
            }
        }
        Ok(ids)
    }
}
