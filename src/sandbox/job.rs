//! What Quartermaster hands the helper (one JSON message) and what the helper reports back (JSON
//! lines on the status pipe). The job never holds a secret: redaction stays with the caller.

use super::{LaunchError, Level, Limits};
use serde::{Deserialize, Serialize};
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Job {
    pub level: Level,
    pub action: JobAction,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub(crate) timeout_ms: u64,
    /// The slot identity commands run as (root levels).
    pub identity: Option<SlotIdentity>,
    pub(crate) mounts: MountPlan,
    /// Paths the final identity must neither read nor write: checked before `exec`.
    pub(crate) protected: Vec<PathBuf>,
    /// What the command may take of the runner (not applied at level `none`).
    pub limits: Limits,
    /// The unit's cgroup, which the helper joins before anything of the command starts.
    pub cgroup: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SlotIdentity {
    pub uid: u32,
    pub(crate) gid: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum JobAction {
    /// Run this argv.
    Exec(Vec<String>),
    /// Resolve these program names in PATH as the final identity, and report (the probe).
    Check(Vec<String>),
}

/// The view of the file system commands get (namespace levels).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct MountPlan {
    /// Covered with an empty, read-only tmpfs (directories) or an empty mode-000 file.
    pub(crate) hide: Vec<PathBuf>,
    /// Replaced by a fresh, writable tmpfs (`/tmp`, `/var/tmp`, `/dev/shm`).
    pub fresh: Vec<PathBuf>,
    /// The size of each fresh tmpfs, in bytes (unlimited: half the memory, as tmpfs has).
    pub(crate) fresh_size: Option<u64>,
    /// Kept visible (the rest of the file system becomes read-only).
    pub expose: Vec<Exposure>,
    /// Where the unit's cache overlay, handed over with the job, is attached.
    pub(crate) caches: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Exposure {
    pub path: PathBuf,
    pub writable: bool,
}

/// One line the helper writes on the status descriptor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Report {
    Exited(i32),
    Signalled(i32),
    TimedOut,
    Interrupted,
    SpawnFailed(String),
    Setup(String),
    Reachable {
        path: PathBuf,
        how: String,
    },
    Resolved(Vec<(String, Option<PathBuf>)>),
    Survivors(Vec<i32>),
    /// A fresh tmpfs the command filled.
    Full(PathBuf),
}

impl Report {
    /// A setup failure, as text: the status pipe carries JSON lines.
    pub(crate) fn setup(e: &LaunchError) -> Report {
        Report::Setup(e.to_string())
    }
}

/// The helper's end of the status pipe, shared by the helper, its init and the command (until
/// `exec` closes it there: it is close-on-exec).
pub(crate) struct StatusPipe(OwnedFd);

impl StatusPipe {
    pub(crate) fn new(fd: OwnedFd) -> StatusPipe {
        StatusPipe(fd)
    }

    /// One write per record: records stay whole (they are shorter than PIPE_BUF but for the
    /// longest error texts, which are written by one process at a time anyway).
    pub(crate) fn send(&self, report: &Report) {
        let mut line = serde_json::to_vec(report).unwrap_or_default();
        line.push(b'\n');
        let mut rest = line.as_slice();
        while !rest.is_empty() {
            match nix::unistd::write(self.0.as_fd(), rest) {
                Ok(n) => rest = &rest[n..],
                Err(nix::errno::Errno::EINTR) => {}
                Err(_) => return,
            }
        }
    }
}

/// Parses what the helper reported; a line that is not a record is itself a setup failure.
pub(crate) fn parse_reports(bytes: &[u8]) -> Vec<Report> {
    bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            serde_json::from_slice(line).unwrap_or_else(|_| {
                Report::Setup(format!(
                    "unreadable helper report: {}",
                    String::from_utf8_lossy(line)
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_round_trip_and_garbage_is_a_setup_failure() {
        let line = serde_json::to_string(&Report::Exited(3)).unwrap();
        let bytes = format!("{line}\nnot json\n");
        assert_eq!(
            parse_reports(bytes.as_bytes()),
            vec![
                Report::Exited(3),
                Report::Setup("unreadable helper report: not json".into())
            ]
        );
    }
}
