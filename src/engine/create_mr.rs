//! `create_mr`: build the action's branch (or one per update, as its fallback strategy says), and
//! open or update the PR of each branch whose tests pass.

use super::after_opening;
use super::build;
use super::build::BuildJob;
use super::digest::{self, BuildInputs};
use super::environment;
use super::gates;
use super::git_state;
use super::ownership;
use super::publish;
use super::record::{self, Record};
use super::reuse;
use super::stop::{Done, Stop};
use super::text::{PrBody, SplitNote, tested_with};
use super::unit::{self, BranchUnit, BuildOutcome, UnitOutcome};
use super::{RunContext, WorkerSlot};
use crate::changes::Verdict;
use crate::forge::{PullRequest, State};
use crate::git::NewCommit;
use crate::markdown;
use crate::plan::{CreateMr, FallbackStrategy};
use crate::report::ActionReport;
use crate::validate::Recipe;

/// A unit built, tested and pushed, whose PR is still to be opened or updated.
struct Ready {
    commit: NewCommit,
    facts: Box<Verdict>,
    open: Option<PullRequest>,
    /// The build's digest, for the PR's marker.
    build: String,
    /// Whether the push changed the branch; `None` in a dry run, which pushes nothing.
    pushed: Option<bool>,
}

/// A unit claimed and built: ready for its PR, or at its end already.
enum Prepared {
    Ready(Box<Ready>),
    Done(UnitOutcome),
}

pub(super) async fn create_mr<'a>(
    run: &RunContext<'a>,
    slot: &mut WorkerSlot,
    a: &'a CreateMr,
    recipe: &'a Recipe,
    report: &mut ActionReport,
) -> Done {
    report.branch = Some(a.branch.clone());
    // Whatever stops the action, its updates are accounted for.
    report.updates = unit::update_reports(&a.updates, &[], report);
    let base = git_state::lock(run)?.default_tip;
    let mut results: Vec<(BranchUnit, UnitOutcome)> = Vec::new();
    let batch = unit::batch(a, &recipe.commands);
    match a.fallback_strategy {
        FallbackStrategy::Batch => {
            let outcome = create_unit(run, slot, &batch, a, recipe, base, report).await;
            results.push((batch, outcome));
        }
        FallbackStrategy::Individual => {
            create_each(run, slot, a, recipe, (base, None), report, &mut results).await;
        }
        FallbackStrategy::IndividualOnFailure => {
            let outcome = create_unit(run, slot, &batch, a, recipe, base, report).await;
            // A red batch, or a command that failed on it (one update conflicting with
            // another), is split: each update gets its chance alone.
            let red = matches!(
                outcome,
                UnitOutcome::TestsFailed(_)
                    | UnitOutcome::CommandFailed(_)
                    | UnitOutcome::Unverified(_)
                    | UnitOutcome::Gated(_)
                    | UnitOutcome::InstallFailed(_)
            ) && a.updates.len() > 1;
            let why = unit::batch_failure(&outcome);
            let failed = unit::batch_failed(&outcome);
            results.push((batch, outcome));
            if red {
                run.progress
                    .step(&format!("{why}: trying each update on its own branch"));
                create_each(
                    run,
                    slot,
                    a,
                    recipe,
                    (base, Some(failed)),
                    report,
                    &mut results,
                )
                .await;
            }
        }
    }
    report.updates = unit::update_reports(&a.updates, &results, report);
    for (_, outcome) in &results {
        if let UnitOutcome::Landed(pr) = outcome {
            report.pull_requests.push(pr.clone());
        }
    }
    Ok(unit::conclude(&results, a.fallback_strategy))
}

