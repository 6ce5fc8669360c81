//! `comment_mr` and `close_mr`, on PRs of Quartermaster's only.

use super::RunContext;
use super::comment;
use super::git_state;
use super::ownership;
use super::stop::{Done, Stop};
use crate::forge::{PullRequest, State, Target};
use crate::git::GitError;
use crate::plan::{CloseMr, CommentMr};
use crate::report::{ActionReport, Operation, PullRequestRef, Status};

pub(super) async fn comment_mr(
    run: &RunContext<'_>,
    a: &CommentMr,
    report: &mut ActionReport,
) -> Done {
    let pr = ownership::owned_pull_request(run, a.mr_id).await?;
    report.branch = Some(pr.head.clone());
    comment::plan_comment(run, Target::PullRequest(pr.number), &a.body, report).await
}

/// Posts the comment (once), closes the PR and, if asked, deletes its branch when it holds no
/// commit by anyone but the bot.
pub(super) async fn close_mr(run: &RunContext<'_>, a: &CloseMr, report: &mut ActionReport) -> Done {
    let pr = ownership::owned_pull_request(run, a.mr_id).await?;
    report.branch = Some(pr.head.clone());
    if pr.state != State::Open {
        report.pull_requests.push(pr_ref(&pr, Operation::Unchanged));
        return Ok((
            Status::Done,
            format!("PR #{} was already {}", pr.number, pr.state.as_str()),
        ));
    }
    if run.settings.dry_run {
        return Err(Stop::skipped(format!(
            "dry run: would close PR #{}{}",
            pr.number,
            if a.delete_branch {
                format!(" and delete {}", pr.head)
            } else {
                String::new()
            }
        )));
    }
    let humans = if a.delete_branch {
        ownership::human_commits(run, &pr.head, Some(&pr)).await?
    } else {
        None
    };
    if let Some(text) = &a.comment {
        comment::plan_comment(run, Target::PullRequest(pr.number), text, report).await?;
    }
    let closed = run.forge.close_pull_request(pr.number).await?;
    report
        .pull_requests
        .push(pr_ref(&closed, Operation::Closed));
    let mut reason = format!("PR #{} closed", pr.number);
    if let Some(who) = humans {
        reason.push_str(&format!("; {} was kept: it has commits by {who}", pr.head));
    } else if a.delete_branch {
        reason.push_str(&delete_pr_branch(run, &pr.head, &reason)?);
    }
    Ok((Status::Done, reason))
}

/// Deletes a closed PR's branch; what the reason adds about it.
pub(super) fn delete_pr_branch(
    run: &RunContext<'_>,
    branch: &str,
    reason: &str,
) -> Result<String, Stop> {
    match git_state::delete_branch(run, branch) {
        Ok(true) => Ok(format!("; {branch} deleted")),
        Ok(false) => Ok(format!("; {branch} was already gone")),
        Err(GitError::LeaseMismatch { .. }) => Ok(format!(
            "; {branch} was kept: it changed on the remote while Quartermaster worked"
        )),
        Err(e) => Err(Stop::failed(format!(
            "{reason}, but deleting the branch failed: {e}"
        ))),
    }
}

fn pr_ref(pr: &PullRequest, operation: Operation) -> PullRequestRef {
    PullRequestRef {
        number: pr.number,
        url: pr.url.clone(),
        branch: pr.head.clone(),
        operation,
        reused: None,
        auto_merge: false,
        notes: Vec::new(),
    }
}
