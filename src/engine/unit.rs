//! Units: the branches an action produces (one, or one per update when it splits), and how their
//! outcomes add up to the action's status and to the fate of each declared update.

use super::stop::Stop;
use crate::changes;
use crate::git::NewCommit;
use crate::mission::CommandMatch;
use crate::plan::{CreateMr, FallbackStrategy, Update};
use crate::report::{ActionReport, PullRequestRef, Status, TestVerdict, UpdateReport};

/// One branch to produce: some updates and the commands that apply them.
#[derive(Debug)]
pub(crate) struct BranchUnit<'p> {
    pub branch: String,
    /// The plan's title.
    pub title: String,
    /// Set when the unit is one update of a `create_mr` tried on its own branch.
    pub split: Option<Split>,
    pub updates: Vec<&'p Update>,
    pub commands: Vec<&'p CommandMatch>,
}

/// Why a unit carries one update of an action on a branch of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Split {
    /// The action's branch.
    pub batch: String,
    /// How the batch failed (`individual_on_failure`); `None` when the action's strategy is
    /// `individual`, which tries no batch.
    pub(crate) batch_failed: Option<String>,
}

impl BranchUnit<'_> {
    /// The title a PR and a commit of the unit get: the plan's; for a split unit, its own update
    /// as the lock files show it, after the plan's conventional-commit prefix (`chore(deps): `).
    pub(crate) fn title_from(&self, facts: &changes::Verdict) -> String {
        match (&self.split, self.updates.first()) {
            (Some(_), Some(u)) => {
                let fact = facts.updates.iter().find(|f| f.package == u.package);
                let what = match fact {
                    Some(f) => super::text::update_line(f),
                    None => format!("update {} to {}", u.package, u.to),
                };
                match conventional_prefix(&self.title) {
                    Some(prefix) => format!("{prefix}{what}"),
                    None => capitalised(&what),
                }
            }
            _ => self.title.clone(),
        }
    }
}

/// A conventional-commit prefix (`chore(deps): `, `fix!: `) a title starts with.
fn conventional_prefix(title: &str) -> Option<&str> {
    let end = title.find(": ")? + 2;
    let kind = &title[..end - 2];
    let (word, scope) = match kind.trim_end_matches('!').split_once('(') {
        Some((word, rest)) => (word, Some(rest)),
        None => (kind.trim_end_matches('!'), None),
    };
    let word_ok = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphabetic());
    let scope_ok = scope.is_none_or(|s| {
        s.strip_suffix(')')
            .is_some_and(|inner| !inner.contains(['(', ')']))
    });
    (word_ok && scope_ok).then(|| &title[..end])
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// What building a branch came to.
pub(crate) enum BuildOutcome {
    /// Committed, verified and tested: the facts are what the lock files show.
    Ready(NewCommit, Box<changes::Verdict>),
    NoChanges,
    CommandFailed(String),
    /// The lock files do not show what the plan declared, or show what it did not.
    Unverified(Stop),
    /// The repository's policy refused a version the lock files newly resolve.
    Gated(Stop),
    /// The frozen install of the committed files failed, or left out the test's runner.
    InstallFailed(String),
    TestsFailed(String),
}

impl BuildOutcome {
    /// The commit and facts of a branch that is ready, or what became of one that is not.
    pub(super) fn ready(self) -> Result<(NewCommit, Box<changes::Verdict>), UnitOutcome> {
        match self {
            BuildOutcome::Ready(commit, facts) => Ok((commit, facts)),
            BuildOutcome::NoChanges => Err(UnitOutcome::NoChanges),
            BuildOutcome::CommandFailed(why) => Err(UnitOutcome::CommandFailed(why)),
            BuildOutcome::Unverified(stop) => Err(UnitOutcome::Unverified(stop)),
            BuildOutcome::Gated(stop) => Err(UnitOutcome::Gated(stop)),
            BuildOutcome::InstallFailed(why) => Err(UnitOutcome::InstallFailed(why)),
            BuildOutcome::TestsFailed(why) => Err(UnitOutcome::TestsFailed(why)),
        }
    }
}

/// What became of one unit.
#[derive(Debug)]
pub(crate) enum UnitOutcome {
    Landed(PullRequestRef),
    DryRun(String),
    NoChanges,
    Refused(Stop),
    CommandFailed(String),
    Unverified(Stop),
    Gated(Stop),
    InstallFailed(String),
    TestsFailed(String),
}

