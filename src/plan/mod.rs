//! The plan: what the agent asks Quartermaster to do.
//!
//! These types are the plan's contract, which `quartermaster schema` prints as a JSON Schema: every
//! action type and field, closed enums, and no unknown fields (a typo such as `fallback_stratgy`
//! must never be silently ignored, or a strategy the agent chose would be replaced by a default).
//! Parsing is two-phase (see [`parse`]): JSON first, so syntax errors carry line and column, then a
//! structural check driven by the plan's own JSON Schema that reports *every* unknown, missing or
//! mistyped field with its JSON Pointer, and only then serde into these types.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::LazyLock;

pub(crate) mod branch;
pub(crate) mod label;
mod parse;
mod structure;

pub(crate) use branch::split_branches;
pub use parse::{Parsed, parse};

/// Plans larger than this are refused before parsing: real plans are a few kilobytes, and the limit
/// bounds memory for hostile input.
pub(crate) const MAX_PLAN_BYTES: usize = 10 * 1024 * 1024;

/// A dependency-maintenance plan written by an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Quartermaster plan")]
pub struct Plan {
    /// What the agent observed about the repository.
    pub repo_context: RepoContext,
    /// The actions to execute, in order. At most 20.
    #[schemars(length(max = 20))]
    pub actions: Vec<Action>,
}

/// Facts about the repository the plan was written for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepoContext {
    /// The forge hosting the repository.
    pub platform: Platform,
    /// Package ecosystems in use, e.g. `go`, `npm`, `cargo`. Update commands may only use these.
    pub ecosystems: Vec<String>,
    /// The repository's usual test command (must be an allowed test runner command).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_command: Option<String>,
    /// The branch PRs target, e.g. `main`.
    pub default_branch: String,
    /// Lock files the updates are expected to change, relative to the repository root.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lock_files: Vec<String>,
}

/// The forge hosting the repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    Github,
    Gitlab,
}

/// One step of the plan, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Action {
    /// Create a branch, run commands, test, commit, push, and open a PR/MR.
    CreateMr(CreateMr),
    /// Regenerate an existing Quartermaster PR/MR: rebase, re-apply commands, test, force-push.
    UpdateMr(UpdateMr),
    /// Open an issue (major version bumps, drift findings, ...).
    CreateIssue(CreateIssue),
    /// Comment on a Quartermaster PR/MR.
    CommentMr(CommentMr),
    /// Comment on a Quartermaster issue.
    CommentIssue(CommentIssue),
    /// Close a stale Quartermaster PR/MR.
    CloseMr(CloseMr),
    /// Record that an item is deliberately left alone.
    Skip(Skip),
}

/// The action types, without their fields: what missions allow.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ActionType {
    CreateMr,
    UpdateMr,
    CreateIssue,
    CommentMr,
    CommentIssue,
    CloseMr,
    Skip,
}

