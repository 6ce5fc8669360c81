//! Process hardening for a run: memory and environment out of children's reach, orphans adopted,
//! user git configuration ignored, and signals that stop the run cleanly.

use crate::config::ConfigError;
use crate::git::CredentialGuard;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Where the signal handler finds the checkout's credential guard to restore it.
pub type GuardSlot = Arc<Mutex<Option<CredentialGuard>>>;

/// Hardens the process for a run. The returned directory (the empty place libgit2 looks for user
/// configuration) must live as long as the run.
pub fn process(guard: GuardSlot) -> Result<tempfile::TempDir, ConfigError> {
    // Where children share Quartermaster's user (namespaces, or no sandbox), a non-dumpable
    // process keeps them out of /proc/<pid>/environ and memory, where the token lives.
    let _ = nix::sys::prctl::set_dumpable(false);
    exit_on_signals(Some(guard)).map_err(|e| ConfigError::new(format!("signal handlers: {e}")))?;
    let empty =
        tempfile::tempdir().map_err(|e| ConfigError::new(format!("temporary directory: {e}")))?;
    crate::git::isolate_from_user_config(empty.path())
        .map_err(|e| ConfigError::new(e.to_string()))?;
    Ok(empty)
}

/// Quartermaster's private directory for a run (the mirror, workspaces' git directories):
/// readable by its own user only, and hidden from commands by the sandbox.
pub fn scratch() -> Result<tempfile::TempDir, ConfigError> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("quartermaster-")
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .map_err(|e| ConfigError::new(format!("temporary directory: {e}")))?;
    Ok(dir)
}

/// The signal that is stopping the run, once one came (a cancelled CI job): from then on no
/// action, upkeep step or command starts.
pub fn cancelled() -> Option<i32> {
    match CANCELLED.load(std::sync::atomic::Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

static CANCELLED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The mutex's value, even if a thread panicked holding it (the guard must be restorable).
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
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
pub type SignalHook = Box<dyn FnOnce(i32) + Send>;

static ON_SIGNAL: Mutex<OnSignal> = Mutex::new(OnSignal {
    installed: false,
    guard: None,
    hooks: Vec::new(),
});

/// Has `hook` run if a signal stops the process from now on (installing the handlers, if this is
/// the first thing of the run that needs them).
pub fn on_signal(hook: SignalHook) -> Result<(), ConfigError> {
    exit_on_signals(None).map_err(|e| ConfigError::new(format!("signal handlers: {e}")))?;
    lock(&ON_SIGNAL).hooks.push(hook);
    Ok(())
}

/// On SIGINT, SIGTERM or SIGHUP (a cancelled job), stops the running command and its descendants,
/// puts the checkout's credentials back, runs the [`on_signal`] hooks, and exits with 128 + the
/// signal. Without a handler, a container's PID 1 would ignore SIGTERM until the runtime's
/// SIGKILL, which leaves no chance to restore anything. The handlers are installed once; a later
/// call only adds the guard.
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
        if let Some(signal) = signals.forever().next() {
            let (guard, hooks) = {
                let mut state = lock(&ON_SIGNAL);
                (state.guard.clone(), std::mem::take(&mut state.hooks))
            };
            // Held until exit: the main thread, done with its actions, waits here instead of
            // finishing the run as if nothing happened.
            let mut guard = guard.as_ref().map(|slot| lock(slot));
            crate::sandbox::interrupt();
            if let Some(guard) = guard.as_deref_mut().and_then(Option::as_mut) {
                guard.restore();
            }
            for hook in hooks {
                hook(signal);
            }
            eprintln!(
                "quartermaster: interrupted by signal {signal}; the running command was killed and the run stopped"
            );
            std::process::exit(128 + signal);
        }
    });
    Ok(())
}
