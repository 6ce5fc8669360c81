//! Quartermaster's side of commands: the zygote that forks their helpers, the job and pipes
//! handed to it, the reports and output collected, and the lifelines that [`interrupt`] cuts.

use super::guard;
use super::helper::HELPER_ARG;
use super::job::{Job, Report, parse_reports};
use super::outcome::read_tail;
use super::{LaunchError, SandboxError};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::socket::{
    AddressFamily, ControlMessage, MsgFlags, Shutdown, SockFlag, SockType, sendmsg, shutdown,
    socketpair,
};
use std::io::{IoSlice, PipeReader, PipeWriter, Read};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// After the command's own deadline, how long the helper gets to kill and report before
/// Quartermaster cuts its lifeline, and then before it gives up on it.
const HELPER_GRACE: Duration = Duration::from_secs(15);
/// After the helper is done, how long the output reader may take to drain the pipe.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// How long [`interrupt`] waits for running helpers to kill their commands.
const INTERRUPT_WAIT: Duration = Duration::from_secs(5);

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static NEXT_ID: AtomicU64 = AtomicU64::new(0);
/// The write ends of the running helpers' lifelines: dropping one tells that helper to kill.
static LIFELINES: Mutex<Vec<(u64, PipeWriter)>> = Mutex::new(Vec::new());
static ACTIVE: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// For a run being interrupted (from the signal-handling thread): no command starts any more,
/// every running one is killed with all it started, file permissions the sandbox changed are
/// put back and its directories removed. Returns once the helpers are done, or after a few
/// seconds.
pub(crate) fn interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
    lock(&LIFELINES).clear();
    let (count, done) = &ACTIVE;
    let _ = done.wait_timeout_while(lock(count), INTERRUPT_WAIT, |n| *n > 0);
    guard::restore_all();
    guard::remove_roots();
}

pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Counts a running command for [`interrupt`] to wait on.
struct Active;

impl Active {
    fn enter() -> Active {
        *lock(&ACTIVE.0) += 1;
        Active
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        *lock(&ACTIVE.0) -= 1;
        ACTIVE.1.notify_all();
    }
}

/// What came back from one helper.
pub(crate) struct HelperOutput {
    pub reports: Vec<Report>,
    pub tail: Vec<u8>,
    pub total: u64,
}

/// The zygote process and Quartermaster's end of its socket.
pub(crate) struct Zygote {
    socket: OwnedFd,
    send: Mutex<()>,
    child: Mutex<Child>,
}

impl std::fmt::Debug for Zygote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Zygote").finish_non_exhaustive()
    }
}

impl Zygote {
    /// Starts `helper` (Quartermaster's own binary) as the zygote, with an empty environment.
    pub(crate) fn start(helper: &Path) -> Result<Zygote, SandboxError> {
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .map_err(LaunchError::call("socketpair"))?;
        // Its own process group: a Ctrl-C meant for Quartermaster must not kill helpers before
        // they have cleaned up (Quartermaster's interrupt closes their lifelines instead).
        let child = std::process::Command::new(helper)
            .arg(HELPER_ARG)
            .process_group(0)
            .env_clear()
            .stdin(Stdio::from(theirs))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(SandboxError::io(format!(
                "cannot start the sandbox helper {}",
                helper.display()
            )))?;
        Ok(Zygote {
            socket: ours,
            send: Mutex::new(()),
            child: Mutex::new(child),
        })
    }

    /// Runs `job` and waits for its helper to be done; its output is also written to `tee`.
    /// `caches` is the unit's cache overlay, a detached mount the command's init attaches.
    pub(crate) fn run(
        &self,
        job: &Job,
        tee: Option<std::fs::File>,
        caches: Option<OwnedFd>,
    ) -> Result<HelperOutput, SandboxError> {
        let bytes = serde_json::to_vec(job).map_err(LaunchError::EncodeJob)?;
        let pipe = |what: &str| SandboxError::io(format!("cannot create the {what} pipe"));
        let (out_r, out_w) = std::io::pipe().map_err(pipe("output"))?;
        let (status_r, status_w) = std::io::pipe().map_err(pipe("status"))?;
        let (life_r, life_w) = std::io::pipe().map_err(pipe("lifeline"))?;
        let _active = Active::enter();
        let mut fds = vec![out_w.as_raw_fd(), status_w.as_raw_fd(), life_r.as_raw_fd()];
        fds.extend(caches.as_ref().map(AsRawFd::as_raw_fd));
        let sent = {
            let _turn = lock(&self.send);
            let cmsg = [ControlMessage::ScmRights(&fds)];
            let iov = [IoSlice::new(&bytes)];
            sendmsg::<()>(
                self.socket.as_raw_fd(),
                &iov,
                &cmsg,
                MsgFlags::MSG_NOSIGNAL,
                None,
            )
        };
        // Only the helper may hold these now: the readers rely on end-of-file.
        drop((out_w, status_w, life_r, caches));
        sent.map_err(LaunchError::HelperGone)?;
        let id = NEXT_ID.fetch_add(1, Ordering::SeqCst);
        lock(&LIFELINES).push((id, life_w));
        if interrupted() {
            lock(&LIFELINES).retain(|(other, _)| *other != id);
        }
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done_tx.send(read_tail(out_r, tee));
        });
        let reports = collect(status_r, Duration::from_millis(job.timeout_ms), id);
        let (tail, total) = done_rx.recv_timeout(DRAIN_GRACE).unwrap_or_else(|_| {
            (
                b"[output incomplete: a descendant process kept the pipe open]".to_vec(),
                0,
            )
        });
        Ok(HelperOutput {
            reports,
            tail,
            total,
        })
    }
}

impl Drop for Zygote {
    fn drop(&mut self) {
        // End-of-file on its socket makes the zygote exit.
        let _ = shutdown(self.socket.as_raw_fd(), Shutdown::Both);
        let _ = lock(&self.child).wait();
    }
}

/// The helper's reports, read until it and its processes are done. Past the deadline its
/// lifeline is cut (it then kills everything); past the grace after that, it is given up on.
fn collect(status: PipeReader, timeout: Duration, id: u64) -> Vec<Report> {
    let mut status = status;
    let (mut bytes, mut finished) =
        read_until_closed(&mut status, Instant::now() + timeout + HELPER_GRACE);
    lock(&LIFELINES).retain(|(other, _)| *other != id);
    if !finished {
        let (more, done) = read_until_closed(&mut status, Instant::now() + HELPER_GRACE);
        bytes.extend(more);
        finished = done;
    }
    let mut reports = parse_reports(&bytes);
    if !finished {
        reports.push(Report::Setup(
            "the sandbox helper did not finish in time".into(),
        ));
    }
    reports
}

/// Everything written on `reader` until every writer has closed it (`true`), or the deadline.
fn read_until_closed(reader: &mut PipeReader, deadline: Instant) -> (Vec<u8>, bool) {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let timeout = PollTimeout::try_from(left.min(Duration::from_secs(60)));
        let (Ok(timeout), false) = (timeout, left.is_zero()) else {
            return (bytes, false);
        };
        let mut fds = [PollFd::new(reader.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => {}
            Err(_) => return (bytes, false),
        }
        match reader.read(&mut chunk) {
            Ok(0) => return (bytes, true),
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return (bytes, true),
        }
    }
}
