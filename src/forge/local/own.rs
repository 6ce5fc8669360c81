//! The local forge's own repository: a bare repository in its directory that plays the forge's
//! copy of the project. Unless `--remote` names one of the checkout's remotes, branches are pushed
//! there and nowhere else: a clone of a GitHub repository does not get its branches pushed to
//! GitHub because Quartermaster ran on it locally.
//!
//! Every run brings it up to date with the checkout: each of the checkout's branches (a remote
//! branch when there is no local one of that name) is copied in, except Quartermaster's own
//! `quartermaster/*` branches, which live there and only there.

use super::local;
use crate::forge::Result;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The repository's directory, inside the forge's.
pub(crate) fn path(forge_dir: &Path) -> PathBuf {
    forge_dir.join("remote.git")
}

/// Creates the repository if needed, and copies the checkout's branches into it.
pub(crate) fn sync(checkout: &git2::Repository, forge_dir: &Path) -> Result<PathBuf> {
    let path = path(forge_dir);
    let own = match git2::Repository::open_bare(&path) {
        Ok(repo) => repo,
        Err(_) => git2::Repository::init_bare(&path)
            .map_err(|e| local(&format!("creating {}", path.display()), e.message()))?,
    };
    let branches = branches(checkout)?;
    let refspecs: Vec<String> = branches
        .iter()
        .map(|(name, source)| format!("+{source}:refs/heads/{name}"))
        .collect();
    if refspecs.is_empty() {
        return Ok(path);
    }
    let source = checkout.path().display().to_string();
    let mut remote = own
        .remote_anonymous(&source)
        .map_err(|e| local("reading the checkout", e.message()))?;
    remote
        .fetch(&refspecs, None, None)
        .map_err(|e| {
            local(
                &format!(
                    "copying the checkout's branches into {} (a shallow clone cannot be copied; pass --remote to push to one of the checkout's remotes instead)",
                    path.display()
                ),
                e.message(),
            )
        })?;
    // The forge's default branch is the checkout's current one.
    if let Some(head) = checkout
        .head()
        .ok()
        .and_then(|h| h.shorthand().ok().map(String::from))
        && branches.contains_key(&head)
    {
        own.set_head(&format!("refs/heads/{head}"))
            .map_err(|e| local("setting the default branch", e.message()))?;
    }
    Ok(path)
}

/// The checkout's branches by name, with the ref each is copied from: its local branches, and
/// its remote-tracking branches where no local branch has their name. Quartermaster's own and
/// `HEAD` are left out.
fn branches(repo: &git2::Repository) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let refs = repo
        .references()
        .map_err(|e| local("listing the checkout's branches", e.message()))?;
    for reference in refs.flatten() {
        let Ok(name) = reference.name() else {
            continue;
        };
        let short = if let Some(b) = name.strip_prefix("refs/heads/") {
            b.to_string()
        } else if let Some(rest) = name.strip_prefix("refs/remotes/") {
            match rest.split_once('/') {
                Some((_, b)) if b != "HEAD" => b.to_string(),
                _ => continue,
            }
        } else {
            continue;
        };
        if short.starts_with(crate::plan::branch::BRANCH_PREFIX) {
            continue;
        }
        let local_first = name.starts_with("refs/heads/");
        if local_first || !out.contains_key(&short) {
            out.insert(short, name.to_string());
        }
    }
    Ok(out)
}
