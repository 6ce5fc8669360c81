//! The run report: JSON for machines (`--report`), Markdown for reviewers (`--summary`, the CI
//! job summary), and the exit code.

mod caches;
mod install;
mod markdown;
mod upkeep;

pub use upkeep::{UpkeepAction, UpkeepReport};

pub(crate) use caches::CachesReport;
pub use caches::{WarmUpCommand, WarmUpReport};
pub use install::{InstallRecord, Warned};

use crate::changes::{self, ChangeFact, UpdateFact};
use crate::finding::{Code, Finding};
use crate::forge::ForgeKind;
use crate::plan::{ActionType, UpdateType};
use serde::{Deserialize, Serialize};

/// Report format version; bumped on incompatible changes.
pub(crate) const REPORT_VERSION: u32 = 1;

/// How an action ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Everything it asked for happened (or was already so).
    Done,
    /// Something went wrong: a command or the tests failed, the forge refused, ...
    Failed,
    /// Deliberately not done: a `skip` action, confidence below the threshold, no changes, dry run.
    Skipped,
    /// Refused by policy: not Quartermaster's PR, human commits on the branch, ...
    Denied,
    /// Split into one PR per update, some of which landed and some not: the reason says which.
    Partial,
    /// Not finished: the run was stopped by a signal (a cancelled CI job) before or while it ran.
    Cancelled,
}

/// What happened to a PR/MR or issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    Created,
    Updated,
    Unchanged,
    Closed,
}

impl Operation {
    pub const fn as_str(self) -> &'static str {
        match self {
            Operation::Created => "created",
            Operation::Updated => "updated",
            Operation::Unchanged => "unchanged",
            Operation::Closed => "closed",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PullRequestRef {
    pub number: u64,
    pub url: String,
    pub branch: String,
    pub operation: Operation,
    /// The commit whose build was reused: the branch already held this very build on this base,
    /// so no command and no test ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reused: Option<String>,
    /// Auto-merge was requested for it (see the repository policy's `[automerge]`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto_merge: bool,
    /// What the forge did not take after it was opened (auto-merge, a reviewer, an assignee).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IssueRef {
    pub number: u64,
    pub url: String,
    pub operation: Operation,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommentRef {
    /// `pull_request` or `issue`.
    pub on: String,
    pub number: u64,
    pub url: String,
    pub operation: Operation,
}

/// How one child process ended; part of a command's and a test run's record.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProcessRecord {
    /// `exit code 0`, `timed out after 600s`, ...
    pub result: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// The end of the output, kept when the process failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tail: Option<String>,
    /// The resource limit that stopped it (also at the end of `result`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
}

impl ProcessRecord {
    pub fn of(outcome: crate::sandbox::ProcessOutcome) -> Self {
        let failed = !outcome.exit.success();
        Self {
            result: outcome.result(),
            exit_code: outcome.exit.code(),
            duration_ms: outcome.duration.as_millis() as u64,
            output_tail: failed.then_some(outcome.output_tail),
            limit: outcome.limit,
        }
    }
}

/// One update command as it ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommandRecord {
    pub command: String,
    pub branch: String,
    pub ok: bool,
    #[serde(flatten)]
    pub process: ProcessRecord,
    /// What the package manager's resolver warned about (an npm `ERESOLVE` override, a peer
    /// dependency it could not meet, pip's dependency conflicts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One run of the test command, on one branch.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TestRun {
    pub branch: String,
    /// The packages this run tested.
    pub updates: Vec<String>,
    pub passed: bool,
    #[serde(flatten)]
    pub process: ProcessRecord,
    /// The unit's log: the whole output of its commands and tests, next to the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TestReport {
    pub command: String,
    pub runs: Vec<TestRun>,
}

/// One package as the lock files show it changed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PackageChange {
    pub ecosystem: String,
    pub package: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The registry page of `to`, where one can be named without asking the network.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

impl PackageChange {
    fn of(fact: &ChangeFact) -> Self {
        Self {
            ecosystem: fact.ecosystem.as_str().to_string(),
            package: fact.name.clone(),
            from: fact.from.clone(),
            to: fact.to.clone(),
            link: fact.link.clone(),
        }
    }
}

/// A lock file the commands rewrote in another format (see [`changes::FormatChange`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LockFormatChange {
    pub ecosystem: String,
    pub lock_file: String,
    pub from: String,
    pub to: String,
}

/// A finding of the change verification, as the report carries it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FindingRecord {
    pub code: Code,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    pub message: String,
    /// Whether it kept the branch from being published.
    pub blocking: bool,
}

/// What one branch's commands really changed, read from its lock files and manifests.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChangeRecord {
    pub branch: String,
    /// Packages whose direct copy changed.
    pub direct: Vec<PackageChange>,
    /// Every other changed package.
    pub transitive: Vec<PackageChange>,
    /// Lock files written in another format than the base's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lock_formats: Vec<LockFormatChange>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<FindingRecord>,
    #[serde(skip)]
    pub updates: Vec<UpdateFact>,
}

