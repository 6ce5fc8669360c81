//! Staging exactly what was verified. The files the verifier read are staged from the bytes it
//! read, whatever is on disk; the other changed files from their bytes on disk, raw (the
//! workspace's attributes are overridden, see [`super::RAW`]). Before the tree can be committed,
//! every verified path in it must hold the verifier's bytes.

use super::{Files, Staged, Workspace, walk};
use crate::git::{GitError, MAX_CHANGED_FILES, Result, git};
use std::collections::BTreeMap;
use std::path::Path;

/// The files the verifier read, by path relative to the workspace's root (`/`-separated), with
/// the bytes it read; `None` for a file it looked for and did not find.
pub(crate) type Verified = BTreeMap<String, Option<Vec<u8>>>;

/// What the commands changed in a workspace, as one status walk sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Changes {
    /// Paths added, modified or deleted that a commit would hold (not ignored), each with
    /// whether it was deleted.
    pub paths: Vec<(String, bool)>,
    /// New paths the ignore rules hide (a directory once, ending with `/`). They are never
    /// committed, but an ignore rule can hide the file that makes it, which must be seen.
    pub ignored: Vec<String>,
}

impl Changes {
    /// The paths a commit would change.
    pub(crate) fn files(&self) -> Vec<String> {
        self.paths.iter().map(|(p, _)| p.clone()).collect()
    }

    /// Every path the commands touched, ignored ones included.
    pub(crate) fn touched(&self) -> Vec<String> {
        self.files()
            .into_iter()
            .chain(self.ignored.iter().cloned())
            .collect()
    }
}

impl Workspace {
    /// What the commands changed: the upper layer's contents (layers), or one status walk (a
    /// checkout); either lists ignored directories without entering them.
    pub(crate) fn changes(&self) -> Result<Changes> {
        self.check_untampered()?;
        if let Files::Layers(layers) = &self.files {
            return walk::changes(&self.repo, self.base, &layers.upper());
        }
        let mut options = git2::StatusOptions::new();
        options
            .include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_ignored(true)
            .recurse_ignored_dirs(false);
        let statuses = self
            .repo
            .statuses(Some(&mut options))
            .map_err(git("finding the changes"))?;
        let mut changes = Changes::default();
        for entry in statuses.iter() {
            let path =
                String::from_utf8(entry.path_bytes().to_vec()).map_err(|e| GitError::Git {
                    context: "finding the changes".into(),
                    message: format!(
                        "the commands wrote a path that is not UTF-8: {}",
                        String::from_utf8_lossy(e.as_bytes())
                    ),
                })?;
            let status = entry.status();
            if status.contains(git2::Status::IGNORED) {
                changes.ignored.push(path);
            } else {
                changes
                    .paths
                    .push((path, status.contains(git2::Status::WT_DELETED)));
            }
        }
        if changes.paths.len() > MAX_CHANGED_FILES {
            return Err(GitError::TooManyChanges {
                count: changes.paths.len(),
            });
        }
        Ok(changes)
    }

    /// Stages `changes`, the files in `verified` from the bytes the verifier read; `None` when
    /// the tree is the base's. The staged tree is checked to hold exactly `verified`.
    pub(crate) fn stage(&self, changes: &Changes, verified: &Verified) -> Result<Option<Staged>> {
        self.check_untampered()?;
        let tree_id = match &self.files {
            // Nothing was checked out, so no index knows the files: the base's tree with the
            // changed paths replaced, or (a file and a directory swapped, which the tree
            // updater refuses) the base's tree read into an index first.
            Files::Layers(_) => match self.stage_on_base(changes, verified) {
                Ok(tree) => tree,
                Err(_) => self.stage_in_index(changes, verified, true)?,
            },
            Files::Checkout { .. } => self.stage_in_index(changes, verified, false)?,
        };
        confirm(&self.repo, tree_id, verified)?;
        let base = self
            .repo
            .find_commit(self.base)
            .map_err(git("reading the base commit"))?;
        if tree_id == base.tree_id() {
            return Ok(None);
        }
        let tree = self
            .repo
            .find_tree(tree_id)
            .map_err(git("reading the tree"))?;
        let diff = self
            .repo
            .diff_tree_to_tree(
                Some(&base.tree().map_err(git("reading the base tree"))?),
                Some(&tree),
                None,
            )
            .map_err(git("comparing trees"))?;
        let files: Vec<String> = diff
            .deltas()
            .filter_map(|d| d.new_file().path().or_else(|| d.old_file().path()))
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if files.len() > MAX_CHANGED_FILES {
            return Err(GitError::TooManyChanges { count: files.len() });
        }
        Ok(Some(Staged {
            tree: tree_id,
            files,
        }))
    }
}

