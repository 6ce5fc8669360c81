//! `update_mr`: regenerate an open PR of Quartermaster's from the current default branch (or on top
//! of itself with `rebase_first: false`), test it, force-push with a lease, and update the PR.

use super::build;
use super::build::BuildJob;
use super::digest::{self, BuildInputs};
use super::environment;
use super::gates;
use super::git_state;
use super::ownership;
use super::publish;
use super::publish::Publication;
use super::record::{self, Record};
use super::reuse;
use super::stop::{Done, Stop};
use super::text::PrBody;
use super::unit::{BranchUnit, BuildOutcome, branch_updates};
use super::{RunContext, WorkerSlot};
use crate::changes;
use crate::forge::{PullRequest, State};
use crate::git::NewCommit;
use crate::plan::UpdateMr;
use crate::report::{ActionReport, Status, TestVerdict};
use crate::validate::Recipe;

pub(super) async fn update_mr<'a>(
    run: &RunContext<'a>,
    slot: &mut WorkerSlot,
    a: &'a UpdateMr,
    recipe: &'a Recipe,
    report: &mut ActionReport,
) -> Done {
    report.branch = Some(a.branch.clone());
    // Whatever stops the action, its updates are accounted for.
    report.updates = branch_updates(&a.updates, &a.branch, None, TestVerdict::NotRun, report);
    let pr = ownership::owned_pull_request(run, a.mr_id).await?;
    let (default_tip, tip) = regenerable(run, a, &pr)?;
    ownership::claim(run, &a.branch, Some(&pr), report).await?;
    let unit = BranchUnit {
        branch: a.branch.clone(),
        title: pr.title.clone(),
        split: None,
        updates: a.updates.iter().collect(),
        commands: recipe.commands.iter().collect(),
    };
    let base = if a.rebase_first { default_tip } else { tip };
    let job = update_job(run, a, recipe, &unit, base);
    let reused = if slot.force_build {
        None
    } else {
        reuse::reusable(run, &a.branch, Some(&pr), &job.build, base)?
    };
    if let Some(reused) = reused {
        let reason = format!("PR #{} unchanged", reused.number);
        report.pull_requests.push(reused);
        report.updates = branch_updates(
            &a.updates,
            &a.branch,
            Some(pr.number),
            TestVerdict::Passed,
            report,
        );
        return Ok((Status::Done, reason));
    }
    let built = build::build(run, slot, &job, report)?;
    let verdict = match &built {
        BuildOutcome::Ready(..) => TestVerdict::Passed,
        BuildOutcome::TestsFailed(_) => TestVerdict::Failed,
        _ => TestVerdict::NotRun,
    };
    let from = record::RecordSource {
        unit: &unit,
        mission: run.plan.mission(),
        test: &recipe.test.text,
        working_dir: a.working_dir.as_deref(),
        labels: a.labels.as_deref().unwrap_or(&[]),
    };
    let facts = match &built {
        BuildOutcome::Ready(_, facts) => Some(facts.as_ref()),
        _ => None,
    };
    let stamp = record::Stamp {
        build: digest::marker(&job.build, base),
        record: Record::of(&from, facts),
    };
    let result = land_update(run, slot, (a, recipe), pr, built, &stamp, report).await;
    let landed_pr = report.pull_requests.first().map(|p| p.number);
    report.updates = branch_updates(&a.updates, &a.branch, landed_pr, verdict, report);
    result
}

/// The default branch's tip and the PR's branch tip, when the PR may be regenerated: open, and
/// on the branch the plan names, which still exists.
fn regenerable(
    run: &RunContext<'_>,
    a: &UpdateMr,
    pr: &PullRequest,
) -> Result<(git2::Oid, git2::Oid), Stop> {
    if pr.head != a.branch {
        return Err(Stop::denied(format!(
            "PR #{}'s branch is {}, not {}",
            pr.number, pr.head, a.branch
        )));
    }
    if pr.state != State::Open {
        return Err(Stop::skipped(format!(
            "PR #{} is {}",
            pr.number,
            pr.state.as_str()
        )));
    }
    let git = git_state::lock(run)?;
    let tip = *git.heads.get(&a.branch).ok_or_else(|| {
        Stop::failed(format!(
            "branch {} no longer exists on the remote",
            a.branch
        ))
    })?;
    Ok((git.default_tip, tip))
}

