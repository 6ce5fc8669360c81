//! What each action is about, for the summary: named from the plan, since that is what the agent
//! and the reviewer know the action by.

use crate::plan::Action;

/// A PR's or an issue's title, the PR or issue a comment goes to or a close concerns, the package
/// a skip holds.
pub(super) fn subject(action: &Action) -> String {
    match action {
        Action::CreateMr(a) => a.title.clone(),
        Action::CreateIssue(a) => a.title.clone(),
        Action::UpdateMr(a) => format!("PR #{}", a.mr_id),
        Action::CloseMr(a) => format!("PR #{}", a.mr_id),
        Action::CommentMr(a) => format!("on PR #{}", a.mr_id),
        Action::CommentIssue(a) => format!("on issue #{}", a.issue_id),
        Action::Skip(a) => a.package.clone(),
    }
}
