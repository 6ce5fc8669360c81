//! Why an action ended early: a status and the reason the report gives.

use crate::forge::ForgeError;
use crate::git::GitError;
use crate::report::Status;

#[derive(Debug)]
pub(crate) struct Stop {
    pub status: Status,
    pub reason: String,
}

impl Stop {
    pub(super) fn failed(reason: impl Into<String>) -> Self {
        Self {
            status: Status::Failed,
            reason: reason.into(),
        }
    }

    pub(super) fn denied(reason: impl Into<String>) -> Self {
        Self {
            status: Status::Denied,
            reason: reason.into(),
        }
    }

    pub(super) fn skipped(reason: impl Into<String>) -> Self {
        Self {
            status: Status::Skipped,
            reason: reason.into(),
        }
    }
}

impl From<ForgeError> for Stop {
    fn from(e: ForgeError) -> Self {
        Stop::failed(format!("forge: {e}"))
    }
}

impl From<GitError> for Stop {
    fn from(e: GitError) -> Self {
        Stop::failed(format!("git: {e}"))
    }
}

/// What an action came to: its status and reason, or why it stopped.
pub(super) type Done = Result<(Status, String), Stop>;
