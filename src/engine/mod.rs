//! Executing a validated plan, action by action.
//!
//! Every action is independent: whatever happens to it (a red test, a refusal, a forge error) is
//! recorded in its report and never stops the next one. Actions run on `--jobs` workers
//! (`workers`), each with its own sandbox slot and a workspace it resets between units. Each action
//! type is one module (`create_mr`, `update_mr`, `issues`, `pull_requests`) that reads as a recipe over
//! the shared steps: `build` (workspace, commands, commit, tests), `publish` (push, PR), `ownership`
//! and `comment`. After the plan's actions, `upkeep` looks after Quartermaster's open PRs from the
//! build `record` each carries, and `dashboard` keeps the dependency dashboard; `after_opening`
//! applies the repository's policy to new PRs. The rules every action keeps, in one place:
//! - only PRs on `quartermaster/*` branches that carry the bot label are updated, commented on or
//!   closed; `comment_issue` needs the label on the issue;
//! - a branch with a commit by anyone but the bot identity is never force-pushed: it is left alone
//!   and the PR says why;
//! - pushes carry a lease (the branch must still be where it was seen);
//! - running a plan twice creates nothing new: open PRs are found by branch, issues by title and
//!   label, comments by a hidden marker;
//! - a PR on the branch that was closed without merging is not reopened.
//!
//! Every step is a function given the contexts it works with: the [`RunContext`] (the plan, the
//! forge, the settings, the sandbox, the remote's state, the progress) and, for the steps that
//! build a branch, the worker's [`WorkerSlot`] (its sandbox slot and the workspace in it).

mod after_opening;
mod build;
mod comment;
mod create_mr;
mod dashboard;
mod digest;
mod environment;
mod gates;
mod git_state;
mod heartbeat;
mod issues;
mod ownership;
mod project;
mod publish;
mod pull_requests;
mod record;
mod reuse;
mod stop;
mod text;
mod toolchains;
mod turn;
mod unit;
mod update_mr;
mod upkeep;
mod verify;
mod warm_up;
mod warnings;
mod workers;
mod workspace;

use crate::ci::progress::Progress;
use crate::forge::Forge;
use crate::git::Identity;
use crate::git::Workspace;
use crate::mission::Mission;
use crate::report::{ActionReport, IssueRef, Status, UpkeepReport, WarmUpReport};
use crate::sandbox::Sandbox;
use crate::scale::Only;
use crate::schedule::KeyContext;
use crate::validate::{Step, ValidatedPlan};
pub use git_state::OpenedRemote;
use git_state::SharedGit;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use stop::{Done, Stop};

/// How the engine behaves; resolved from the configuration.
pub struct Settings {
    pub dry_run: bool,
    pub min_confidence: f64,
    pub command_timeout: Duration,
    pub bot_label: String,
    pub author: Identity,
    pub draft: bool,
    pub allow_mentions: bool,
    /// The environment every command and test runs with.
    pub child_env: BTreeMap<OsString, OsString>,
    /// The variables the operator passed by name (`--extra-env`): they keep the operator's value.
    pub extra_env: Vec<String>,
    /// Strings redacted from captured output (the token, in the forms it travels in).
    pub secrets: Vec<String>,
    /// Registry hosts the operator configured, besides those the base lock files already use.
    pub registry_hosts: Vec<String>,
    /// Quartermaster's private directory (the mirror, workspaces' git directories), which the
    /// sandbox keeps out of the commands' reach.
    pub scratch: PathBuf,
    /// What a declared toolchain that differs from the one found does to a unit.
    pub toolchain_policy: crate::toolchain::ToolchainPolicy,
    /// The repository's policy, and the gates that apply it to every newly resolved version.
    pub screener: std::sync::Arc<crate::supply::Screener>,
    /// Commits are made by the forge through its API, so that it signs them.
    pub sign_commits: bool,
    /// Where each unit's log (the whole output of its commands and tests) is kept, if anywhere.
    pub logs: Option<PathBuf>,
}