/// One unit per update (`batch_failed` says how the batch failed, when one was tried).
/// Every unit is built before any PR opens, so that each PR can say what became of the
/// others.
async fn create_each<'a>(
    run: &RunContext<'a>,
    slot: &mut WorkerSlot,
    a: &'a CreateMr,
    recipe: &'a Recipe,
    (base, batch_failed): (git2::Oid, Option<String>),
    report: &mut ActionReport,
    results: &mut Vec<(BranchUnit<'a>, UnitOutcome)>,
) {
    let units = unit::split(a, &recipe.commands, batch_failed);
    let mut prepared = Vec::new();
    for unit in &units {
        prepared.push(prepare(run, slot, unit, a, recipe, base, report).await);
    }
    let fates: Vec<(String, String)> = units
        .iter()
        .zip(&prepared)
        .map(|(unit, p)| {
            let package = unit.updates.first().map(|u| u.package.clone());
            let fate = match p {
                Prepared::Ready(_) => {
                    format!("tests passed, on {}", markdown::code(&unit.branch))
                }
                Prepared::Done(outcome) => unit::fate(outcome),
            };
            (package.unwrap_or_default(), fate)
        })
        .collect();
    for (i, (unit, p)) in units.into_iter().zip(prepared).enumerate() {
        let outcome = match p {
            Prepared::Done(outcome) => outcome,
            Prepared::Ready(ready) => {
                let mut siblings = fates.clone();
                siblings.remove(i);
                land(run, &unit, a, recipe, *ready, &siblings, report).await
            }
        };
        results.push((unit, outcome));
    }
}

/// Produces one branch of a `create_mr`: claim it, build it, publish it.
async fn create_unit<'a>(
    run: &RunContext<'a>,
    slot: &mut WorkerSlot,
    unit: &BranchUnit<'a>,
    a: &'a CreateMr,
    recipe: &'a Recipe,
    base: git2::Oid,
    report: &mut ActionReport,
) -> UnitOutcome {
    match prepare(run, slot, unit, a, recipe, base, report).await {
        Prepared::Done(outcome) => outcome,
        Prepared::Ready(ready) => land(run, unit, a, recipe, *ready, &[], report).await,
    }
}

/// Claims a unit's branch, builds and tests it, and pushes what passed (unless the branch
/// already holds this very build, whose PR is then unchanged).
async fn prepare<'a>(
    run: &RunContext<'a>,
    slot: &mut WorkerSlot,
    unit: &BranchUnit<'a>,
    a: &'a CreateMr,
    recipe: &'a Recipe,
    base: git2::Oid,
    report: &mut ActionReport,
) -> Prepared {
    let open = match open_pull_request(run, &unit.branch).await {
        Ok(open) => open,
        Err(stop) => return Prepared::Done(UnitOutcome::Refused(stop)),
    };
    if let Err(stop) = ownership::claim(run, &unit.branch, open.as_ref(), report).await {
        return Prepared::Done(UnitOutcome::Refused(stop));
    }
    let dir = a.working_dir.as_deref();
    let job = BuildJob {
        unit,
        working_dir: dir,
        test: &recipe.test,
        base,
        build: BuildInputs {
            unit,
            test: &recipe.test,
            working_dir: dir,
            mission: run.plan.mission(),
            description: Some(&a.description),
            labels: &a.labels,
            toolchain_policy: run.settings.toolchain_policy,
            policy: &run.settings.screener.policy,
            install: environment::install_sources(run, unit),
        }
        .digest(),
    };
    match reuse::reusable(run, &unit.branch, open.as_ref(), &job.build, base) {
        Ok(Some(pr)) => return Prepared::Done(UnitOutcome::Landed(pr)),
        Ok(None) => {}
        Err(stop) => return Prepared::Done(UnitOutcome::Refused(stop)),
    }
    tracing::debug!(branch = %unit.branch, "claimed; building");
    let (commit, facts) = match build::build(run, slot, &job, report).map(BuildOutcome::ready) {
        Ok(Ok(ready)) => ready,
        Ok(Err(outcome)) => return Prepared::Done(outcome),
        Err(stop) => return Prepared::Done(UnitOutcome::Refused(stop)),
    };
    let pushed = if run.settings.dry_run {
        None
    } else {
        match publish::deliver(run, slot, &commit, &unit.branch).await {
            Ok(pushed) => Some(pushed),
            Err(stop) => return Prepared::Done(UnitOutcome::Refused(stop)),
        }
    };
    Prepared::Ready(Box::new(Ready {
        commit,
        facts,
        open,
        build: job.build,
        pushed,
    }))
}

