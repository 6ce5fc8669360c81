//! Executing a validated plan, action by action.
//!
//! Every action is independent: it gets its own workspace, and whatever happens to it (a red test,
//! a refusal, a forge error) is recorded in its report and never stops the next one. The rules
//! (DESIGN.md §3) in one place:
//! - only PRs on `quartermaster/*` branches that carry the bot label are updated, commented on or
//!   closed; `comment_issue` needs the label on the issue;
//! - a branch with a commit by anyone but the bot identity is never force-pushed: it is left alone
//!   and the PR says why;
//! - pushes carry a lease (the branch must still be where it was seen);
//! - running a plan twice creates nothing new: open PRs are found by branch, issues by title and
//!   label, comments by a hidden marker;
//! - a PR on the branch that was closed without merging is not reopened.

use crate::forge::{
    Forge, ForgeError, NewIssue, NewPullRequest, PullRequest, PullRequestEdit, State, Target,
};
use crate::git::{GitError, Identity, Mirror, NewCommit, Workspace};
use crate::manifest;
use crate::markdown::{self, cell_code, code};
use crate::mission::{CommandMatch, Mission, TestCommand};
use crate::plan::{
    Action, CloseMr, CommentIssue, CommentMr, CreateIssue, CreateMr, FallbackStrategy, Plan, Skip,
    Update, UpdateMr,
};
use crate::process::{self, Spec};
use crate::progress::Progress;
use crate::report::{
    ActionReport, CommandRecord, CommentRef, IssueRef, Operation, ProcessRecord, PullRequestRef,
    Status, TestReport, TestRun, UpdateReport, Verdict,
};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::time::{Duration, Instant};

/// Longest body Quartermaster posts (GitHub refuses more than 65,536 characters).
const MAX_POSTED_BODY: usize = 65_000;

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
    /// Strings redacted from captured output (the token, in the forms it travels in).
    pub secrets: Vec<String>,
}

/// Why an action ended early.
#[derive(Debug)]
struct Stop {
    status: Status,
    reason: String,
}

impl Stop {
    fn failed(reason: impl Into<String>) -> Self {
        Self {
            status: Status::Failed,
            reason: reason.into(),
        }
    }

    fn denied(reason: impl Into<String>) -> Self {
        Self {
            status: Status::Denied,
            reason: reason.into(),
        }
    }

    fn skipped(reason: impl Into<String>) -> Self {
        Self {
            status: Status::Skipped,
            reason: reason.into(),
        }
    }
}

impl From<ForgeError> for Stop {
    fn from(e: ForgeError) -> Self {
        Stop::failed(format!("forge: {e}"))
    }
}

impl From<GitError> for Stop {
    fn from(e: GitError) -> Self {
        Stop::failed(format!("git: {e}"))
    }
}

/// What was fetched from the remote at the start of the run.
struct GitState {
    mirror: Mirror,
    /// Remote branch tips, kept current as Quartermaster pushes.
    heads: BTreeMap<String, git2::Oid>,
    default_tip: git2::Oid,
}

/// One branch to produce: some updates and the commands that apply them.
struct Unit<'p> {
    branch: String,
    title: String,
    updates: Vec<&'p Update>,
    commands: Vec<(&'p str, CommandMatch)>,
}

/// What building a branch came to.
enum Built {
    Ready(Box<Workspace>, NewCommit),
    NoChanges,
    CommandFailed(String),
    TestsFailed(String),
}

/// What became of one unit.
enum Outcome {
    Landed(PullRequestRef),
    DryRun(String),
    NoChanges,
    Refused(Stop),
    CommandFailed(String),
    TestsFailed(String),
}

pub struct Engine<'a> {
    plan: &'a Plan,
    mission: &'a Mission,
    forge: &'a dyn Forge,
    settings: &'a Settings,
    progress: &'a Progress,
    git: Option<std::result::Result<GitState, String>>,
}

impl<'a> Engine<'a> {
    pub fn new(
        plan: &'a Plan,
        mission: &'a Mission,
        forge: &'a dyn Forge,
        settings: &'a Settings,
        progress: &'a Progress,
    ) -> Self {
        Self {
            plan,
            mission,
            forge,
            settings,
            progress,
            git: None,
        }
    }

    /// Runs every action in plan order.
    pub async fn run(mut self) -> Vec<ActionReport> {
        let total = self.plan.actions.len();
        let mut reports = Vec::with_capacity(total);
        for (index, action) in self.plan.actions.iter().enumerate() {
            let started = Instant::now();
            self.progress.begin_action(index, total, &describe(action));
            let mut report = ActionReport::new(index, action.action_type().as_str());
            let result = if !matches!(action, Action::Skip(_))
                && action.confidence() < self.settings.min_confidence
            {
                Err(Stop::skipped(format!(
                    "confidence {} is below the threshold {}",
                    action.confidence(),
                    self.settings.min_confidence
                )))
            } else {
                match action {
                    Action::CreateMr(a) => self.create_mr(a, &mut report).await,
                    Action::UpdateMr(a) => self.update_mr(a, &mut report).await,
                    Action::CreateIssue(a) => self.create_issue(a, &mut report).await,
                    Action::CommentMr(a) => self.comment_mr(a, &mut report).await,
                    Action::CommentIssue(a) => self.comment_issue(a, &mut report).await,
                    Action::CloseMr(a) => self.close_mr(a, &mut report).await,
                    Action::Skip(a) => Err(skip(a)),
                }
            };
            match result {
                Ok((status, reason)) => report.finish(status, reason),
                Err(stop) => report.finish(stop.status, stop.reason),
            }
            report.duration_ms = started.elapsed().as_millis() as u64;
            self.progress.end_action(&report);
            reports.push(report);
        }
        reports
    }

