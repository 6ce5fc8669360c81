//! What a run did to Quartermaster's own open PRs, whatever its plan held (the report's
//! `upkeep`), and the dependency dashboard it kept.

use super::{CommandRecord, CommentRef, Status, TestReport};
use serde::{Deserialize, Serialize};

/// What upkeep set out to do to a PR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UpkeepAction {
    /// Close it: every update it carries reached the default branch.
    Close,
    /// Close it: a PR this run opened updates one of its packages further.
    Supersede,
    /// Rebuild it on the default branch's tip from its build record.
    Rebuild,
    /// Build an update again that the dependency dashboard asked to retry.
    Retry,
    /// Nothing to do: it is up to date.
    Keep,
    /// Nothing may be done: someone else committed to its branch.
    LeaveAlone,
    /// The dependency dashboard could not be read or written.
    Dashboard,
}

impl UpkeepAction {
    pub const fn as_str(self) -> &'static str {
        match self {
            UpkeepAction::Close => "close",
            UpkeepAction::Supersede => "supersede",
            UpkeepAction::Rebuild => "rebuild",
            UpkeepAction::Retry => "retry",
            UpkeepAction::Keep => "keep",
            UpkeepAction::LeaveAlone => "leave_alone",
            UpkeepAction::Dashboard => "dashboard",
        }
    }
}

/// One PR looked after.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UpkeepReport {
    /// The PR looked after; for a retry, the PR it opened, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<u64>,
    pub branch: String,
    pub action: UpkeepAction,
    pub status: Status,
    pub reason: String,
    /// The PR that supersedes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comments: Vec<CommentRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandRecord>,
    /// A rebuild's or retry's test runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<TestReport>,
}

impl UpkeepReport {
    pub fn new(pull_request: Option<u64>, branch: &str, action: UpkeepAction) -> Self {
        Self {
            pull_request,
            branch: branch.to_string(),
            action,
            status: Status::Skipped,
            reason: String::new(),
            superseded_by: None,
            comments: Vec::new(),
            commands: Vec::new(),
            test: None,
        }
    }

    pub fn finish(mut self, status: Status, reason: impl Into<String>) -> Self {
        self.status = status;
        self.reason = reason.into();
        self
    }
}
