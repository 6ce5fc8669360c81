//! What happens to a PR once Quartermaster opened it, as the repository's policy says (its
//! `[automerge]` table, [`crate::policy::Automerge`]): auto-merge for the update types it names,
//! when the tests passed and neither the build nor the gates noted anything, and reviewers and
//! assignees. What the forge does not take is noted on the
//! PR's report; it never fails the action, whose PR is open either way.

use super::RunContext;
use super::git_state;
use crate::changes::Verdict;
use crate::forge::People;
use crate::report::{Operation, PullRequestRef};
use crate::toolchain::{Check, ToolchainVerdict};

/// Applies the policy to `pr` when this unit opened it; its `facts` and `toolchains` are
/// what the build showed, `flagged` whether the gates noted anything.
pub(super) async fn after_opening(
    run: &RunContext<'_>,
    pr: &mut PullRequestRef,
    facts: &Verdict,
    toolchains: &[Check],
    flagged: bool,
) {
    if pr.operation != Operation::Created || run.settings.dry_run {
        return;
    }
    let policy = &run.settings.screener.policy.automerge;
    if !flagged && automerges(run, facts, toolchains) {
        let head = git_state::lock(run)
            .ok()
            .and_then(|g| g.heads.get(&pr.branch).copied());
        let asked = match head {
            Some(head) => run.forge.request_auto_merge(pr.number, head).await,
            None => Err(crate::forge::ForgeError::Local(format!(
                "{} is not on the remote",
                pr.branch
            ))),
        };
        match asked {
            Ok(()) => {
                pr.auto_merge = true;
                run.progress
                    .step(&format!("auto-merge requested for PR #{}", pr.number));
            }
            Err(e) => pr.notes.push(format!("auto-merge not requested: {e}")),
        }
    }
    let people = People {
        reviewers: policy.reviewers.clone(),
        team_reviewers: policy.team_reviewers.clone(),
        assignees: policy.assignees.clone(),
    };
    if !people.is_empty() {
        match run.forge.request_review(pr.number, &people).await {
            Ok(notes) => pr.notes.extend(notes),
            Err(e) => pr.notes.push(format!("reviewers not requested: {e}")),
        }
    }
}

/// Whether the policy asks auto-merge for a build: every update of a listed type, and
/// nothing noted (a finding of the lock-file check, a toolchain that differs).
fn automerges(run: &RunContext<'_>, facts: &Verdict, toolchains: &[Check]) -> bool {
    let types = &run.settings.screener.policy.automerge.update_types;
    !types.is_empty()
        && !facts.updates.is_empty()
        && facts.updates.iter().all(|u| types.contains(&u.update_type))
        && facts.findings.is_empty()
        && toolchains
            .iter()
            .all(|c| c.verdict != ToolchainVerdict::Mismatch)
}