/// The whole action as one unit.
pub(super) fn batch<'p>(a: &'p CreateMr, commands: &'p [CommandMatch]) -> BranchUnit<'p> {
    BranchUnit {
        branch: a.branch.clone(),
        title: a.title.clone(),
        split: None,
        updates: a.updates.iter().collect(),
        commands: commands.iter().collect(),
    }
}

/// One unit per update, on the branches [`crate::plan::split_branches`] names; commands naming no
/// package (`go mod tidy`) run in every one. `batch_failed` says how the batch failed, when one
/// was tried.
pub(super) fn split<'p>(
    a: &'p CreateMr,
    commands: &'p [CommandMatch],
    batch_failed: Option<String>,
) -> Vec<BranchUnit<'p>> {
    let branches =
        crate::plan::split_branches(&a.branch, a.updates.iter().map(|u| u.package.as_str()));
    a.updates
        .iter()
        .zip(branches)
        .map(|(u, branch)| BranchUnit {
            branch,
            title: a.title.clone(),
            split: Some(Split {
                batch: a.branch.clone(),
                batch_failed: batch_failed.clone(),
            }),
            updates: vec![u],
            commands: commands
                .iter()
                .filter(|m| m.package.as_ref().is_none_or(|p| *p == u.package))
                .collect(),
        })
        .collect()
}

/// The updates of a single branch, all sharing its fate.
pub(crate) fn branch_updates(
    updates: &[Update],
    branch: &str,
    pull_request: Option<u64>,
    test: TestVerdict,
    report: &ActionReport,
) -> Vec<UpdateReport> {
    updates
        .iter()
        .map(|u| update_report(u, Some(branch), pull_request, test, report))
        .collect()
}

/// One update's fate; `from` and `to` are what the lock files of `branch` show, once it was built.
fn update_report(
    u: &Update,
    branch: Option<&str>,
    pull_request: Option<u64>,
    test: TestVerdict,
    report: &ActionReport,
) -> UpdateReport {
    let fact = branch.and_then(|b| {
        report
            .changes
            .iter()
            .rev()
            .find(|c| c.branch == b)
            .and_then(|c| c.update(&u.package))
    });
    let (from, to) = match fact {
        Some(f) => (
            f.from.clone().unwrap_or_else(|| "none".into()),
            f.to.clone().unwrap_or_else(|| "none".into()),
        ),
        None => (u.from.clone(), u.to.clone()),
    };
    UpdateReport {
        declared_from: (from != u.from).then(|| u.from.clone()),
        declared_to: (to != u.to).then(|| u.to.clone()),
        package: u.package.clone(),
        from,
        to,
        update_type: u.update_type,
        branch: branch.map(String::from),
        landed: pull_request.is_some(),
        pull_request,
        test,
    }
}

