//! `create_mr`: build the action's branch (or one per update, as its fallback strategy says), and
//! open or update the PR of each branch whose tests pass.

use super::Worker;
use super::build::Job;
use super::digest::{self, BuildInputs};
use super::stop::{Done, Stop};
use super::text::PrBody;
use super::unit::{self, Built, Outcome, Unit};
use crate::forge::{PullRequest, State};
use crate::plan::{CreateMr, FallbackStrategy};
use crate::report::ActionReport;
use crate::validate::Recipe;

impl<'a> Worker<'a> {
    pub(super) async fn create_mr(
        &mut self,
        a: &'a CreateMr,
        recipe: &'a Recipe,
        report: &mut ActionReport,
    ) -> Done {
        report.branch = Some(a.branch.clone());
        // Whatever stops the action, its updates are accounted for.
        report.updates = unit::update_reports(&a.updates, &[], report);
        let base = self.git()?.default_tip;
        let mut results: Vec<(Unit, Outcome)> = Vec::new();
        let batch = unit::batch(a, &recipe.commands);
        match a.fallback_strategy {
            FallbackStrategy::Batch => {
                let outcome = self.create_unit(&batch, a, recipe, base, report).await;
                results.push((batch, outcome));
            }
            FallbackStrategy::Individual => {
                self.create_each(a, recipe, base, report, &mut results)
                    .await;
            }
            FallbackStrategy::IndividualOnFailure => {
                let outcome = self.create_unit(&batch, a, recipe, base, report).await;
                // A red batch, or a command that failed on it (one update conflicting with
                // another), is split: each update gets its chance alone.
                let red = matches!(
                    outcome,
                    Outcome::TestsFailed(_) | Outcome::CommandFailed(_) | Outcome::Unverified(_)
                ) && a.updates.len() > 1;
                let why = unit::batch_failure(&outcome);
                results.push((batch, outcome));
                if red {
                    self.progress
                        .step(&format!("{why}: trying each update on its own branch"));
                    self.create_each(a, recipe, base, report, &mut results)
                        .await;
                }
            }
        }
        report.updates = unit::update_reports(&a.updates, &results, report);
        for (_, outcome) in &results {
            if let Outcome::Landed(pr) = outcome {
                report.pull_requests.push(pr.clone());
            }
        }
        Ok(unit::conclude(&results, a.fallback_strategy))
    }

    /// One unit per update.
    async fn create_each(
        &mut self,
        a: &'a CreateMr,
        recipe: &'a Recipe,
        base: git2::Oid,
        report: &mut ActionReport,
        results: &mut Vec<(Unit<'a>, Outcome)>,
    ) {
        for unit in unit::split(a, &recipe.commands) {
            let outcome = self.create_unit(&unit, a, recipe, base, report).await;
            results.push((unit, outcome));
        }
    }

    /// Produces one branch of a `create_mr`: claim it, build it, publish it.
    async fn create_unit(
        &mut self,
        unit: &Unit<'a>,
        a: &'a CreateMr,
        recipe: &'a Recipe,
        base: git2::Oid,
        report: &mut ActionReport,
    ) -> Outcome {
        let open = match self.open_pull_request(&unit.branch).await {
            Ok(open) => open,
            Err(stop) => return Outcome::Refused(stop),
        };
        if let Err(stop) = self.claim(&unit.branch, open.as_ref(), report).await {
            return Outcome::Refused(stop);
        }
        let dir = a.working_dir.as_deref();
        let job = Job {
            unit,
            working_dir: dir,
            test: &recipe.test,
            base,
            build: BuildInputs {
                unit,
                test: &recipe.test,
                working_dir: dir,
                mission: self.plan.mission(),
                description: Some(&a.description),
                labels: &a.labels,
                toolchain_policy: self.settings.toolchain_policy,
            }
            .digest(),
        };
        match self.reusable(&unit.branch, open.as_ref(), &job.build, base) {
            Ok(Some(pr)) => return Outcome::Landed(pr),
            Ok(None) => {}
            Err(stop) => return Outcome::Refused(stop),
        }
        tracing::debug!(branch = %unit.branch, "claimed; building");
        let (commit, facts) = match self.build(&job, report) {
            Ok(Built::Ready(commit, facts)) => (commit, facts),
            Ok(Built::NoChanges) => return Outcome::NoChanges,
            Ok(Built::CommandFailed(why)) => return Outcome::CommandFailed(why),
            Ok(Built::Unverified(stop)) => return Outcome::Unverified(stop),
            Ok(Built::TestsFailed(why)) => return Outcome::TestsFailed(why),
            Err(stop) => return Outcome::Refused(stop),
        };
        if self.settings.dry_run {
            let verb = if open.is_some() { "update" } else { "open" };
            return Outcome::DryRun(format!(
                "tests passed; would push {} and {verb} its PR",
                unit.branch
            ));
        }
        let title = crate::sink::line(&unit.title_from(&facts), self.settings.allow_mentions);
        let toolchains = report.toolchains_of(&unit.branch);
        let body = PrBody {
            description: &a.description,
            facts: &facts,
            test_command: &recipe.test.text,
            working_dir: dir,
            branch: &unit.branch,
            allow_mentions: self.settings.allow_mentions,
            toolchains: &toolchains,
        }
        .render();
        let body = digest::mark(&body, &digest::marker(&job.build, base));
        let pr = super::publish::Publication {
            commit: &commit,
            branch: &unit.branch,
            title: &title,
            body: Some(body),
            labels: &a.labels,
        };
        match self.publish(pr, open).await {
            Ok(pr) => Outcome::Landed(pr),
            Err(stop) => Outcome::Refused(stop),
        }
    }

    /// The open PR on `branch` (which must be Quartermaster's); a closed one of Quartermaster's is
    /// not reopened.
    async fn open_pull_request(&self, branch: &str) -> Result<Option<PullRequest>, Stop> {
        match self.forge.find_pull_request(branch).await? {
            Some(pr) if pr.state == State::Open => {
                self.check_owned(&pr)?;
                Ok(Some(pr))
            }
            Some(pr)
                if pr.state == State::Closed && pr.labels.contains(&self.settings.bot_label) =>
            {
                Err(Stop::skipped(format!(
                    "PR #{} on {branch} was closed without merging; Quartermaster does not reopen closed PRs (use a new branch name to propose it again)",
                    pr.number
                )))
            }
            _ => Ok(None),
        }
    }
}
