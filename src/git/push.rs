//! Pushing under a lease, with the server's refusals surfaced.

use super::remote::open_remote;
use super::{GitError, RemoteSpec, Result};

/// Pushes one refspec to `refs/heads/<branch>` under a lease: the remote branch must still be at
/// `expected` (`None`: absent). The lease is checked in the push negotiation, on the connection
/// that pushes, and the server only applies the update if the branch is still where that
/// negotiation saw it. Per-ref rejections, which `Remote::push` does not report, are surfaced.
pub(super) fn push(
    repo: &git2::Repository,
    spec: &RemoteSpec,
    refspec: &str,
    branch: &str,
    expected: Option<git2::Oid>,
) -> Result<()> {
    let mut remote = open_remote(repo, spec)?;
    let wanted = format!("refs/heads/{branch}");
    let moved: std::cell::RefCell<Option<Option<git2::Oid>>> = std::cell::RefCell::new(None);
    let rejection = std::cell::RefCell::new(None);
    // Servers explain refusals in `remote:` lines (GitHub's GH006/GH013, workflow permissions).
    let remote_says = std::cell::RefCell::new(Vec::new());
    let mut callbacks = spec.callbacks();
    callbacks.push_update_reference(|_name, status| {
        if let Some(message) = status {
            *rejection.borrow_mut() = Some(message.to_string());
        }
        Ok(())
    });
    callbacks.push_negotiation(|updates| {
        for update in updates {
            if update.dst_refname().ok() == Some(wanted.as_str()) {
                let current = (!update.src().is_zero()).then(|| update.src());
                if current != expected {
                    *moved.borrow_mut() = Some(current);
                    return Err(git2::Error::from_str("the branch moved"));
                }
            }
        }
        Ok(())
    });
    callbacks.sideband_progress(|data| {
        let mut said = remote_says.borrow_mut();
        if said.len() < 8192 {
            said.extend_from_slice(data);
        }
        true
    });
    let mut options = git2::PushOptions::new();
    options.remote_callbacks(callbacks);
    let pushed = remote.push(&[refspec], Some(&mut options));
    drop(options);
    if let Some(found) = moved.into_inner() {
        let show = |o: Option<git2::Oid>| o.map_or("nothing".to_string(), |o| o.to_string());
        return Err(GitError::LeaseMismatch {
            branch: branch.to_string(),
            expected: show(expected),
            found: show(found),
        });
    }
    let explained = |message: String| {
        let said = String::from_utf8_lossy(&remote_says.borrow())
            .trim()
            .to_string();
        if said.is_empty() {
            message
        } else {
            format!(
                "{message}; the server said: {}",
                said.replace(['\r', '\n'], " ")
            )
        }
    };
    pushed.map_err(|e| match spec.classify(&format!("pushing {branch}"), e) {
        GitError::Git { message, .. } => GitError::Rejected {
            branch: branch.to_string(),
            message: explained(message),
        },
        other => other,
    })?;
    match rejection.into_inner() {
        Some(message) => Err(GitError::Rejected {
            branch: branch.to_string(),
            message: explained(message),
        }),
        None => Ok(()),
    }
}

/// After a push: the remote's `branch` must be exactly `commit`, what Quartermaster checked.
pub(super) fn confirm(
    repo: &git2::Repository,
    spec: &RemoteSpec,
    branch: &str,
    commit: git2::Oid,
) -> Result<()> {
    let mut remote = open_remote(repo, spec)?;
    let connection = remote
        .connect_auth(git2::Direction::Fetch, Some(spec.callbacks()), None)
        .map_err(|e| spec.classify("confirming the push", e))?;
    let wanted = format!("refs/heads/{branch}");
    let tip = connection
        .list()
        .map_err(|e| spec.classify("confirming the push", e))?
        .iter()
        .find(|h| h.name() == wanted)
        .map(git2::RemoteHead::oid);
    match tip {
        Some(tip) if tip == commit => Ok(()),
        found => Err(GitError::NotPushed {
            branch: branch.to_string(),
            expected: commit.to_string(),
            found: found.map_or("nothing".to_string(), |o| o.to_string()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::RemoteUrl;

    /// A remote whose branch is not the commit Quartermaster pushed (a hook rewrote it, another
    /// push won a race) is an error naming both.
    #[test]
    fn a_remote_tip_that_is_not_the_pushed_commit_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let remote = git2::Repository::init_bare(dir.path().join("remote.git")).unwrap();
        let tree = remote
            .find_tree(remote.treebuilder(None).unwrap().write().unwrap())
            .unwrap();
        let who = git2::Signature::now("t", "t@example.com").unwrap();
        let commit = |message: &str| {
            remote
                .commit(None, &who, &who, message, &tree, &[])
                .unwrap()
        };
        let (pushed, other) = (commit("pushed"), commit("other"));
        remote
            .reference("refs/heads/quartermaster/x", other, true, "t")
            .unwrap();
        let spec = RemoteSpec {
            url: RemoteUrl::new(dir.path().join("remote.git").display().to_string()),
            username: None,
            token: None,
        };
        let local = git2::Repository::init_bare(dir.path().join("local.git")).unwrap();
        let err = confirm(&local, &spec, "quartermaster/x", pushed).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "after the push, the remote's quartermaster/x is {other}, not the commit Quartermaster checked ({pushed})"
            )
        );
        assert!(confirm(&local, &spec, "quartermaster/x", other).is_ok());
    }
}