impl ChangeRecord {
    pub fn of(branch: &str, verdict: &changes::Verdict) -> Self {
        Self {
            branch: branch.to_string(),
            direct: verdict.direct.iter().map(PackageChange::of).collect(),
            transitive: verdict.transitive.iter().map(PackageChange::of).collect(),
            lock_formats: verdict
                .formats
                .iter()
                .map(|c| LockFormatChange {
                    ecosystem: c.ecosystem.as_str().to_string(),
                    lock_file: c.lock_file.clone(),
                    from: c.from.clone(),
                    to: c.to.clone(),
                })
                .collect(),
            findings: verdict
                .findings
                .iter()
                .map(|f| FindingRecord {
                    code: f.code,
                    package: f.package.clone(),
                    message: f.message.clone(),
                    blocking: f.blocking,
                })
                .collect(),
            updates: verdict.updates.clone(),
        }
    }

    /// What the lock files say of a declared package.
    pub fn update(&self, package: &str) -> Option<&UpdateFact> {
        self.updates.iter().find(|u| u.package == package)
    }
}

/// What the repository's policy decided of one built branch's newly resolved versions: each
/// version's age, advisories and deprecation, the refusals, the advisories the update fixes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScreeningRecord {
    pub branch: String,
    #[serde(flatten)]
    pub screening: crate::supply::Screening,
    /// The release notes found, for the PR (not repeated in the report).
    #[serde(skip)]
    pub notes: Vec<crate::supply::Notes>,
}

/// The verdict that decided an update's fate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestVerdict {
    Passed,
    Failed,
    NotRun,
}