/// What a run produced: the plan's actions, the upkeep of Quartermaster's open PRs, and the
/// dependency dashboard.
#[derive(Debug, Default)]
pub struct RunReports {
    pub actions: Vec<ActionReport>,
    /// The warm-up of the units' caches, when there was one.
    pub warm_up: Option<WarmUpReport>,
    pub upkeep: Vec<UpkeepReport>,
    pub dashboard: Option<IssueRef>,
}

/// Runs a validated plan: its actions on `jobs` workers, two actions holding a common lock key
/// never at once and the earlier first; the reports in plan order.
pub struct Engine<'a> {
    plan: &'a ValidatedPlan,
    forge: &'a dyn Forge,
    settings: &'a Settings,
    progress: &'a Progress,
    sandbox: &'a Sandbox,
    /// The actions of this shard (`run --only`); the others are not run, nor reported.
    only: Option<&'a Only>,
    jobs: NonZeroUsize,
    keys: KeyContext,
    /// The remote's state, shared by the workers.
    git: SharedGit,
    /// The mission records are validated against: with it, the run also looks after
    /// Quartermaster's open PRs and keeps the dependency dashboard.
    upkeep: Option<&'a Mission>,
    /// The warm-up of the units' caches, run by the first units that build.
    warm_up: warm_up::WarmUp,
    /// The run's checkouts of base commits, under the layered workspaces.
    bases: workspace::Bases,
}

impl<'a> Engine<'a> {
    pub fn new(
        plan: &'a ValidatedPlan,
        forge: &'a dyn Forge,
        settings: &'a Settings,
        progress: &'a Progress,
        sandbox: &'a Sandbox,
    ) -> Self {
        Self {
            plan,
            forge,
            settings,
            progress,
            sandbox,
            only: None,
            jobs: NonZeroUsize::MIN,
            keys: KeyContext::default(),
            git: SharedGit::default(),
            upkeep: None,
            warm_up: warm_up::WarmUp::default(),
            bases: workspace::Bases::default(),
        }
    }

    /// Starts from the remote's state as read before the run (the state the policy was read
    /// from), instead of reading it on first use.
    pub fn remote(mut self, opened: OpenedRemote) -> Self {
        self.git = SharedGit::from(opened);
        self
    }

    /// Also looks after Quartermaster's open PRs and keeps the dependency dashboard, validating
    /// the builds they record against `mission` (the plan's).
    pub fn upkeep(mut self, mission: &'a Mission) -> Self {
        self.upkeep = Some(mission);
        self
    }

    /// Limits the run to these actions (a shard's).
    pub fn only(mut self, only: Option<&'a Only>) -> Self {
        self.only = only;
        self
    }

    /// Runs up to `jobs` actions at once (the sandbox needs as many slots), with the lock keys
    /// `keys` gives them.
    pub fn jobs(mut self, jobs: NonZeroUsize, keys: KeyContext) -> Self {
        self.jobs = jobs;
        self.keys = keys;
        self
    }

    /// Runs the actions (those of `only`, when given), then, with [`Engine::upkeep`], looks
    /// after the open PRs and the dashboard; `runtime` drives the forge's requests.
    pub fn execute(self, runtime: &tokio::runtime::Handle) -> RunReports {
        let actions = workers::execute_actions(&self, runtime);
        let mut ran = RunReports {
            actions,
            ..RunReports::default()
        };
        if let Some(mission) = self.upkeep {
            let run = workers::context(&self, self.forge, false);
            let mut slot = WorkerSlot::new(0);
            // The shard holding the plan's first action looks after everything; the others
            // only close what their own new PRs supersede.
            let everything = self.only.is_none_or(|only| only.contains(0));
            runtime.block_on(dashboard::look_after(
                &run, &mut slot, mission, everything, &mut ran,
            ));
        }
        ran.warm_up = self.warm_up.into_report();
        ran
    }
}

