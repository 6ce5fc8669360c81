//! The lock keys of an action (pangolin's `resourceLocks` vocabulary).
//!
//! What keys cannot see: the head branch of a PR named by number (`comment_mr`, `close_mr`), and
//! the number a `create_issue` will get, are known only to the forge. So `close_mr` on PR #n and a
//! `create_mr` on PR #n's head branch share no key, nor do `create_issue` and a `comment_issue` on
//! the issue it will find. Resolving them needs the forge; a plan-only key set cannot.

use super::roots::WorkspaceRoots;
use crate::markdown;
use crate::plan::{Action, FallbackStrategy, Plan, split_branches};
use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;

/// One resource an action holds while it runs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LockKey {
    /// A branch the action may push.
    Branch(String),
    /// A PR/MR the action updates, comments on or closes.
    Pr(u64),
    /// An issue the action comments on.
    Issue(u64),
    /// The short hash of the title `create_issue` posts and finds its open issue by.
    IssueTitle(String),
    /// The directory owning the lock files the action's commands change.
    Workdir(String),
}

impl fmt::Display for LockKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockKey::Branch(b) => write!(f, "branch:{b}"),
            LockKey::Pr(n) => write!(f, "pr:{n}"),
            LockKey::Issue(n) => write!(f, "issue:{n}"),
            LockKey::IssueTitle(h) => write!(f, "issue-title:{h}"),
            LockKey::Workdir(d) => write!(f, "workdir:{d}"),
        }
    }
}

/// What, besides the plan, decides an action's keys.
#[derive(Debug, Clone, Default)]
pub struct KeyContext {
    /// The run's `--allow-mentions`: it changes the title Quartermaster posts, hence its hash.
    pub allow_mentions: bool,
    /// The checkout's workspaces (see [`WorkspaceRoots`]).
    pub(crate) roots: WorkspaceRoots,
}

impl KeyContext {
    /// The context of `plan` run on `checkout`: the workspaces above its working directories.
    pub fn discover(plan: &Plan, checkout: &Path, allow_mentions: bool) -> Self {
        let dirs = plan.actions.iter().filter_map(|a| match a {
            Action::CreateMr(a) => a.working_dir.as_deref(),
            Action::UpdateMr(a) => a.working_dir.as_deref(),
            _ => None,
        });
        Self {
            allow_mentions,
            roots: WorkspaceRoots::discover(checkout, dirs),
        }
    }
}

/// The keys of one action.
pub fn action_keys(action: &Action, ctx: &KeyContext) -> BTreeSet<LockKey> {
    let mut keys = BTreeSet::new();
    match action {
        Action::CreateMr(a) => {
            keys.insert(LockKey::Branch(a.branch.clone()));
            if a.fallback_strategy != FallbackStrategy::Batch {
                let packages = a.updates.iter().map(|u| u.package.as_str());
                keys.extend(
                    split_branches(&a.branch, packages)
                        .into_iter()
                        .map(LockKey::Branch),
                );
            }
            keys.insert(workdir(a.working_dir.as_deref(), ctx));
        }
        Action::UpdateMr(a) => {
            keys.insert(LockKey::Branch(a.branch.clone()));
            keys.insert(LockKey::Pr(a.mr_id));
            keys.insert(workdir(a.working_dir.as_deref(), ctx));
        }
        Action::CommentMr(a) => {
            keys.insert(LockKey::Pr(a.mr_id));
        }
        Action::CloseMr(a) => {
            keys.insert(LockKey::Pr(a.mr_id));
        }
        Action::CommentIssue(a) => {
            keys.insert(LockKey::Issue(a.issue_id));
        }
        Action::CreateIssue(a) => {
            // The engine looks an issue up by the title it posts, after neutralising it.
            let posted = crate::sink::line(&a.title, ctx.allow_mentions);
            keys.insert(LockKey::IssueTitle(markdown::short_hash(&posted)));
        }
        Action::Skip(_) => {}
    }
    keys
}

/// The keys of every action of the plan, in plan order.
pub fn plan_keys(plan: &Plan, ctx: &KeyContext) -> Vec<BTreeSet<LockKey>> {
    plan.actions.iter().map(|a| action_keys(a, ctx)).collect()
}

fn workdir(dir: Option<&str>, ctx: &KeyContext) -> LockKey {
    LockKey::Workdir(ctx.roots.lock_owner(dir.unwrap_or(".")))
}

/// Keys that keep plan order under a scheduler that only looks at held keys.
///
/// pangolin fires ready items greedily in array order, skipping one whose keys are held and
/// trying the next: with the plain keys, an action blocked by one of its keys lets a later action
/// that shares another of its keys overtake it. Here every action also holds the keys of each
/// earlier action it shares a key with (transitively), so for any two actions `i < j` that share
/// a key, `j`'s keys contain all of `i`'s: whatever blocks `i` blocks `j`.
pub fn ordered<K: Ord + Clone>(keys: &[BTreeSet<K>]) -> Vec<BTreeSet<K>> {
    let mut out: Vec<BTreeSet<K>> = Vec::with_capacity(keys.len());
    for own in keys {
        let mut held = own.clone();
        loop {
            let before = held.len();
            for earlier in &out {
                if !earlier.is_disjoint(&held) {
                    held.extend(earlier.iter().cloned());
                }
            }
            if held.len() == before {
                break;
            }
        }
        out.push(held);
    }
    out
}

#[cfg(test)]
mod tests;
