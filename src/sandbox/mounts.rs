//! The file-system view of a namespaced command, built by its PID namespace's init with the new
//! mount API: a fresh `/proc`; everything read-only; fresh `/tmp`, `/var/tmp`, `/dev/shm`;
//! hidden paths covered by empty read-only tmpfs (or a mode-000 file); and only the unit's own
//! directories, writable, plus toolchains, read-only, put back in view.
//!
//! Mounts made here cannot be undone by the command: it holds no capability once it `exec`s, and
//! in any user namespace it creates, the kernel locks the mounts it inherits together.

use super::LaunchError;
use super::job::{Exposure, MountPlan};
use nix::errno::Errno;
use nix::fcntl::{AT_FDCWD, OFlag};
use nix::libc;
use nix::mount::MsFlags;
use nix::sys::stat::Mode;
use rustix::mount::{FsMountFlags, FsOpenFlags, MountAttrFlags, MoveMountFlags, OpenTreeFlags};
use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Makes every mount of the current mount namespace private: nothing mounted here propagates to
/// the namespace it was copied from, nor the other way.
pub(crate) fn make_private() -> nix::Result<()> {
    let none: Option<&str> = None;
    nix::mount::mount(none, "/", none, MsFlags::MS_PRIVATE | MsFlags::MS_REC, none)
}

/// Applies `plan` to the current mount namespace (which must be private to this command).
pub(crate) fn apply(plan: &MountPlan, caches: Option<OwnedFd>) -> Result<(), LaunchError> {
    let none: Option<&str> = None;
    make_private().map_err(LaunchError::os("making mounts private"))?;
    // Cloned while the file system is still as it was: the covers and the read-only switch
    // below do not reach these detached copies.
    let mut clones = plan
        .expose
        .iter()
        .filter(|e| e.path.exists())
        .map(clone)
        .collect::<Result<Vec<_>, _>>()?;
    // The unit's cache overlay, writable, goes in view like an exposure.
    if let (Some(path), Some(fd)) = (&plan.caches, caches) {
        clones.push(Clone {
            path: path.clone(),
            is_dir: true,
            fd,
        });
    }
    set_read_only(libc::AT_FDCWD, Path::new("/"), libc::AT_RECURSIVE)
        .map_err(LaunchError::os("making the file system read-only"))?;
    // After the switch to read-only, so that /proc stays writable as on any system (tools
    // write /proc/self/*); it shows only this namespace's processes.
    nix::mount::mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        none,
    )
    .map_err(LaunchError::os("mounting a fresh /proc"))?;
    let mut mask = None;
    for op in ordered(plan, &clones) {
        match op {
            Op::Fresh(path) => cover(path, Cover::Fresh(plan.fresh_size), &clones)?,
            Op::Hide(path) if path.is_dir() => {
                let inner = clones
                    .iter()
                    .any(|c| c.path.starts_with(path) && c.path != path);
                cover(path, Cover::Hide { traversable: inner }, &clones)?;
            }
            Op::Hide(path) if path.symlink_metadata().is_ok() => {
                if mask.is_none() {
                    mask = Some(mask_source()?);
                }
                if let Some(mask) = &mask {
                    hide_file(mask, path)?;
                }
            }
            // Already out of view (under an earlier cover), or absent: nothing to hide.
            Op::Hide(_) => {}
            Op::Attach(clone) => attach(clone)?,
        }
    }
    Ok(())
}

/// A detached copy of an exposed tree, read-only unless it is one of the unit's own directories.
struct Clone {
    path: PathBuf,
    is_dir: bool,
    fd: OwnedFd,
}

fn clone(exposure: &Exposure) -> Result<Clone, LaunchError> {
    let fd = rustix::mount::open_tree(
        AT_FDCWD,
        exposure.path.as_path(),
        OpenTreeFlags::OPEN_TREE_CLONE
            | OpenTreeFlags::OPEN_TREE_CLOEXEC
            | OpenTreeFlags::AT_RECURSIVE,
    )
    .map_err(LaunchError::os_at("cloning", &exposure.path))?;
    if !exposure.writable {
        set_read_only(
            fd.as_raw_fd(),
            Path::new(""),
            libc::AT_EMPTY_PATH | libc::AT_RECURSIVE,
        )
        .map_err(|source| LaunchError::ReadOnly {
            path: exposure.path.clone(),
            source,
        })?;
    }
    Ok(Clone {
        path: exposure.path.clone(),
        is_dir: exposure.path.is_dir(),
        fd,
    })
}

