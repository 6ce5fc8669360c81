//! Upkeep: every run looks after Quartermaster's own open PRs (the bot label, a `quartermaster/`
//! branch), whatever its plan held, from the build record each PR carries ([`super::record`]):
//! - a PR whose branch holds anyone else's commit is left alone;
//! - a PR whose every update is superseded by a PR this run opened (the same packages, one of
//!   them to a higher version) is closed with a comment naming the new PR, its branch deleted;
//! - a PR whose every update reached the default branch (its lock holds those versions or newer)
//!   is closed with a comment naming the branch, its branch deleted;
//! - a PR behind the default branch that conflicts with it, or whose dependency files the default
//!   branch changed since (its lock no longer applies), or that the dependency dashboard asks for,
//!   is rebuilt on the default branch's tip from its record: validated as a plan, built, verified
//!   and tested like any unit, force-pushed with a lease; a failed rebuild says why on the PR and
//!   leaves it as it was.
//!
//! Upkeep runs after the plan's actions, never on a PR the plan names, and obeys `--dry-run` and
//! the forge's write pacing like them.

mod reached;
pub(super) mod rebuild;

use super::comment;
use super::ownership;
use super::pull_requests;
use super::record::Record;
use super::{RunContext, WorkerSlot};
use crate::changes::{Ecosystem, version};
use crate::forge::{PullRequest, Target};
use crate::markdown::code;
use crate::mission::Mission;
use crate::plan::{Action, ActionType, Plan};
use crate::report::{ActionReport, Status, UpkeepAction, UpkeepReport};
use std::cmp::Ordering;
use std::collections::BTreeSet;

/// What a run's upkeep works from.
pub(super) struct Upkeep<'u> {
    pub mission: &'u Mission,
    pub actions: &'u [ActionReport],
    /// PRs the dependency dashboard asks to rebuild.
    pub rebuild: BTreeSet<u64>,
    /// Whether this run looks after every PR (not a shard that only closes what it supersedes).
    pub everything: bool,
}

/// A package one of this run's PRs updates, and to what.
struct Landed {
    pr: u64,
    package: String,
    to: String,
}

/// Why a PR is closed.
enum Closing {
    /// Every update reached the default branch: what its lock shows.
    Reached(String),
    /// This run's PRs update its packages further.
    Superseded(Vec<(u64, String, String)>),
}

/// Untrusted text (from a record) inside Quartermaster's own: one line, in a code span.
pub(super) fn quoted(text: &str) -> String {
    code(&crate::sink::body_line(text, false))
}

/// Looks after every open PR of Quartermaster's that this run's plan does not name; the
/// open PRs it listed, when it could.
pub(super) async fn upkeep(
    run: &RunContext<'_>,
    slot: &mut WorkerSlot,
    u: &Upkeep<'_>,
) -> (Vec<UpkeepReport>, Option<Vec<PullRequest>>) {
    let label = run.settings.bot_label.clone();
    let open = match run.forge.open_pull_requests(&label).await {
        Ok(open) => open,
        Err(e) => {
            let failed = UpkeepReport::new(None, "", UpkeepAction::Keep)
                .finish(Status::Failed, format!("listing the open PRs: {e}"));
            return (vec![failed], None);
        }
    };
    let landed = landed(u.actions);
    let named = Named::of(run.plan.plan(), u.actions);
    let mut reports = Vec::new();
    for pr in open.clone() {
        if named.names(&pr) || ownership::check_owned(run, &pr).is_err() {
            continue;
        }
        if crate::harden::cancelled().is_some() {
            break;
        }
        let (number, head) = (pr.number, pr.head.clone());
        run.progress.line(&format!("upkeep: PR #{number} {head}"));
        if let Some(report) = look_after_one(run, slot, pr, u, &landed).await {
            run.progress.step(&format!(
                "=> {} {}: {}",
                report.action.as_str(),
                serde_json::to_value(report.status)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
                report.reason
            ));
            reports.push(report);
        }
    }
    (reports, Some(open))
}

