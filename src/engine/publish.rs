//! Publishing a built branch: push it (unless the remote already holds exactly this change), then
//! open its PR or bring the open one up to date.

use super::git_state;
use super::millis;
use super::record;
use super::stop::Stop;
use super::text::with_bot_label;
use super::{RunContext, WorkerSlot};
use crate::forge::{ApiCommit, FileChange, NewPullRequest, PullRequest, PullRequestEdit};
use crate::git::{GitError, NewCommit};
use crate::report::{Operation, PullRequestRef};

/// A branch ready to publish, and what its PR says.
pub(crate) struct Publication<'p> {
    pub commit: &'p NewCommit,
    pub branch: &'p str,
    pub title: &'p str,
    /// `None` keeps the body of an existing PR.
    pub body: Option<String>,
    pub labels: &'p [String],
}

/// Pushes the branch and creates or updates its PR (`existing`, when one is open).
pub(super) async fn publish(
    run: &RunContext<'_>,
    slot: &WorkerSlot,
    p: Publication<'_>,
    existing: Option<PullRequest>,
) -> Result<PullRequestRef, Stop> {
    let pushed = deliver(run, slot, p.commit, p.branch).await?;
    open_or_update(run, p, existing, pushed).await
}

/// Puts the commit on `branch`: pushed, or made (and signed) by the forge through its API
/// with `--sign-commits`. Whether the branch changed.
pub(super) async fn deliver(
    run: &RunContext<'_>,
    slot: &WorkerSlot,
    commit: &NewCommit,
    branch: &str,
) -> Result<bool, Stop> {
    let lap = std::time::Instant::now();
    let pushed = if run.settings.sign_commits {
        push_through_forge(run, slot, commit, branch).await?
    } else {
        push(run, slot, commit, branch)?
    };
    tracing::debug!(ms = millis(lap.elapsed()), "pushed");
    Ok(pushed)
}

/// Creates the PR of a delivered branch, or brings the open one (`existing`) up to date;
/// `pushed` says whether the delivery changed the branch.
pub(super) async fn open_or_update(
    run: &RunContext<'_>,
    mut p: Publication<'_>,
    existing: Option<PullRequest>,
    pushed: bool,
) -> Result<PullRequestRef, Stop> {
    // A branch whose commit the forge made (now or on an earlier run) says so in its record:
    // that commit names the forge's identity, and is Quartermaster's all the same.
    let tip = git_state::lock(run)?.heads.get(p.branch).copied();
    if let Some(tip) = tip.filter(|tip| *tip != p.commit.id) {
        p.body = p.body.map(|body| record::with_api_commit(&body, tip));
    }
    let labels = with_bot_label(p.labels, &run.settings.bot_label);
    let pr = match existing {
        Some(pr) => bring_up_to_date(run, &p, pr, labels, pushed).await?,
        None => {
            let pr = run
                .forge
                .create_pull_request(&NewPullRequest {
                    head: p.branch.to_string(),
                    base: run.plan.plan().repo_context.default_branch.clone(),
                    title: p.title.to_string(),
                    body: p.body.unwrap_or_default(),
                    labels,
                    draft: run.settings.draft,
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
    run.progress
        .step(&format!("PR #{} {}", pr.number, pr.operation.as_str()));
    Ok(pr)
}

/// Where the remote branch is, and whether it already holds this change on the same base.
fn lease(
    run: &RunContext<'_>,
    commit: &NewCommit,
    branch: &str,
) -> Result<(Option<git2::Oid>, bool), Stop> {
    let git = git_state::lock(run)?;
    let expected = git.heads.get(branch).copied();
    let same = match expected {
        Some(tip) => {
            let info = git.mirror.commit_info(tip)?;
            info.tree == commit.tree && info.parents == [commit.base]
        }
        None => false,
    };
    Ok((expected, same))
}

/// Pushes the commit unless the remote branch already holds this change on the same base.
/// Whether it pushed.
fn push(
    run: &RunContext<'_>,
    slot: &WorkerSlot,
    commit: &NewCommit,
    branch: &str,
) -> Result<bool, Stop> {
    let remote = run.forge.remote().clone();
    // The remote's state is shared; the push itself goes on without holding it (no other
    // action holds this branch's key meanwhile).
    let (expected, same) = lease(run, commit, branch)?;
    if same {
        return Ok(false);
    }
    let Some(workspace) = slot.workspace.as_ref() else {
        return Err(Stop::failed("the workspace is gone"));
    };
    if let Err(e) = workspace.push(&remote, branch, commit.id, expected) {
        return Err(match &e {
            GitError::Rejected { message, .. } => run
                .forge
                .explain_push_rejection(message)
                .map_or_else(|| e.into(), Stop::failed),
            _ => e.into(),
        });
    }
    git_state::lock(run)?
        .heads
        .insert(branch.to_string(), commit.id);
    run.progress.step(&format!("pushed {branch}"));
    Ok(true)
}

/// Has the forge make the commit (and sign it) from the verified files, unless the remote
/// branch already holds this change on the same base; then checks that what the forge made
/// is exactly the verified tree on the base, or deletes it. Whether it made one.
async fn push_through_forge(
    run: &RunContext<'_>,
    slot: &WorkerSlot,
    built: &NewCommit,
    branch: &str,
) -> Result<bool, Stop> {
    let (expected, same) = lease(run, built, branch)?;
    if same {
        return Ok(false);
    }
    let Some(workspace) = slot.workspace.as_ref() else {
        return Err(Stop::failed("the workspace is gone"));
    };
    let files = workspace
        .changed_files(built)?
        .into_iter()
        .map(|f| FileChange {
            path: f.path,
            in_base: f.in_base,
            mode: f.mode,
            content: f.content,
        })
        .collect();
    let commit = ApiCommit {
        branch: branch.to_string(),
        base: built.base,
        base_tree: git_state::lock(run)?.mirror.commit_info(built.base)?.tree,
        tree: built.tree,
        expected,
        message: workspace.message_of(built)?,
        files,
        author: run.settings.author.clone(),
    };
    let made = run.forge.create_commit(&commit).await?;
    let mut git = git_state::lock(run)?;
    git.mirror.fetch(&[branch])?;
    let info = git.mirror.commit_info(made)?;
    if info.tree != built.tree || info.parents != [built.base] {
        let removed = git.mirror.delete_branch(branch, made).is_ok();
        let parents: Vec<String> = info.parents.iter().map(git2::Oid::to_string).collect();
        return Err(Stop::failed(format!(
            "the commit the forge made on {} holds tree {} on top of {}, not the verified tree {} on top of {}; {}",
            branch,
            info.tree,
            parents.join(", "),
            built.tree,
            built.base,
            if removed {
                "the branch was deleted"
            } else {
                "deleting the branch failed: delete it by hand"
            }
        )));
    }
    git.heads.insert(branch.to_string(), made);
    drop(git);
    run.progress.step(&format!(
        "the forge made and signed {} on {}",
        super::text::short(made),
        branch
    ));
    Ok(true)
}

/// Updates an open PR's title, body and labels where they differ.
async fn bring_up_to_date(
    run: &RunContext<'_>,
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
        run.forge.update_pull_request(pr.number, &edit).await?
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
