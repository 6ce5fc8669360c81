//! What protects paths when there is no mount namespace (root in a container), and what checks
//! that protected files are still what they were.
//!
//! Permissions: the slot uid is neither the owner nor in the group of what the sandbox protects,
//! so removing the "other" bits of a path takes it out of reach, its whole tree for a directory.
//! The exact modes are recorded and put back when the sandbox ends or the run is interrupted.

use super::SandboxError;
use sha2::{Digest, Sha256};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// Every mode changed and not yet restored, for [`restore_all`] on interrupt.
static CHANGED: Mutex<Vec<(PathBuf, u32)>> = Mutex::new(Vec::new());

/// Restores the modes it changed when dropped.
#[derive(Debug)]
pub(crate) struct PermissionGuard {
    paths: Vec<PathBuf>,
}

impl PermissionGuard {
    /// Removes the "other" permission bits from each existing path. A failure is not fatal here:
    /// every command checks, as its own identity, that it cannot reach these paths.
    pub(crate) fn restrict(paths: &[PathBuf]) -> PermissionGuard {
        let mut changed = CHANGED.lock().unwrap_or_else(PoisonError::into_inner);
        let mut mine = Vec::new();
        for path in paths {
            let Ok(meta) = std::fs::metadata(path) else {
                continue;
            };
            let mode = meta.permissions().mode() & 0o7777;
            if mode & 0o007 == 0 || changed.iter().any(|(p, _)| p == path) {
                continue;
            }
            let narrowed = std::fs::Permissions::from_mode(mode & !0o007);
            if std::fs::set_permissions(path, narrowed).is_ok() {
                changed.push((path.clone(), mode));
                mine.push(path.clone());
            }
        }
        PermissionGuard { paths: mine }
    }
}

impl Drop for PermissionGuard {
    fn drop(&mut self) {
        let mut changed = CHANGED.lock().unwrap_or_else(PoisonError::into_inner);
        changed.retain(|(path, mode)| {
            if self.paths.contains(path) {
                let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode));
                false
            } else {
                true
            }
        });
    }
}

/// Puts back every mode still changed (the run is being interrupted and will exit).
pub(crate) fn restore_all() {
    let mut changed = CHANGED.lock().unwrap_or_else(PoisonError::into_inner);
    for (path, mode) in changed.drain(..) {
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode));
    }
}

/// The directories of the live sandboxes: on interrupt, the process exits without dropping them,
/// and a unit's seeded configuration may hold a private registry's credentials.
static ROOTS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Keeps a sandbox directory listed for [`remove_roots`] while it lives.
#[derive(Debug)]
pub(crate) struct RootGuard(PathBuf);

impl RootGuard {
    pub(crate) fn new(root: &Path) -> RootGuard {
        let mut roots = ROOTS.lock().unwrap_or_else(PoisonError::into_inner);
        roots.push(root.to_path_buf());
        RootGuard(root.to_path_buf())
    }
}

impl Drop for RootGuard {
    fn drop(&mut self) {
        let mut roots = ROOTS.lock().unwrap_or_else(PoisonError::into_inner);
        roots.retain(|root| *root != self.0);
    }
}

/// Removes every live sandbox directory (the run is being interrupted and will exit).
pub(crate) fn remove_roots() {
    let mut roots = ROOTS.lock().unwrap_or_else(PoisonError::into_inner);
    for root in roots.drain(..) {
        let _ = super::layout::remove_tree(&root);
    }
}

/// Size, modification time and content hash of a file; `None` for a missing one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fingerprint {
    size: u64,
    mtime: (i64, i64),
    sha256: Vec<u8>,
}

fn fingerprint(path: &Path) -> Option<Fingerprint> {
    let meta = std::fs::metadata(path).ok()?;
    let bytes = std::fs::read(path).ok()?;
    Some(Fingerprint {
        size: meta.len(),
        mtime: (meta.mtime(), meta.mtime_nsec()),
        sha256: Sha256::digest(&bytes).to_vec(),
    })
}

/// Files whose fingerprints must not change while commands run. A directory stands for the
/// files directly in it, and a file appearing in it counts as a change.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    files: Vec<(PathBuf, Option<Fingerprint>)>,
    dirs: Vec<(PathBuf, Vec<PathBuf>)>,
}

fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

impl Watch {
    pub(crate) fn new(paths: &[PathBuf]) -> Watch {
        let mut watch = Watch::default();
        for path in paths {
            if path.is_dir() {
                let names = listing(path);
                watch
                    .files
                    .extend(names.iter().map(|f| (f.clone(), fingerprint(f))));
                watch.dirs.push((path.clone(), names));
            } else {
                watch.files.push((path.clone(), fingerprint(path)));
            }
        }
        watch
    }

    /// The first path that changed, and how.
    pub(crate) fn changed(&self) -> Option<(PathBuf, &'static str)> {
        for (path, before) in &self.files {
            let now = fingerprint(path);
            let what = match (before, &now) {
                (Some(_), None) => "removed",
                (None, Some(_)) => "created",
                (Some(b), Some(n)) if b.size != n.size => "size",
                (Some(b), Some(n)) if b.mtime != n.mtime => "modification time",
                (Some(b), Some(n)) if b.sha256 != n.sha256 => "content",
                _ => continue,
            };
            return Some((path.clone(), what));
        }
        self.dirs
            .iter()
            .find_map(|(dir, names)| (listing(dir) != *names).then(|| (dir.clone(), "new file")))
    }

    /// The runner's file-command files, as a typed error.
    pub(crate) fn verify_file_commands(&self) -> Result<(), SandboxError> {
        match self.changed() {
            Some((path, what)) => Err(SandboxError::FileCommandChanged { path, what }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_names_how_a_file_changed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("env");
        std::fs::write(&file, "A=1\n").unwrap();
        let watch = Watch::new(std::slice::from_ref(&file));
        assert_eq!(watch.changed(), None);
        std::fs::write(&file, "A=2\n").unwrap();
        let err = watch.verify_file_commands().unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "a sandboxed command changed the runner's file-command file {}",
                file.display()
            )),
            "{err}"
        );
        let dir_watch = Watch::new(&[dir.path().to_path_buf()]);
        std::fs::write(dir.path().join("new"), "").unwrap();
        assert_eq!(
            dir_watch.changed(),
            Some((dir.path().to_path_buf(), "new file"))
        );
    }

    #[test]
    fn a_changed_content_of_the_same_size_and_time_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out");
        std::fs::write(&file, "x=1").unwrap();
        let before = std::fs::metadata(&file).unwrap().modified().unwrap();
        let watch = Watch::new(std::slice::from_ref(&file));
        std::fs::write(&file, "x=2").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(before)
            .unwrap();
        assert_eq!(watch.changed(), Some((file, "content")));
    }
}