async fn look_after_one(
    run: &RunContext<'_>,
    slot: &mut WorkerSlot,
    pr: PullRequest,
    u: &Upkeep<'_>,
    landed: &[Landed],
) -> Option<UpkeepReport> {
    let report = |action| UpkeepReport::new(Some(pr.number), &pr.head, action);
    match ownership::human_commits(run, &pr.head, Some(&pr)).await {
        Ok(Some(who)) => {
            return Some(report(UpkeepAction::LeaveAlone).finish(
                Status::Skipped,
                format!(
                    "{} has commits by {who}; human edits win, so it was left alone",
                    pr.head
                ),
            ));
        }
        Err(stop) => return Some(report(UpkeepAction::Keep).finish(stop.status, stop.reason)),
        Ok(None) => {}
    }
    let Some(record) = Record::read(&pr.body) else {
        return u.everything.then(|| {
            report(UpkeepAction::Keep).finish(
                Status::Skipped,
                "its body holds no build record (an earlier version of Quartermaster opened it)",
            )
        });
    };
    if let Some(newer) = superseding(&record, landed) {
        return Some(close(run, pr, Closing::Superseded(newer)).await);
    }
    if !u.everything {
        return None;
    }
    Some(reach_or_rebuild(run, slot, pr, &record, u).await)
}

/// Closes a PR whose updates all reached the default branch, or rebuilds one that needs it.
async fn reach_or_rebuild(
    run: &RunContext<'_>,
    slot: &mut WorkerSlot,
    pr: PullRequest,
    record: &Record,
    u: &Upkeep<'_>,
) -> UpkeepReport {
    let report = |action| UpkeepReport::new(Some(pr.number), &pr.head, action);
    match reached::reached(run, slot, record) {
        Ok(Some(there)) => return close(run, pr, Closing::Reached(there)).await,
        Ok(None) => {}
        Err(stop) => return report(UpkeepAction::Close).finish(stop.status, stop.reason),
    }
    let why = if u.rebuild.contains(&pr.number) {
        Ok(Some(
            "the dependency dashboard asked for a rebuild".to_string(),
        ))
    } else {
        rebuild::stale(run, &pr, record)
    };
    match why {
        Ok(Some(why)) => rebuild::rebuild(run, slot, pr, record, &why, u.mission).await,
        Ok(None) => report(UpkeepAction::Keep).finish(Status::Skipped, "up to date"),
        Err(stop) => report(UpkeepAction::Rebuild).finish(stop.status, stop.reason),
    }
}

