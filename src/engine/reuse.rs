//! A re-run of the same plan on the same base: a branch that already holds this very build, with
//! its PR open, needs no command and no test.

use super::RunContext;
use super::digest;
use super::git_state;
use super::stop::Stop;
use crate::forge::PullRequest;
use crate::report::{Operation, PullRequestRef};

/// The open PR of `branch`, when its body records `build` on `base` and the branch's tip is
/// one commit on `base` (Quartermaster's own: human edits were refused before this is asked).
pub(super) fn reusable(
    run: &RunContext<'_>,
    branch: &str,
    open: Option<&PullRequest>,
    build: &str,
    base: git2::Oid,
) -> Result<Option<PullRequestRef>, Stop> {
    let Some(pr) = open else {
        return Ok(None);
    };
    let git = git_state::lock(run)?;
    let Some(tip) = git.heads.get(branch).copied() else {
        return Ok(None);
    };
    if git.mirror.tip(branch) != Some(tip) {
        git.mirror.fetch(&[branch])?;
    }
    let info = git.mirror.commit_info(tip)?;
    if info.parents != [base] || !pr.body.contains(&digest::marker(build, base)) {
        return Ok(None);
    }
    run.progress.step(&format!(
        "{branch} already holds this build ({}); nothing to run",
        super::text::short(tip)
    ));
    Ok(Some(PullRequestRef {
        number: pr.number,
        url: pr.url.clone(),
        branch: branch.to_string(),
        operation: Operation::Unchanged,
        reused: Some(tip.to_string()),
        auto_merge: false,
        notes: Vec::new(),
    }))
}
