//! The helper: Quartermaster's own binary re-executed once per sandbox with a hidden first
//! argument, so that commands start from a fresh single-threaded process instead of a fork of
//! Quartermaster (threads, locks, the token in memory). That process, the zygote, receives one
//! job per command on a socket, with the command's output, status and lifeline pipes, and forks a
//! helper for it: the helper enters the namespaces, forks the PID namespace's init, and watches
//! the deadline and the lifeline. When the lifeline closes (an interrupt, or Quartermaster dying)
//! the helper kills everything the command started. Forking the zygote instead of executing a
//! binary per command keeps the overhead to a few milliseconds.

use super::child;
use super::job::{Job, Report, StatusPipe};
use super::reaper;
use super::{LaunchError, Level};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sched::CloneFlags;
use nix::sys::signal::{SigSet, Signal, kill};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid};
use std::ffi::OsStr;
use std::io::IoSliceMut;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The hidden first argument that turns Quartermaster's binary into the sandbox's zygote.
pub const HELPER_ARG: &str = "__quartermaster-sandbox-helper";
/// Largest job accepted (a job is a few kilobytes: argv, environment, paths).
const MAX_JOB_BYTES: usize = 1 << 20;

/// Call first thing in `main()`: when this process is the sandbox's zygote, it serves and exits
/// here; otherwise this returns at once.
pub fn enter_if_requested() {
    if std::env::args_os().nth(1).as_deref() == Some(OsStr::new(HELPER_ARG)) {
        std::process::exit(zygote());
    }
}

/// Forks one helper per job received on the socket that is its stdin, until Quartermaster closes
/// the other end.
fn zygote() -> i32 {
    let socket = std::io::stdin().as_raw_fd();
    let mut buf = vec![0u8; MAX_JOB_BYTES];
    loop {
        while let Ok(ws) = waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
            if ws == WaitStatus::StillAlive {
                break;
            }
        }
        let (len, fds) = match receive(socket, &mut buf) {
            Ok(Some(job)) => job,
            Ok(None) => return 0,
            Err(_) => return 1,
        };
        // SAFETY: the zygote is single-threaded, so the child may do anything after fork.
        if let Ok(ForkResult::Child) = unsafe { nix::unistd::fork() } {
            helper(&buf[..len], fds)
        }
        // The parent keeps none of the job's descriptors: their readers rely on end-of-file.
    }
}

/// One job: its bytes and its descriptors; `None` once the socket is closed.
fn receive(socket: RawFd, buf: &mut [u8]) -> Result<Option<(usize, Vec<OwnedFd>)>, Errno> {
    let mut iov = [IoSliceMut::new(buf)];
    let mut space = nix::cmsg_space!([RawFd; 4]);
    let msg = loop {
        match recvmsg::<()>(
            socket,
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Err(Errno::EINTR) => {}
            other => break other?,
        }
    };
    let mut fds = Vec::new();
    for cmsg in msg.cmsgs()? {
        if let ControlMessageOwned::ScmRights(raw) = cmsg {
            // SAFETY: the kernel has just installed these descriptors in this process for us.
            fds.extend(
                raw.into_iter()
                    .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
            );
        }
    }
    if msg.bytes == 0 && fds.is_empty() {
        return Ok(None);
    }
    Ok(Some((msg.bytes, fds)))
}

/// The helper of one command: output on stdout and stderr, reports on `status`, and the lifeline.
fn helper(bytes: &[u8], fds: Vec<OwnedFd>) -> ! {
    let mut fds = fds.into_iter();
    let (Some(output), Some(status), Some(lifeline)) = (fds.next(), fds.next(), fds.next()) else {
        std::process::exit(1)
    };
    let caches = fds.next();
    let status = StatusPipe::new(status);
    let started = stdio(&output)
        .and_then(|()| serde_json::from_slice::<Job>(bytes).map_err(LaunchError::UnreadableJob));
    drop(output);
    let result = started.and_then(|job| {
        let deadline = Instant::now() + Duration::from_millis(job.timeout_ms);
        // Everything the command starts descends from here, so it is all in the unit's cgroup.
        if let Some(cgroup) = &job.cgroup {
            std::fs::write(cgroup.join("cgroup.procs"), std::process::id().to_string()).map_err(
                |source| LaunchError::JoinCgroup {
                    path: cgroup.clone(),
                    source,
                },
            )?;
        }
        match job.level {
            Level::UidNamespaces | Level::Namespaces => {
                namespaced(&job, &status, (&lifeline, caches), deadline)
            }
            Level::Uid | Level::None => contained(&job, &status, &lifeline, deadline),
        }
    });
    let code = match result {
        Ok(()) => 0,
        Err(e) => {
            status.send(&Report::setup(&e));
            1
        }
    };
    std::process::exit(code)
}

/// The command's output pipe on stdout and stderr; stdin (the zygote's socket) on /dev/null.
fn stdio(output: &OwnedFd) -> Result<(), LaunchError> {
    let null = std::fs::File::open("/dev/null").map_err(LaunchError::DevNull)?;
    nix::unistd::dup2_stdin(&null)
        .and_then(|()| nix::unistd::dup2_stdout(output))
        .and_then(|()| nix::unistd::dup2_stderr(output))
        .map_err(LaunchError::call("redirecting the output"))
}

