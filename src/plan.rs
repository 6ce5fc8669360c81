//! The plan: what the agent asks Quartermaster to do.
//!
//! These types are the contract of `quartermaster-plan-schema`: every action type and field of the
//! seed schema, closed enums, and no unknown fields (a typo such as `fallback_stratgy` must never be
//! silently ignored, or a strategy the agent chose would be replaced by a default). Parsing is
//! two-phase (see [`parse`]): JSON first, so syntax errors carry line and column, then a structural
//! check driven by the plan's own JSON Schema that reports *every* unknown, missing or mistyped field
//! with its JSON Pointer, and only then serde into these types.

use crate::finding::{Code, Finding, Pointer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::LazyLock;

mod structure;

/// Plans larger than this are refused before parsing: real plans are a few kilobytes, and the limit
/// bounds memory for hostile input.
pub const MAX_PLAN_BYTES: usize = 10 * 1024 * 1024;

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
    /// The dependency updates this PR makes.
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
    /// The dependency updates the regenerated PR makes.
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

/// The branches a `create_mr` splits into (strategies `individual` and `individual_on_failure`),
/// one per update, in order: `<branch>--<package-slug>`, siblings of the batch branch (git cannot
/// hold `a/b` beside `a/b/c`), with `-2`, `-3`... when two packages slug alike.
pub fn split_branches<'a>(
    branch: &str,
    packages: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    let mut taken = std::collections::BTreeSet::new();
    packages
        .into_iter()
        .map(|package| {
            let base = format!("{branch}--{}", slug(package));
            let mut name = base.clone();
            let mut n = 2;
            while !taken.insert(name.clone()) {
                name = format!("{base}-{n}");
                n += 1;
            }
            name
        })
        .collect()
}

/// A package name as a branch-name fragment: `github.com/gorilla/mux` → `github.com-gorilla-mux`.
fn slug(package: &str) -> String {
    let mut out = String::new();
    for c in package.trim_start_matches('@').chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.contains("..") {
        out = out.replace("..", ".");
    }
    let out: String = out
        .trim_matches(|c| c == '-' || c == '.')
        .chars()
        .take(50)
        .collect();
    let out = out.trim_end_matches(['-', '.']).to_string();
    let out = out.strip_suffix(".lock").map(String::from).unwrap_or(out);
    if out.is_empty() {
        "package".to_string()
    } else {
        out
    }
}

/// The plan's JSON Schema (draft 2020-12), as printed by `quartermaster schema`.
pub fn json_schema() -> Value {
    SCHEMA.clone()
}

static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    serde_json::to_value(schemars::schema_for!(Plan)).expect("a derived schema serialises")
});

/// What parsing recovered from a plan, even when parts of it are broken: the repository context if
/// it was well-formed, every well-formed action with its index in the document, and the raw JSON of
/// the broken ones. Validation runs on all of these so that one broken field hides nothing else.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub repo_context: Option<RepoContext>,
    /// `repo_context` as JSON when it did not parse.
    pub raw_repo_context: Option<Value>,
    pub actions: Vec<(usize, Action)>,
    /// Actions of a known `type` that did not parse, as JSON, with their index.
    pub raw_actions: Vec<(usize, ActionType, Value)>,
    /// How many entries `actions` had, well-formed or not.
    pub action_count: usize,
}

impl Parsed {
    /// The complete plan, when every part of it parsed.
    pub fn into_plan(self) -> Option<Plan> {
        let repo_context = self.repo_context?;
        if self.actions.len() != self.action_count {
            return None;
        }
        Some(Plan {
            repo_context,
            actions: self.actions.into_iter().map(|(_, a)| a).collect(),
        })
    }
}

