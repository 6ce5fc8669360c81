//! Whose PR and whose branch: only PRs on `quartermaster/*` branches with the bot label are
//! Quartermaster's, and human edits win over regeneration.

use super::RunContext;
use super::comment;
use super::git_state;
use super::record::Record;
use super::stop::Stop;
use crate::forge::{PullRequest, Target};
use crate::markdown::code;
use crate::plan::branch::BRANCH_PREFIX;
use crate::report::ActionReport;
use std::collections::BTreeSet;

/// The PR numbered `number`, if it exists and is Quartermaster's.
pub(super) async fn owned_pull_request(
    run: &RunContext<'_>,
    number: u64,
) -> Result<PullRequest, Stop> {
    let pr = run
        .forge
        .pull_request(number)
        .await?
        .ok_or_else(|| Stop::failed(format!("PR #{number} does not exist")))?;
    check_owned(run, &pr)?;
    Ok(pr)
}

/// Only PRs on `quartermaster/*` branches with the bot label are Quartermaster's.
pub(super) fn check_owned(run: &RunContext<'_>, pr: &PullRequest) -> Result<(), Stop> {
    let label = &run.settings.bot_label;
    if pr.from_fork {
        return Err(Stop::denied(format!(
            "PR #{} is not Quartermaster's: its branch {} is in a fork",
            pr.number, pr.head
        )));
    }
    if !pr.head.starts_with(BRANCH_PREFIX) {
        return Err(Stop::denied(format!(
            "PR #{} is not Quartermaster's: its branch {} is outside {BRANCH_PREFIX}",
            pr.number, pr.head,
        )));
    }
    if !pr.labels.contains(label) {
        return Err(Stop::denied(format!(
            "PR #{} is not Quartermaster's: it does not carry the `{label}` label",
            pr.number
        )));
    }
    Ok(())
}

/// Human edits win: a branch holding a commit by anyone but the bot is left alone, and its PR
/// (if any) says so once.
pub(super) async fn claim(
    run: &RunContext<'_>,
    branch: &str,
    pr: Option<&PullRequest>,
    report: &mut ActionReport,
) -> Result<(), Stop> {
    let Some(who) = human_commits(run, branch, pr).await? else {
        return Ok(());
    };
    if let Some(pr) = pr
        && !run.settings.dry_run
    {
        let text = format!(
            "Quartermaster did not update {}: the branch has commits by someone other than its bot identity ({who}). Human edits win, so the branch is left as it is. To let Quartermaster regenerate it, remove those commits or close this PR.",
            code(branch)
        );
        // Said once per branch, not again for every further human commit.
        let key = format!("human-edits\n{branch}");
        comment::comment(run, Target::PullRequest(pr.number), &text, &key, report).await?;
    }
    Err(Stop::denied(format!(
        "{branch} has commits by {who}; human edits win, so the branch was left alone"
    )))
}

/// Who else committed to the branch, if anyone but the bot did.
pub(super) async fn human_commits(
    run: &RunContext<'_>,
    branch: &str,
    pr: Option<&PullRequest>,
) -> Result<Option<String>, Stop> {
    let (tip, base) = {
        let git = git_state::lock(run)?;
        let Some(tip) = git.heads.get(branch).copied() else {
            return Ok(None);
        };
        // Branches of PRs named by number (close_mr) are not fetched up front.
        if git.mirror.tip(branch) != Some(tip) {
            git.mirror.fetch(&[branch])?;
        }
        (tip, git.default_tip)
    };
    // A commit the forge made for Quartermaster (signed commits) names the forge's identity;
    // the PR's record says which commit that is.
    let made_for_us = pr
        .and_then(|pr| Record::read(&pr.body))
        .and_then(|r| r.api_commit)
        .is_some_and(|commit| commit == tip.to_string());
    if made_for_us {
        return Ok(None);
    }
    // The usual case, a single commit right on top of the default branch, needs no forge call:
    // that commit is the only one on the branch.
    let info = git_state::lock(run)?.mirror.commit_info(tip)?;
    let authors = if info.parents == [base] {
        vec![info.author_email, info.committer_email]
    } else {
        let from_forge = match pr {
            Some(pr) => run.forge.commit_authors(pr).await?,
            None => None,
        };
        match from_forge {
            Some(authors) => authors,
            None => git_state::lock(run)?.mirror.branch_authors(tip, base)?,
        }
    };
    let bot = &run.settings.author.email;
    let others: BTreeSet<String> = authors
        .into_iter()
        .filter(|a| !a.eq_ignore_ascii_case(bot))
        .collect();
    if others.is_empty() {
        return Ok(None);
    }
    Ok(Some(others.into_iter().collect::<Vec<_>>().join(", ")))
}