/// The commit and facts of a rebuild that is ready, or why the PR is left as it was.
fn rebuilt(
    run: &RunContext<'_>,
    a: &UpdateMr,
    pr: &PullRequest,
    built: BuildOutcome,
) -> Result<(NewCommit, Box<changes::Verdict>), Stop> {
    match built {
        BuildOutcome::Ready(commit, facts) => Ok((commit, facts)),
        BuildOutcome::Unverified(stop) | BuildOutcome::Gated(stop) => Err(stop),
        BuildOutcome::NoChanges => Err(Stop::skipped(format!(
            "the commands change nothing on top of {}: the updates are already there",
            if a.rebase_first {
                run.plan.plan().repo_context.default_branch.as_str()
            } else {
                a.branch.as_str()
            }
        ))),
        BuildOutcome::CommandFailed(why) => Err(Stop::failed(why)),
        BuildOutcome::InstallFailed(why) | BuildOutcome::TestsFailed(why) => Err(Stop::failed(
            format!("{why}; PR #{} was left as it was", pr.number),
        )),
    }
}

/// The job that rebuilds `unit` on `base`, with the digest of what builds it.
fn update_job<'j>(
    run: &RunContext<'_>,
    a: &'j UpdateMr,
    recipe: &'j Recipe,
    unit: &'j BranchUnit<'j>,
    base: git2::Oid,
) -> BuildJob<'j> {
    BuildJob {
        unit,
        working_dir: a.working_dir.as_deref(),
        test: &recipe.test,
        base,
        build: BuildInputs {
            unit,
            test: &recipe.test,
            working_dir: a.working_dir.as_deref(),
            mission: run.plan.mission(),
            description: a.description.as_deref(),
            labels: a.labels.as_deref().unwrap_or(&[]),
            toolchain_policy: run.settings.toolchain_policy,
            policy: &run.settings.screener.policy,
            install: environment::install_sources(run, unit),
        }
        .digest(),
    }
}

/// What a rebuilt branch comes to: force-pushed and its PR updated, or why not.
async fn land_update<'a>(
    run: &RunContext<'a>,
    slot: &mut WorkerSlot,
    (a, recipe): (&'a UpdateMr, &'a Recipe),
    pr: PullRequest,
    built: BuildOutcome,
    stamp: &record::Stamp,
    report: &mut ActionReport,
) -> Done {
    let (commit, facts) = rebuilt(run, a, &pr, built)?;
    if run.settings.dry_run {
        return Err(Stop::skipped(format!(
            "dry run: tests passed; would force-push {} and update PR #{}",
            a.branch, pr.number
        )));
    }
    // Without a new description the PR keeps its words, with the new facts and build.
    let toolchains = report.toolchains_of(&a.branch);
    let (supply, security) = gates::screening_text(run, &a.branch, report);
    let (installs, warnings) = super::text::tested_with(report, &a.branch);
    let text = PrBody {
        description: a.description.as_deref().unwrap_or_default(),
        facts: &facts,
        test_command: &recipe.test.text,
        working_dir: a.working_dir.as_deref(),
        branch: &a.branch,
        allow_mentions: run.settings.allow_mentions,
        toolchains: &toolchains,
        supply: &supply,
        split: None,
        installs: &installs,
        warnings: &warnings,
    };
    let body = match a.description {
        Some(_) => text.render(),
        None => text.refresh(&pr.body),
    };
    let body = Some(stamp.apply(&body));
    let title = if security {
        crate::supply::text::security_title(&pr.title)
    } else {
        pr.title.clone()
    };
    let number = pr.number;
    let labels = a.labels.clone().unwrap_or_default();
    let publication = Publication {
        commit: &commit,
        branch: &a.branch,
        title: &title,
        body,
        labels: &labels,
    };
    let landed = publish::publish(run, slot, publication, Some(pr)).await?;
    let word = landed.operation.as_str();
    report.pull_requests.push(landed);
    Ok((Status::Done, format!("PR #{number} {word}")))
}