enum Op<'a> {
    Fresh(&'a Path),
    Hide(&'a Path),
    Attach(&'a Clone),
}

/// Outer paths first, so that what is inside a cover goes on top of it; at the same path a
/// cover goes on top of an exposure, so hiding wins.
fn ordered<'a>(plan: &'a MountPlan, clones: &'a [Clone]) -> Vec<Op<'a>> {
    let mut ops: Vec<(usize, u8, Op<'a>)> = Vec::new();
    let depth = |p: &Path| p.components().count();
    ops.extend(
        plan.fresh
            .iter()
            .map(|p| (depth(p), 1, Op::Fresh(p.as_path()))),
    );
    ops.extend(
        plan.hide
            .iter()
            .map(|p| (depth(p), 1, Op::Hide(p.as_path()))),
    );
    ops.extend(clones.iter().map(|c| (depth(&c.path), 0, Op::Attach(c))));
    ops.sort_by_key(|(depth, rank, _)| (*depth, *rank));
    ops.into_iter().map(|(_, _, op)| op).collect()
}

/// What an empty tmpfs mounted over a directory is for.
enum Cover {
    /// A fresh, writable directory for everyone (`/tmp`), of this many bytes at most.
    Fresh(Option<u64>),
    /// A read-only cover of a hidden directory: traversable (not listable) when exposures sit
    /// inside, else no access at all.
    Hide { traversable: bool },
}

/// Mounts an empty tmpfs on `target` for `kind`, holding the mountpoints the exposures inside it
/// need.
fn cover(target: &Path, kind: Cover, clones: &[Clone]) -> Result<(), LaunchError> {
    let (mode, size, read_only) = match kind {
        Cover::Fresh(size) => (0o1777, size, false),
        Cover::Hide { traversable } => (if traversable { 0o111 } else { 0 }, None, true),
    };
    if !target.is_dir() {
        return Ok(());
    }
    let fail = |step| LaunchError::os_at::<rustix::io::Errno>(step, target);
    let fs = rustix::mount::fsopen("tmpfs", FsOpenFlags::FSOPEN_CLOEXEC)
        .map_err(fail("creating a tmpfs for"))?;
    rustix::mount::fsconfig_set_string(&fs, "mode", format!("{mode:o}"))
        .map_err(fail("configuring the tmpfs for"))?;
    if let Some(size) = size {
        rustix::mount::fsconfig_set_string(&fs, "size", size.to_string())
            .map_err(fail("sizing the tmpfs for"))?;
    }
    rustix::mount::fsconfig_create(&fs).map_err(fail("creating the tmpfs for"))?;
    let mnt = rustix::mount::fsmount(
        &fs,
        FsMountFlags::FSMOUNT_CLOEXEC,
        MountAttrFlags::MOUNT_ATTR_NOSUID | MountAttrFlags::MOUNT_ATTR_NODEV,
    )
    .map_err(fail("mounting the tmpfs for"))?;
    for clone in clones {
        if let Ok(rel) = clone.path.strip_prefix(target)
            && !rel.as_os_str().is_empty()
        {
            mountpoint(&mnt, rel, clone.is_dir)
                .map_err(LaunchError::os_at::<Errno>("preparing", target))?;
        }
    }
    if read_only {
        set_read_only(mnt.as_raw_fd(), Path::new(""), libc::AT_EMPTY_PATH).map_err(|source| {
            LaunchError::CoverReadOnly {
                path: target.to_path_buf(),
                source,
            }
        })?;
    }
    rustix::mount::move_mount(
        &mnt,
        "",
        AT_FDCWD,
        target,
        MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
    )
    .map_err(fail("covering"))
}

/// Creates the directories (and, for a file, the empty file) an exposure is mounted on.
fn mountpoint(mnt: &OwnedFd, rel: &Path, is_dir: bool) -> Result<(), Errno> {
    let mut sofar = PathBuf::new();
    let count = rel.components().count();
    for (i, part) in rel.components().enumerate() {
        sofar.push(part);
        if i + 1 == count && !is_dir {
            let flags = OFlag::O_CREAT | OFlag::O_WRONLY | OFlag::O_CLOEXEC;
            nix::fcntl::openat(mnt, &sofar, flags, Mode::from_bits_truncate(0o644))?;
        } else {
            match nix::sys::stat::mkdirat(mnt, &sofar, Mode::from_bits_truncate(0o755)) {
                Ok(()) | Err(Errno::EEXIST) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

/// A detached, read-only tmpfs holding one empty mode-000 file, bound over hidden files.
fn mask_source() -> Result<OwnedFd, LaunchError> {
    let fail = || LaunchError::os::<rustix::io::Errno>("creating the file mask");
    let fs = rustix::mount::fsopen("tmpfs", FsOpenFlags::FSOPEN_CLOEXEC).map_err(fail())?;
    rustix::mount::fsconfig_create(&fs).map_err(fail())?;
    let mnt = rustix::mount::fsmount(&fs, FsMountFlags::FSMOUNT_CLOEXEC, MountAttrFlags::empty())
        .map_err(fail())?;
    let flags = OFlag::O_CREAT | OFlag::O_WRONLY | OFlag::O_CLOEXEC;
    nix::fcntl::openat(&mnt, "masked", flags, Mode::empty())
        .map_err(LaunchError::os("creating the file mask"))?;
    set_read_only(mnt.as_raw_fd(), Path::new(""), libc::AT_EMPTY_PATH)
        .map_err(LaunchError::os("creating the file mask"))?;
    Ok(mnt)
}

fn hide_file(mask: &OwnedFd, target: &Path) -> Result<(), LaunchError> {
    let fail = || LaunchError::os_at::<rustix::io::Errno>("hiding", target);
    let copy = rustix::mount::open_tree(
        mask,
        "masked",
        OpenTreeFlags::OPEN_TREE_CLONE | OpenTreeFlags::OPEN_TREE_CLOEXEC,
    )
    .map_err(fail())?;
    rustix::mount::move_mount(
        &copy,
        "",
        AT_FDCWD,
        target,
        MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
    )
    .map_err(fail())
}

fn attach(clone: &Clone) -> Result<(), LaunchError> {
    rustix::mount::move_mount(
        &clone.fd,
        "",
        AT_FDCWD,
        clone.path.as_path(),
        MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
    )
    .map_err(LaunchError::os_at("exposing", &clone.path))
}

/// `mount_setattr(2)` with `MOUNT_ATTR_RDONLY`: it is the one call that makes a whole mount tree
/// read-only at once (the alternative, one bind remount per line of mountinfo, must also replay
/// each mount's locked flags).
fn set_read_only(dirfd: libc::c_int, path: &Path, flags: libc::c_int) -> std::io::Result<()> {
    mount_setattr(dirfd, path, flags, MountAttrFlags::MOUNT_ATTR_RDONLY, None)
}

/// `mount_setattr(2)`, which neither nix nor rustix wraps: sets `attr` on the mount at `path`
/// from `dirfd`, idmapped through the user namespace `userns` when given.
pub(super) fn mount_setattr(
    dirfd: libc::c_int,
    path: &Path,
    flags: libc::c_int,
    attr: MountAttrFlags,
    userns: Option<libc::c_int>,
) -> std::io::Result<()> {
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    let attr = MountAttr {
        attr_set: u64::from(attr.bits()),
        attr_clr: 0,
        propagation: 0,
        userns_fd: userns.map_or(0, |fd| u64::try_from(fd).unwrap_or(u64::MAX)),
    };
    let path = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: mount_setattr reads `size_of::<MountAttr>()` bytes from `attr`, a live and fully
    // initialised #[repr(C)] value of the kernel's `struct mount_attr` layout, and a
    // NUL-terminated path; it writes nothing into this process's memory.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            path.as_ptr(),
            flags,
            &attr as *const MountAttr,
            size_of::<MountAttr>(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
