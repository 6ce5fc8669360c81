//! Removing a directory tree whose permissions a command may have taken away, now or on a
//! thread of its own.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;

/// The removals going on in the background.
static PENDING: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(0);

/// Frees `path` at once and removes what it held on a thread of its own: the tree is renamed
/// beside itself (so on the same file system) first. A unit's layer can hold a whole
/// `node_modules/`, whose removal on a slow disk takes seconds the next unit need not wait.
pub(crate) fn remove_later(path: &Path) -> std::io::Result<()> {
    let Some(parent) = path.parent() else {
        return remove(path);
    };
    let doomed = parent.join(format!(
        ".removing-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    ));
    match std::fs::rename(path, &doomed) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    }
    let handle = std::thread::spawn(move || {
        let _ = remove(&doomed);
    });
    PENDING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(handle);
    Ok(())
}

/// Waits for every removal [`remove_later`] started.
pub(crate) fn finish_removals() {
    let pending = std::mem::take(&mut *PENDING.lock().unwrap_or_else(PoisonError::into_inner));
    for handle in pending {
        let _ = handle.join();
    }
}

/// Removes `path` and everything below it, opening up directories a command made unreadable or
/// unwritable (the owner, or root, can always give them back).
pub(crate) fn remove(path: &Path) -> std::io::Result<()> {
    if std::fs::remove_dir_all(path).is_ok() || std::fs::symlink_metadata(path).is_err() {
        return Ok(());
    }
    open_up(path);
    std::fs::remove_dir_all(path)
}

fn open_up(path: &Path) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.is_dir() {
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700));
        for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
            open_up(&entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_removed_later_frees_its_path_at_once_and_is_gone_after() {
        let root = tempfile::tempdir().unwrap();
        let tree = root.path().join("upper");
        std::fs::create_dir_all(tree.join("node_modules/x")).unwrap();
        std::fs::write(tree.join("node_modules/x/i.js"), "1").unwrap();
        std::fs::set_permissions(tree.join("node_modules"), PermissionsExt::from_mode(0o000))
            .unwrap();
        remove_later(&tree).unwrap();
        assert!(
            std::fs::symlink_metadata(&tree).is_err(),
            "the path is free"
        );
        std::fs::create_dir(&tree).unwrap();
        finish_removals();
        let left: Vec<_> = std::fs::read_dir(root.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "only the new tree is left");
        assert!(remove_later(&root.path().join("absent")).is_ok());
    }
}
