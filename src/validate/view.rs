//! The fields of a plan that the rules look at. A well-formed plan is read from its types; a
//! broken part, which did not parse, is read field by field from its JSON: a field that is itself
//! broken stays `None` (the structural check already reported it) and every other field is still
//! checked, so that one broken field hides nothing else.

use crate::plan::{Action, ActionType, FallbackStrategy, RepoContext, Update, UpdateType};
use serde_json::Value;

/// The fields of `repo_context`.
#[derive(Debug, Default)]
pub(crate) struct ContextView {
    pub ecosystems: Vec<String>,
    pub test_command: Option<String>,
    pub default_branch: Option<String>,
    pub lock_files: Vec<String>,
}

impl ContextView {
    pub(super) fn typed(ctx: &RepoContext) -> Self {
        Self {
            ecosystems: ctx.ecosystems.clone(),
            test_command: ctx.test_command.clone(),
            default_branch: Some(ctx.default_branch.clone()),
            lock_files: ctx.lock_files.clone(),
        }
    }

    pub(super) fn raw(ctx: &Value) -> Self {
        Self {
            ecosystems: field(ctx, "ecosystems").unwrap_or_default(),
            test_command: field(ctx, "test_command"),
            default_branch: field(ctx, "default_branch"),
            lock_files: field(ctx, "lock_files").unwrap_or_default(),
        }
    }
}

/// The fields of one action.
#[derive(Debug, Default)]
pub(crate) struct View {
    pub kind: Option<ActionType>,
    /// Every field parsed: rules that compare fields with each other may run.
    pub complete: bool,
    pub branch: Option<String>,
    pub title: Option<String>,
    /// Free texts: field name, text, whether it must be non-empty.
    pub texts: Vec<(&'static str, String, bool)>,
    pub updates: Vec<Update>,
    pub commands: Option<Vec<String>>,
    pub test_command: Option<String>,
    pub labels: Option<Vec<String>>,
    pub working_dir: Option<String>,
    pub ids: Vec<(&'static str, u64)>,
    pub confidence: Option<f64>,
    pub(crate) skipped_package: Option<String>,
    /// `create_mr` only: whether the action may split into one branch per update.
    pub splits: bool,
}

impl View {
    pub(super) fn kind(&self) -> ActionType {
        self.kind
            .expect("a view is made from an action of a known type")
    }

    /// Whether the action runs commands (and so has updates, commands and a test command).
    pub(crate) fn changes_files(&self) -> bool {
        matches!(self.kind, Some(ActionType::CreateMr | ActionType::UpdateMr))
    }

    /// The fields of a well-formed action.
    pub(super) fn typed(action: &Action) -> Self {
        let base = View {
            kind: Some(action.action_type()),
            complete: true,
            confidence: Some(action.confidence()),
            ..View::default()
        };
        match action {
            Action::CreateMr(a) => View {
                branch: Some(a.branch.clone()),
                title: Some(a.title.clone()),
                texts: vec![("description", a.description.clone(), false)],
                updates: a.updates.clone(),
                commands: Some(a.commands.clone()),
                test_command: Some(a.test_command.clone()),
                labels: Some(a.labels.clone()),
                working_dir: a.working_dir.clone(),
                splits: a.fallback_strategy != FallbackStrategy::Batch,
                ..base
            },
            Action::UpdateMr(a) => View {
                branch: Some(a.branch.clone()),
                texts: a
                    .description
                    .iter()
                    .map(|d| ("description", d.clone(), false))
                    .collect(),
                updates: a.updates.clone(),
                commands: Some(a.commands.clone()),
                test_command: Some(a.test_command.clone()),
                labels: a.labels.clone(),
                working_dir: a.working_dir.clone(),
                ids: vec![("mr_id", a.mr_id)],
                ..base
            },
            Action::CreateIssue(a) => View {
                title: Some(a.title.clone()),
                texts: vec![("body", a.body.clone(), false)],
                labels: Some(a.labels.clone()),
                ..base
            },
            Action::CommentMr(a) => View {
                texts: vec![("body", a.body.clone(), true)],
                ids: vec![("mr_id", a.mr_id)],
                ..base
            },
            Action::CommentIssue(a) => View {
                texts: vec![("body", a.body.clone(), true)],
                ids: vec![("issue_id", a.issue_id)],
                ..base
            },
            Action::CloseMr(a) => View {
                texts: a
                    .comment
                    .iter()
                    .map(|c| ("comment", c.clone(), true))
                    .collect(),
                ids: vec![("mr_id", a.mr_id)],
                ..base
            },
            Action::Skip(a) => View {
                texts: vec![("reason", a.reason.clone(), true)],
                skipped_package: Some(a.package.clone()),
                ..base
            },
        }
    }

    /// The readable fields of an action of type `kind` that did not parse.
    pub(super) fn raw(kind: ActionType, value: &Value) -> Self {
        let text = |name: &'static str, required: bool| {
            field::<String>(value, name).map(|t| (name, t, required))
        };
        let texts = [
            text("description", false),
            text(
                "body",
                matches!(kind, ActionType::CommentMr | ActionType::CommentIssue),
            ),
            text("comment", true),
            text("reason", true),
        ]
        .into_iter()
        .flatten()
        .collect();
        let ids = ["mr_id", "issue_id"]
            .into_iter()
            .filter_map(|name| field::<u64>(value, name).map(|id| (name, id)))
            .collect();
        View {
            kind: Some(kind),
            complete: false,
            branch: field(value, "branch"),
            title: field(value, "title"),
            texts,
            updates: raw_updates(value),
            commands: field(value, "commands"),
            test_command: field(value, "test_command"),
            labels: field(value, "labels"),
            working_dir: field(value, "working_dir"),
            ids,
            confidence: field(value, "confidence"),
            skipped_package: (kind == ActionType::Skip)
                .then(|| field(value, "package"))
                .flatten(),
            splits: kind == ActionType::CreateMr
                && matches!(
                    field(value, "fallback_strategy"),
                    Some(FallbackStrategy::Individual | FallbackStrategy::IndividualOnFailure)
                ),
        }
    }
}

/// Commands are matched against the declared updates even when an update is malformed: whatever
/// package and target it names still counts as declared.
fn raw_updates(value: &Value) -> Vec<Update> {
    value
        .get("updates")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|u| {
                    serde_json::from_value(u.clone()).unwrap_or_else(|_| Update {
                        package: field(u, "package").unwrap_or_default(),
                        from: field(u, "from").unwrap_or_default(),
                        to: field(u, "to").unwrap_or_default(),
                        update_type: UpdateType::Patch,
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

fn field<T: serde::de::DeserializeOwned>(value: &Value, name: &str) -> Option<T> {
    value
        .get(name)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}
