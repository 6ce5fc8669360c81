//! An upper layer read directly, not through the overlay: the kernel's own records of what
//! changed. A deleted entry is a whiteout (a character device numbered 0:0); a directory
//! deleted and made again, whose lower contents no longer show, is opaque (the
//! `trusted.overlay.opaque` attribute `y`); everything else is the entry as it now reads.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

const OPAQUE: &str = "trusted.overlay.opaque";

/// One entry of an upper layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Node {
    /// What the lower layers have here is deleted.
    Whiteout,
    /// A directory; when opaque, nothing of the lower layers shows inside it.
    Dir { opaque: bool },
    /// A file or a symbolic link.
    Entry,
    /// A fifo, socket or device: never part of a commit.
    Other,
}

/// What the upper layer holds at `path`.
pub(crate) fn node(path: &Path) -> std::io::Result<Node> {
    let meta = std::fs::symlink_metadata(path)?;
    let kind = meta.file_type();
    Ok(if kind.is_char_device() && meta.rdev() == 0 {
        Node::Whiteout
    } else if kind.is_dir() {
        Node::Dir {
            opaque: is_opaque(path),
        }
    } else if kind.is_file() || kind.is_symlink() {
        Node::Entry
    } else {
        Node::Other
    })
}

/// Makes a whiteout at `path`: what the lower layers hold there does not show.
pub(crate) fn whiteout(path: &Path) -> std::io::Result<()> {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::empty(),
        0,
    )
    .map_err(Into::into)
}

/// Makes the directory `path` (0755), opaque: nothing the lower layers hold there shows.
pub(crate) fn opaque_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    rustix::fs::lsetxattr(path, OPAQUE, b"y", rustix::fs::XattrFlags::empty()).map_err(Into::into)
}

fn is_opaque(dir: &Path) -> bool {
    let mut value = [0u8; 4];
    matches!(rustix::fs::lgetxattr(dir, OPAQUE, &mut value), Ok(1) if value[0] == b'y')
}

/// Applies the upper layer `upper` to the plain directory `into`, as the overlay showed it:
/// whiteouts delete, opaque directories replace, the rest is moved over (the upper layer is
/// used up).
pub(super) fn merge(upper: &Path, into: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(upper)? {
        let entry = entry?;
        let (from, to) = (entry.path(), into.join(entry.file_name()));
        match node(&from)? {
            Node::Whiteout => remove(&to)?,
            Node::Dir { opaque } => {
                let is_dir = std::fs::symlink_metadata(&to).is_ok_and(|m| m.is_dir());
                if opaque || !is_dir {
                    remove(&to)?;
                    std::fs::create_dir(&to)?;
                    std::fs::set_permissions(&to, std::fs::metadata(&from)?.permissions())?;
                }
                merge(&from, &to)?;
            }
            Node::Entry => {
                remove(&to)?;
                move_entry(&from, &to)?;
            }
            Node::Other => {}
        }
    }
    Ok(())
}

fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => crate::tree::remove(path),
        Ok(_) => std::fs::remove_file(path),
        Err(_) => Ok(()),
    }
}

/// Renames, or copies where the two sit on different file systems.
fn move_entry(from: &Path, to: &Path) -> std::io::Result<()> {
    match std::fs::rename(from, to) {
        Err(e) if e.raw_os_error() == Some(nix::libc::EXDEV) => {
            let meta = std::fs::symlink_metadata(from)?;
            if meta.is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(from)?, to)
            } else {
                std::fs::copy(from, to).map(|_| ())
            }
        }
        other => other,
    }
}
