//! Process hardening for a run: memory and environment out of children's reach, orphans adopted,
//! user git configuration ignored, and signals that stop the run cleanly.

use crate::git::{CredentialGuard, GitError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Why the process could not be hardened for a run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HardenError {
    #[error("signal handlers: {0}")]
    SignalHandlers(#[source] std::io::Error),
    #[error("temporary directory: {0}")]
    TempDir(#[source] std::io::Error),
    #[error(transparent)]
    Git(#[from] GitError),
}

/// Where the signal handler finds the checkout's credential guard to restore it.
pub(crate) type GuardSlot = Arc<Mutex<Option<CredentialGuard>>>;

/// Hardens the process for a run. The returned directory (the empty place libgit2 looks for user
/// configuration) must live as long as the run.
pub(crate) fn process(guard: GuardSlot) -> Result<tempfile::TempDir, HardenError> {
    // Where children share Quartermaster's user (namespaces, or no sandbox), a non-dumpable
    // process keeps them out of /proc/<pid>/environ and memory, where the token lives.
    let _ = nix::sys::prctl::set_dumpable(false);
    exit_on_signals(Some(guard)).map_err(HardenError::SignalHandlers)?;
    let empty = tempfile::tempdir().map_err(HardenError::TempDir)?;
    crate::git::isolate_from_user_config(empty.path())?;
    Ok(empty)
}

/// Quartermaster's private directory for a run (the mirror, workspaces' git directories):
/// readable by its own user only, and hidden from commands by the sandbox.
pub(crate) fn scratch() -> Result<tempfile::TempDir, HardenError> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("quartermaster-")
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .map_err(HardenError::TempDir)?;
    Ok(dir)
}

/// The signal that is stopping the run, once one came (a cancelled CI job): from then on no
/// action, upkeep step or command starts.
pub(crate) fn cancelled() -> Option<i32> {
    match CANCELLED.load(std::sync::atomic::Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

static CANCELLED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The mutex's value, even if a thread panicked holding it (the guard must be restorable).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a signal finds to undo or record, filled in as the run gets that far.
struct OnSignal {
    installed: bool,
    guard: Option<GuardSlot>,
    hooks: Vec<SignalHook>,
}

/// Records an interrupted run where someone waits for its outcome (a claimed named plan); called
/// with the signal number after the commands are stopped and the checkout is restored.
pub(crate) type SignalHook = Box<dyn FnOnce(i32) + Send>;

static ON_SIGNAL: Mutex<OnSignal> = Mutex::new(OnSignal {
    installed: false,
    guard: None,
    hooks: Vec::new(),
});

/// Has `hook` run if a signal stops the process from now on (installing the handlers, if this is
/// the first thing of the run that needs them).
pub(crate) fn on_signal(hook: SignalHook) -> Result<(), HardenError> {
    exit_on_signals(None).map_err(HardenError::SignalHandlers)?;
    lock(&ON_SIGNAL).hooks.push(hook);
    Ok(())
}

/// On SIGINT, SIGTERM or SIGHUP (a cancelled job), the run winds down instead of dying: no
/// action, upkeep step, command or forge call starts any more ([`cancelled`]), the running
/// command and its descendants are killed, the checkout's credentials are put back, and the run
/// goes on to write its report, summary and outputs with what finished, the rest `cancelled`
/// (and exits with 128 + the signal). Should it not be done within [`WIND_DOWN`] of the signal,
/// or a second signal come, the process exits there and then, after the [`on_signal`] hooks.
/// Without a handler, a container's PID 1 would ignore SIGTERM until the runtime's SIGKILL, which
/// leaves no chance to restore anything. The handlers are installed once; a later call only adds
/// the guard.
fn exit_on_signals(guard: Option<GuardSlot>) -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut state = lock(&ON_SIGNAL);
    if guard.is_some() {
        state.guard = guard;
    }
    if state.installed {
        return Ok(());
    }
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    state.installed = true;
    std::thread::spawn(move || {
        let mut forever = signals.forever();
        let Some(signal) = forever.next() else {
            return;
        };
        let deadline = std::time::Instant::now() + WIND_DOWN;
        CANCELLED.store(signal, std::sync::atomic::Ordering::SeqCst);
        eprintln!(
            "quartermaster: interrupted by signal {signal}; stopping the running command and writing the report"
        );
        std::thread::spawn(move || wind_down(signal, deadline));
        // A second signal: no more waiting.
        if forever.next().is_some() {
            stop_now(signal);
        }
    });
    Ok(())
}

/// Stops the commands, puts the credentials back, and gives the run until `deadline` to write
/// its outputs.
fn wind_down(signal: i32, deadline: std::time::Instant) {
    crate::sandbox::interrupt();
    let guard = lock(&ON_SIGNAL).guard.clone();
    if let Some(slot) = guard
        && let Some(guard) = lock(&slot).as_mut()
    {
        guard.restore();
    }
    let (done, wound) = &WOUND_DOWN;
    let left = deadline.saturating_duration_since(std::time::Instant::now());
    let finished = done
        .wait_timeout_while(lock(wound), left, |d| !*d)
        .map(|(d, _)| *d)
        .unwrap_or(false);
    if !finished {
        stop_now(signal);
    }
}

/// How long after a signal the run may take to write its report before the process exits anyway
/// (CI runners kill a cancelled job's processes some seconds after signalling them).
const WIND_DOWN: std::time::Duration = std::time::Duration::from_secs(9);

/// Set once the run's outputs are written after a signal.
static WOUND_DOWN: (std::sync::Condvar, Mutex<bool>) =
    (std::sync::Condvar::new(), Mutex::new(false));

/// Says the run, stopped by a signal, wrote its outputs: the process may end on its own now.
pub(crate) fn wound_down() {
    let (done, wound) = &WOUND_DOWN;
    *lock(wound) = true;
    done.notify_all();
}

/// Ends the process now, after the hooks that record an interrupted run.
fn stop_now(signal: i32) -> ! {
    let hooks = std::mem::take(&mut lock(&ON_SIGNAL).hooks);
    for hook in hooks {
        hook(signal);
    }
    eprintln!(
        "quartermaster: interrupted by signal {signal}; the run stopped before writing its report"
    );
    std::process::exit(128 + signal);
}
