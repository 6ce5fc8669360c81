//! Every rule a plan must satisfy before anything runs.
//!
//! The plan's own rules (branch prefix, allowlisted commands, test runners, confidence, at most 20
//! actions, relative `working_dir`, duplicate-package warnings) and stricter ones of
//! Quartermaster's: valid and unique git branch names, normalised paths that stay inside the
//! checkout, label and text limits the forges enforce, and the mission's allowed action types. All
//! findings are reported together so an agent can fix its plan in one round. A valid plan comes
//! back as a [`ValidatedPlan`]: every command already matched to its typed argv, so that nothing
//! after validation reads a command string again.

mod changes;
mod locks;
mod rules;
mod text;
mod validated;
mod view;

pub(crate) use locks::against_checkout;
pub use validated::{Recipe, Step, ValidatedPlan};

use crate::finding::{Code, Finding, Pointer};
use crate::markdown::MAX_PLAN_BODY as MAX_BODY_CHARS;
use crate::mission::Mission;
use crate::plan::{self, Parsed};
use std::collections::BTreeMap;
use view::{ContextView, View};

/// The most actions a plan may hold.
pub(crate) const MAX_ACTIONS: usize = 20;
/// Commands per action; more is a sign of a confused plan, and each one is a process.
pub(crate) const MAX_COMMANDS: usize = 20;
/// Updates per action; a PR body lists them all.
pub(crate) const MAX_UPDATES: usize = 50;
/// Labels per action.
pub(crate) const MAX_LABELS: usize = 20;
/// GitLab's limit on titles (GitHub allows 256).
pub(crate) const MAX_TITLE_CHARS: usize = 255;
/// Longest package name or version string in `updates`.
const MAX_UPDATE_FIELD: usize = 214;
/// Ecosystems a plan may mention even if the active mission has no commands for them.
pub(crate) const KNOWN_ECOSYSTEMS: &[&str] = &[
    "go", "npm", "yarn", "pnpm", "bun", "pip", "poetry", "uv", "bundle", "cargo",
];

/// The outcome of validating a plan.
#[derive(Debug, Clone)]
pub struct Validation {
    pub findings: Vec<Finding>,
    /// The plan, when it has no errors.
    pub plan: Option<ValidatedPlan>,
}

impl Validation {
    pub fn is_valid(&self) -> bool {
        self.plan.is_some()
    }

    pub fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.is_error())
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| !f.is_error())
    }
}

/// Parses and validates plan bytes against a mission.
pub fn validate(bytes: &[u8], mission: &Mission) -> Validation {
    let (parsed, mut findings) = plan::parse(bytes);
    let (more, recipes) = check(&parsed, mission);
    findings.extend(more);
    // Structural findings come first within each part; a stable sort by part keeps that order.
    findings.sort_by_key(|f| document_order(&f.pointer));
    let plan = if findings.iter().any(Finding::is_error) {
        None
    } else {
        parsed
            .into_plan()
            .and_then(|plan| ValidatedPlan::new(plan, recipes, mission))
    };
    Validation { findings, plan }
}

/// Orders pointers by the part of the plan they are in: the document itself, `repo_context`, then
/// each action by index.
fn document_order(pointer: &str) -> (u8, usize) {
    let mut parts = pointer.split('/').skip(1);
    match (parts.next(), parts.next().and_then(|i| i.parse().ok())) {
        (None, _) => (0, 0),
        (Some("repo_context"), _) => (1, 0),
        (Some("actions"), None) => (2, 0),
        (Some("actions"), Some(i)) => (3, i),
        (Some(_), _) => (0, 0),
    }
}

/// Applies every rule to what parsing recovered. Returns the findings, and per action index what
/// the commands of a `create_mr`/`update_mr` matched.
pub fn check(parsed: &Parsed, mission: &Mission) -> (Vec<Finding>, BTreeMap<usize, Recipe>) {
    let mut out = Vec::new();
    let root = Pointer::root();
    let context = match (&parsed.repo_context, &parsed.raw_repo_context) {
        (Some(ctx), _) => Some(ContextView::typed(ctx)),
        (None, Some(raw)) => Some(ContextView::raw(raw)),
        (None, None) => None,
    };
    let declared: Vec<String> = match &context {
        Some(ctx) => {
            rules::repo_context(ctx, mission, &root.key("repo_context"), &mut out);
            ctx.ecosystems.clone()
        }
        // Without a readable context, do not pile "ecosystem not declared" on every command.
        None => mission.ecosystems.keys().cloned().collect(),
    };
    if parsed.action_count > MAX_ACTIONS {
        out.push(Finding::error(
            root.key("actions"),
            Code::PlanTooManyActions,
            format!(
                "the plan has {} actions; at most {MAX_ACTIONS} are allowed: split it into several plans",
                parsed.action_count
            ),
        ));
    }
    let mut views: Vec<(usize, View)> = parsed
        .actions
        .iter()
        .map(|(i, a)| (*i, View::typed(a)))
        .chain(
            parsed
                .raw_actions
                .iter()
                .map(|(i, kind, value)| (*i, View::raw(*kind, value))),
        )
        .collect();
    views.sort_by_key(|(i, _)| *i);
    let mut recipes = BTreeMap::new();
    for (index, view) in &views {
        let at = root.key("actions").index(*index);
        let matched = rules::action_rules(view, mission, &declared, &at, &mut out);
        if let Some(recipe) = matched.and_then(Recipe::from_matched) {
            recipes.insert(*index, recipe);
        }
    }
    rules::cross_action_rules(&views, &mut out);
    (out, recipes)
}
