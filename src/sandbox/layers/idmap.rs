//! The user namespaces that idmapped layers are mapped through, one per slot identity, made once
//! per run and kept.
//!
//! The mapping shows uid and gid 0 on disk as the slot's, and the slot's as 0 on disk; overlayfs
//! itself works with the mounter's credentials (root), which are shown as 1 and stored as 1
//! (the work directory's entries and whiteouts, never a file a command reads).

use super::LayerError;
use crate::sandbox::job::SlotIdentity;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Mutex, PoisonError};

static NAMESPACES: Mutex<Vec<(SlotIdentity, Arc<OwnedFd>)>> = Mutex::new(Vec::new());

/// The user namespace that maps `owner` (see the module documentation).
pub(super) fn namespace(owner: SlotIdentity) -> Result<Arc<OwnedFd>, LayerError> {
    let mut known = NAMESPACES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, fd)) = known.iter().find(|(o, _)| *o == owner) {
        return Ok(fd.clone());
    }
    let fd = Arc::new(make(owner).map_err(|source| LayerError::Idmap {
        uid: owner.uid,
        source,
    })?);
    known.push((owner, fd.clone()));
    Ok(fd)
}

/// A child enters a new user namespace and waits; its maps are written from here, and the
/// namespace outlives it through the descriptor.
fn make(owner: SlotIdentity) -> std::io::Result<OwnedFd> {
    let (ready_r, ready_w) = std::io::pipe()?;
    let (hold_r, hold_w) = std::io::pipe()?;
    // SAFETY: the child only makes raw system calls (close, unshare, write, read, _exit), which
    // are async-signal-safe, before it exits: nothing of the parent's threads is touched.
    let child = match unsafe { nix::unistd::fork() }.map_err(std::io::Error::from)? {
        nix::unistd::ForkResult::Child => {
            // SAFETY: see above; every call is a plain system call on descriptors the child owns.
            unsafe {
                // Its copy of the writing end would keep it waiting for ever.
                nix::libc::close(hold_w.as_raw_fd());
                let ok = nix::libc::unshare(nix::libc::CLONE_NEWUSER) == 0;
                nix::libc::write(ready_w.as_raw_fd(), [u8::from(ok)].as_ptr().cast(), 1);
                let mut byte = 0u8;
                nix::libc::read(hold_r.as_raw_fd(), (&raw mut byte).cast(), 1);
                nix::libc::_exit(0)
            }
        }
        nix::unistd::ForkResult::Parent { child } => child,
    };
    drop((ready_w, hold_r));
    let result = map(child.as_raw(), owner, &ready_r);
    drop(hold_w);
    let _ = nix::sys::wait::waitpid(child, None);
    result
}

fn map(pid: i32, owner: SlotIdentity, ready: &std::io::PipeReader) -> std::io::Result<OwnedFd> {
    let mut byte = [0u8];
    std::io::Read::read_exact(&mut &*ready, &mut byte)?;
    if byte[0] != 1 {
        return Err(std::io::Error::other(
            "the child could not make a user namespace",
        ));
    }
    let line = |id: u32| format!("0 {id} 1\n1 0 1\n");
    std::fs::write(format!("/proc/{pid}/uid_map"), line(owner.uid))?;
    std::fs::write(format!("/proc/{pid}/gid_map"), line(owner.gid))?;
    Ok(std::fs::File::open(format!("/proc/{pid}/ns/user"))?.into())
}

/// Idmaps the detached mount `mount` through the user namespace `userns`.
pub(super) fn apply(mount: &OwnedFd, userns: &OwnedFd) -> std::io::Result<()> {
    crate::sandbox::mounts::mount_setattr(
        mount.as_raw_fd(),
        std::path::Path::new(""),
        nix::libc::AT_EMPTY_PATH,
        rustix::mount::MountAttrFlags::MOUNT_ATTR_IDMAP,
        Some(userns.as_raw_fd()),
    )
}
