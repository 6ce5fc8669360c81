//! Publishing a built branch: push it (unless the remote already holds exactly this change), then
//! open its PR or bring the open one up to date.

use super::record;
use super::stop::Stop;
use super::text::with_bot_label;
use super::{Worker, millis};
use crate::forge::{ApiCommit, FileChange, NewPullRequest, PullRequest, PullRequestEdit};
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
        mut p: Publication<'_>,
        existing: Option<PullRequest>,
    ) -> Result<PullRequestRef, Stop> {
        let lap = std::time::Instant::now();
        let pushed = if self.settings.sign_commits {
            self.push_through_forge(&p).await?
        } else {
            self.push(&p)?
        };
        tracing::debug!(ms = millis(lap.elapsed()), "pushed");
        // A branch whose commit the forge made (now or on an earlier run) says so in its record:
        // that commit names the forge's identity, and is Quartermaster's all the same.
        let tip = self.git()?.heads.get(p.branch).copied();
        if let Some(tip) = tip.filter(|tip| *tip != p.commit.id) {
            p.body = p.body.map(|body| record::with_api_commit(&body, tip));
        }
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
                    auto_merge: false,
                    notes: Vec::new(),
                }
            }
        };
        self.progress
            .step(&format!("PR #{} {}", pr.number, pr.operation.as_str()));
        Ok(pr)
    }

    /// Where the remote branch is, and whether it already holds this change on the same base.
    fn lease(&self, p: &Publication<'_>) -> Result<(Option<git2::Oid>, bool), Stop> {
        let git = self.git()?;
        let expected = git.heads.get(p.branch).copied();
        let same = match expected {
            Some(tip) => {
                let info = git.mirror.commit_info(tip)?;
                info.tree == p.commit.tree && info.parents == [p.commit.base]
            }
            None => false,
        };
        Ok((expected, same))
    }

    /// Pushes the commit unless the remote branch already holds this change on the same base.
    /// Whether it pushed.
    fn push(&self, p: &Publication<'_>) -> Result<bool, Stop> {
        let remote = self.forge.remote().clone();
        // The remote's state is shared; the push itself goes on without holding it (no other
        // action holds this branch's key meanwhile).
        let (expected, same) = self.lease(p)?;
        if same {
            return Ok(false);
        }
        let Some(workspace) = self.workspace.as_ref() else {
            return Err(Stop::failed("the workspace is gone"));
        };
        if let Err(e) = workspace.push(&remote, p.branch, p.commit.id, expected) {
            return Err(match &e {
                GitError::Rejected { message, .. } => self
                    .forge
                    .explain_push_rejection(message)
                    .map_or_else(|| e.into(), Stop::failed),
                _ => e.into(),
            });
        }
        self.git()?.heads.insert(p.branch.to_string(), p.commit.id);
        self.progress.step(&format!("pushed {}", p.branch));
        Ok(true)
    }

    /// Has the forge make the commit (and sign it) from the verified files, unless the remote
    /// branch already holds this change on the same base; then checks that what the forge made
    /// is exactly the verified tree on the base, or deletes it. Whether it made one.
    async fn push_through_forge(&self, p: &Publication<'_>) -> Result<bool, Stop> {
        let (expected, same) = self.lease(p)?;
        if same {
            return Ok(false);
        }
        let Some(workspace) = self.workspace.as_ref() else {
            return Err(Stop::failed("the workspace is gone"));
        };
        let files = workspace
            .changed_files(p.commit)?
            .into_iter()
            .map(|f| FileChange {
                path: f.path,
                in_base: f.in_base,
                mode: f.mode,
                content: f.content,
            })
            .collect();
        let commit = ApiCommit {
            branch: p.branch.to_string(),
            base: p.commit.base,
            base_tree: self.git()?.mirror.commit_info(p.commit.base)?.tree,
            tree: p.commit.tree,
            expected,
            message: workspace.message_of(p.commit)?,
            files,
            author: self.settings.author.clone(),
        };
        let made = self.forge.create_commit(&commit).await?;
        let mut git = self.git()?;
        git.mirror.fetch(&[p.branch])?;
        let info = git.mirror.commit_info(made)?;
        if info.tree != p.commit.tree || info.parents != [p.commit.base] {
            let removed = git.mirror.delete_branch(p.branch, made).is_ok();
            let parents: Vec<String> = info.parents.iter().map(git2::Oid::to_string).collect();
            return Err(Stop::failed(format!(
                "the commit the forge made on {} holds tree {} on top of {}, not the verified tree {} on top of {}; {}",
                p.branch,
                info.tree,
                parents.join(", "),
                p.commit.tree,
                p.commit.base,
                if removed {
                    "the branch was deleted"
                } else {
                    "deleting the branch failed: delete it by hand"
                }
            )));
        }
        git.heads.insert(p.branch.to_string(), made);
        drop(git);
        self.progress.step(&format!(
            "the forge made and signed {} on {}",
            super::text::short(made),
            p.branch
        ));
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
            auto_merge: false,
            notes: Vec::new(),
        })
    }
}