/// The fate of each declared update: the last unit that carried it decides.
pub(crate) fn update_reports(
    updates: &[Update],
    results: &[(BranchUnit<'_>, UnitOutcome)],
    report: &ActionReport,
) -> Vec<UpdateReport> {
    updates
        .iter()
        .map(|u| {
            let last = results
                .iter()
                .rev()
                .find(|(unit, _)| unit.updates.iter().any(|x| std::ptr::eq(*x, u)));
            let (branch, pull_request) = match last {
                Some((unit, UnitOutcome::Landed(pr))) => {
                    (Some(unit.branch.as_str()), Some(pr.number))
                }
                Some((unit, _)) => (Some(unit.branch.as_str()), None),
                None => (None, None),
            };
            let test = branch.map_or(TestVerdict::NotRun, |b| last_verdict(report, b));
            update_report(u, branch, pull_request, test, report)
        })
        .collect()
}

/// The verdict of the last test run on `branch`.
fn last_verdict(report: &ActionReport, branch: &str) -> TestVerdict {
    report
        .test
        .as_ref()
        .and_then(|t| t.runs.iter().rev().find(|r| r.branch == branch))
        .map_or(TestVerdict::NotRun, |r| {
            if r.passed {
                TestVerdict::Passed
            } else {
                TestVerdict::Failed
            }
        })
}

/// How a batch that was split failed, for messages.
pub(crate) fn batch_failure(outcome: &UnitOutcome) -> &'static str {
    match outcome {
        UnitOutcome::CommandFailed(_) => "a command failed on the batch",
        // Any refusal of the verification: an update not reached, an undeclared direct
        // dependency, a new source, a file no reader owns.
        UnitOutcome::Unverified(_) => "the verification of the batch's changes refused them",
        UnitOutcome::Gated(_) => "the repository's policy refused a version the batch resolved",
        UnitOutcome::InstallFailed(_) => "the batch's committed lock files do not install",
        _ => "the batch failed its tests",
    }
}

/// How a batch that was split failed, with what failed: for the texts of its splits.
pub(crate) fn batch_failed(outcome: &UnitOutcome) -> String {
    let detail = match outcome {
        UnitOutcome::CommandFailed(why)
        | UnitOutcome::TestsFailed(why)
        | UnitOutcome::InstallFailed(why) => why.as_str(),
        UnitOutcome::Unverified(stop) | UnitOutcome::Refused(stop) | UnitOutcome::Gated(stop) => {
            stop.reason.as_str()
        }
        _ => return batch_failure(outcome).to_string(),
    };
    format!("{} ({detail})", batch_failure(outcome))
}

/// What became of a unit, in a few words for its siblings' PRs.
pub(crate) fn fate(outcome: &UnitOutcome) -> String {
    match outcome {
        UnitOutcome::Landed(pr) => format!("tests passed; PR #{}", pr.number),
        UnitOutcome::DryRun(_) => "tests passed (dry run)".to_string(),
        UnitOutcome::NoChanges => "no changes".to_string(),
        UnitOutcome::CommandFailed(why) => format!("a command failed: {why}; no PR"),
        UnitOutcome::TestsFailed(why) => format!("failed its tests: {why}; no PR"),
        UnitOutcome::InstallFailed(why) => format!("{why}; no PR"),
        UnitOutcome::Refused(stop) | UnitOutcome::Unverified(stop) | UnitOutcome::Gated(stop) => {
            let status = match stop.status {
                Status::Denied => "denied",
                Status::Skipped => "skipped",
                Status::Cancelled => "cancelled",
                Status::Done | Status::Failed | Status::Partial => "failed",
            };
            format!("{status}: {}; no PR", stop.reason)
        }
    }
}

/// The action's status from its units' outcomes.
pub(crate) fn conclude(
    results: &[(BranchUnit<'_>, UnitOutcome)],
    strategy: FallbackStrategy,
) -> (Status, String) {
    // With individual_on_failure, a red batch that was split is explained by the splits.
    let split = strategy == FallbackStrategy::IndividualOnFailure && results.len() > 1;
    let considered = if split { &results[1..] } else { results };
    let mut parts = Vec::new();
    if split {
        parts.push(format!(
            "{}, so each update was tried alone",
            batch_failure(&results[0].1)
        ));
    }
    let mut status = Status::Skipped;
    for (unit, outcome) in considered {
        let name = if considered.len() > 1 {
            format!("{}: ", unit.branch)
        } else {
            String::new()
        };
        let (unit_status, text) = describe(outcome);
        if let Some(s) = unit_status
            && rank(s) > rank(status)
        {
            status = s;
        }
        parts.push(format!("{name}{text}"));
    }
    // Some branches landed and others did not: neither done nor failed.
    let landed = considered
        .iter()
        .any(|(_, o)| matches!(o, UnitOutcome::Landed(_)));
    if landed && matches!(status, Status::Failed | Status::Denied) {
        status = Status::Partial;
    }
    (status, parts.join("; "))
}

/// What one outcome adds to the action's status and reason.
fn describe(outcome: &UnitOutcome) -> (Option<Status>, String) {
    match outcome {
        UnitOutcome::Landed(pr) => (
            Some(Status::Done),
            format!("PR #{} {}", pr.number, pr.operation.as_str()),
        ),
        UnitOutcome::DryRun(what) => (None, format!("dry run: {what}")),
        UnitOutcome::NoChanges => (None, "no changes".to_string()),
        UnitOutcome::Refused(stop) | UnitOutcome::Unverified(stop) | UnitOutcome::Gated(stop) => {
            (Some(stop.status), stop.reason.clone())
        }
        UnitOutcome::CommandFailed(why) => (Some(Status::Failed), why.clone()),
        UnitOutcome::InstallFailed(why) => (Some(Status::Failed), format!("{why}; no PR")),
        UnitOutcome::TestsFailed(why) => (Some(Status::Failed), format!("{why}; no PR")),
    }
}

/// Which status wins when units disagree: a failure over a refusal over success over a skip
/// (outcomes are never partial or cancelled themselves).
fn rank(s: Status) -> u8 {
    match s {
        Status::Skipped => 0,
        Status::Done => 1,
        Status::Denied => 2,
        Status::Partial | Status::Failed | Status::Cancelled => 3,
    }
}

#[cfg(test)]
mod tests;