impl Workspace {
    /// The tree of the index with `changes` and `verified` staged; `from_base`: the index is
    /// the base's tree, in memory (else the checkout's index, which reads only the files whose
    /// stat data changed).
    pub(super) fn stage_in_index(
        &self,
        changes: &Changes,
        verified: &Verified,
        from_base: bool,
    ) -> Result<git2::Oid> {
        let mut index = self.repo.index().map_err(git("reading the index"))?;
        if from_base {
            let base = self.base_tree()?;
            index
                .read_tree(&base)
                .map_err(git("reading the base tree"))?;
        }
        for (path, deleted) in changes
            .paths
            .iter()
            .filter(|(p, _)| !verified.contains_key(p))
        {
            let at = Path::new(path);
            if *deleted {
                index.remove_path(at).map_err(git("staging deletions"))?;
            } else {
                index.add_path(at).map_err(git("staging changes"))?;
            }
        }
        for (path, bytes) in verified {
            stage_verified(&mut index, path, bytes.as_deref())?;
        }
        index.write_tree().map_err(git("writing the tree"))
    }

    /// The base's tree with `changes` and `verified` written over it: only the changed paths
    /// are read, raw, from the files.
    pub(super) fn stage_on_base(
        &self,
        changes: &Changes,
        verified: &Verified,
    ) -> Result<git2::Oid> {
        let base = self.base_tree()?;
        let mut update = git2::build::TreeUpdateBuilder::new();
        for (path, deleted) in changes
            .paths
            .iter()
            .filter(|(p, _)| !verified.contains_key(p))
        {
            if *deleted {
                update.remove(path.as_str());
                continue;
            }
            let (bytes, mode) = read_raw(&self.root().join(path))?;
            let id = self.repo.blob(&bytes).map_err(git("staging changes"))?;
            update.upsert(path.as_str(), id, mode);
        }
        for (path, bytes) in verified {
            let existing = base.get_path(Path::new(path)).ok();
            match bytes {
                Some(bytes) => {
                    let id = self
                        .repo
                        .blob(bytes)
                        .map_err(git("staging the verified files"))?;
                    let mode = match existing.map(|e| e.filemode()) {
                        Some(0o100755) => git2::FileMode::BlobExecutable,
                        _ => git2::FileMode::Blob,
                    };
                    update.upsert(path.as_str(), id, mode);
                }
                None if existing.is_some() => {
                    update.remove(path.as_str());
                }
                None => {}
            }
        }
        update
            .create_updated(&self.repo, &base)
            .map_err(git("writing the tree"))
    }

    fn base_tree(&self) -> Result<git2::Tree<'_>> {
        self.repo
            .find_commit(self.base)
            .and_then(|c| c.tree())
            .map_err(git("reading the base tree"))
    }
}

/// A changed file's bytes and git mode as they are on disk: a link's target, or a file's
/// content with git's executable bit (the owner's).
fn read_raw(at: &Path) -> Result<(Vec<u8>, git2::FileMode)> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let fail = |source| GitError::Io {
        context: format!("staging {}", at.display()),
        source,
    };
    let meta = std::fs::symlink_metadata(at).map_err(fail)?;
    if meta.is_symlink() {
        let target = std::fs::read_link(at).map_err(fail)?;
        return Ok((target.as_os_str().as_bytes().to_vec(), git2::FileMode::Link));
    }
    let bytes = std::fs::read(at).map_err(fail)?;
    let mode = if meta.permissions().mode() & 0o100 != 0 {
        git2::FileMode::BlobExecutable
    } else {
        git2::FileMode::Blob
    };
    Ok((bytes, mode))
}

/// Stages one verified file from the verifier's bytes (removes it when the verifier found none),
/// keeping the executable bit the base gave it.
fn stage_verified(index: &mut git2::Index, path: &str, bytes: Option<&[u8]>) -> Result<()> {
    let at = Path::new(path);
    let existing = index.get_path(at, 0);
    let Some(bytes) = bytes else {
        if existing.is_some() {
            index.remove_path(at).map_err(git("staging deletions"))?;
        }
        return Ok(());
    };
    let mode = match existing {
        Some(entry) if entry.mode == 0o100755 => 0o100755,
        _ => 0o100644,
    };
    let never = git2::IndexTime::new(0, 0);
    let entry = git2::IndexEntry {
        ctime: never,
        mtime: never,
        dev: 0,
        ino: 0,
        mode,
        uid: 0,
        gid: 0,
        file_size: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
        id: git2::Oid::ZERO_SHA1,
        flags: 0,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    };
    index
        .add_frombuffer(&entry, bytes)
        .map_err(git("staging the verified files"))
}

/// Every verified path of `tree` is a file holding exactly the verifier's bytes, and every path
/// the verifier found absent is absent.
fn confirm(repo: &git2::Repository, tree: git2::Oid, verified: &Verified) -> Result<()> {
    let tree = repo.find_tree(tree).map_err(git("reading the tree"))?;
    for (path, bytes) in verified {
        let entry = tree.get_path(Path::new(path)).ok();
        let holds = match (entry, bytes) {
            (None, None) => true,
            (Some(entry), Some(bytes)) => {
                let id = git2::Oid::hash_object(git2::ObjectType::Blob, bytes)
                    .map_err(git("hashing the verified files"))?;
                entry.kind() == Some(git2::ObjectType::Blob)
                    && matches!(entry.filemode(), 0o100644 | 0o100755)
                    && entry.id() == id
            }
            _ => false,
        };
        if !holds {
            return Err(GitError::NotVerified { path: path.clone() });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