/// Parses plan bytes. Never panics; every problem becomes a finding.
pub fn parse(bytes: &[u8]) -> (Parsed, Vec<Finding>) {
    let mut findings = Vec::new();
    let mut parsed = Parsed::default();
    if bytes.len() > MAX_PLAN_BYTES {
        findings.push(Finding::error(
            "",
            Code::PlanTooLarge,
            format!(
                "the plan is {} bytes; plans are limited to {MAX_PLAN_BYTES} bytes (10 MiB)",
                bytes.len()
            ),
        ));
        return (parsed, findings);
    }
    // Editors on Windows prepend a byte order mark; it carries no meaning in JSON.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let document: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            findings.push(json_error(&e));
            return (parsed, findings);
        }
    };

    structure::check(&document, &SCHEMA, &mut findings);

    let Some(object) = document.as_object() else {
        return (parsed, findings);
    };
    let root = Pointer::root();
    if let Some(ctx) = object.get("repo_context") {
        let at = root.key("repo_context");
        if !has_errors_under(&findings, &at) {
            parsed.repo_context = typed(ctx, &at, &mut findings);
        }
        if parsed.repo_context.is_none() && ctx.is_object() {
            parsed.raw_repo_context = Some(ctx.clone());
        }
    }
    if let Some(actions) = object.get("actions").and_then(Value::as_array) {
        parsed.action_count = actions.len();
        for (index, action) in actions.iter().enumerate() {
            let at = root.key("actions").index(index);
            if !has_errors_under(&findings, &at)
                && let Some(a) = typed(action, &at, &mut findings)
            {
                parsed.actions.push((index, a));
            } else if let Some(kind) = action
                .get("type")
                .and_then(Value::as_str)
                .and_then(ActionType::from_name)
            {
                parsed.raw_actions.push((index, kind, action.clone()));
            }
        }
    }
    (parsed, findings)
}

fn has_errors_under(findings: &[Finding], at: &Pointer) -> bool {
    let prefix = at.as_str();
    findings.iter().any(|f| {
        f.is_error()
            && f.pointer.starts_with(prefix)
            && matches!(f.pointer.as_bytes().get(prefix.len()), None | Some(b'/'))
    })
}

/// Converts a structurally checked value into its type. The structural check already reported
/// everything serde could object to; this is the safety net should the two ever disagree.
fn typed<T: serde::de::DeserializeOwned>(
    value: &Value,
    at: &Pointer,
    findings: &mut Vec<Finding>,
) -> Option<T> {
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(v) => Some(v),
        Err(e) => {
            let mut pointer = at.clone();
            for segment in e.path().iter() {
                pointer = match segment {
                    serde_path_to_error::Segment::Seq { index } => pointer.index(*index),
                    serde_path_to_error::Segment::Map { key } => pointer.key(key),
                    serde_path_to_error::Segment::Enum { .. }
                    | serde_path_to_error::Segment::Unknown => pointer,
                };
            }
            findings.push(Finding::error(
                pointer,
                Code::InvalidType,
                e.into_inner().to_string(),
            ));
            None
        }
    }
}

