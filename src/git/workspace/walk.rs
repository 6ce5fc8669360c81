//! What the commands changed in a layered workspace, read from its upper layer alone: every
//! entry there is compared with the workspace's base commit (an entry can be there and equal to
//! it: a file rewritten with the same bytes, or re-moded), whiteouts and opaque directories
//! delete what the base has below them, and a new directory the ignore rules hide is listed once
//! without entering it, as a status walk lists it. The cost follows what changed.

use super::stage::Changes;
use crate::git::{GitError, MAX_CHANGED_FILES, Result, git};
use crate::sandbox::layers::upper::{self, Node};
use std::collections::BTreeSet;
use std::path::Path;

/// The base's entry at a path, as the walk needs it.
#[derive(Clone, Copy)]
enum Base {
    Dir(git2::Oid),
    Blob {
        id: git2::Oid,
        mode: i32,
    },
    /// A submodule: its directory is never part of a commit.
    Gitlink,
}

fn base_entry(entry: &git2::TreeEntry<'_>) -> Base {
    match entry.kind() {
        Some(git2::ObjectType::Tree) => Base::Dir(entry.id()),
        Some(git2::ObjectType::Commit) => Base::Gitlink,
        _ => Base::Blob {
            id: entry.id(),
            mode: entry.filemode(),
        },
    }
}

struct Walk<'r> {
    /// The workspace's repository, whose work tree shows the files (for the ignore rules).
    repo: &'r git2::Repository,
    changes: Changes,
}

/// What the commands changed, from the upper layer `upper` of a workspace at `base`.
pub(super) fn changes(repo: &git2::Repository, base: git2::Oid, upper: &Path) -> Result<Changes> {
    let tree = repo
        .find_commit(base)
        .and_then(|c| c.tree())
        .map_err(git("reading the base tree"))?;
    let mut walk = Walk {
        repo,
        changes: Changes::default(),
    };
    walk.dir(upper, "", Some(tree.id()), false)?;
    walk.changes.paths.sort();
    walk.changes.ignored.sort();
    Ok(walk.changes)
}