    // --- git ------------------------------------------------------------------------------------

    /// The remote, listed and fetched on first use (plans of issues and comments never touch git).
    fn git(&mut self) -> Result<&mut GitState, Stop> {
        if self.git.is_none() {
            self.git = Some(self.open_git().map_err(|e| e.reason));
        }
        match self.git.as_mut() {
            Some(Ok(state)) => Ok(state),
            Some(Err(reason)) => Err(Stop::failed(reason.clone())),
            None => unreachable!("initialised above"),
        }
    }

    fn open_git(&self) -> Result<GitState, Stop> {
        let remote = self.forge.remote();
        self.progress
            .step(&format!("reading {}", crate::git::display_url(&remote.url)));
        let mirror = Mirror::new(remote.clone())?;
        let heads = mirror.list()?;
        let default = &self.plan.repo_context.default_branch;
        let default_tip = *heads.get(default).ok_or_else(|| {
            Stop::failed(format!(
                "the default branch `{default}` does not exist on the remote"
            ))
        })?;
        let mut wanted: BTreeSet<&str> = BTreeSet::from([default.as_str()]);
        for action in &self.plan.actions {
            match action {
                Action::CreateMr(a) => {
                    wanted.insert(&a.branch);
                    for b in heads
                        .keys()
                        .filter(|b| b.starts_with(&format!("{}--", a.branch)))
                    {
                        wanted.insert(b);
                    }
                }
                Action::UpdateMr(a) => {
                    wanted.insert(&a.branch);
                }
                _ => {}
            }
        }
        let present: Vec<&str> = wanted
            .into_iter()
            .filter(|b| heads.contains_key(*b))
            .collect();
        mirror.fetch(&present)?;
        Ok(GitState {
            mirror,
            heads,
            default_tip,
        })
    }

    // --- actions ----------------------------------------------------------------------------------

    async fn create_mr(
        &mut self,
        a: &'a CreateMr,
        report: &mut ActionReport,
    ) -> Result<(Status, String), Stop> {
        report.branch = Some(a.branch.clone());
        // Whatever stops the action, its updates are accounted for.
        let none = update_reports(&a.updates, &[], report);
        report.updates = none;
        let base = self.git()?.default_tip;
        let commands = self.match_commands(&a.commands, &a.updates)?;
        let batch = Unit {
            branch: a.branch.clone(),
            title: a.title.clone(),
            updates: a.updates.iter().collect(),
            commands: commands.clone(),
        };
        let mut results: Vec<(Unit, Outcome)> = Vec::new();
        match a.fallback_strategy {
            FallbackStrategy::Batch => {
                let outcome = self.create_unit(&batch, a, base, report).await;
                results.push((batch, outcome));
            }
            FallbackStrategy::Individual => {
                for unit in split_units(a, &commands) {
                    let outcome = self.create_unit(&unit, a, base, report).await;
                    results.push((unit, outcome));
                }
            }
            FallbackStrategy::IndividualOnFailure => {
                let outcome = self.create_unit(&batch, a, base, report).await;
                // A red batch, or a command that failed on it (one update conflicting with
                // another), is split: each update gets its chance alone.
                let red = matches!(outcome, Outcome::TestsFailed(_) | Outcome::CommandFailed(_))
                    && a.updates.len() > 1;
                let why = batch_failure(&outcome);
                results.push((batch, outcome));
                if red {
                    self.progress
                        .step(&format!("{why}: trying each update on its own branch"));
                    for unit in split_units(a, &commands) {
                        let outcome = self.create_unit(&unit, a, base, report).await;
                        results.push((unit, outcome));
                    }
                }
            }
        }
        report.updates = update_reports(&a.updates, &results, report);
        for (_, outcome) in &results {
            if let Outcome::Landed(pr) = outcome {
                report.pull_requests.push(pr.clone());
            }
        }
        Ok(conclude(&results, a.fallback_strategy))
    }

