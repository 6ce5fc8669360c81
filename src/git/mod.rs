//! Git, through libgit2: a scratch mirror of the remote, throwaway workspaces, commits as the bot,
//! and pushes with a lease, authenticated only through a credentials callback.
//!
//! Quartermaster never writes to the user's repository. libgit2's fetch over a local-path remote
//! into a shallow clone (what `actions/checkout` makes) deletes `.git/shallow` without fetching the
//! missing history, corrupting the clone; so every run fetches into its own bare mirror in a
//! temporary directory (depth 1 over the network, where shallow fetches work; in full from local
//! paths, whose transport refuses depth). Each action then works in a workspace whose git directory
//! is separate from its files and borrows the mirror's objects through `alternates`.

mod compare;
mod credentials;
mod files;
mod mirror;
mod push;
mod remote;
mod reset;
mod workspace;

pub(crate) use credentials::CredentialGuard;
pub(crate) use mirror::Mirror;
pub use remote::{RemoteSpec, RemoteUrl, redact_userinfo};
pub(crate) use workspace::{
    BaseCheckout, LayerSpec, Mounter, NewCommit, Workspace, WorkspaceSource,
};

use std::path::Path;

/// More changed files than this means the commands did something other than update dependencies
/// (a build directory that is not ignored, a vendored tree rewritten...): nothing is committed.
pub(crate) const MAX_CHANGED_FILES: usize = 2000;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("{context}: {message}")]
    Git { context: String, message: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("authentication to {url} failed: the token was refused or lacks access")]
    Auth { url: String },
    #[error("the remote refused the push of {branch}: {message}")]
    Rejected { branch: String, message: String },
    #[error(
        "{branch} changed on the remote while Quartermaster worked (expected {expected}, found {found}); nothing was overwritten"
    )]
    LeaseMismatch {
        branch: String,
        expected: String,
        found: String,
    },
    #[error(
        "a command modified the configuration of Quartermaster's own git repositories; refusing to commit or push from them"
    )]
    Tampered,
    #[error(
        "after the push, the remote's {branch} is {found}, not the commit Quartermaster checked ({expected})"
    )]
    NotPushed {
        branch: String,
        expected: String,
        found: String,
    },
    #[error(
        "the commands changed {count} files (at most {MAX_CHANGED_FILES}); is a build or dependency directory missing from .gitignore?"
    )]
    TooManyChanges { count: usize },
    #[error("the workspace could not be brought back to the base commit: `{path}` still differs")]
    Dirty { path: String },
    #[error(
        "the tree to commit holds other content at `{path}` than the verifier read; nothing was committed"
    )]
    NotVerified { path: String },
    #[error("working_dir `{dir}` {why}")]
    WorkingDir { dir: String, why: &'static str },
    #[error(
        "the commit names a path git refuses to check out, `{path}` ({why}); nothing was written for it"
    )]
    UnsafePath { path: String, why: String },
}

type Result<T> = std::result::Result<T, GitError>;

fn git(context: impl Into<String>) -> impl FnOnce(git2::Error) -> GitError {
    let context = context.into();
    move |e| GitError::Git {
        context,
        message: e.message().to_string(),
    }
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> GitError {
    let context = context.into();
    move |source| GitError::Io { context, source }
}

/// Who commits: the bot identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub name: String,
    pub email: String,
}

impl Identity {
    /// Parses `Name <email>`.
    pub fn parse(s: &str) -> Option<Self> {
        let (name, rest) = s.trim().split_once('<')?;
        let email = rest.strip_suffix('>')?.trim();
        let name = name.trim();
        let ok = !name.is_empty()
            && email.contains('@')
            && !s.chars().any(char::is_control)
            && !email.contains(['<', '>', ' ']);
        ok.then(|| Self {
            name: name.to_string(),
            email: email.to_string(),
        })
    }

    fn signature(&self) -> Result<git2::Signature<'static>> {
        git2::Signature::now(&self.name, &self.email).map_err(git("bot identity"))
    }
}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} <{}>", self.name, self.email)
    }
}

/// Makes libgit2 ignore the user's and the system's git configuration for the rest of the process,
/// so that a command that writes `~/.gitconfig` (say, a `url.<x>.insteadOf` rewrite) cannot
/// redirect a push, and trusts the checkout it was pointed at (container actions run as another
/// user than the one owning the workspace; libgit2 runs no hooks or filters, which the ownership
/// check exists to prevent).
pub fn isolate_from_user_config(empty_dir: &Path) -> Result<()> {
    for level in [
        git2::ConfigLevel::System,
        git2::ConfigLevel::XDG,
        git2::ConfigLevel::Global,
        git2::ConfigLevel::ProgramData,
    ] {
        // SAFETY: called once at start-up, before any other libgit2 use on another thread.
        unsafe { git2::opts::set_search_path(level, empty_dir) }
            .map_err(git("isolating from user git configuration"))?;
    }
    // SAFETY: as above.
    unsafe { git2::opts::set_verify_owner_validation(false) }
        .map_err(git("disabling the ownership check"))
}

/// Facts about one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommitInfo {
    pub id: git2::Oid,
    pub tree: git2::Oid,
    pub parents: Vec<git2::Oid>,
    pub author_email: String,
    pub committer_email: String,
    pub message: String,
}

/// The parts of a workspace's git directory a command could change to redirect a push.
fn fingerprint(git_dir: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    for file in [
        "config",
        "objects/info/alternates",
        "shallow",
        "HEAD",
        "info/attributes",
    ] {
        out.extend_from_slice(file.as_bytes());
        out.extend(std::fs::read(git_dir.join(file)).unwrap_or_default());
        out.push(0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_parses_name_and_email() {
        assert_eq!(
            Identity::parse("Quartermaster <qm@example.com>"),
            Some(Identity {
                name: "Quartermaster".into(),
                email: "qm@example.com".into()
            })
        );
        assert_eq!(Identity::parse("no email"), None);
        assert_eq!(Identity::parse("<a@b>"), None);
        assert_eq!(Identity::parse("x <a b@c>"), None);
        assert_eq!(Identity::parse("x\n <a@b>"), None);
    }
}
