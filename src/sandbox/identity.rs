//! The identity a command ends up with: the slot uid (root levels), no capability at all, not
//! even in the bounding set, and `no_new_privs`; then the checks made as that identity.

use super::job::SlotIdentity;
use super::{LaunchError, Level};
use nix::unistd::{AccessFlags, Gid, Uid, access};
use rustix::thread::{CapabilitySet, CapabilitySets};
use std::path::{Path, PathBuf};

/// Drops everything the command must not hold. Runs in the forked command process, after the
/// mounts and before `exec`.
pub(crate) fn drop_privileges(
    level: Level,
    identity: Option<SlotIdentity>,
) -> Result<(), LaunchError> {
    let no_new_privs =
        || nix::sys::prctl::set_no_new_privs().map_err(LaunchError::os("no_new_privs"));
    if level == Level::None {
        return no_new_privs();
    }
    clear_bounding_set()?;
    rustix::thread::clear_ambient_capability_set().map_err(LaunchError::os("ambient set"))?;
    if let Some(SlotIdentity { uid, gid }) = identity {
        let (uid, gid) = (Uid::from_raw(uid), Gid::from_raw(gid));
        nix::unistd::setgroups(&[]).map_err(LaunchError::call("setgroups"))?;
        nix::unistd::setresgid(gid, gid, gid).map_err(LaunchError::call("setresgid"))?;
        nix::unistd::setresuid(uid, uid, uid).map_err(LaunchError::call("setresuid"))?;
    }
    // A uid change from root already empties these; in a user namespace, where the command keeps
    // the operator's uid, this is what takes the namespace's capabilities away before `exec`.
    let none = CapabilitySets {
        effective: CapabilitySet::empty(),
        permitted: CapabilitySet::empty(),
        inheritable: CapabilitySet::empty(),
    };
    rustix::thread::set_capabilities(None, none).map_err(LaunchError::os("capset"))?;
    no_new_privs()?;
    verify(identity)
}

/// Every capability up to the kernel's last one leaves the bounding set, so that no setuid or
/// file-capability binary can hand one back.
fn clear_bounding_set() -> Result<(), LaunchError> {
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63)
        .min(63);
    for cap in 0..=last {
        let set = CapabilitySet::from_bits_retain(1 << cap);
        rustix::thread::remove_capability_from_bounding_set(set).map_err(|e| {
            LaunchError::BoundingSet {
                cap,
                source: e.into(),
            }
        })?;
    }
    Ok(())
}

fn verify(identity: Option<SlotIdentity>) -> Result<(), LaunchError> {
    let caps = rustix::thread::capabilities(None).map_err(LaunchError::os("capget"))?;
    if !(caps.effective | caps.permitted | caps.inheritable).is_empty() {
        return Err(LaunchError::CapabilitiesHeld);
    }
    if let Some(SlotIdentity { uid, .. }) = identity {
        let ids = nix::unistd::getresuid().map_err(LaunchError::call("getresuid"))?;
        if [ids.real, ids.effective, ids.saved] != [Uid::from_raw(uid); 3] {
            return Err(LaunchError::UidSwitch(uid));
        }
    }
    Ok(())
}

/// The first protected path the current identity can read or write, and how.
pub(crate) fn first_reachable(protected: &[PathBuf]) -> Option<(PathBuf, &'static str)> {
    protected.iter().find_map(|path| {
        if access(path.as_path(), AccessFlags::R_OK).is_ok() {
            Some((path.clone(), "readable"))
        } else if access(path.as_path(), AccessFlags::W_OK).is_ok() {
            Some((path.clone(), "writable"))
        } else {
            None
        }
    })
}

/// Finds `program` as `execvp` would for the current identity: a name with a slash is taken as
/// given, otherwise the first executable regular file along `path`.
pub(crate) fn resolve(program: &str, path: Option<&str>) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    path?
        .split(':')
        .filter(|dir| !dir.is_empty())
        .map(|dir| Path::new(dir).join(program))
        .find(|candidate| {
            candidate.is_file() && access(candidate.as_path(), AccessFlags::X_OK).is_ok()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution_follows_path_order_and_skips_what_is_missing() {
        let found = resolve("sh", Some("/nonexistent::/bin:/usr/bin")).unwrap();
        assert!(found.ends_with("sh") && found.starts_with("/"), "{found:?}");
        assert_eq!(resolve("qm-no-such-program", Some("/bin")), None);
        assert_eq!(resolve("./x", None), Some(PathBuf::from("./x")));
    }
}