/// New mount, PID and IPC namespaces (and a user namespace when unprivileged); the forked
/// init builds the view and runs the command; its death takes every process in it along.
fn namespaced(
    job: &Job,
    status: &StatusPipe,
    (lifeline, caches): (&OwnedFd, Option<OwnedFd>),
    deadline: Instant,
) -> Result<(), LaunchError> {
    let user_ns = job.level == Level::Namespaces;
    let (uid, gid) = (nix::unistd::geteuid(), nix::unistd::getegid());
    let mut flags = CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWIPC;
    if user_ns {
        flags |= CloneFlags::CLONE_NEWUSER;
    }
    nix::sched::unshare(flags).map_err(LaunchError::call("unshare"))?;
    if user_ns {
        // The operator's own ids, mapped to themselves: the command is not root in there, so
        // `exec` leaves it no capability.
        let write = |file: &str, text: String| {
            std::fs::write(file, text).map_err(|source| LaunchError::Write {
                path: PathBuf::from(file),
                source,
            })
        };
        write("/proc/self/setgroups", "deny".into())?;
        write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
        write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    }
    let signals = block_sigchld()?;
    let Some(init) = fork()? else {
        child::init(job, status, caches)
    };
    drop(caches);
    let ended = supervise(init, deadline, &signals, lifeline)?;
    if let Some(report) = ended.verdict() {
        let _ = kill(init, Signal::SIGKILL);
        // Returns once the kernel has killed and reaped every process of the namespace.
        let _ = waitpid(init, None);
        status.send(&report);
    }
    Ok(())
}

/// No namespaces: the helper is the command's subreaper and, once it ends, kills by uid (root)
/// or freezes and kills its own descendants (no sandbox).
fn contained(
    job: &Job,
    status: &StatusPipe,
    lifeline: &OwnedFd,
    deadline: Instant,
) -> Result<(), LaunchError> {
    nix::sys::prctl::set_child_subreaper(true).map_err(LaunchError::call("subreaper"))?;
    let signals = block_sigchld()?;
    let Some(command) = fork()? else {
        child::command(job, status)
    };
    let ended = supervise(command, deadline, &signals, lifeline)?;
    let leftovers = reaper::has_children();
    match job.identity {
        Some(identity) => reaper::sweep_uid(identity, leftovers, &signals, status)?,
        None if leftovers => {
            reaper::kill_descendants(nix::unistd::getpid().as_raw());
            reaper::reap_all(&signals, Duration::from_secs(5));
        }
        None => {}
    }
    status.send(&match ended {
        Ended::Exited(ws) => child::exit_report(ws),
        other => other.verdict().unwrap_or(Report::Interrupted),
    });
    Ok(())
}

/// The child's pid, or `None` in the child.
fn fork() -> Result<Option<Pid>, LaunchError> {
    // SAFETY: the helper is single-threaded, so the child may do anything after fork.
    match unsafe { nix::unistd::fork() }.map_err(LaunchError::call("fork"))? {
        ForkResult::Child => Ok(None),
        ForkResult::Parent { child } => Ok(Some(child)),
    }
}

/// SIGCHLD is blocked and read from a descriptor, so that one `poll` waits for the child, the
/// deadline and the lifeline at once.
fn block_sigchld() -> Result<SignalFd, LaunchError> {
    let mut mask = SigSet::empty();
    mask.add(Signal::SIGCHLD);
    mask.thread_block()
        .map_err(LaunchError::call("blocking SIGCHLD"))?;
    SignalFd::with_flags(&mask, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
        .map_err(LaunchError::call("signalfd"))
}

enum Ended {
    Exited(WaitStatus),
    TimedOut,
    Interrupted,
}

impl Ended {
    /// What the helper reports itself: nothing when the command ended on its own.
    fn verdict(&self) -> Option<Report> {
        match self {
            Ended::Exited(_) => None,
            Ended::TimedOut => Some(Report::TimedOut),
            Ended::Interrupted => Some(Report::Interrupted),
        }
    }
}

/// Waits for `target` to end, the deadline to pass, or the lifeline to close.
fn supervise(
    target: Pid,
    deadline: Instant,
    signals: &SignalFd,
    lifeline: &OwnedFd,
) -> Result<Ended, LaunchError> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Ended::TimedOut);
        }
        let timeout = PollTimeout::try_from(left.min(Duration::from_secs(60)))
            .map_err(LaunchError::PollTimeout)?;
        let mut fds = [
            PollFd::new(signals.as_fd(), PollFlags::POLLIN),
            PollFd::new(lifeline.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, timeout) {
            Ok(_) | Err(Errno::EINTR) => {}
            Err(e) => return Err(LaunchError::call("poll")(e)),
        }
        // Quartermaster never writes on it: readable means closed.
        if fds[1].revents().is_some_and(|r| !r.is_empty()) {
            return Ok(Ended::Interrupted);
        }
        if fds[0]
            .revents()
            .is_some_and(|r| r.contains(PollFlags::POLLIN))
        {
            while let Ok(Some(_)) = signals.read_signal() {}
            if let Some(ws) = reap_until(target) {
                return Ok(Ended::Exited(ws));
            }
        }
    }
}

/// Reaps every dead child; the wait status of `target` when it is among them.
fn reap_until(target: Pid) -> Option<WaitStatus> {
    loop {
        match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
            Ok(ws @ (WaitStatus::Exited(..) | WaitStatus::Signaled(..)))
                if ws.pid() == Some(target) =>
            {
                return Some(ws);
            }
            Ok(WaitStatus::StillAlive) | Err(Errno::ECHILD) => return None,
            Ok(_) | Err(_) => {}
        }
    }
}
