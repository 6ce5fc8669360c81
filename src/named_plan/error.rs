//! Why a named plan could not be read, claimed or written.

use std::path::PathBuf;

/// Everything that can go wrong with a named plan. The message says what happened; its
/// [`Hint`](crate::hint::Hint) says what to do, apart from it. `run` exits 2 on any of them before
/// anything runs.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("`{0}` is not a valid plan name")]
    InvalidName(String),
    #[error("no plan `{name}` in {dir}")]
    NotFound { name: String, dir: PathBuf },
    #[error("plan file {path} is corrupt: {reason}; it was left untouched")]
    Corrupt { path: PathBuf, reason: String },
    #[error(
        "plan `{name}` has status {found} at revision {revision}, not `{expected}`; nothing ran"
    )]
    WrongStatus {
        name: String,
        expected: String,
        found: String,
        revision: i64,
    },
    #[error(
        "plan `{name}` changed: expected revision {expected}, found {current}; nothing was written"
    )]
    Conflict {
        name: String,
        expected: i64,
        current: i64,
    },
    #[error(
        "plan `{name}` is being run by Quartermaster (status `in-progress`, revision {revision})"
    )]
    InProgress { name: String, revision: i64 },
    #[error(
        "plan `{name}` is at revision {revision}, the largest docker-agent can store; nothing was written"
    )]
    RevisionOverflow { name: String, revision: i64 },
    #[error("plan `{name}` would be {size} bytes of {what}; at most {max} are stored")]
    TooLarge {
        name: String,
        what: &'static str,
        size: usize,
        max: usize,
    },
    #[error("another process has held the plans lock {path} for more than {waited}")]
    LockTimeout { path: PathBuf, waited: String },
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl crate::hint::Hint for StoreError {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some(std::borrow::Cow::Borrowed(match self {
            Self::InvalidName(_) => {
                "use lower-case letters, digits, `-` and `_`, starting with a letter or digit (docker-agent's rule)"
            }
            Self::NotFound { .. } => {
                "the agent has not written it, or the plans directory is not the one docker-agent used (--plans-dir, QM_PLANS_DIR)"
            }
            Self::Corrupt { .. } => {
                "docker-agent cannot read it either: have the agent write the plan again, or remove the file"
            }
            Self::WrongStatus { .. } => {
                "only a plan with the status --claim-status names (QM_CLAIM_STATUS, default `ready`) is claimed; a plan that ran already needs the agent to submit it again"
            }
            Self::Conflict { .. } => {
                "another writer got there first: read the plan again, then retry with its current revision"
            }
            Self::InProgress { .. } => {
                "submit again once the run has finished, or pass last_known_revision to replace the plan deliberately"
            }
            Self::TooLarge { .. } => "a plan is a few kilobytes: leave logs and changelogs out",
            Self::LockTimeout { .. } => "try again, or look for a stuck process",
            Self::RevisionOverflow { .. } | Self::Io { .. } => return None,
        }))
    }
}

impl StoreError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }

    pub(crate) fn corrupt(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Self::Corrupt {
            path: path.into(),
            reason: reason.into(),
        }
    }
}