impl ActionType {
    pub const ALL: [ActionType; 7] = [
        ActionType::CreateMr,
        ActionType::UpdateMr,
        ActionType::CreateIssue,
        ActionType::CommentMr,
        ActionType::CommentIssue,
        ActionType::CloseMr,
        ActionType::Skip,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            ActionType::CreateMr => "create_mr",
            ActionType::UpdateMr => "update_mr",
            ActionType::CreateIssue => "create_issue",
            ActionType::CommentMr => "comment_mr",
            ActionType::CommentIssue => "comment_issue",
            ActionType::CloseMr => "close_mr",
            ActionType::Skip => "skip",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

impl std::fmt::Display for ActionType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Action {
    pub fn action_type(&self) -> ActionType {
        match self {
            Action::CreateMr(_) => ActionType::CreateMr,
            Action::UpdateMr(_) => ActionType::UpdateMr,
            Action::CreateIssue(_) => ActionType::CreateIssue,
            Action::CommentMr(_) => ActionType::CommentMr,
            Action::CommentIssue(_) => ActionType::CommentIssue,
            Action::CloseMr(_) => ActionType::CloseMr,
            Action::Skip(_) => ActionType::Skip,
        }
    }

    pub fn confidence(&self) -> f64 {
        match self {
            Action::CreateMr(a) => a.confidence,
            Action::UpdateMr(a) => a.confidence,
            Action::CreateIssue(a) => a.confidence,
            Action::CommentMr(a) => a.confidence,
            Action::CommentIssue(a) => a.confidence,
            Action::CloseMr(a) => a.confidence,
            Action::Skip(a) => a.confidence,
        }
    }
}

/// Open a PR/MR with dependency updates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateMr {
    /// Head branch; must start with `quartermaster/`.
    pub branch: String,
    /// PR/MR title.
    pub title: String,
    /// PR/MR body (Markdown).
    pub description: String,
    /// The dependency updates this PR makes (at least one).
    #[schemars(length(min = 1))]
    pub updates: Vec<Update>,
    /// Update commands; each must match the mission's allowlist.
    pub commands: Vec<String>,
    /// Command that verifies the update; must be an allowed test runner command.
    pub test_command: String,
    /// Labels to apply (Quartermaster always adds its own bot label too).
    pub labels: Vec<String>,
    /// What to do when the batched update fails its tests.
    pub fallback_strategy: FallbackStrategy,
    /// The agent's confidence in this action, 0 to 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    /// Subdirectory the commands and tests run in (monorepos), relative to the repository root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
}

/// Regenerate an open Quartermaster PR/MR.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateMr {
    /// Number of the PR (GitHub) or MR iid (GitLab).
    #[schemars(range(min = 1))]
    pub mr_id: u64,
    /// The PR's head branch; must start with `quartermaster/`.
    pub branch: String,
    /// Rebuild the branch from the current default branch (true, the default) or apply the commands
    /// on top of the existing branch (false).
    #[serde(default = "default_true")]
    pub rebase_first: bool,
    /// The dependency updates the regenerated PR makes (at least one).
    #[schemars(length(min = 1))]
    pub updates: Vec<Update>,
    /// Update commands; each must match the mission's allowlist.
    pub commands: Vec<String>,
    /// Command that verifies the update; must be an allowed test runner command.
    pub test_command: String,
    /// New PR/MR body; the current one is kept when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Labels to add; the current ones are kept when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
    /// The agent's confidence in this action, 0 to 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    /// Subdirectory the commands and tests run in (monorepos), relative to the repository root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
}

fn default_true() -> bool {
    true
}

/// Open an issue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateIssue {
    /// Issue title; an open Quartermaster issue with the same title is reused, not duplicated.
    pub title: String,
    /// Issue body (Markdown).
    pub body: String,
    /// Labels to apply (Quartermaster always adds its own bot label too).
    pub labels: Vec<String>,
    /// The agent's confidence in this action, 0 to 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
}

/// Comment on a Quartermaster PR/MR.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommentMr {
    /// Number of the PR (GitHub) or MR iid (GitLab).
    #[schemars(range(min = 1))]
    pub mr_id: u64,
    /// Comment text (Markdown).
    pub body: String,
    /// The agent's confidence in this action, 0 to 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
}

/// Comment on a Quartermaster issue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommentIssue {
    /// Issue number (GitHub) or iid (GitLab).
    #[schemars(range(min = 1))]
    pub issue_id: u64,
    /// Comment text (Markdown).
    pub body: String,
    /// The agent's confidence in this action, 0 to 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
}

/// Close a stale Quartermaster PR/MR.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseMr {
    /// Number of the PR (GitHub) or MR iid (GitLab).
    #[schemars(range(min = 1))]
    pub mr_id: u64,
    /// Comment posted before closing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Delete the head branch after closing.
    #[serde(default)]
    pub delete_branch: bool,
    /// The agent's confidence in this action, 0 to 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
}

