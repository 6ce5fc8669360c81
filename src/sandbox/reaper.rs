//! Ending every process a command started, whatever it forked or `setsid`'d. In namespaced
//! levels the PID namespace does it (its init's exit kills the rest); without namespaces, as
//! root, a process holding the slot uid kills everything of that uid until `/proc` shows none;
//! with no sandbox at all, the helper's descendants are frozen, then killed.

use super::LaunchError;
use super::job::{Report, SlotIdentity, StatusPipe};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, kill};
use nix::sys::signalfd::SignalFd;
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Gid, Pid, Uid};
use std::collections::{BTreeMap, BTreeSet};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

/// How long the helper waits for killed processes to be gone before it reports survivors.
const KILL_PATIENCE: Duration = Duration::from_secs(5);

/// Live processes (zombies are dead) whose real, effective or saved uid is `uid`, but `except`.
pub(crate) fn processes_of(uid: u32, except: i32) -> Result<Vec<i32>, LaunchError> {
    let all = procfs::process::all_processes().map_err(|source| LaunchError::Proc {
        what: "/proc",
        source,
    })?;
    Ok(all
        .flatten()
        .filter(|p| p.pid != except)
        .filter_map(|p| {
            // The status file, not the owner of /proc/<pid>: a process that made itself
            // non-dumpable shows as root there.
            let status = p.status().ok()?;
            let owned = [status.ruid, status.euid, status.suid].contains(&uid);
            let dead = status.state.starts_with(['Z', 'X']);
            (owned && !dead).then_some(p.pid)
        })
        .collect())
}

/// In the helper (root, the command's subreaper), once the command has ended: forks a killer
/// that takes the slot uid and signals `-1`, which reaches every process of that uid and no
/// other, stopping then killing them; the helper then reaps until it has no child left.
///
/// Every process of the slot uid descends from the command (the uid had none when the sandbox
/// started), and orphans are reparented to the helper, so once the helper has no child, none is
/// left. `/proc` is read only when something did outlive the command, to confirm and to name
/// survivors.
pub(crate) fn sweep_uid(
    identity: SlotIdentity,
    leftovers: bool,
    signals: &SignalFd,
    status: &StatusPipe,
) -> Result<(), LaunchError> {
    // SAFETY: the helper is single-threaded, so the child may do anything after fork.
    match unsafe { nix::unistd::fork() }.map_err(LaunchError::call("fork"))? {
        ForkResult::Child => std::process::exit(killer(identity, status)),
        ForkResult::Parent { .. } => {}
    }
    let emptied = reap_all(signals, KILL_PATIENCE);
    if leftovers || !emptied {
        let left = processes_of(identity.uid, -1)?;
        if !left.is_empty() {
            status.send(&Report::Survivors(left));
        }
    }
    Ok(())
}

fn killer(identity: SlotIdentity, status: &StatusPipe) -> i32 {
    let (uid, gid) = (Uid::from_raw(identity.uid), Gid::from_raw(identity.gid));
    let became = nix::unistd::setgroups(&[])
        .and_then(|()| nix::unistd::setresgid(gid, gid, gid))
        .and_then(|()| nix::unistd::setresuid(uid, uid, uid));
    if let Err(source) = became {
        status.send(&Report::setup(&LaunchError::Killer {
            uid: identity.uid,
            source,
        }));
        return 1;
    }
    // kill(-1) walks the process list under the lock fork needs, and a process with SIGKILL
    // pending cannot complete a fork: one pass reaches every process. Stopped first, so that
    // none acts between the two signals; twice, for good measure.
    for _ in 0..2 {
        let _ = kill(Pid::from_raw(-1), Signal::SIGSTOP);
        let _ = kill(Pid::from_raw(-1), Signal::SIGKILL);
    }
    0
}

/// Reaps children until there is none (`true`) or `patience` runs out.
pub(crate) fn reap_all(signals: &SignalFd, patience: Duration) -> bool {
    let deadline = Instant::now() + patience;
    loop {
        match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
            Err(Errno::ECHILD) => return true,
            Ok(WaitStatus::StillAlive) => {
                let left = deadline.saturating_duration_since(Instant::now());
                let Ok(timeout) = PollTimeout::try_from(left) else {
                    return false;
                };
                if left.is_zero() {
                    return false;
                }
                let mut fds = [PollFd::new(signals.as_fd(), PollFlags::POLLIN)];
                let _ = poll(&mut fds, timeout);
                while let Ok(Some(_)) = signals.read_signal() {}
            }
            Ok(_) | Err(_) => {}
        }
    }
}

/// Whether the helper still has a child, alive or not yet reaped.
pub(crate) fn has_children() -> bool {
    !matches!(
        waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)),
        Err(Errno::ECHILD)
    )
}

/// Without any sandbox: freezes the helper's descendants (orphans come back to it, a
/// subreaper) until no new one appears, then kills them all.
pub(crate) fn kill_descendants(root: i32) {
    let mut stopped = BTreeSet::new();
    let started = Instant::now();
    while started.elapsed() < KILL_PATIENCE {
        let fresh: Vec<i32> = descendants(root)
            .into_iter()
            .filter(|pid| !stopped.contains(pid))
            .collect();
        if fresh.is_empty() {
            break;
        }
        for pid in fresh {
            let _ = kill(Pid::from_raw(pid), Signal::SIGSTOP);
            stopped.insert(pid);
        }
    }
    for pid in stopped {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

fn descendants(root: i32) -> Vec<i32> {
    let Ok(all) = procfs::process::all_processes() else {
        return Vec::new();
    };
    let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    for stat in all.flatten().filter_map(|p| p.stat().ok()) {
        children.entry(stat.ppid).or_default().push(stat.pid);
    }
    let mut found = Vec::new();
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        for child in children.get(&pid).into_iter().flatten() {
            found.push(*child);
            queue.push(*child);
        }
    }
    found
}
