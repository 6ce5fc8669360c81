//! Removing a directory tree whose permissions a command may have taken away.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

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