/// Opens or updates the PR of a unit that is ready; `siblings` are the other updates of a
/// split action, with what became of each.
async fn land<'a>(
    run: &RunContext<'a>,
    unit: &BranchUnit<'a>,
    a: &'a CreateMr,
    recipe: &'a Recipe,
    ready: Ready,
    siblings: &[(String, String)],
    report: &ActionReport,
) -> UnitOutcome {
    let Some(pushed) = ready.pushed else {
        let verb = if ready.open.is_some() {
            "update"
        } else {
            "open"
        };
        return UnitOutcome::DryRun(format!(
            "tests passed; would push {} and {verb} its PR",
            unit.branch
        ));
    };
    let (title, body) = pr_text(run, unit, a, recipe, &ready.facts, siblings, report);
    let stamp = record::Stamp {
        build: digest::marker(&ready.build, ready.commit.base),
        record: Record::of(&built(run, unit, a, recipe), Some(&ready.facts)),
    };
    let body = stamp.apply(&body);
    let toolchains = report.toolchains_of(&unit.branch);
    let flagged = gates::flagged(&unit.branch, report);
    let pr = publish::Publication {
        commit: &ready.commit,
        branch: &unit.branch,
        title: &title,
        body: Some(body),
        labels: &a.labels,
    };
    match publish::open_or_update(run, pr, ready.open, pushed).await {
        Ok(mut landed) => {
            after_opening::after_opening(run, &mut landed, &ready.facts, &toolchains, flagged)
                .await;
            UnitOutcome::Landed(landed)
        }
        Err(stop) => UnitOutcome::Refused(stop),
    }
}

/// The title and body of a unit's PR: what the lock files show, and what the gates add.
fn pr_text<'a>(
    run: &RunContext<'a>,
    unit: &BranchUnit<'a>,
    a: &'a CreateMr,
    recipe: &'a Recipe,
    facts: &Verdict,
    siblings: &[(String, String)],
    report: &ActionReport,
) -> (String, String) {
    let mut title = crate::sink::line(&unit.title_from(facts), run.settings.allow_mentions);
    let (supply, security) = gates::screening_text(run, &unit.branch, report);
    if security {
        title = crate::supply::text::security_title(&title);
    }
    let toolchains = report.toolchains_of(&unit.branch);
    let (installs, warnings) = tested_with(report, &unit.branch);
    let body = PrBody {
        description: &a.description,
        facts,
        test_command: &recipe.test.text,
        working_dir: a.working_dir.as_deref(),
        branch: &unit.branch,
        allow_mentions: run.settings.allow_mentions,
        toolchains: &toolchains,
        supply: &supply,
        installs: &installs,
        warnings: &warnings,
        split: unit.split.as_ref().map(|split| SplitNote {
            split,
            title: &a.title,
            siblings,
        }),
    }
    .render();
    (title, body)
}

/// What built a unit, for the record its PR carries.
fn built<'b>(
    run: &RunContext<'b>,
    unit: &'b BranchUnit<'b>,
    a: &'b CreateMr,
    recipe: &'b Recipe,
) -> record::RecordSource<'b> {
    record::RecordSource {
        unit,
        mission: run.plan.mission(),
        test: &recipe.test.text,
        working_dir: a.working_dir.as_deref(),
        labels: &a.labels,
    }
}

/// The open PR on `branch` (which must be Quartermaster's); a closed one of Quartermaster's is
/// not reopened.
async fn open_pull_request(
    run: &RunContext<'_>,
    branch: &str,
) -> Result<Option<PullRequest>, Stop> {
    match run.forge.find_pull_request(branch).await? {
        Some(pr) if pr.state == State::Open => {
            ownership::check_owned(run, &pr)?;
            Ok(Some(pr))
        }
        Some(pr) if pr.state == State::Closed && pr.labels.contains(&run.settings.bot_label) => {
            Err(Stop::skipped(format!(
                "PR #{} on {branch} was closed without merging; Quartermaster does not reopen closed PRs (use a new branch name to propose it again)",
                pr.number
            )))
        }
        _ => Ok(None),
    }
}