    /// Produces one branch of a `create_mr`: claim it, build it, publish it.
    async fn create_unit(
        &mut self,
        unit: &Unit<'a>,
        a: &'a CreateMr,
        base: git2::Oid,
        report: &mut ActionReport,
    ) -> Outcome {
        let existing = match self.forge.find_pull_request(&unit.branch).await {
            Ok(pr) => pr,
            Err(e) => return Outcome::Refused(e.into()),
        };
        let open = match existing {
            Some(pr) if pr.state == State::Open => {
                if let Err(stop) = self.check_owned(&pr) {
                    return Outcome::Refused(stop);
                }
                Some(pr)
            }
            Some(pr)
                if pr.state == State::Closed && pr.labels.contains(&self.settings.bot_label) =>
            {
                return Outcome::Refused(Stop::skipped(format!(
                    "PR #{} on {} was closed without merging; Quartermaster does not reopen closed PRs (use a new branch name to propose it again)",
                    pr.number, unit.branch
                )));
            }
            _ => None,
        };
        if let Err(stop) = self.claim(&unit.branch, open.as_ref(), report).await {
            return Outcome::Refused(stop);
        }
        let built = match self.build(
            unit,
            a.working_dir.as_deref(),
            &a.test_command,
            base,
            report,
        ) {
            Ok(b) => b,
            Err(stop) => return Outcome::Refused(stop),
        };
        let (workspace, commit) = match built {
            Built::Ready(ws, commit) => (ws, commit),
            Built::NoChanges => return Outcome::NoChanges,
            Built::CommandFailed(why) => return Outcome::CommandFailed(why),
            Built::TestsFailed(why) => return Outcome::TestsFailed(why),
        };
        if self.settings.dry_run {
            let verb = if open.is_some() { "update" } else { "open" };
            return Outcome::DryRun(format!(
                "tests passed; would push {} and {verb} its PR",
                unit.branch
            ));
        }
        let title = markdown::one_line(&unit.title, self.settings.allow_mentions);
        let body = self.pr_body(
            &a.description,
            &unit.updates,
            &a.test_command,
            a.working_dir.as_deref(),
            &unit.branch,
        );
        match self
            .publish(
                &workspace,
                &commit,
                &unit.branch,
                &title,
                Some(body),
                &a.labels,
                open,
            )
            .await
        {
            Ok(pr) => Outcome::Landed(pr),
            Err(stop) => Outcome::Refused(stop),
        }
    }

    async fn update_mr(
        &mut self,
        a: &'a UpdateMr,
        report: &mut ActionReport,
    ) -> Result<(Status, String), Stop> {
        report.branch = Some(a.branch.clone());
        // Whatever stops the action, its updates are accounted for.
        report.updates = branch_updates(&a.updates, &a.branch, None, Verdict::NotRun);
        let pr = self.owned_pull_request(a.mr_id).await?;
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
        let default_tip = git.default_tip;
        let tip = *git.heads.get(&a.branch).ok_or_else(|| {
            Stop::failed(format!(
                "branch {} no longer exists on the remote",
                a.branch
            ))
        })?;
        self.claim(&a.branch, Some(&pr), report).await?;
        let commands = self.match_commands(&a.commands, &a.updates)?;
        let unit = Unit {
            branch: a.branch.clone(),
            title: pr.title.clone(),
            updates: a.updates.iter().collect(),
            commands,
        };
        let base = if a.rebase_first { default_tip } else { tip };
        let built = self.build(
            &unit,
            a.working_dir.as_deref(),
            &a.test_command,
            base,
            report,
        )?;
        let verdict = match &built {
            Built::Ready(..) => Verdict::Passed,
            Built::TestsFailed(_) => Verdict::Failed,
            _ => Verdict::NotRun,
        };
        let result = match built {
            Built::Ready(workspace, commit) if self.settings.dry_run => {
                drop((workspace, commit));
                Err(Stop::skipped(format!(
                    "dry run: tests passed; would force-push {} and update PR #{}",
                    a.branch, pr.number
                )))
            }
            Built::Ready(workspace, commit) => {
                let body = a.description.as_deref().map(|d| {
                    self.pr_body(
                        d,
                        &unit.updates,
                        &a.test_command,
                        a.working_dir.as_deref(),
                        &a.branch,
                    )
                });
                let labels = a.labels.clone().unwrap_or_default();
                let title = pr.title.clone();
                let number = pr.number;
                let landed = self
                    .publish(
                        &workspace,
                        &commit,
                        &a.branch,
                        &title,
                        body,
                        &labels,
                        Some(pr),
                    )
                    .await?;
                let word = landed.operation.as_str();
                report.pull_requests.push(landed);
                Ok((Status::Done, format!("PR #{number} {word}")))
            }
            Built::NoChanges => Err(Stop::skipped(format!(
                "the commands change nothing on top of {}: the updates are already there",
                if a.rebase_first {
                    self.plan.repo_context.default_branch.as_str()
                } else {
                    a.branch.as_str()
                }
            ))),
            Built::CommandFailed(why) => Err(Stop::failed(why)),
            Built::TestsFailed(why) => Err(Stop::failed(format!(
                "{why}; PR #{} was left as it was",
                pr.number
            ))),
        };
        let landed_pr = report.pull_requests.first().map(|p| p.number);
        report.updates = branch_updates(&a.updates, &a.branch, landed_pr, verdict);
        result
    }