fn json_error(e: &serde_json::Error) -> Finding {
    let text = e.to_string();
    // serde_json appends " at line L column C"; we put the position first, where people look.
    let what = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(what, _)| what);
    if what.contains("recursion limit exceeded") {
        return Finding::error(
            "",
            Code::JsonTooDeep,
            format!(
                "line {}, column {}: the JSON nests deeper than 128 levels; a plan needs fewer than 10",
                e.line(),
                e.column()
            ),
        );
    }
    let hint = if e.is_eof() {
        " (the document ends early: a missing `}`, `]` or `\"`?)"
    } else {
        ""
    };
    Finding::error(
        "",
        Code::JsonSyntax,
        format!("line {}, column {}: {what}{hint}", e.line(), e.column()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(findings: &[Finding]) -> Vec<(&str, Code)> {
        findings
            .iter()
            .map(|f| (f.pointer.as_str(), f.code))
            .collect()
    }

    const MINIMAL: &str = r#"{"repo_context":{"platform":"github","ecosystems":["go"],"default_branch":"main"},"actions":[]}"#;

    #[test]
    fn minimal_plan_parses() {
        let (parsed, findings) = parse(MINIMAL.as_bytes());
        assert!(findings.is_empty(), "{findings:?}");
        let plan = parsed.into_plan().unwrap();
        assert_eq!(plan.repo_context.default_branch, "main");
        assert_eq!(plan.repo_context.platform, Platform::Github);
    }

    #[test]
    fn syntax_error_reports_line_and_column() {
        let (_, findings) = parse(b"{\n  \"actions\": [,]\n}");
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].code, Code::JsonSyntax);
        assert!(
            findings[0].message.starts_with("line 2, column 15:"),
            "{}",
            findings[0].message
        );
    }

    #[test]
    fn truncated_document_says_it_ends_early() {
        let (_, findings) = parse(b"{\"actions\": [");
        assert_eq!(findings[0].code, Code::JsonSyntax);
        assert!(findings[0].message.contains("ends early"));
    }

    #[test]
    fn byte_order_mark_is_ignored() {
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        bytes.extend_from_slice(MINIMAL.as_bytes());
        let (_, findings) = parse(&bytes);
        assert!(findings.is_empty(), "{findings:?}");
    }

    #[test]
    fn deep_nesting_is_refused_clearly() {
        let deep = "[".repeat(100_000);
        let (_, findings) = parse(deep.as_bytes());
        assert_eq!(codes(&findings), vec![("", Code::JsonTooDeep)]);
        assert!(findings[0].message.contains("deeper than 128"));
    }

    #[test]
    fn oversized_plan_is_refused_before_parsing() {
        let big = vec![b' '; MAX_PLAN_BYTES + 1];
        let (_, findings) = parse(&big);
        assert_eq!(codes(&findings), vec![("", Code::PlanTooLarge)]);
    }

    #[test]
    fn one_broken_action_does_not_hide_the_others() {
        let plan = r#"{"repo_context":{"platform":"github","ecosystems":["go"],"default_branch":"main"},
          "actions":[
            {"type":"skip","package":"x","reason":"r","reason_type":"pinned","confidence":1},
            {"type":"comment_mr","mr_id":"seven","body":"b","confidence":1},
            {"type":"comment_issue","issue_id":3,"body":"b","confidence":1}
          ]}"#;
        let (parsed, findings) = parse(plan.as_bytes());
        assert_eq!(
            codes(&findings),
            vec![("/actions/1/mr_id", Code::InvalidType)]
        );
        assert_eq!(parsed.action_count, 3);
        let indexes: Vec<usize> = parsed.actions.iter().map(|(i, _)| *i).collect();
        assert_eq!(indexes, vec![0, 2]);
        assert_eq!(parsed.raw_actions.len(), 1);
        assert_eq!(parsed.raw_actions[0].0, 1);
        assert_eq!(parsed.raw_actions[0].1, ActionType::CommentMr);
        assert!(parsed.into_plan().is_none());
    }

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
        for t in [
            UpdateType::Major,
            UpdateType::Minor,
            UpdateType::Patch,
            UpdateType::Digest,
            UpdateType::Pin,
            UpdateType::PinDigest,
            UpdateType::LockFileMaintenance,
            UpdateType::Rollback,
            UpdateType::Replacement,
        ] {
            assert_eq!(
                serde_json::to_value(t).unwrap(),
                Value::String(t.as_str().into())
            );
        }
    }

    #[test]
    fn split_branches_are_branch_safe_and_distinct() {
        assert_eq!(slug("github.com/gorilla/mux"), "github.com-gorilla-mux");
        assert_eq!(slug("@types/node"), "types-node");
        assert_eq!(slug("Zope.Interface"), "zope.interface");
        assert_eq!(slug("a..b"), "a.b");
        assert_eq!(slug("x.lock"), "x");
        assert_eq!(slug("@@"), "package");
        let names = split_branches("quartermaster/deps", ["@a/b", "a-b", "x.lock", "-x-"]);
        assert_eq!(
            names,
            vec![
                "quartermaster/deps--a-b",
                "quartermaster/deps--a-b-2",
                "quartermaster/deps--x",
                "quartermaster/deps--x-2",
            ]
        );
        for name in names {
            assert_eq!(crate::validate::ref_problem(&name), None, "{name}");
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
