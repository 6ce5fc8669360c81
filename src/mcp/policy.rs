//! The policy in force, as the MCP server tells the agent: `--policy FILE`, else
//! `.quartermaster.toml` as committed at the tip of the checkout's default branch (the remote's
//! `HEAD`, else the checkout's `HEAD`), never the working tree; the defaults without either.

use crate::policy::{self, POLICY_FILE, Policy, PolicyError};
use std::path::Path;

/// The policy, or why it cannot be used (a `run` would stop on the same error).
pub(crate) fn read(file: Option<&Path>, checkout: &Path) -> Result<Policy, PolicyError> {
    if let Some(file) = file {
        return policy::from_file(file);
    }
    let Ok(repo) = git2::Repository::open(checkout) else {
        return Ok(Policy {
            source: format!("the defaults ({} is no git checkout)", checkout.display()),
            ..Policy::default()
        });
    };
    let reference = repo
        .find_reference("refs/remotes/origin/HEAD")
        .and_then(|r| r.resolve())
        .or_else(|_| repo.head());
    let commit = match reference.and_then(|r| r.peel_to_commit()) {
        Ok(commit) => commit,
        Err(_) => {
            return Ok(Policy {
                source: "the defaults (the checkout has no commit)".into(),
                ..Policy::default()
            });
        }
    };
    let branch = repo
        .find_reference("refs/remotes/origin/HEAD")
        .ok()
        .and_then(|r| r.symbolic_target().ok().flatten().map(String::from))
        .map(|t| t.trim_start_matches("refs/remotes/origin/").to_string())
        .unwrap_or_else(|| "HEAD".into());
    let entry = commit.tree().ok().and_then(|tree| {
        let entry = tree.get_name(POLICY_FILE)?;
        Some(match entry.filemode() {
            0o100644 | 0o100755 => repo
                .find_blob(entry.id())
                .map(|b| b.content().to_vec())
                .map_err(|_| "unreadable"),
            _ => Err("not a regular file"),
        })
    });
    policy::from_tree(entry, &branch, &commit.id().to_string())
}
