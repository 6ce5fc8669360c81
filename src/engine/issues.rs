//! `create_issue` and `comment_issue`: an issue is found again by its title and the bot label, and
//! never duplicated; comments go only on issues that carry the bot label.

use super::RunContext;
use super::comment;
use super::stop::{Done, Stop};
use super::text::with_bot_label;
use crate::forge::{NewIssue, Target};
use crate::markdown::{self, cap_before};
use crate::plan::{CommentIssue, CreateIssue};
use crate::report::{ActionReport, IssueRef, Operation, Status};
use crate::sink;

pub(super) async fn create_issue(
    run: &RunContext<'_>,
    a: &CreateIssue,
    report: &mut ActionReport,
) -> Done {
    let allow = run.settings.allow_mentions;
    let title = sink::line(&a.title, allow);
    let marker = markdown::marker("issue", &title);
    let footer =
        format!("\n\n---\n<sub>Opened by Quartermaster from an agent's plan.</sub>\n{marker}");
    // The marker goes after the cut: a long body must still be found again.
    let body = cap_before(sink::body(&a.body, allow), &footer);
    let labels = with_bot_label(&a.labels, &run.settings.bot_label);
    let existing = run
        .forge
        .find_open_issue(&title, &run.settings.bot_label, &marker)
        .await?;
    let (issue, operation) = match existing {
        Some(issue) if issue.body == body => (issue, Operation::Unchanged),
        Some(issue) if run.settings.dry_run => {
            return Err(Stop::skipped(format!(
                "dry run: would update issue #{}",
                issue.number
            )));
        }
        Some(issue) => (
            run.forge.update_issue_body(issue.number, &body).await?,
            Operation::Updated,
        ),
        None if run.settings.dry_run => {
            return Err(Stop::skipped("dry run: would open the issue"));
        }
        None => (
            run.forge
                .create_issue(&NewIssue {
                    title,
                    body,
                    labels,
                })
                .await?,
            Operation::Created,
        ),
    };
    report.issues.push(IssueRef {
        number: issue.number,
        url: issue.url,
        operation,
    });
    Ok((
        Status::Done,
        format!("issue #{} {}", issue.number, operation.as_str()),
    ))
}

pub(super) async fn comment_issue(
    run: &RunContext<'_>,
    a: &CommentIssue,
    report: &mut ActionReport,
) -> Done {
    let issue = run
        .forge
        .issue(a.issue_id)
        .await?
        .ok_or_else(|| Stop::failed(format!("issue #{} does not exist", a.issue_id)))?;
    if !issue.labels.contains(&run.settings.bot_label) {
        return Err(Stop::denied(format!(
            "issue #{} does not carry the `{}` label: Quartermaster only comments on its own issues",
            issue.number, run.settings.bot_label
        )));
    }
    comment::plan_comment(run, Target::Issue(issue.number), &a.body, report).await
}