    async fn create_issue(
        &mut self,
        a: &CreateIssue,
        report: &mut ActionReport,
    ) -> Result<(Status, String), Stop> {
        let title = markdown::one_line(&a.title, self.settings.allow_mentions);
        let mut body = markdown::neutralise(&a.body, self.settings.allow_mentions);
        body.push_str(&format!(
            "\n\n---\n<sub>Opened by Quartermaster from an agent's plan.</sub>\n{}",
            markdown::marker("issue", &title)
        ));
        let body = cap(body);
        let labels = with_bot_label(&a.labels, &self.settings.bot_label);
        let existing = self
            .forge
            .find_open_issue(&title, &self.settings.bot_label)
            .await?;
        let (issue, operation) = match existing {
            Some(issue) if issue.body == body => (issue, Operation::Unchanged),
            Some(issue) if self.settings.dry_run => {
                return Err(Stop::skipped(format!(
                    "dry run: would update issue #{}",
                    issue.number
                )));
            }
            Some(issue) => (
                self.forge.update_issue_body(issue.number, &body).await?,
                Operation::Updated,
            ),
            None if self.settings.dry_run => {
                return Err(Stop::skipped("dry run: would open the issue"));
            }
            None => (
                self.forge
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

    async fn comment_mr(
        &mut self,
        a: &CommentMr,
        report: &mut ActionReport,
    ) -> Result<(Status, String), Stop> {
        let pr = self.owned_pull_request(a.mr_id).await?;
        report.branch = Some(pr.head.clone());
        self.plan_comment(Target::PullRequest(pr.number), &a.body, report)
            .await
    }

    async fn comment_issue(
        &mut self,
        a: &CommentIssue,
        report: &mut ActionReport,
    ) -> Result<(Status, String), Stop> {
        let issue = self
            .forge
            .issue(a.issue_id)
            .await?
            .ok_or_else(|| Stop::failed(format!("issue #{} does not exist", a.issue_id)))?;
        if !issue.labels.contains(&self.settings.bot_label) {
            return Err(Stop::denied(format!(
                "issue #{} does not carry the `{}` label: Quartermaster only comments on its own issues",
                issue.number, self.settings.bot_label
            )));
        }
        self.plan_comment(Target::Issue(issue.number), &a.body, report)
            .await
    }

    async fn close_mr(
        &mut self,
        a: &CloseMr,
        report: &mut ActionReport,
    ) -> Result<(Status, String), Stop> {
        let pr = self.owned_pull_request(a.mr_id).await?;
        report.branch = Some(pr.head.clone());
        if pr.state != State::Open {
            report.pull_requests.push(PullRequestRef {
                number: pr.number,
                url: pr.url.clone(),
                branch: pr.head.clone(),
                operation: Operation::Unchanged,
            });
            return Ok((
                Status::Done,
                format!("PR #{} was already {}", pr.number, pr.state.as_str()),
            ));
        }
        if self.settings.dry_run {
            return Err(Stop::skipped(format!(
                "dry run: would close PR #{}{}",
                pr.number,
                if a.delete_branch {
                    format!(" and delete {}", pr.head)
                } else {
                    String::new()
                }
            )));
        }
        let humans = if a.delete_branch {
            self.human_commits(&pr.head, Some(&pr)).await?
        } else {
            None
        };
        if let Some(text) = &a.comment {
            self.plan_comment(Target::PullRequest(pr.number), text, report)
                .await?;
        }
        let closed = self.forge.close_pull_request(pr.number).await?;
        report.pull_requests.push(PullRequestRef {
            number: closed.number,
            url: closed.url,
            branch: closed.head.clone(),
            operation: Operation::Closed,
        });
        let mut reason = format!("PR #{} closed", pr.number);
        if let Some(who) = humans {
            reason.push_str(&format!("; {} was kept: it has commits by {who}", pr.head));
        } else if a.delete_branch {
            reason.push_str(&match self.delete_branch(&pr.head) {
                Ok(true) => format!("; {} deleted", pr.head),
                Ok(false) => format!("; {} was already gone", pr.head),
                Err(GitError::LeaseMismatch { .. }) => format!(
                    "; {} was kept: it changed on the remote while Quartermaster worked",
                    pr.head
                ),
                Err(e) => {
                    return Err(Stop::failed(format!(
                        "{reason}, but deleting the branch failed: {e}"
                    )));
                }
            });
        }
        Ok((Status::Done, reason))
    }

    // --- shared steps ----------------------------------------------------------------------------

    /// Deletes a remote branch if it is where Quartermaster saw it. `Ok(false)`: it was gone.
    fn delete_branch(&mut self, branch: &str) -> Result<bool, GitError> {
        let state = match self.git() {
            Ok(state) => state,
            Err(stop) => {
                return Err(GitError::Git {
                    context: "reading the remote".into(),
                    message: stop.reason,
                });
            }
        };
        let Some(tip) = state.heads.get(branch).copied() else {
            return Ok(false);
        };
        state.mirror.delete_branch(branch, tip)?;
        state.heads.remove(branch);
        Ok(true)
    }

    /// The PR numbered `number`, if it exists and is Quartermaster's.
    async fn owned_pull_request(&self, number: u64) -> Result<PullRequest, Stop> {
        let pr = self
            .forge
            .pull_request(number)
            .await?
            .ok_or_else(|| Stop::failed(format!("PR #{number} does not exist")))?;
        self.check_owned(&pr)?;
        Ok(pr)
    }

    /// Only PRs on `quartermaster/*` branches with the bot label are Quartermaster's.
    fn check_owned(&self, pr: &PullRequest) -> Result<(), Stop> {
        let label = &self.settings.bot_label;
        if pr.from_fork {
            return Err(Stop::denied(format!(
                "PR #{} is not Quartermaster's: its branch {} is in a fork",
                pr.number, pr.head
            )));
        }
        if !pr.head.starts_with(crate::validate::BRANCH_PREFIX) {
            return Err(Stop::denied(format!(
                "PR #{} is not Quartermaster's: its branch {} is outside {}",
                pr.number,
                pr.head,
                crate::validate::BRANCH_PREFIX
            )));
        }
        if !pr.labels.contains(label) {
            return Err(Stop::denied(format!(
                "PR #{} is not Quartermaster's: it does not carry the `{label}` label",
                pr.number
            )));
        }
        Ok(())
    }

    /// Human edits win: a branch holding a commit by anyone but the bot is left alone, and its PR
    /// (if any) says so once.
    async fn claim(
        &mut self,
        branch: &str,
        pr: Option<&PullRequest>,
        report: &mut ActionReport,
    ) -> Result<(), Stop> {
        let Some(who) = self.human_commits(branch, pr).await? else {
            return Ok(());
        };
        if let Some(pr) = pr
            && !self.settings.dry_run
        {
            let text = format!(
                "Quartermaster did not update {}: the branch has commits by someone other than its bot identity ({who}). Human edits win, so the branch is left as it is. To let Quartermaster regenerate it, remove those commits or close this PR.",
                code(branch)
            );
            // Said once per branch, not again for every further human commit.
            let key = format!("human-edits\n{branch}");
            self.comment(Target::PullRequest(pr.number), &text, &key, report)
                .await?;
        }
        Err(Stop::denied(format!(
            "{branch} has commits by {who}; human edits win, so the branch was left alone"
        )))
    }

    /// Who else committed to the branch, if anyone but the bot did.
    async fn human_commits(
        &mut self,
        branch: &str,
        pr: Option<&PullRequest>,
    ) -> Result<Option<String>, Stop> {
        let (tip, base) = {
            let git = self.git()?;
            let Some(tip) = git.heads.get(branch).copied() else {
                return Ok(None);
            };
            // Branches of PRs named by number (close_mr) are not fetched up front.
            if git.mirror.tip(branch) != Some(tip) {
                git.mirror.fetch(&[branch])?;
            }
            (tip, git.default_tip)
        };
        // The usual case, a single commit right on top of the default branch, needs no forge call:
        // that commit is the only one on the branch.
        let info = self.git()?.mirror.commit_info(tip)?;
        let authors = if info.parents == [base] {
            vec![info.author_email, info.committer_email]
        } else {
            let from_forge = match pr {
                Some(pr) => self.forge.commit_authors(pr).await?,
                None => None,
            };
            match from_forge {
                Some(authors) => authors,
                None => self.git()?.mirror.branch_authors(tip, base)?,
            }
        };
        let bot = &self.settings.author.email;
        let others: BTreeSet<String> = authors
            .into_iter()
            .filter(|a| !a.eq_ignore_ascii_case(bot))
            .collect();
        if others.is_empty() {
            return Ok(None);
        }
        Ok(Some(others.into_iter().collect::<Vec<_>>().join(", ")))
    }

    /// Posts a comment the plan wrote, once per target and text.
    async fn plan_comment(
        &mut self,
        target: Target,
        text: &str,
        report: &mut ActionReport,
    ) -> Result<(Status, String), Stop> {
        let key = format!("{target:?}\n{text}");
        self.comment(target, text, &key, report).await
    }

    /// Posts `text` once: a comment carrying the same marker means it was already said.
    async fn comment(
        &mut self,
        target: Target,
        text: &str,
        key: &str,
        report: &mut ActionReport,
    ) -> Result<(Status, String), Stop> {
        let (on, number) = match target {
            Target::PullRequest(n) => ("pull_request", n),
            Target::Issue(n) => ("issue", n),
        };
        let marker = markdown::marker("comment", key);
        let existing = self.forge.comments(target).await?;
        if let Some(c) = existing.iter().find(|c| c.body.contains(&marker)) {
            report.comments.push(CommentRef {
                on,
                number,
                url: c.url.clone(),
                operation: Operation::Unchanged,
            });
            return Ok((Status::Done, format!("comment on #{number} already posted")));
        }
        if self.settings.dry_run {
            return Err(Stop::skipped(format!(
                "dry run: would comment on #{number}"
            )));
        }
        let body = cap(format!(
            "{}\n\n{marker}",
            markdown::neutralise(text, self.settings.allow_mentions)
        ));
        let posted = self.forge.create_comment(target, &body).await?;
        report.comments.push(CommentRef {
            on,
            number,
            url: posted.url,
            operation: Operation::Created,
        });
        Ok((Status::Done, format!("comment on #{number} posted")))
    }

    fn match_commands(
        &self,
        commands: &'a [String],
        updates: &[Update],
    ) -> Result<Vec<(&'a str, CommandMatch)>, Stop> {
        commands
            .iter()
            .map(|c| {
                self.mission
                    .check_update_command(c, &self.plan.repo_context.ecosystems, updates)
                    .map(|m| (c.as_str(), m))
                    .map_err(|r| {
                        Stop::failed(format!("command `{c}` is not allowed: {}", r.message))
                    })
            })
            .collect()
    }

    /// Runs the unit's commands in a fresh workspace, commits, and runs the tests.
    fn build(
        &mut self,
        unit: &Unit<'_>,
        working_dir: Option<&str>,
        test_command: &str,
        base: git2::Oid,
        report: &mut ActionReport,
    ) -> Result<Built, Stop> {
        let test = self
            .mission
            .check_test_command(test_command)
            .map_err(|r| Stop::failed(format!("test command is not allowed: {}", r.message)))?;
        let settings = self.settings;
        let progress = self.progress;
        let workspace = self.git()?.mirror.workspace(base)?;
        let dir = workspace.dir(working_dir)?;
        check_project(unit, &test, test_command, &dir, working_dir)?;
        progress.step(&format!("{}: workspace at {}", unit.branch, short(base)));
        for (command, matched) in &unit.commands {
            let outcome = process::run(&Spec {
                argv: &matched.argv,
                cwd: &dir,
                env: &settings.child_env,
                timeout: settings.command_timeout,
                secrets: &settings.secrets,
            });
            let ok = outcome.exit.success();
            progress.step(&format!(
                "$ {command}  ({}, {:.1}s)",
                outcome.exit,
                outcome.duration.as_secs_f64()
            ));
            if !ok {
                progress.failure_output(&outcome.output_tail);
            }
            let process = ProcessRecord::of(outcome);
            let failed = (!ok).then(|| format!("`{command}` failed: {}", process.result));
            report.commands.push(CommandRecord {
                command: command.to_string(),
                branch: unit.branch.clone(),
                ok,
                process,
            });
            if let Some(why) = failed {
                return Ok(Built::CommandFailed(why));
            }
        }
        let Some(commit) = workspace.commit(&commit_message(unit), &settings.author)? else {
            progress.step("no changes");
            return Ok(Built::NoChanges);
        };
        let ecosystems: BTreeSet<&str> = unit
            .commands
            .iter()
            .map(|(_, m)| m.ecosystem.as_str())
            .collect();
        let foreign: Vec<String> = commit
            .files
            .iter()
            .filter(|f| !self.mission.owns_file(ecosystems.iter().copied(), f))
            .map(|f| code(f))
            .collect();
        if !foreign.is_empty() {
            let shown = foreign.len().min(10);
            return Err(Stop::denied(format!(
                "the commands changed {} that {} not dependency files ({}): {}{}; nothing was pushed",
                if foreign.len() == 1 {
                    "a file"
                } else {
                    "files"
                },
                if foreign.len() == 1 { "is" } else { "are" },
                self.mission.files_of(ecosystems.iter().copied()),
                foreign[..shown].join(", "),
                if foreign.len() > shown {
                    format!(" and {} more", foreign.len() - shown)
                } else {
                    String::new()
                }
            )));
        }
        progress.step(&format!(
            "committed {} as {} ({} file{})",
            short(commit.id),
            settings.author.name,
            commit.files.len(),
            if commit.files.len() == 1 { "" } else { "s" }
        ));
        let outcome = process::run(&Spec {
            argv: &test.argv,
            cwd: &dir,
            env: &settings.child_env,
            timeout: settings.command_timeout,
            secrets: &settings.secrets,
        });
        let passed = outcome.exit.success();
        progress.step(&format!(
            "$ {test_command}  ({}, {:.1}s) {}",
            outcome.exit,
            outcome.duration.as_secs_f64(),
            if passed {
                "tests passed"
            } else {
                "TESTS FAILED"
            }
        ));
        if !passed {
            progress.failure_output(&outcome.output_tail);
        }
        let failed = (!passed).then(|| format!("`{test_command}` failed: {}", outcome.exit));
        report
            .test
            .get_or_insert_with(|| TestReport {
                command: test_command.to_string(),
                runs: Vec::new(),
            })
            .runs
            .push(TestRun {
                branch: unit.branch.clone(),
                updates: unit.updates.iter().map(|u| u.package.clone()).collect(),
                passed,
                process: ProcessRecord::of(outcome),
            });
        match failed {
            None => Ok(Built::Ready(Box::new(workspace), commit)),
            Some(why) => Ok(Built::TestsFailed(why)),
        }
    }

    /// Pushes the branch (unless the remote already has exactly this change) and creates or
    /// updates its PR.
    #[allow(clippy::too_many_arguments)]
    async fn publish(
        &mut self,
        workspace: &Workspace,
        commit: &NewCommit,
        branch: &str,
        title: &str,
        body: Option<String>,
        labels: &[String],
        existing: Option<PullRequest>,
    ) -> Result<PullRequestRef, Stop> {
        let remote = self.forge.remote().clone();
        let git = self.git()?;
        let expected = git.heads.get(branch).copied();
        let same = match expected {
            Some(tip) => {
                let info = git.mirror.commit_info(tip)?;
                info.tree == commit.tree && info.parents == [commit.base]
            }
            None => false,
        };
        if !same {
            if let Err(e) = workspace.push(&remote, branch, commit.id, expected) {
                return Err(match &e {
                    GitError::Rejected { message, .. } => {
                        match self.forge.explain_push_rejection(message) {
                            Some(advice) => Stop::failed(advice),
                            None => e.into(),
                        }
                    }
                    _ => e.into(),
                });
            }
            git.heads.insert(branch.to_string(), commit.id);
            self.progress.step(&format!("pushed {branch}"));
        }
        let labels = with_bot_label(labels, &self.settings.bot_label);
        let pr = match existing {
            Some(pr) => {
                let edit = PullRequestEdit {
                    title: (pr.title != title).then(|| title.to_string()),
                    body: body.filter(|b| *b != pr.body),
                    add_labels: labels
                        .into_iter()
                        .filter(|l| !pr.labels.contains(l))
                        .collect(),
                };
                let changed = !same || !edit.is_empty();
                let pr = if edit.is_empty() {
                    pr
                } else {
                    self.forge.update_pull_request(pr.number, &edit).await?
                };
                let operation = if changed {
                    Operation::Updated
                } else {
                    Operation::Unchanged
                };
                PullRequestRef {
                    number: pr.number,
                    url: pr.url,
                    branch: branch.to_string(),
                    operation,
                }
            }
            None => {
                let pr = self
                    .forge
                    .create_pull_request(&NewPullRequest {
                        head: branch.to_string(),
                        base: self.plan.repo_context.default_branch.clone(),
                        title: title.to_string(),
                        body: body.unwrap_or_default(),
                        labels,
                        draft: self.settings.draft,
                    })
                    .await?;
                PullRequestRef {
                    number: pr.number,
                    url: pr.url,
                    branch: branch.to_string(),
                    operation: Operation::Created,
                }
            }
        };
        self.progress
            .step(&format!("PR #{} {}", pr.number, pr.operation.as_str()));
        Ok(pr)
    }

    fn pr_body(
        &self,
        description: &str,
        updates: &[&Update],
        test_command: &str,
        working_dir: Option<&str>,
        branch: &str,
    ) -> String {
        let mut tail = String::from("\n\n| Package | Change | Type |\n|---|---|---|\n");
        for u in updates {
            tail.push_str(&format!(
                "| {} | {} → {} | {} |\n",
                cell_code(&u.package),
                cell_code(&u.from),
                cell_code(&u.to),
                u.update_type.as_str()
            ));
        }
        tail.push_str(&format!(
            "\nTests passed: {}{}.\n\n---\n<sub>Opened by Quartermaster from an agent's plan. A commit by anyone else on this branch stops Quartermaster from updating it.</sub>\n{}",
            code(test_command),
            working_dir
                .map(|d| format!(" in {}", code(d)))
                .unwrap_or_default(),
            markdown::marker("pr", branch)
        ));
        let mut head = markdown::neutralise(description, self.settings.allow_mentions)
            .trim_end()
            .to_string();
        let room = MAX_POSTED_BODY.saturating_sub(tail.chars().count() + 20);
        if head.chars().count() > room {
            head = head.chars().take(room).collect::<String>() + "… (truncated)";
        }
        head + &tail
    }
}

/// What the project must already have for the unit to run: every package its commands name
/// declared in the manifest, and the package.json script its test command runs.
fn check_project(
    unit: &Unit<'_>,
    test: &TestCommand,
    test_command: &str,
    dir: &std::path::Path,
    working_dir: Option<&str>,
) -> Result<(), Stop> {
    let place = working_dir.unwrap_or("the repository root");
    for (_, matched) in &unit.commands {
        if let Some(package) = &matched.package
            && manifest::checks_declared(&matched.ecosystem)
        {
            match manifest::declares_dependency(&matched.ecosystem, dir, package) {
                Ok(true) => {}
                Ok(false) => {
                    return Err(Stop::denied(format!(
                        "`{package}` is not a dependency the project declares in {place}: Quartermaster updates dependencies, it does not add new ones"
                    )));
                }
                Err(why) => {
                    return Err(Stop::denied(format!(
                        "cannot confirm that `{package}` is a declared dependency: {why}"
                    )));
                }
            }
        }
    }
    if let Some(script) = project_script(test) {
        match manifest::declares_script(dir, script) {
            Ok(true) => {}
            Ok(false) => {
                return Err(Stop::denied(format!(
                    "`{test_command}`: package.json in {place} has no script `{script}`; only the project's own scripts run"
                )));
            }
            Err(why) => {
                return Err(Stop::denied(format!("`{test_command}`: {why}")));
            }
        }
    }
    Ok(())
}

/// The package.json script a JavaScript test command runs: `npm run <script>`, or the implied
/// `test` of `npm test`, `yarn test`, `pnpm test`. (`bun test` is bun's own runner.)
fn project_script(test: &TestCommand) -> Option<&str> {
    let program = test.argv.first().map(String::as_str)?;
    if !matches!(program, "npm" | "yarn" | "pnpm" | "bun") {
        return None;
    }
    test.script.as_deref().or_else(|| {
        let subcommand = test.argv.iter().skip(1).find(|w| !w.starts_with('-'));
        (program != "bun" && subcommand.is_some_and(|w| w == "test")).then_some("test")
    })
}

fn skip(a: &Skip) -> Stop {
    let kind = serde_json::to_value(a.reason_type)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    Stop::skipped(format!("{} ({kind}): {}", a.package, a.reason))
}

fn describe(action: &Action) -> String {
    match action {
        Action::CreateMr(a) => format!("create_mr {}", a.branch),
        Action::UpdateMr(a) => format!("update_mr #{} {}", a.mr_id, a.branch),
        Action::CreateIssue(a) => format!("create_issue {:?}", markdown::one_line(&a.title, true)),
        Action::CommentMr(a) => format!("comment_mr #{}", a.mr_id),
        Action::CommentIssue(a) => format!("comment_issue #{}", a.issue_id),
        Action::CloseMr(a) => format!("close_mr #{}", a.mr_id),
        Action::Skip(a) => format!("skip {}", a.package),
    }
}

/// One unit per update, on the branches [`crate::plan::split_branches`] names; commands naming no
/// package (`go mod tidy`) run in every one.
fn split_units<'p>(a: &'p CreateMr, commands: &[(&'p str, CommandMatch)]) -> Vec<Unit<'p>> {
    let branches =
        crate::plan::split_branches(&a.branch, a.updates.iter().map(|u| u.package.as_str()));
    a.updates
        .iter()
        .zip(branches)
        .map(|(u, branch)| Unit {
            branch,
            title: format!("{} ({} {})", a.title, u.package, u.to),
            updates: vec![u],
            commands: commands
                .iter()
                .filter(|(_, m)| m.package.as_ref().is_none_or(|p| *p == u.package))
                .cloned()
                .collect(),
        })
        .collect()
}

fn commit_message(unit: &Unit<'_>) -> String {
    let title: String = unit
        .title
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut message = format!("{title}\n\n");
    for u in &unit.updates {
        message.push_str(&format!("- {}: {} -> {}\n", u.package, u.from, u.to));
    }
    message.push_str("\nGenerated by Quartermaster from an agent's plan.\n");
    message
}

/// The updates of a single branch, all sharing its fate.
fn branch_updates(
    updates: &[Update],
    branch: &str,
    pull_request: Option<u64>,
    test: Verdict,
) -> Vec<UpdateReport> {
    updates
        .iter()
        .map(|u| UpdateReport {
            package: u.package.clone(),
            from: u.from.clone(),
            to: u.to.clone(),
            update_type: u.update_type.as_str().to_string(),
            branch: Some(branch.to_string()),
            landed: pull_request.is_some(),
            pull_request,
            test,
        })
        .collect()
}

/// The fate of each declared update: the last unit that carried it decides.
fn update_reports(
    updates: &[Update],
    results: &[(Unit<'_>, Outcome)],
    report: &ActionReport,
) -> Vec<UpdateReport> {
    updates
        .iter()
        .map(|u| {
            let last = results
                .iter()
                .rev()
                .find(|(unit, _)| unit.updates.iter().any(|x| std::ptr::eq(*x, u)));
            let (branch, pull_request, landed) = match last {
                Some((unit, Outcome::Landed(pr))) => {
                    (Some(unit.branch.clone()), Some(pr.number), true)
                }
                Some((unit, _)) => (Some(unit.branch.clone()), None, false),
                None => (None, None, false),
            };
            let test = branch
                .as_ref()
                .and_then(|b| {
                    report
                        .test
                        .as_ref()
                        .and_then(|t| t.runs.iter().rev().find(|r| r.branch == *b))
                })
                .map_or(Verdict::NotRun, |r| {
                    if r.passed {
                        Verdict::Passed
                    } else {
                        Verdict::Failed
                    }
                });
            UpdateReport {
                package: u.package.clone(),
                from: u.from.clone(),
                to: u.to.clone(),
                update_type: u.update_type.as_str().to_string(),
                branch,
                landed,
                pull_request,
                test,
            }
        })
        .collect()
}

/// How a batch that was split failed, for messages.
fn batch_failure(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::CommandFailed(_) => "a command failed on the batch",
        _ => "the batch failed its tests",
    }
}

/// The action's status from its units' outcomes.
fn conclude(results: &[(Unit<'_>, Outcome)], strategy: FallbackStrategy) -> (Status, String) {
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
    let mut rank = |s: Status| {
        let order = |s: Status| match s {
            Status::Skipped => 0,
            Status::Done => 1,
            Status::Denied => 2,
            Status::Failed => 3,
        };
        if order(s) > order(status) {
            status = s;
        }
    };
    for (unit, outcome) in considered {
        let name = if considered.len() > 1 {
            format!("{}: ", unit.branch)
        } else {
            String::new()
        };
        match outcome {
            Outcome::Landed(pr) => {
                rank(Status::Done);
                parts.push(format!("{name}PR #{} {}", pr.number, pr.operation.as_str()));
            }
            Outcome::DryRun(what) => parts.push(format!("{name}dry run: {what}")),
            Outcome::NoChanges => parts.push(format!("{name}no changes")),
            Outcome::Refused(stop) => {
                rank(stop.status);
                parts.push(format!("{name}{}", stop.reason));
            }
            Outcome::CommandFailed(why) => {
                rank(Status::Failed);
                parts.push(format!("{name}{why}"));
            }
            Outcome::TestsFailed(why) => {
                rank(Status::Failed);
                parts.push(format!("{name}{why}; no PR"));
            }
        }
    }
    (status, parts.join("; "))
}

fn with_bot_label(labels: &[String], bot: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in std::iter::once(bot).chain(labels.iter().map(String::as_str)) {
        if !out.iter().any(|x| x == l) {
            out.push(l.to_string());
        }
    }
    out
}

fn cap(body: String) -> String {
    if body.chars().count() <= MAX_POSTED_BODY {
        body
    } else {
        body.chars().take(MAX_POSTED_BODY).collect::<String>() + "… (truncated)"
    }
}

fn short(id: git2::Oid) -> String {
    id.to_string()[..8].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bot_label_comes_first_once() {
        assert_eq!(
            with_bot_label(&["deps".into(), "quartermaster".into()], "quartermaster"),
            vec!["quartermaster", "deps"]
        );
    }
}
