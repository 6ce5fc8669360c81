//! The processes the helper forks: the PID namespace's init, and the command itself, which
//! drops every privilege, checks it cannot reach what it must not, and `exec`s.

use super::identity;
use super::job::{Job, JobAction, Report, StatusPipe};
use super::limits;
use super::mounts;
use super::{LaunchError, Level};
use nix::errno::Errno;
use nix::sys::signal::{SigHandler, SigSet, SigmaskHow, Signal};
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid};
use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::path::PathBuf;

/// Why a command could not be started (reported as its outcome, not as a sandbox failure).
#[derive(Debug, thiserror::Error)]
enum SpawnError {
    #[error("cannot enter the working directory {}: {source}", path.display())]
    WorkingDirectory {
        path: PathBuf,
        #[source]
        source: Errno,
    },
    #[error("empty command")]
    Empty,
    #[error("program `{0}` not found in PATH")]
    NotFound(String),
    #[error("a NUL byte in the command or its environment")]
    Nul,
    #[error(transparent)]
    Reset(#[from] LaunchError),
    #[error("cannot run {}: {source}", path.display())]
    Exec {
        path: PathBuf,
        #[source]
        source: Errno,
    },
}

/// PID 1 of the command's namespace: builds the file-system view, runs the command, reaps
/// whatever is reparented to it, and exits when the command does, which kills the rest.
pub(crate) fn init(job: &Job, status: &StatusPipe, caches: Option<OwnedFd>) -> ! {
    let code = match run_init(job, status, caches) {
        Ok(()) => 0,
        Err(e) => {
            status.send(&Report::setup(&e));
            1
        }
    };
    std::process::exit(code)
}

fn run_init(job: &Job, status: &StatusPipe, caches: Option<OwnedFd>) -> Result<(), LaunchError> {
    // If the helper is killed, the namespace goes with it.
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(LaunchError::call("pdeathsig"))?;
    mounts::apply(&job.mounts, caches)?;
    // Same uid as the command in a user namespace: non-dumpable, it cannot be ptraced into
    // lending its capabilities, nor its descriptors read through /proc/1/fd.
    nix::sys::prctl::set_dumpable(false).map_err(LaunchError::call("dumpable"))?;
    // SAFETY: init is single-threaded (forked from the single-threaded helper).
    let command = match unsafe { nix::unistd::fork() }.map_err(LaunchError::call("fork"))? {
        ForkResult::Child => command(job, status),
        ForkResult::Parent { child } => child,
    };
    loop {
        match waitpid(None::<Pid>, None) {
            Ok(ws @ (WaitStatus::Exited(..) | WaitStatus::Signaled(..)))
                if ws.pid() == Some(command) =>
            {
                for path in full(&job.mounts.fresh) {
                    status.send(&Report::Full(path));
                }
                status.send(&exit_report(ws));
                return Ok(());
            }
            Ok(_) | Err(Errno::EINTR) => {}
            Err(e) => return Err(LaunchError::call("waiting for the command")(e)),
        }
    }
}

/// The fresh tmpfs mounts with no space left (seen from inside the command's namespace).
fn full(fresh: &[PathBuf]) -> Vec<PathBuf> {
    fresh
        .iter()
        .filter(|path| {
            nix::sys::statvfs::statvfs(path.as_path())
                .is_ok_and(|s| s.blocks() > 0 && s.blocks_available() == 0)
        })
        .cloned()
        .collect()
}

pub(crate) fn exit_report(ws: WaitStatus) -> Report {
    match ws {
        WaitStatus::Exited(_, code) => Report::Exited(code),
        WaitStatus::Signaled(_, signal, _) => Report::Signalled(signal as i32),
        other => Report::setup(&LaunchError::UnexpectedWait(other)),
    }
}

/// The command's process: returns only through `exec`; anything else is reported.
pub(crate) fn command(job: &Job, status: &StatusPipe) -> ! {
    let report = prepare(job);
    let code = if matches!(report, Report::Resolved(_)) {
        0
    } else {
        127
    };
    status.send(&report);
    std::process::exit(code)
}

fn prepare(job: &Job) -> Report {
    if let Err(e) = identity::drop_privileges(job.level, job.identity) {
        return Report::setup(&e);
    }
    // After the uid switch, so that the process limit counts the slot's uid.
    if job.level != Level::None
        && let Err(e) = limits::apply_rlimits(&job.limits, job.cgroup.is_some())
    {
        return Report::setup(&e);
    }
    if job.level != Level::None
        && let Some((path, how)) = identity::first_reachable(&job.protected)
    {
        return Report::Reachable {
            path,
            how: how.into(),
        };
    }
    if let Err(source) = nix::unistd::chdir(job.cwd.as_path()) {
        return spawn_failed(&SpawnError::WorkingDirectory {
            path: job.cwd.clone(),
            source,
        });
    }
    let path = job
        .env
        .iter()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| value.as_str());
    match &job.action {
        JobAction::Check(programs) => Report::Resolved(
            programs
                .iter()
                .map(|p| (p.clone(), identity::resolve(p, path)))
                .collect(),
        ),
        JobAction::Exec(argv) => exec(job, argv, path),
    }
}

fn spawn_failed(e: &SpawnError) -> Report {
    Report::SpawnFailed(e.to_string())
}

fn exec(job: &Job, argv: &[String], path: Option<&str>) -> Report {
    match try_exec(job, argv, path) {
        Err(e) => spawn_failed(&e),
    }
}

/// Returns only when the command could not be started.
fn try_exec(
    job: &Job,
    argv: &[String],
    path: Option<&str>,
) -> Result<std::convert::Infallible, SpawnError> {
    let program = argv.first().ok_or(SpawnError::Empty)?;
    let resolved =
        identity::resolve(program, path).ok_or_else(|| SpawnError::NotFound(program.clone()))?;
    let strings = |items: &mut dyn Iterator<Item = String>| -> Option<Vec<CString>> {
        items.map(|s| CString::new(s).ok()).collect()
    };
    let env = strings(&mut job.env.iter().map(|(k, v)| format!("{k}={v}")));
    let (Some(args), Some(env), Ok(file)) = (
        strings(&mut argv.iter().cloned()),
        env,
        CString::new(resolved.as_os_str().as_encoded_bytes()),
    ) else {
        return Err(SpawnError::Nul);
    };
    reset_process_state()?;
    nix::unistd::execve(&file, &args, &env).map_err(|source| SpawnError::Exec {
        path: resolved,
        source,
    })
}

/// What the helper changed for itself must not reach the command: the blocked SIGCHLD, and the
/// ignored SIGPIPE of every Rust program.
fn reset_process_state() -> Result<(), LaunchError> {
    nix::sys::signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)
        .map_err(LaunchError::call("signal mask"))?;
    // SAFETY: installs the default disposition, no handler code runs.
    unsafe { nix::sys::signal::signal(Signal::SIGPIPE, SigHandler::SigDfl) }
        .map_err(LaunchError::call("SIGPIPE"))?;
    Ok(())
}
