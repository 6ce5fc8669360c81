//! `update_mr`: regenerate an open PR of Quartermaster's from the current default branch (or on top
//! of itself with `rebase_first: false`), test it, force-push with a lease, and update the PR.

use super::Worker;
use super::build::BuildJob;
use super::digest::{self, BuildInputs};
use super::publish::Publication;
use super::record::{self, Record};
use super::stop::{Done, Stop};
use super::text::PrBody;
use super::unit::{BranchUnit, BuildOutcome, branch_updates};
use crate::changes;
use crate::forge::{PullRequest, State};
use crate::git::NewCommit;
use crate::plan::UpdateMr;
use crate::report::{ActionReport, Status, Verdict};
use crate::validate::Recipe;

impl<'a> Worker<'a> {
    pub(super) async fn update_mr(
        &mut self,
        a: &'a UpdateMr,
        recipe: &'a Recipe,
        report: &mut ActionReport,
    ) -> Done {
        report.branch = Some(a.branch.clone());
        // Whatever stops the action, its updates are accounted for.
        report.updates = branch_updates(&a.updates, &a.branch, None, Verdict::NotRun, report);
        let pr = self.owned_pull_request(a.mr_id).await?;
        let (default_tip, tip) = self.regenerable(a, &pr)?;
        self.claim(&a.branch, Some(&pr), report).await?;
        let unit = BranchUnit {
            branch: a.branch.clone(),
            title: pr.title.clone(),
            split: None,
            updates: a.updates.iter().collect(),
            commands: recipe.commands.iter().collect(),
        };
        let base = if a.rebase_first { default_tip } else { tip };
        let job = self.update_job(a, recipe, &unit, base);
        let reused = if self.slot.force_build {
            None
        } else {
            self.reusable(&a.branch, Some(&pr), &job.build, base)?
        };
        if let Some(reused) = reused {
            let reason = format!("PR #{} unchanged", reused.number);
            report.pull_requests.push(reused);
            report.updates = branch_updates(
                &a.updates,
                &a.branch,
                Some(pr.number),
                Verdict::Passed,
                report,
            );
            return Ok((Status::Done, reason));
        }
        let built = self.build(&job, report)?;
        let verdict = match &built {
            BuildOutcome::Ready(..) => Verdict::Passed,
            BuildOutcome::TestsFailed(_) => Verdict::Failed,
            _ => Verdict::NotRun,
        };
        let from = record::RecordSource {
            unit: &unit,
            mission: self.run.plan.mission(),
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
        let result = self.land_update(a, recipe, pr, built, &stamp, report).await;
        let landed_pr = report.pull_requests.first().map(|p| p.number);
        report.updates = branch_updates(&a.updates, &a.branch, landed_pr, verdict, report);
        result
    }

    /// The default branch's tip and the PR's branch tip, when the PR may be regenerated: open, and
    /// on the branch the plan names, which still exists.
    fn regenerable(
        &mut self,
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
        let git = self.git()?;
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
        &self,
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
                    self.run.plan.plan().repo_context.default_branch.as_str()
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
        &self,
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
                mission: self.run.plan.mission(),
                description: a.description.as_deref(),
                labels: a.labels.as_deref().unwrap_or(&[]),
                toolchain_policy: self.run.settings.toolchain_policy,
                policy: &self.run.settings.screener.policy,
                install: self.install_sources(unit),
            }
            .digest(),
        }
    }

    /// What a rebuilt branch comes to: force-pushed and its PR updated, or why not.
    async fn land_update(
        &mut self,
        a: &'a UpdateMr,
        recipe: &'a Recipe,
        pr: PullRequest,
        built: BuildOutcome,
        stamp: &record::Stamp,
        report: &mut ActionReport,
    ) -> Done {
        let (commit, facts) = self.rebuilt(a, &pr, built)?;
        if self.run.settings.dry_run {
            return Err(Stop::skipped(format!(
                "dry run: tests passed; would force-push {} and update PR #{}",
                a.branch, pr.number
            )));
        }
        // Without a new description the PR keeps its words, with the new facts and build.
        let toolchains = report.toolchains_of(&a.branch);
        let (supply, security) = self.screening_text(&a.branch, report);
        let (installs, warnings) = super::text::tested_with(report, &a.branch);
        let text = PrBody {
            description: a.description.as_deref().unwrap_or_default(),
            facts: &facts,
            test_command: &recipe.test.text,
            working_dir: a.working_dir.as_deref(),
            branch: &a.branch,
            allow_mentions: self.run.settings.allow_mentions,
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
        let landed = self.publish(publication, Some(pr)).await?;
        let word = landed.operation.as_str();
        report.pull_requests.push(landed);
        Ok((Status::Done, format!("PR #{number} {word}")))
    }
}