/// What every step of a run works with: the plan, the forge, the settings, the sandbox, the
/// remote's state, and the progress of the current action.
pub(crate) struct RunContext<'a> {
    plan: &'a ValidatedPlan,
    forge: &'a dyn Forge,
    settings: &'a Settings,
    /// The current action's progress.
    progress: Progress,
    sandbox: &'a Sandbox,
    git: &'a SharedGit,
    warm_up: &'a warm_up::WarmUp,
    bases: &'a workspace::Bases,
}

/// What a worker keeps from one unit to the next: its sandbox slot and the workspace in it.
pub(crate) struct WorkerSlot {
    number: u32,
    /// The slot's workspace, reset between units rather than checked out anew.
    workspace: Option<Workspace>,
    /// Build even where the branch already holds this very build (a rebuild asked for).
    force_build: bool,
}

impl WorkerSlot {
    fn new(number: u32) -> Self {
        WorkerSlot {
            number,
            workspace: None,
            force_build: false,
        }
    }
}

/// Runs one action and reports it; `started` is when the run began.
async fn execute_action(
    run: &RunContext<'_>,
    slot: &mut WorkerSlot,
    index: usize,
    started: Instant,
) -> ActionReport {
    let actions = &run.plan.plan().actions;
    let (action, step) = (&actions[index], run.plan.step(index));
    let begun = Instant::now();
    run.progress
        .begin_action(index, actions.len(), &text::describe(action));
    let mut report = ActionReport::new(index, action.action_type());
    let result = match step {
        // The engine runs indices of the plan it was given.
        None => Err(Stop::failed(format!("the plan has no action {index}"))),
        Some(step) => match below_threshold(run, step, action.confidence()) {
            Some(stop) => Err(stop),
            None => dispatch(run, slot, step, &mut report).await,
        },
    };
    match result {
        Ok((status, reason)) => report.finish(status, reason),
        Err(stop) => report.finish(stop.status, stop.reason),
    }
    // A signal came while it ran: whatever it came to, it did not finish as planned.
    if let Some(signal) = crate::harden::cancelled() {
        let reason = format!(
            "stopped by signal {signal} while it ran ({}: {})",
            serde_json::to_value(report.status)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            report.reason
        );
        report.finish(Status::Cancelled, reason);
    }
    tracing::debug!(ms = millis(begun.elapsed()), "action finished");
    report.started_ms = millis(begun.duration_since(started));
    report.duration_ms = millis(begun.elapsed());
    run.progress.end_action(&report);
    report
}

/// Actions the agent is not confident enough about are skipped (a `skip` is always recorded).
fn below_threshold(run: &RunContext<'_>, step: Step<'_>, confidence: f64) -> Option<Stop> {
    let threshold = run.settings.min_confidence;
    (!matches!(step, Step::Skip(_)) && confidence < threshold).then(|| {
        Stop::skipped(format!(
            "confidence {confidence} is below the threshold {threshold}"
        ))
    })
}

/// Runs the step of the action's type: each type's module reads as its recipe.
async fn dispatch<'a>(
    run: &RunContext<'a>,
    slot: &mut WorkerSlot,
    step: Step<'a>,
    report: &mut ActionReport,
) -> Done {
    match step {
        Step::CreateMr(a, recipe) => create_mr::create_mr(run, slot, a, recipe, report).await,
        Step::UpdateMr(a, recipe) => update_mr::update_mr(run, slot, a, recipe, report).await,
        Step::CreateIssue(a) => issues::create_issue(run, a, report).await,
        Step::CommentMr(a) => pull_requests::comment_mr(run, a, report).await,
        Step::CommentIssue(a) => issues::comment_issue(run, a, report).await,
        Step::CloseMr(a) => pull_requests::close_mr(run, a, report).await,
        Step::Skip(a) => Err(Stop::skipped(text::skip_reason(a))),
    }
}

/// A duration in whole milliseconds, as reports and logs give it.
pub(super) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