/// Comments (once), closes the PR and deletes its branch.
async fn close(run: &RunContext<'_>, pr: PullRequest, closing: Closing) -> UpkeepReport {
    let default = run.plan.plan().repo_context.default_branch.clone();
    let (action, text, why, by) = match &closing {
        Closing::Reached(there) => (
            UpkeepAction::Close,
            format!(
                "Every update of this PR has reached {} ({there}), so Quartermaster closed it and deleted its branch.",
                code(&default)
            ),
            format!("its updates reached {default} ({there})"),
            None,
        ),
        Closing::Superseded(newer) => {
            let by: Vec<String> = newer
                .iter()
                .map(|(n, package, to)| {
                    format!("#{n}, which updates {} to {}", quoted(package), quoted(to))
                })
                .collect();
            (
                UpkeepAction::Supersede,
                format!(
                    "Superseded by {}. Quartermaster closed this PR and deleted its branch.",
                    by.join("; ")
                ),
                format!(
                    "superseded by {}",
                    newer
                        .iter()
                        .map(|(n, ..)| format!("#{n}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                newer.first().map(|(n, ..)| *n),
            )
        }
    };
    let mut report = UpkeepReport::new(Some(pr.number), &pr.head, action);
    report.superseded_by = by;
    if run.settings.dry_run {
        return report.finish(
            Status::Skipped,
            format!(
                "dry run: would close PR #{} ({why}) and delete {}",
                pr.number, pr.head
            ),
        );
    }
    let mut scratch = ActionReport::new(0, ActionType::CloseMr);
    let key = format!("upkeep-close\n{}", pr.head);
    let done = comment::own_comment(
        run,
        Target::PullRequest(pr.number),
        &text,
        &key,
        &mut scratch,
    )
    .await;
    report.comments = scratch.comments;
    if let Err(stop) = done {
        return report.finish(stop.status, stop.reason);
    }
    if let Err(e) = run.forge.close_pull_request(pr.number).await {
        return report.finish(Status::Failed, format!("closing PR #{}: {e}", pr.number));
    }
    let closed = format!("PR #{} closed: {why}", pr.number);
    match pull_requests::delete_pr_branch(run, &pr.head, &closed) {
        Ok(deleted) => report.finish(Status::Done, format!("{closed}{deleted}")),
        Err(stop) => report.finish(stop.status, stop.reason),
    }
}

/// The packages this run's PRs now update.
fn landed(actions: &[ActionReport]) -> Vec<Landed> {
    actions
        .iter()
        .flat_map(|a| a.updates.iter())
        .filter(|u| u.landed)
        .filter_map(|u| {
            Some(Landed {
                pr: u.pull_request?,
                package: u.package.clone(),
                to: u.to.clone(),
            })
        })
        .collect()
}

/// The PRs this run's plan names, which upkeep leaves to it whichever shard runs the action:
/// those its actions reported, those they name by number, and those on their branches (a
/// `create_mr`'s split branches included).
struct Named {
    numbers: BTreeSet<u64>,
    branches: Vec<String>,
}

impl Named {
    fn of(plan: &Plan, actions: &[ActionReport]) -> Named {
        let reported = actions
            .iter()
            .flat_map(|a| a.pull_requests.iter().map(|p| p.number));
        let commented = actions
            .iter()
            .flat_map(|a| a.comments.iter())
            .filter(|c| c.on == "pull_request")
            .map(|c| c.number);
        let mut numbers: BTreeSet<u64> = reported.chain(commented).collect();
        let mut branches = Vec::new();
        for action in &plan.actions {
            match action {
                Action::CreateMr(a) => branches.push(a.branch.clone()),
                Action::UpdateMr(a) => {
                    numbers.insert(a.mr_id);
                    branches.push(a.branch.clone());
                }
                Action::CommentMr(a) => {
                    numbers.insert(a.mr_id);
                }
                Action::CloseMr(a) => {
                    numbers.insert(a.mr_id);
                }
                _ => {}
            }
        }
        Named { numbers, branches }
    }

    fn names(&self, pr: &PullRequest) -> bool {
        self.numbers.contains(&pr.number)
            || self.branches.iter().any(|b| {
                pr.head == *b
                    || pr
                        .head
                        .strip_prefix(b.as_str())
                        .is_some_and(|rest| rest.starts_with("--"))
            })
    }
}

/// The PRs of this run that supersede `record`'s: each of its packages updated to the same or a
/// higher version, one of them higher. `None` when something of it is not covered.
fn superseding(record: &Record, landed: &[Landed]) -> Option<Vec<(u64, String, String)>> {
    let mut newer = Vec::new();
    let mut higher = false;
    for u in &record.updates {
        let ecosystem = u
            .ecosystem
            .as_deref()
            .or(match record.ecosystems.as_slice() {
                [only] => Some(only.as_str()),
                _ => None,
            })
            .and_then(Ecosystem::from_name)?;
        let name = ecosystem.normalize_name(&u.package);
        let (l, order) = landed
            .iter()
            .filter(|l| ecosystem.normalize_name(&l.package) == name)
            .filter_map(|l| Some((l, version::compare(ecosystem, &l.to, &u.to)?)))
            .find(|(_, order)| *order != Ordering::Less)?;
        higher |= order == Ordering::Greater;
        newer.push((l.pr, l.package.clone(), l.to.clone()));
    }
    newer.dedup_by_key(|(n, ..)| *n);
    (higher && !newer.is_empty()).then_some(newer)
}

#[cfg(test)]
mod tests;
