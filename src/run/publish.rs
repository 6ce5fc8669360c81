//! Publishing a built branch: push it (unless the remote already holds exactly this change), then
//! open its PR or bring the open one up to date.

use super::stop::Stop;
use super::text::with_bot_label;
use super::{Worker, millis};
use crate::forge::{NewPullRequest, PullRequest, PullRequestEdit};
use crate::git::{GitError, NewCommit};
use crate::report::{Operation, PullRequestRef};

/// A branch ready to publish, and what its PR says.
pub struct Publication<'p> {
    pub commit: &'p NewCommit,
    pub branch: &'p str,
    pub title: &'p str,
    /// `None` keeps the body of an existing PR.
    pub body: Option<String>,
    pub labels: &'p [String],
}

impl Worker<'_> {
    /// Pushes the branch and creates or updates its PR (`existing`, when one is open).
    pub(super) async fn publish(
        &self,
        p: Publication<'_>,
        existing: Option<PullRequest>,
    ) -> Result<PullRequestRef, Stop> {
        let lap = std::time::Instant::now();
        let pushed = self.push(p.commit, p.branch)?;
        tracing::debug!(ms = millis(lap.elapsed()), "pushed");
        self.open_or_update(p, existing, pushed).await
    }

    /// Creates the PR of a pushed branch, or brings the open one (`existing`) up to date;
    /// `pushed` says whether the push changed the branch.
    pub(super) async fn open_or_update(
        &self,
        p: Publication<'_>,
        existing: Option<PullRequest>,
        pushed: bool,
    ) -> Result<PullRequestRef, Stop> {
        let labels = with_bot_label(p.labels, &self.settings.bot_label);
        let pr = match existing {
            Some(pr) => self.bring_up_to_date(&p, pr, labels, pushed).await?,
            None => {
                let pr = self
                    .forge
                    .create_pull_request(&NewPullRequest {
                        head: p.branch.to_string(),
                        base: self.plan.plan().repo_context.default_branch.clone(),
                        title: p.title.to_string(),
                        body: p.body.unwrap_or_default(),
                        labels,
                        draft: self.settings.draft,
                    })
                    .await?;
                PullRequestRef {
                    number: pr.number,
                    url: pr.url,
                    branch: p.branch.to_string(),
                    operation: Operation::Created,
                    reused: None,
                }
            }
        };
        self.progress
            .step(&format!("PR #{} {}", pr.number, pr.operation.as_str()));
        Ok(pr)
    }

    /// Pushes the commit to `branch` unless the remote branch already holds this change on the
    /// same base. Whether it pushed.
    pub(super) fn push(&self, commit: &NewCommit, branch: &str) -> Result<bool, Stop> {
        let remote = self.forge.remote().clone();
        // The remote's state is shared; the push itself goes on without holding it (no other
        // action holds this branch's key meanwhile).
        let (expected, same) = {
            let git = self.git()?;
            let expected = git.heads.get(branch).copied();
            let same = match expected {
                Some(tip) => {
                    let info = git.mirror.commit_info(tip)?;
                    info.tree == commit.tree && info.parents == [commit.base]
                }
                None => false,
            };
            (expected, same)
        };
        if same {
            return Ok(false);
        }
        let Some(workspace) = self.workspace.as_ref() else {
            return Err(Stop::failed("the workspace is gone"));
        };
        if let Err(e) = workspace.push(&remote, branch, commit.id, expected) {
            return Err(match &e {
                GitError::Rejected { message, .. } => self
                    .forge
                    .explain_push_rejection(message)
                    .map_or_else(|| e.into(), Stop::failed),
                _ => e.into(),
            });
        }
        self.git()?.heads.insert(branch.to_string(), commit.id);
        self.progress.step(&format!("pushed {branch}"));
        Ok(true)
    }

    /// Updates an open PR's title, body and labels where they differ.
    async fn bring_up_to_date(
        &self,
        p: &Publication<'_>,
        pr: PullRequest,
        labels: Vec<String>,
        pushed: bool,
    ) -> Result<PullRequestRef, Stop> {
        let edit = PullRequestEdit {
            title: (pr.title != p.title).then(|| p.title.to_string()),
            body: p.body.clone().filter(|b| *b != pr.body),
            add_labels: labels
                .into_iter()
                .filter(|l| !pr.labels.contains(l))
                .collect(),
        };
        let operation = if pushed || !edit.is_empty() {
            Operation::Updated
        } else {
            Operation::Unchanged
        };
        let pr = if edit.is_empty() {
            pr
        } else {
            self.forge.update_pull_request(pr.number, &edit).await?
        };
        Ok(PullRequestRef {
            number: pr.number,
            url: pr.url,
            branch: p.branch.to_string(),
            operation,
            reused: None,
        })
    }
}