impl Walk<'_> {
    /// One directory of the upper layer, at `rel` (empty, or ending with `/`), over the base's
    /// directory `base` (none where the base has no directory there). Below an opaque directory
    /// the lower layers show nothing: what the base has there and the upper layer lacks is gone.
    fn dir(&mut self, at: &Path, rel: &str, base: Option<git2::Oid>, opaque: bool) -> Result<()> {
        let tree = match base {
            Some(id) => Some(
                self.repo
                    .find_tree(id)
                    .map_err(git("reading the base tree"))?,
            ),
            None => None,
        };
        let mut seen = BTreeSet::new();
        let entries = std::fs::read_dir(at).map_err(read_error(at))?;
        for entry in entries {
            let entry = entry.map_err(read_error(at))?;
            let name = entry
                .file_name()
                .into_string()
                .map_err(|n| not_utf8(rel, &n))?;
            let path = format!("{rel}{name}");
            let below = tree
                .as_ref()
                .and_then(|t| t.get_name(&name))
                .map(|e| base_entry(&e));
            seen.insert(name);
            self.entry(&entry.path(), &path, below, opaque)?;
        }
        if let (true, Some(tree)) = (opaque, &tree) {
            for entry in tree.iter() {
                let name = String::from_utf8_lossy(entry.name_bytes()).into_owned();
                if !seen.contains(&name) {
                    self.deleted(&format!("{rel}{name}"), base_entry(&entry))?;
                }
            }
        }
        Ok(())
    }

    fn entry(&mut self, at: &Path, path: &str, base: Option<Base>, opaque: bool) -> Result<()> {
        let node = match upper::node(at).map_err(read_error(at))? {
            Node::Entry => entry_kind(at)?,
            Node::Whiteout => Kind::Whiteout,
            Node::Dir { opaque } => Kind::Dir { opaque },
            Node::Other => Kind::Other,
        };
        match (node, base) {
            (_, Some(Base::Gitlink)) | (Kind::Other, _) | (Kind::Whiteout, None) => Ok(()),
            (Kind::Whiteout, Some(base)) => self.deleted(path, base),
            (Kind::Dir { opaque: own }, Some(Base::Dir(id))) => {
                self.dir(at, &format!("{path}/"), Some(id), opaque || own)
            }
            (Kind::Dir { .. }, base) => {
                if let Some(base) = base {
                    self.deleted(path, base)?;
                }
                if self.ignored(&format!("{path}/"))? {
                    self.changes.ignored.push(format!("{path}/"));
                    return Ok(());
                }
                self.dir(at, &format!("{path}/"), None, true)
            }
            (Kind::File { executable }, Some(Base::Blob { id, mode })) => {
                let same_mode = (mode == 0o100755) == executable && mode != 0o120000;
                if !same_mode || hash(at)? != id {
                    self.push(path, false)?;
                }
                Ok(())
            }
            (Kind::Link, Some(Base::Blob { id, mode })) => {
                if mode != 0o120000 || hash(at)? != id {
                    self.push(path, false)?;
                }
                Ok(())
            }
            (Kind::File { .. } | Kind::Link, base) => {
                if let Some(base) = base {
                    self.deleted(path, base)?;
                }
                if self.ignored(path)? {
                    self.changes.ignored.push(path.to_string());
                    Ok(())
                } else {
                    self.push(path, false)
                }
            }
        }
    }

    /// Every file the base has at `path` (one, or all below a directory) is deleted.
    fn deleted(&mut self, path: &str, base: Base) -> Result<()> {
        match base {
            Base::Blob { .. } => self.push(path, true),
            Base::Gitlink => Ok(()),
            Base::Dir(id) => {
                let tree = self
                    .repo
                    .find_tree(id)
                    .map_err(git("reading the base tree"))?;
                for entry in tree.iter() {
                    let name = String::from_utf8_lossy(entry.name_bytes());
                    self.deleted(&format!("{path}/{name}"), base_entry(&entry))?;
                }
                Ok(())
            }
        }
    }

    fn push(&mut self, path: &str, deleted: bool) -> Result<()> {
        self.changes.paths.push((path.to_string(), deleted));
        if self.changes.paths.len() > MAX_CHANGED_FILES {
            return Err(GitError::TooManyChanges {
                count: self.changes.paths.len(),
            });
        }
        Ok(())
    }

    /// Whether the ignore rules, as the files now show them, hide `path` (a directory when it
    /// ends with `/`).
    fn ignored(&self, path: &str) -> Result<bool> {
        self.repo
            .is_path_ignored(path)
            .map_err(git("reading the ignore rules"))
    }
}

/// An upper layer's entry as the walk compares it with the base.
#[derive(Clone, Copy)]
enum Kind {
    Whiteout,
    Dir { opaque: bool },
    File { executable: bool },
    Link,
    Other,
}

/// A file (with git's executable bit: the owner's) or a link.
fn entry_kind(at: &Path) -> Result<Kind> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(at).map_err(read_error(at))?;
    Ok(if meta.is_symlink() {
        Kind::Link
    } else {
        Kind::File {
            executable: meta.permissions().mode() & 0o100 != 0,
        }
    })
}

/// Git's id of what is at `at`: a file's bytes, or a link's target.
fn hash(at: &Path) -> Result<git2::Oid> {
    let meta = std::fs::symlink_metadata(at).map_err(read_error(at))?;
    let bytes = if meta.is_symlink() {
        use std::os::unix::ffi::OsStrExt;
        std::fs::read_link(at)
            .map_err(read_error(at))?
            .as_os_str()
            .as_bytes()
            .to_vec()
    } else {
        std::fs::read(at).map_err(read_error(at))?
    };
    git2::Oid::hash_object(git2::ObjectType::Blob, &bytes).map_err(git("hashing a changed file"))
}

fn read_error(at: &Path) -> impl FnOnce(std::io::Error) -> GitError {
    let context = format!("reading the upper layer at {}", at.display());
    move |source| GitError::Io { context, source }
}

fn not_utf8(rel: &str, name: &std::ffi::OsStr) -> GitError {
    GitError::Git {
        context: "finding the changes".into(),
        message: format!(
            "the commands wrote a path that is not UTF-8: {rel}{}",
            name.to_string_lossy()
        ),
    }
}