/// Leave an item alone, with a reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Skip {
    /// The package (or other item) skipped.
    pub package: String,
    /// Why, in words.
    pub reason: String,
    /// Why, as a category.
    pub reason_type: ReasonType,
    /// The agent's confidence in this action, 0 to 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
}

/// One dependency update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Update {
    /// Package name as the ecosystem spells it, e.g. `github.com/gorilla/mux`, `@types/node`.
    pub package: String,
    /// Current version.
    pub from: String,
    /// Target version; `<ver>` in an update command must equal it.
    pub to: String,
    /// Kind of change.
    pub update_type: UpdateType,
}

/// Kind of version change (the categories Renovate and Dependabot use).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UpdateType {
    Major,
    Minor,
    Patch,
    /// Same version, new content digest (Docker images, Git dependencies, Go pseudo-versions).
    Digest,
    /// A range replaced by an exact version.
    Pin,
    /// A tag pinned to its digest.
    PinDigest,
    /// Lock file refreshed within the existing ranges.
    LockFileMaintenance,
    /// Back to a lower version (e.g. a release was yanked).
    Rollback,
    /// One package replaced by its successor.
    Replacement,
}

impl UpdateType {
    pub const ALL: [UpdateType; 9] = [
        UpdateType::Major,
        UpdateType::Minor,
        UpdateType::Patch,
        UpdateType::Digest,
        UpdateType::Pin,
        UpdateType::PinDigest,
        UpdateType::LockFileMaintenance,
        UpdateType::Rollback,
        UpdateType::Replacement,
    ];

    /// The update type of its name in a plan (`pin_digest`).
    pub fn parse(name: &str) -> Option<UpdateType> {
        UpdateType::ALL.into_iter().find(|t| t.as_str() == name)
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            UpdateType::Major => "major",
            UpdateType::Minor => "minor",
            UpdateType::Patch => "patch",
            UpdateType::Digest => "digest",
            UpdateType::Pin => "pin",
            UpdateType::PinDigest => "pin_digest",
            UpdateType::LockFileMaintenance => "lock_file_maintenance",
            UpdateType::Rollback => "rollback",
            UpdateType::Replacement => "replacement",
        }
    }
}

/// How to react when the batched update fails its tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FallbackStrategy {
    /// One branch with every update; red tests mean no PR.
    Batch,
    /// Batch first; if red, one branch and PR per update, each tested alone.
    IndividualOnFailure,
    /// One branch and PR per update from the start.
    Individual,
}

/// Why an item is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReasonType {
    HumanHold,
    RecentlyUpdated,
    NoUpdateAvailable,
    Pinned,
    NotApplicable,
}

/// The plan's JSON Schema (draft 2020-12), as printed by `quartermaster schema`.
pub fn json_schema() -> Value {
    SCHEMA.clone()
}

static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    serde_json::to_value(schemars::schema_for!(Plan)).expect("a derived schema serialises")
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_mr_defaults_to_rebasing() {
        let action = r#"{"type":"update_mr","mr_id":4,"branch":"quartermaster/x","updates":[],
            "commands":["go mod tidy"],"test_command":"go test ./...","confidence":0.8}"#;
        let a: Action = serde_json::from_str(action).unwrap();
        let Action::UpdateMr(u) = a else {
            panic!("not update_mr")
        };
        assert!(u.rebase_first);
        assert_eq!(u.labels, None);
    }

    #[test]
    fn update_type_names_match_serde() {
        for t in UpdateType::ALL {
            assert_eq!(
                serde_json::to_value(t).unwrap(),
                Value::String(t.as_str().into())
            );
        }
    }

    #[test]
    fn action_type_names_round_trip() {
        for t in ActionType::ALL {
            assert_eq!(ActionType::from_name(t.as_str()), Some(t));
            let json = serde_json::to_value(t).unwrap();
            assert_eq!(json, Value::String(t.as_str().to_string()));
        }
        assert_eq!(ActionType::from_name("merge_mr"), None);
    }
}
