//! What was fetched from the remote: listed and fetched once, on first use (plans of issues and
//! comments never touch git), and kept current as Quartermaster pushes.

use super::RunContext;
use super::stop::Stop;
use crate::ci::progress::Progress;
use crate::git::{GitError, Mirror, RemoteSpec};
use crate::plan::{Action, Plan};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Why the remote's state, or a file of it, could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RemoteError {
    #[error("git: {0}")]
    Git(#[from] GitError),
    #[error("the default branch `{0}` does not exist on the remote")]
    NoDefaultBranch(String),
    /// The remote was read before, and could not be.
    #[error(transparent)]
    Unread(Arc<RemoteError>),
    /// A file of the default branch's tree.
    #[error("{0}")]
    File(#[source] GitError),
}

pub(crate) struct GitState {
    pub mirror: Mirror,
    /// Remote branch tips, kept current as Quartermaster pushes.
    pub heads: BTreeMap<String, git2::Oid>,
    pub(crate) default_tip: git2::Oid,
}

/// The remote's state, shared by the workers: read before the run when the plan builds branches
/// (the policy is read at the default branch's tip it lists), else by the first worker that needs
/// it; then kept current by each push under the lock.
#[derive(Default)]
pub(crate) struct SharedGit(Mutex<Option<Result<GitState, Arc<RemoteError>>>>);

/// The remote's state read before the run, for the engine.
pub struct OpenedRemote(Result<GitState, Arc<RemoteError>>);

impl OpenedRemote {
    /// Lists and fetches the remote: the default branch and every branch `plan` builds on.
    pub fn open(remote: &RemoteSpec, scratch: &Path, plan: &Plan, progress: &Progress) -> Self {
        Self(open_git(remote, scratch, plan, progress).map_err(Arc::new))
    }

    /// The default branch's tip, when the remote could be read.
    pub(crate) fn default_tip(&self) -> Option<git2::Oid> {
        self.0.as_ref().ok().map(|s| s.default_tip)
    }

    /// The file `name` at the root of the default branch's tip (see [`Mirror::root_file`]).
    pub(crate) fn default_branch_file(
        &self,
        name: &str,
        limit: usize,
    ) -> Result<Option<Result<Vec<u8>, &'static str>>, RemoteError> {
        let state = self
            .0
            .as_ref()
            .map_err(|e| RemoteError::Unread(Arc::clone(e)))?;
        state
            .mirror
            .root_file(state.default_tip, name, limit)
            .map_err(RemoteError::File)
    }
}

impl From<OpenedRemote> for SharedGit {
    fn from(opened: OpenedRemote) -> Self {
        SharedGit(Mutex::new(Some(opened.0)))
    }
}

/// The remote's state, held by one worker.
pub(crate) struct GitGuard<'g>(MutexGuard<'g, Option<Result<GitState, Arc<RemoteError>>>>);

impl Deref for GitGuard<'_> {
    type Target = GitState;
    fn deref(&self) -> &GitState {
        match &*self.0 {
            Some(Ok(state)) => state,
            // A guard is only made over a state that was read (see [`lock`]).
            _ => unreachable!("a GitGuard holds a state"),
        }
    }
}

impl DerefMut for GitGuard<'_> {
    fn deref_mut(&mut self) -> &mut GitState {
        match &mut *self.0 {
            Some(Ok(state)) => state,
            _ => unreachable!("a GitGuard holds a state"),
        }
    }
}

/// The remote's state, read on first use; held until the guard is dropped.
pub(super) fn lock<'g>(run: &'g RunContext<'_>) -> Result<GitGuard<'g>, Stop> {
    let mut state = run.git.0.lock().unwrap_or_else(PoisonError::into_inner);
    if state.is_none() {
        *state = Some(read_remote(run).map_err(Arc::new));
    }
    match &*state {
        Some(Ok(_)) => Ok(GitGuard(state)),
        Some(Err(e)) => Err(Stop::failed(e.to_string())),
        None => unreachable!("initialised above"),
    }
}

fn read_remote(run: &RunContext<'_>) -> Result<GitState, RemoteError> {
    open_git(
        run.forge.remote(),
        &run.settings.scratch,
        run.plan.plan(),
        &run.progress,
    )
}

/// Deletes a remote branch if it is where Quartermaster saw it. `Ok(false)`: it was gone.
pub(super) fn delete_branch(run: &RunContext<'_>, branch: &str) -> Result<bool, GitError> {
    let mut state = lock(run).map_err(|stop| GitError::Git {
        context: "reading the remote".into(),
        message: stop.reason,
    })?;
    let Some(tip) = state.heads.get(branch).copied() else {
        return Ok(false);
    };
    state.mirror.delete_branch(branch, tip)?;
    state.heads.remove(branch);
    Ok(true)
}

fn open_git(
    remote: &RemoteSpec,
    scratch: &Path,
    plan: &Plan,
    progress: &Progress,
) -> Result<GitState, RemoteError> {
    progress.step(&format!("reading {}", remote.url));
    let lap = std::time::Instant::now();
    let mirror = Mirror::new(remote.clone(), scratch)?;
    let heads = mirror.list()?;
    let default = &plan.repo_context.default_branch;
    let default_tip = *heads
        .get(default)
        .ok_or_else(|| RemoteError::NoDefaultBranch(default.clone()))?;
    let present: Vec<&str> = wanted_branches(plan, &heads)
        .into_iter()
        .filter(|b| heads.contains_key(*b))
        .collect();
    mirror.fetch(&present)?;
    tracing::debug!(ms = super::millis(lap.elapsed()), "remote read");
    Ok(GitState {
        mirror,
        heads,
        default_tip,
    })
}

/// The branches the plan's actions build on or replace: the default branch, every action's
/// branch, and the split branches of earlier runs.
fn wanted_branches<'h>(
    plan: &'h Plan,
    heads: &'h BTreeMap<String, git2::Oid>,
) -> BTreeSet<&'h str> {
    let mut wanted: BTreeSet<&str> = BTreeSet::from([plan.repo_context.default_branch.as_str()]);
    for action in &plan.actions {
        match action {
            Action::CreateMr(a) => {
                wanted.insert(&a.branch);
                let prefix = format!("{}--", a.branch);
                wanted.extend(
                    heads
                        .keys()
                        .filter(|b| b.starts_with(&prefix))
                        .map(String::as_str),
                );
            }
            Action::UpdateMr(a) => {
                wanted.insert(&a.branch);
            }
            _ => {}
        }
    }
    wanted
}
