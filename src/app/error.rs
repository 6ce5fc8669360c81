//! Why a valid plan could not start: each cause keeps its own error as the source, and its
//! [`Hint`] when it has one. The report's `error` and `hint` fields are filled from it.

use crate::config::ConfigError;
use crate::forge::ForgeError;
use crate::git::GitError;
use crate::hint::Hint;
use crate::named_plan::StoreError;
use crate::policy::{POLICY_FILE, PolicyError};
use crate::sandbox::SandboxError;
use crate::scale::OnlyError;
use std::borrow::Cow;
use std::path::PathBuf;

/// A cause passed on as its own error, whatever its type.
type Cause = Box<dyn std::error::Error + Send + Sync>;

/// Why the run stopped before its first action (exit 2).
#[derive(Debug, thiserror::Error)]
pub(crate) enum SetupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The forge could not be opened (connection, token, repository).
    #[error(transparent)]
    Forge(#[from] ForgeError),
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error("reading {POLICY_FILE} at {branch}: {source}")]
    PolicyRead {
        branch: String,
        #[source]
        source: Cause,
    },
    /// `--only` names actions the plan does not have.
    #[error(transparent)]
    Shard(#[from] OnlyError),
    /// The docker-agent named plan could not be claimed.
    #[error(transparent)]
    Named(#[from] StoreError),
    #[error("async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("cannot hide the credentials persisted in the checkout: {0}")]
    Credentials(#[source] GitError),
    #[error("repo_context.default_branch `{branch}` does not exist on the remote; {branches}")]
    NoDefaultBranch {
        /// The plan's branch, clipped to a line.
        branch: String,
        /// The remote's branches, as the message lists them.
        branches: String,
    },
    /// The gates (policy, registries, OSV) could not be made.
    #[error("{0}")]
    Screener(#[source] crate::supply::ClientError),
    #[error("sandbox: {0}")]
    Sandbox(#[source] SandboxError),
    /// The process could not be hardened (signal handlers, private temporary directory).
    #[error(transparent)]
    Harden(#[from] crate::harden::HardenError),
    #[error("cannot prepare the log directory {}: {source}", .dir.display())]
    Logs {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Hint for SetupError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            Self::Config(e) => e.hint(),
            Self::Policy(e) => e.hint(),
            Self::Shard(e) => e.hint(),
            Self::Named(e) => e.hint(),
            Self::NoDefaultBranch { .. } => Some(
                "set repo_context.default_branch to the branch the pull requests are to target, usually the repository's default branch".into(),
            ),
            Self::Forge(_)
            | Self::PolicyRead { .. }
            | Self::Runtime(_)
            | Self::Credentials(_)
            | Self::Screener(_)
            | Self::Sandbox(_)
            | Self::Harden(_)
            | Self::Logs { .. } => None,
        }
    }
}