/// What became of one declared update. `from` and `to` are what the lock files show once the
/// update was built; the plan's values follow when they differ.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UpdateReport {
    pub package: String,
    pub from: String,
    pub to: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declared_from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declared_to: Option<String>,
    pub update_type: UpdateType,
    /// The branch it was last tried on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Whether it is in an open PR now.
    pub landed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<u64>,
    /// The test outcome that decided it.
    pub test: TestVerdict,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ActionReport {
    pub index: usize,
    #[serde(rename = "type")]
    pub kind: ActionType,
    pub status: Status,
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// What the action is about, as the plan names it: the PR's or the issue's title, the PR or
    /// issue a comment goes to, the package a skip holds.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub subject: String,
    pub pull_requests: Vec<PullRequestRef>,
    pub issues: Vec<IssueRef>,
    pub comments: Vec<CommentRef>,
    pub updates: Vec<UpdateReport>,
    pub commands: Vec<CommandRecord>,
    /// The frozen install that built each tested branch's environment from its committed files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub installs: Vec<InstallRecord>,
    /// What each built branch really changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ChangeRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<TestReport>,
    /// The toolchains each built branch's repository declares, and what its commands found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub toolchains: Vec<crate::toolchain::Check>,
    /// The repository's policy applied to each built branch's newly resolved versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub screening: Vec<ScreeningRecord>,
    /// When the action started, in milliseconds after the first action did (absent: at once).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub started_ms: u64,
    pub duration_ms: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ActionReport {
    pub fn new(index: usize, kind: ActionType) -> Self {
        Self {
            index,
            kind,
            status: Status::Done,
            reason: String::new(),
            branch: None,
            subject: String::new(),
            pull_requests: Vec::new(),
            issues: Vec::new(),
            comments: Vec::new(),
            updates: Vec::new(),
            commands: Vec::new(),
            installs: Vec::new(),
            changes: Vec::new(),
            test: None,
            toolchains: Vec::new(),
            screening: Vec::new(),
            started_ms: 0,
            duration_ms: 0,
        }
    }

    pub fn finish(&mut self, status: Status, reason: impl Into<String>) {
        self.status = status;
        self.reason = reason.into();
    }

    /// The toolchains checked for `branch`.
    pub(crate) fn toolchains_of(&self, branch: &str) -> Vec<crate::toolchain::Check> {
        self.toolchains
            .iter()
            .filter(|c| c.branch == branch)
            .cloned()
            .collect()
    }

    /// Milliseconds spent in commands, installs and tests, the part of the run that is not
    /// Quartermaster's.
    pub(crate) fn child_ms(&self) -> u64 {
        let commands: u64 = self
            .commands
            .iter()
            .map(|c| c.process.duration_ms)
            .chain(self.installs.iter().map(|i| i.process.duration_ms))
            .sum();
        let tests: u64 = self
            .test
            .iter()
            .flat_map(|t| t.runs.iter())
            .map(|r| r.process.duration_ms)
            .sum();
        commands + tests
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Summary {
    pub done: usize,
    pub failed: usize,
    pub skipped: usize,
    pub denied: usize,
    #[serde(default, skip_serializing_if = "is_none")]
    pub partial: usize,
    #[serde(default, skip_serializing_if = "is_none")]
    pub cancelled: usize,
}

fn is_none(n: &usize) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Timing {
    pub total_ms: u64,
    /// Time spent in update commands and tests.
    pub commands_ms: u64,
    /// Everything else: Quartermaster itself, git and the forge.
    pub overhead_ms: u64,
    /// Peak resident memory of the Quartermaster process itself (children excluded).
    pub peak_memory_kb: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ValidationReport {
    pub valid: bool,
    pub errors: Vec<Finding>,
    pub warnings: Vec<Finding>,
}

/// The sandbox level a run had, and why stronger ones were not taken.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct IsolationReport {
    pub level: crate::sandbox::Level,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) fallbacks: Vec<String>,
    /// The first of the uids the run's commands ran as (root levels).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid_base: Option<u32>,
    /// What each unit could take of the runner, and how that held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<LimitsReport>,
    /// How the units' caches were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caches: Option<CachesReport>,
    /// How the units' workspaces were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspaces: Option<crate::sandbox::Workspaces>,
}

/// The resource limits of every unit of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct LimitsReport {
    /// `cgroup v2`, `rlimits` or `none` (at isolation `none` no limit applies).
    pub by: String,
    /// Why the runner offered no cgroup, when rlimits hold instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(flatten)]
    pub limits: crate::sandbox::Limits,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RunReport {
    pub version: u32,
    pub quartermaster: String,
    pub started_at: String,
    pub finished_at: String,
    pub dry_run: bool,
    pub forge: ForgeKind,
    pub mission: String,
    pub plan: String,
    /// The SHA-256 of the plan file's bytes (`sha256sum`): shard reports of one plan share it.
    /// Optional only so that reports of earlier versions read, and are then refused by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_sha256: Option<String>,
    /// How many actions the plan holds (0 when it is invalid).
    #[serde(default)]
    pub plan_actions: usize,
    /// The action indices this report covers, ascending, when it covers part of the plan
    /// (`run --only`, or a merge of some shards); absent, the whole plan. Actions outside it are
    /// not in `actions` at all: they were not in this shard, which is not `skipped`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only: Option<Vec<usize>>,
    pub validation: ValidationReport,
    pub summary: Summary,
    pub timing: Timing,
    /// HTTP requests sent to the forge's API.
    pub forge_requests: u64,
    pub exit_code: u8,
    /// Why the run could not start on a valid plan (the forge unreachable, the token refused...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What to do about `error`, when there is advice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The signal that stopped the run (a cancelled CI job), when one did: the actions it kept
    /// from finishing are `cancelled`, and the exit code is 128 + the signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// How the run's commands were contained (absent when none ran).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isolation: Option<IsolationReport>,
    pub actions: Vec<ActionReport>,
    /// What the run did to Quartermaster's own open PRs, whatever the plan held.
    #[serde(default)]
    pub upkeep: Vec<UpkeepReport>,
    /// The dependency dashboard issue, as this run left it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dashboard: Option<IssueRef>,
}

impl RunReport {
    /// Fills the timing of this process, then the summary and exit code (see [`Self::tally`]).
    pub(crate) fn conclude(&mut self, total_ms: u64) {
        self.timing.total_ms = total_ms;
        self.timing.peak_memory_kb = peak_memory_kb();
        self.tally();
    }

    /// Fills the summary, the commands' share of `timing.total_ms` and the exit code from the
    /// actions and the upkeep: 0 when everything was done or skipped, 1 when something failed,
    /// was denied, landed only in part or was cancelled, 2 when the plan was invalid or the run
    /// could not start.
    /// Pure: merged reports use it too.
    pub(crate) fn tally(&mut self) {
        let mut summary = Summary::default();
        for a in &self.actions {
            match a.status {
                Status::Done => summary.done += 1,
                Status::Failed => summary.failed += 1,
                Status::Skipped => summary.skipped += 1,
                Status::Denied => summary.denied += 1,
                Status::Partial => summary.partial += 1,
                Status::Cancelled => summary.cancelled += 1,
            }
        }
        self.summary = summary;
        let commands_ms = self.actions.iter().map(ActionReport::child_ms).sum();
        self.timing.commands_ms = commands_ms;
        self.timing.overhead_ms = self.timing.total_ms.saturating_sub(commands_ms);
        let upkeep_failed = self
            .upkeep
            .iter()
            .any(|u| matches!(u.status, Status::Failed | Status::Denied));
        self.exit_code = if let Some(signal) = self.signal {
            u8::try_from(128 + signal).unwrap_or(u8::MAX)
        } else if !self.validation.valid || self.error.is_some() {
            2
        } else if summary.failed + summary.denied + summary.partial + summary.cancelled > 0
            || upkeep_failed
        {
            1
        } else {
            0
        };
    }

    pub(crate) fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("the report serialises");
        s.push('\n');
        s
    }
}

/// `getrusage(RUSAGE_SELF)`: this process only, not the commands it ran (Linux reports KiB).
fn peak_memory_kb() -> u64 {
    nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
        .map(|u| u.max_rss().max(0) as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
