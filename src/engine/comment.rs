//! Comments, posted once: a hidden marker recognises a comment already posted.

use super::RunContext;
use super::stop::{Done, Stop};
use crate::forge::Target;
use crate::markdown::{self, cap_before};
use crate::report::{ActionReport, CommentRef, Operation, Status};

/// Posts a comment the plan wrote, once per target and text.
pub(super) async fn plan_comment(
    run: &RunContext<'_>,
    target: Target,
    text: &str,
    report: &mut ActionReport,
) -> Done {
    let key = format!("{target:?}\n{text}");
    comment(run, target, text, &key, report).await
}

/// Posts `text` (untrusted: neutralised) once: a comment carrying the same marker means it
/// was already said.
pub(super) async fn comment(
    run: &RunContext<'_>,
    target: Target,
    text: &str,
    key: &str,
    report: &mut ActionReport,
) -> Done {
    let body = crate::sink::body(text, run.settings.allow_mentions);
    own_comment(run, target, &body, key, report).await
}

/// Posts Quartermaster's own `text` once, as it is: its `#N` references to its own PRs stay
/// references. Whatever untrusted text it quotes must already be neutralised.
pub(super) async fn own_comment(
    run: &RunContext<'_>,
    target: Target,
    text: &str,
    key: &str,
    report: &mut ActionReport,
) -> Done {
    let (on, number) = match target {
        Target::PullRequest(n) => ("pull_request", n),
        Target::Issue(n) => ("issue", n),
    };
    let marker = markdown::marker("comment", key);
    let existing = run.forge.comments(target).await?;
    if let Some(c) = existing.iter().find(|c| c.body.contains(&marker)) {
        report.comments.push(CommentRef {
            on: on.into(),
            number,
            url: c.url.clone(),
            operation: Operation::Unchanged,
        });
        return Ok((Status::Done, format!("comment on #{number} already posted")));
    }
    if run.settings.dry_run {
        return Err(Stop::skipped(format!(
            "dry run: would comment on #{number}"
        )));
    }
    // The marker goes after the cut: a long comment must still be recognised next time.
    let body = cap_before(text.to_string(), &format!("\n\n{marker}"));
    let posted = run.forge.create_comment(target, &body).await?;
    report.comments.push(CommentRef {
        on: on.into(),
        number,
        url: posted.url,
        operation: Operation::Created,
    });
    Ok((Status::Done, format!("comment on #{number} posted")))
}
