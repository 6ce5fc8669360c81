//! Claiming sandbox uids on a host where several runs may go at once (a self-hosted runner with
//! two jobs, a GitLab shell executor): each uid a run's slots use is held by a lock on a file of
//! its own in a directory only root can write, for as long as the run lasts. A run whose uid base
//! was not chosen takes the next free range; one whose base was chosen and is taken is refused,
//! naming the flag.

use super::SandboxError;
use std::fs::File;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Where the lock files live: root-owned, on a file system that starts empty at boot.
pub(crate) const CLAIMS_DIR: &str = "/run/quartermaster/uids";
/// Ranges are this far apart: the most slots a run can have (`--jobs` is at most 16).
pub(crate) const RANGE_STRIDE: u32 = 16;
/// How many ranges are tried before giving up.
const RANGES_TRIED: u32 = 64;

/// The uids a run holds; released when dropped (or when the process ends, however it ends).
#[derive(Debug)]
pub(crate) struct UidClaim {
    pub base: u32,
    _locks: Vec<File>,
}

/// Why a range could not be taken.
#[derive(Debug)]
pub(crate) enum Taken {
    /// Another run holds this uid's lock.
    Claimed(u32),
    /// The uid cannot be used for another reason (processes of its own, files it owns).
    Unusable(SandboxError),
}

/// Claims `slots` uids from `base`; when `search`, from the next range up when that one is taken.
/// `check` says whether a uid is otherwise usable (no process, no protected file of its own).
pub(crate) fn claim(
    dir: &Path,
    base: u32,
    slots: u32,
    search: bool,
    check: impl Fn(u32, u32) -> Result<(), SandboxError>,
) -> Result<UidClaim, SandboxError> {
    prepare(dir)?;
    let tries = if search { RANGES_TRIED } else { 1 };
    let mut last = None;
    for n in 0..tries {
        let Some(start) = n
            .checked_mul(RANGE_STRIDE)
            .and_then(|offset| base.checked_add(offset))
            .filter(|s| s.checked_add(slots).is_some_and(|end| end < u32::MAX))
        else {
            break;
        };
        match take_range(dir, start, slots, &check) {
            Ok(locks) => {
                return Ok(UidClaim {
                    base: start,
                    _locks: locks,
                });
            }
            Err(taken) => last = Some(taken),
        }
    }
    Err(match last {
        Some(Taken::Claimed(uid)) if !search => SandboxError::UidClaimed {
            uid,
            lock: dir.join(format!("{uid}.lock")),
        },
        Some(Taken::Unusable(e)) if !search => e,
        _ => SandboxError::NoFreeUids {
            base,
            ranges: tries,
        },
    })
}

/// Locks every uid of the range, or none.
fn take_range(
    dir: &Path,
    start: u32,
    slots: u32,
    check: &impl Fn(u32, u32) -> Result<(), SandboxError>,
) -> Result<Vec<File>, Taken> {
    let mut locks = Vec::new();
    for slot in 0..slots {
        let uid = start + slot;
        let file = lock_file(&dir.join(format!("{uid}.lock")))
            .map_err(|e| Taken::Unusable(SandboxError::io(format!("cannot lock uid {uid}"))(e)))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Err(Taken::Claimed(uid)),
            Err(std::fs::TryLockError::Error(e)) => {
                let context = format!("cannot lock uid {uid}");
                return Err(Taken::Unusable(SandboxError::io(context)(e)));
            }
        }
        // Held from here: no other run can start using the uid while it is checked.
        locks.push(file);
        check(uid, slot).map_err(Taken::Unusable)?;
    }
    Ok(locks)
}

/// Opens (creating) a lock file, never through a symbolic link, and not inherited by the
/// processes Quartermaster starts.
fn lock_file(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags((nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_CLOEXEC).bits())
        .open(path)
}

/// Creates the claims directory (and its parent) if needed, and checks that only this user,
/// root, can write either: a directory someone else controls could hand out false locks.
fn prepare(dir: &Path) -> Result<(), SandboxError> {
    let me = nix::unistd::geteuid().as_raw();
    let parents: Vec<PathBuf> = dir.parent().into_iter().map(Path::to_path_buf).collect();
    for (path, mode) in parents
        .iter()
        .map(|p| (p, 0o755))
        .chain([(&dir.to_path_buf(), 0o700)])
    {
        match std::fs::create_dir(path) {
            Ok(()) => {
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(
                    SandboxError::io(format!("cannot protect {}", path.display())),
                )?
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(SandboxError::io(format!(
                    "cannot create {}",
                    path.display()
                ))(e));
            }
        }
        let meta = std::fs::symlink_metadata(path).map_err(SandboxError::io(format!(
            "cannot inspect {}",
            path.display()
        )))?;
        if !meta.is_dir() || meta.uid() != me || meta.mode() & 0o022 != 0 {
            return Err(SandboxError::ClaimsDir { path: path.clone() });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usable(_: u32, _: u32) -> Result<(), SandboxError> {
        Ok(())
    }

    #[test]
    fn a_taken_range_moves_a_searching_run_up_and_refuses_a_fixed_one() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("quartermaster/uids");
        let first = claim(&dir, 70_000, 4, true, usable).unwrap();
        assert_eq!(first.base, 70_000);
        let second = claim(&dir, 70_000, 2, true, usable).unwrap();
        assert_eq!(second.base, 70_000 + RANGE_STRIDE);
        // Overlapping a held range at another base is refused too: locks are per uid.
        let fixed = claim(&dir, 70_002, 4, false, usable).unwrap_err();
        assert!(
            matches!(fixed, SandboxError::UidClaimed { uid: 70_002, .. }),
            "{fixed}"
        );
        drop(first);
        assert_eq!(claim(&dir, 70_002, 4, false, usable).unwrap().base, 70_002);
    }

    #[test]
    fn an_unusable_uid_is_skipped_when_searching() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("q/uids");
        let busy = |uid: u32, slot: u32| {
            if uid == 70_001 {
                Err(SandboxError::UidBusy {
                    uid,
                    slot,
                    pids: "1".into(),
                })
            } else {
                Ok(())
            }
        };
        assert_eq!(
            claim(&dir, 70_000, 2, true, busy).unwrap().base,
            70_000 + RANGE_STRIDE
        );
        assert!(matches!(
            claim(&dir, 70_000, 2, false, busy).unwrap_err(),
            SandboxError::UidBusy { uid: 70_001, .. }
        ));
        // The range it gave up is free again.
        assert_eq!(claim(&dir, 70_000, 1, false, usable).unwrap().base, 70_000);
    }

    #[test]
    fn the_uid_refusals_name_the_flag_or_say_what_to_do() {
        let refusals = [
            SandboxError::NoFreeUids {
                base: 60_900,
                ranges: RANGES_TRIED,
            },
            SandboxError::ClaimsDir {
                path: PathBuf::from(CLAIMS_DIR),
            },
            SandboxError::UidBusy {
                uid: 60_900,
                slot: 0,
                pids: "12, 13".into(),
            },
            SandboxError::UidOwns {
                uid: 60_900,
                slot: 0,
                path: PathBuf::from("/home/runner"),
            },
        ];
        let messages: Vec<String> = refusals.iter().map(ToString::to_string).collect();
        insta::assert_snapshot!(messages.join("\n"));
    }

    #[test]
    fn a_claims_directory_others_can_write_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("q/uids");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(matches!(
            claim(&dir, 70_000, 1, true, usable).unwrap_err(),
            SandboxError::ClaimsDir { .. }
        ));
    }
}
