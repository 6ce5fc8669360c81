//! Every way the sandbox refuses or fails, each with the message a user sees.

use super::cgroup::CgroupError;
use nix::errno::Errno;
use nix::sys::wait::WaitStatus;
use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("unknown isolation `{0}`: use auto, uid, namespaces or none")]
    UnknownIsolation(String),
    #[error("invalid seed `{given}`: {why}")]
    BadSeed { given: String, why: String },
    #[error("invalid limit `{given}`: {why}")]
    BadLimit { given: String, why: String },
    #[error(
        "isolation `{wanted}` runs commands as a dedicated user, which needs root; Quartermaster runs as uid {uid}: use auto, namespaces or none"
    )]
    NeedsRoot { wanted: &'static str, uid: u32 },
    #[error("no sandbox is available: {0}")]
    NoIsolation(String),
    #[error(
        "the sandbox user (uid {uid}) cannot run {programs}: install these toolchains where every user can run them (Quartermaster's image installs them under /usr/local), or allow namespaces so that Quartermaster can expose them read-only"
    )]
    Unreachable { uid: u32, programs: String },
    #[error(
        "uid {uid} (sandbox slot {slot}) already has processes (pid {pids}): another run or a real user has it; pass another --sandbox-uid-base (QM_SANDBOX_UID_BASE), or leave it unset so that a free range is taken"
    )]
    UidBusy { uid: u32, slot: u32, pids: String },
    #[error(
        "uid {uid} (sandbox slot {slot}) owns {path}, which sandboxed commands must not reach; pass another --sandbox-uid-base (QM_SANDBOX_UID_BASE), or leave it unset so that a free range is taken"
    )]
    UidOwns { uid: u32, slot: u32, path: PathBuf },
    #[error(
        "uid {uid} is claimed by another Quartermaster run on this host (lock {lock}): pass another --sandbox-uid-base (QM_SANDBOX_UID_BASE), or leave it unset so that a free range is taken"
    )]
    UidClaimed { uid: u32, lock: PathBuf },
    #[error(
        "no free range of sandbox uids from {base} ({ranges} ranges of 16 tried): let the other runs on this host finish, or pass --sandbox-uid-base (QM_SANDBOX_UID_BASE) with a free range"
    )]
    NoFreeUids { base: u32, ranges: u32 },
    #[error(
        "{path} must be a directory only root can write: it holds the locks that keep concurrent runs' sandbox uids apart; remove it, and Quartermaster creates it"
    )]
    ClaimsDir { path: PathBuf },
    #[error(
        "uid base {base} with {slots} slot(s) leaves the range of ordinary uids (1 to 4294967294)"
    )]
    BadUidBase { base: u32, slots: u32 },
    #[error("sandbox slot {slot} does not exist: the sandbox has {slots} slot(s)")]
    NoSuchSlot { slot: u32, slots: u32 },
    #[error("sandbox slot {0} is already running a unit")]
    SlotBusy(u32),
    #[error("the sandbox could not be set up: {0}")]
    Setup(#[from] LaunchError),
    #[error("the unit's cache layer could not be made: {0}")]
    Caches(#[source] Box<super::LayerError>),
    #[error("{path} is within reach of sandboxed commands ({how}); refusing to run")]
    Reachable { path: PathBuf, how: String },
    #[error("a sandboxed command changed the runner's file-command file {path} ({what})")]
    FileCommandChanged { path: PathBuf, what: &'static str },
    #[error("a sandboxed command changed the seeded {tool} configuration {path} ({what})")]
    SeedChanged {
        tool: &'static str,
        path: PathBuf,
        what: &'static str,
    },
    #[error("processes of uid {uid} survived the end of the command (pid {pids})")]
    Survivors { uid: u32, pids: String },
    #[error("{what} is not valid UTF-8 and cannot be passed to a sandboxed command")]
    NotUtf8 { what: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

impl SandboxError {
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(io::Error) -> Self {
        let context = context.into();
        move |source| SandboxError::Io { context, source }
    }
}

/// Why the sandbox could not prepare, start or follow a command. What fails inside the helper
/// reaches Quartermaster as text on the status pipe, and comes back as [`LaunchError::Reported`].
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// As the helper reported it.
    #[error("{0}")]
    Reported(String),
    #[error("{step}: {source}")]
    Call {
        step: &'static str,
        #[source]
        source: Errno,
    },
    /// A call whose failure reads as the operating system words it (mounts, capabilities).
    #[error("{step}: {source}")]
    Os {
        step: &'static str,
        #[source]
        source: io::Error,
    },
    #[error("{step} {}: {source}", path.display())]
    OsAt {
        step: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("making {} read-only: {source}", path.display())]
    ReadOnly {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("making the cover of {} read-only: {source}", path.display())]
    CoverReadOnly {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("dropping capability {cap} from the bounding set: {source}")]
    BoundingSet {
        cap: u32,
        #[source]
        source: io::Error,
    },
    #[error("capabilities are still held after dropping them")]
    CapabilitiesHeld,
    #[error("the uid switch to {0} did not take")]
    UidSwitch(u32),
    #[error("the killer cannot become uid {uid}: {source}")]
    Killer {
        uid: u32,
        #[source]
        source: Errno,
    },
    #[error("reading the {what} limit: {source}")]
    ReadLimit {
        what: &'static str,
        #[source]
        source: Errno,
    },
    #[error("setting the {what} limit: {source}")]
    SetLimit {
        what: &'static str,
        #[source]
        source: Errno,
    },
    #[error("writing {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("joining the cgroup {}: {source}", path.display())]
    JoinCgroup {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("/dev/null: {0}")]
    DevNull(#[source] io::Error),
    #[error("poll timeout: {0}")]
    PollTimeout(#[source] nix::poll::PollTimeoutTryFromError),
    #[error("unexpected wait status {0:?}")]
    UnexpectedWait(WaitStatus),
    #[error("reading {what}: {source}")]
    Proc {
        what: &'static str,
        #[source]
        source: procfs::ProcError,
    },
    #[error("{what} must be taken from the environment before any thread starts ({threads} run)")]
    Threads { what: String, threads: u64 },
    #[error("the kernel does not show where the environment block is")]
    NoEnvironmentBlock,
    #[error("unreadable job: {0}")]
    UnreadableJob(#[source] serde_json::Error),
    #[error("cannot encode the job: {0}")]
    EncodeJob(#[source] serde_json::Error),
    #[error("the sandbox helper is gone: {0}")]
    HelperGone(#[source] Errno),
    #[error("the sandbox helper ended without a result")]
    NoResult,
    #[error("the helper reported nothing")]
    NothingReported,
    #[error(transparent)]
    Cgroup(#[from] CgroupError),
}

impl LaunchError {
    /// For `map_err`: a failed system call of `step`, as nix reports it.
    pub(crate) fn call(step: &'static str) -> impl FnOnce(Errno) -> Self {
        move |source| LaunchError::Call { step, source }
    }

    /// For `map_err`: a failed system call of `step`, as the operating system words it.
    pub(crate) fn os<E: Into<io::Error>>(step: &'static str) -> impl FnOnce(E) -> Self {
        move |source| LaunchError::Os {
            step,
            source: source.into(),
        }
    }

    /// For `map_err`: a failed system call of `step` on `path`.
    pub(crate) fn os_at<E: Into<io::Error>>(
        step: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(E) -> Self {
        let path = path.to_path_buf();
        move |source| LaunchError::OsAt {
            step,
            path,
            source: source.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts the helper sends over its status pipe, and how they read once back: the typed
    /// errors must keep the words the reports have always had.
    #[test]
    fn setup_failures_read_as_the_step_and_the_system_error() {
        let os = || io::Error::from_raw_os_error(1);
        let failures = [
            LaunchError::call("unshare")(Errno::EPERM),
            LaunchError::os::<io::Error>("making mounts private")(os()),
            LaunchError::os_at::<io::Error>("covering", std::path::Path::new("/home"))(os()),
            LaunchError::ReadOnly {
                path: "/usr".into(),
                source: os(),
            },
            LaunchError::CoverReadOnly {
                path: "/root".into(),
                source: os(),
            },
            LaunchError::BoundingSet {
                cap: 21,
                source: os(),
            },
            LaunchError::UidSwitch(70000),
            LaunchError::Killer {
                uid: 70000,
                source: Errno::EPERM,
            },
            LaunchError::SetLimit {
                what: "open files",
                source: Errno::EINVAL,
            },
            LaunchError::Write {
                path: "/proc/self/uid_map".into(),
                source: os(),
            },
            LaunchError::UnexpectedWait(WaitStatus::StillAlive),
            LaunchError::Threads {
                what: "the token".into(),
                threads: 3,
            },
            LaunchError::Cgroup(CgroupError::NotDelegated {
                controller: "memory",
                own: "/sys/fs/cgroup/qm".into(),
            }),
        ];
        let mut lines: Vec<String> = failures.iter().map(ToString::to_string).collect();
        let reported = LaunchError::Reported(failures[0].to_string());
        lines.push(SandboxError::from(reported).to_string());
        insta::assert_snapshot!(lines.join("\n"));
    }
}
