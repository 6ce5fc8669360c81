//! Bringing a reused workspace back to exactly a base tree, whatever the last unit's commands left
//! in it: files, directories, symbolic links, hard links, special files and changed modes.
//!
//! libgit2's hard reset restores tracked content (it compares ctime, which a command cannot set
//! back, so a file edited and re-dated is still seen), but it follows neither modes beyond the
//! executable bit nor what sits where a tracked path should be. So a walk of the tree first
//! removes everything the base does not have in that place and form, then the reset restores
//! what is missing, and a status including ignored and untracked files must come back empty.

use super::{GitError, Result, git, io};
use std::collections::HashMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The workspace root's own mode and owner, which no tree entry records: a unit could leave it
/// group-writable or setgid (2775) for the next one.
#[derive(Debug, Clone, Copy)]
pub(super) struct Root {
    mode: u32,
    uid: u32,
    gid: u32,
}

impl Root {
    pub(super) fn of(tree: &Path) -> Result<Root> {
        let meta = std::fs::symlink_metadata(tree).map_err(io("reading the workspace root"))?;
        Ok(Root {
            mode: meta.mode() & 0o7777,
            uid: meta.uid(),
            gid: meta.gid(),
        })
    }

    /// Puts the root's owner, then its mode, back as they were (a change of owner clears the
    /// setuid and setgid bits).
    pub(super) fn restore(&self, tree: &Path) -> Result<()> {
        let now = Root::of(tree)?;
        if !std::fs::symlink_metadata(tree).is_ok_and(|m| m.is_dir()) {
            return Err(GitError::Dirty {
                path: ".".to_string(),
            });
        }
        if (now.uid, now.gid) != (self.uid, self.gid) {
            std::os::unix::fs::lchown(tree, Some(self.uid), Some(self.gid))
                .map_err(io("restoring the workspace root's owner"))?;
        }
        if Root::of(tree)?.mode != self.mode {
            std::fs::set_permissions(tree, std::fs::Permissions::from_mode(self.mode))
                .map_err(io("restoring the workspace root's mode"))?;
        }
        Ok(())
    }
}

/// What the base tree holds at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entry {
    Dir,
    File { executable: bool },
    Link,
}

/// Every path of a tree (directories included), relative to its root.
pub(super) fn entries(tree: &git2::Tree<'_>) -> Result<Entries> {
    let mut map = HashMap::new();
    let mut failed = None;
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        let Ok(name) = entry.name() else {
            failed = Some(format!("{dir}: a name that is not UTF-8"));
            return git2::TreeWalkResult::Abort;
        };
        let kind = match entry.filemode() {
            0o040000 | 0o160000 => Entry::Dir,
            0o100755 => Entry::File { executable: true },
            0o120000 => Entry::Link,
            _ => Entry::File { executable: false },
        };
        map.insert(PathBuf::from(format!("{dir}{name}")), kind);
        git2::TreeWalkResult::Ok
    })
    .map_err(git("reading the base tree"))?;
    if let Some(message) = failed {
        return Err(GitError::Git {
            context: "reading the base tree".into(),
            message,
        });
    }
    Ok(Entries {
        tree: tree.id(),
        map,
    })
}

/// The paths of one tree, kept while the workspace stays on it.
pub(super) struct Entries {
    pub tree: git2::Oid,
    map: HashMap<PathBuf, Entry>,
}

/// Removes from `root` whatever the base does not hold in that place and form, and gives the
/// rest its canonical mode (0755 for directories and executables, 0644 for other files).
pub(super) fn clean(root: &Path, entries: &Entries) -> Result<()> {
    clean_dir(root, Path::new(""), entries).map_err(io("cleaning the workspace"))
}

fn clean_dir(root: &Path, rel: &Path, entries: &Entries) -> std::io::Result<()> {
    let dir = root.join(rel);
    for entry in std::fs::read_dir(&dir)? {
        let entry = entry?;
        let path = entry.path();
        let rel = rel.join(entry.file_name());
        let meta = std::fs::symlink_metadata(&path)?;
        let kind = meta.file_type();
        let keep = match entries.map.get(&rel) {
            Some(Entry::Dir) if kind.is_dir() => Some(0o755),
            Some(Entry::File { executable }) if kind.is_file() && meta.nlink() == 1 => {
                Some(if *executable { 0o755 } else { 0o644 })
            }
            Some(Entry::Link) if kind.is_symlink() => None,
            _ => {
                remove(&path, kind.is_dir())?;
                continue;
            }
        };
        if let Some(mode) = keep
            && meta.mode() & 0o7777 != mode
        {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))?;
        }
        if kind.is_dir() {
            clean_dir(root, &rel, entries)?;
        }
    }
    Ok(())
}

/// Removes a file, link or whole directory, even one whose permissions a command took away.
fn remove(path: &Path, dir: bool) -> std::io::Result<()> {
    if dir {
        crate::tree::remove(path)
    } else {
        std::fs::remove_file(path)
    }
}

/// The first path a status (untracked and ignored files included) still shows, if any. Updates
/// the index's cached file data on the way, so that the next comparison is cheap.
pub(super) fn first_difference(repo: &git2::Repository) -> Result<Option<String>> {
    let mut options = git2::StatusOptions::new();
    options
        .include_untracked(true)
        .include_ignored(true)
        .recurse_untracked_dirs(true)
        .recurse_ignored_dirs(true)
        .update_index(true);
    let statuses = repo
        .statuses(Some(&mut options))
        .map_err(git("checking the workspace"))?;
    Ok(statuses
        .iter()
        .find(|s| s.status() != git2::Status::CURRENT)
        .map(|s| String::from_utf8_lossy(s.path_bytes()).into_owned()))
}

#[cfg(test)]
pub(super) mod tests;
