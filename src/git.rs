//! Git, through libgit2: a scratch mirror of the remote, throwaway workspaces, commits as the bot,
//! and pushes with a lease, authenticated only through a credentials callback.
//!
//! Quartermaster never writes to the user's repository. libgit2's fetch over a local-path remote
//! into a shallow clone (what `actions/checkout` makes) deletes `.git/shallow` without fetching the
//! missing history, corrupting the clone; so every run fetches into its own bare mirror in a
//! temporary directory (depth 1 over the network, where shallow fetches work; in full from local
//! paths, whose transport refuses depth). Each action then works in a workspace whose git directory
//! is separate from its files and borrows the mirror's objects through `alternates`.

use secrecy::{ExposeSecret, SecretString};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// More changed files than this means the commands did something other than update dependencies
/// (a build directory that is not ignored, a vendored tree rewritten...): nothing is committed.
pub const MAX_CHANGED_FILES: usize = 2000;

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
        "the commands changed {count} files (at most {MAX_CHANGED_FILES}); is a build or dependency directory missing from .gitignore?"
    )]
    TooManyChanges { count: usize },
    #[error("working_dir `{dir}` {why}")]
    WorkingDir { dir: String, why: &'static str },
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

/// Where branches are fetched from and pushed to, and how to authenticate.
#[derive(Clone)]
pub struct RemoteSpec {
    pub url: String,
    /// User name for HTTP basic authentication (`x-access-token` on GitHub, `oauth2` on GitLab).
    pub username: Option<String>,
    pub token: Option<SecretString>,
}

impl std::fmt::Debug for RemoteSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteSpec")
            .field("url", &display_url(&self.url))
            .field("username", &self.username)
            .field("token", &self.token.as_ref().map(|_| "***"))
            .finish()
    }
}

impl RemoteSpec {
    /// Local paths and `file://` URLs: fetched in full (libgit2's local transport has no depth).
    pub fn is_local(&self) -> bool {
        !self.url.contains("://") || self.url.starts_with("file://")
    }

    fn callbacks(&self) -> git2::RemoteCallbacks<'_> {
        let mut callbacks = git2::RemoteCallbacks::new();
        let tries = Cell::new(0u8);
        callbacks.credentials(move |url, _user, allowed| {
            // The token goes to the configured remote and nowhere else: not to a host a redirect
            // or a rewritten URL points at.
            if !same_remote(url, &self.url) {
                return Err(git2::Error::from_str(&format!(
                    "refusing to send credentials to {}",
                    display_url(url)
                )));
            }
            // libgit2 asks again after a refused token; asking forever would loop.
            tries.set(tries.get() + 1);
            match (&self.token, tries.get()) {
                (Some(token), 1) if allowed.contains(git2::CredentialType::USER_PASS_PLAINTEXT) => {
                    git2::Cred::userpass_plaintext(
                        self.username.as_deref().unwrap_or("x-access-token"),
                        token.expose_secret(),
                    )
                }
                _ => Err(git2::Error::from_str("authentication failed")),
            }
        });
        callbacks
    }

    fn classify(&self, context: &str, e: git2::Error) -> GitError {
        if e.class() == git2::ErrorClass::Http && e.code() == git2::ErrorCode::Auth
            || e.message().contains("authentication failed")
            || e.message().contains("status code: 401")
            || e.message().contains("status code: 403")
        {
            GitError::Auth {
                url: display_url(&self.url),
            }
        } else {
            GitError::Git {
                context: context.to_string(),
                message: e.message().to_string(),
            }
        }
    }
}

/// Whether two remote URLs name the same repository (ignoring user information, a trailing `/`
/// or `.git`, and the case of scheme and host).
fn same_remote(a: &str, b: &str) -> bool {
    let normal = |url: &str| {
        let shown = display_url(url);
        let shown = shown.trim_end_matches('/');
        let shown = shown.strip_suffix(".git").unwrap_or(shown);
        match shown.split_once("://") {
            Some((scheme, rest)) => {
                let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
                format!(
                    "{}://{}/{path}",
                    scheme.to_ascii_lowercase(),
                    host.to_ascii_lowercase()
                )
            }
            None => shown.to_string(),
        }
    };
    normal(a) == normal(b)
}

/// Opens `spec` as an anonymous remote of `repo`, refusing it if the repository's configuration
/// rewrote its URL (`url.<x>.insteadOf`) or gave it a push URL: a command could have written that
/// configuration to send the next push, and the token, elsewhere.
fn open_remote<'r>(repo: &'r git2::Repository, spec: &RemoteSpec) -> Result<git2::Remote<'r>> {
    let remote = repo
        .remote_anonymous(&spec.url)
        .map_err(git("opening the remote"))?;
    let rewritten =
        remote.url().ok() != Some(spec.url.as_str()) || remote.pushurl().ok().flatten().is_some();
    if rewritten {
        return Err(GitError::Tampered);
    }
    Ok(remote)
}

/// A URL with any user information (`user:token@`) removed, fit for logs and reports.
pub fn display_url(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            if path.is_empty() && !rest.contains('/') {
                format!("{scheme}://{host}")
            } else {
                format!("{scheme}://{host}/{path}")
            }
        }
        None => url.to_string(),
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
pub struct CommitInfo {
    pub id: git2::Oid,
    pub tree: git2::Oid,
    pub parents: Vec<git2::Oid>,
    pub author_email: String,
    pub committer_email: String,
}

/// A bare scratch repository holding what was fetched from the remote during one run.
pub struct Mirror {
    repo: git2::Repository,
    remote: RemoteSpec,
    /// See [`fingerprint`]: checked before every connection, since commands run meanwhile;
    /// taken again after Quartermaster's own fetches (a shallow fetch rewrites `shallow`).
    fingerprint: std::cell::RefCell<Vec<u8>>,
    _dir: tempfile::TempDir,
}

impl Mirror {
    pub fn new(remote: RemoteSpec) -> Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("quartermaster-mirror-")
            .tempdir()
            .map_err(io("creating the scratch mirror"))?;
        let repo =
            git2::Repository::init_bare(dir.path()).map_err(git("creating the scratch mirror"))?;
        Ok(Self {
            fingerprint: std::cell::RefCell::new(fingerprint(dir.path())),
            repo,
            remote,
            _dir: dir,
        })
    }

    fn check_untampered(&self) -> Result<()> {
        if fingerprint(self.repo.path()) == *self.fingerprint.borrow() {
            Ok(())
        } else {
            Err(GitError::Tampered)
        }
    }

    pub fn remote(&self) -> &RemoteSpec {
        &self.remote
    }

    /// The remote's branches and their tips (`git ls-remote --heads`).
    pub fn list(&self) -> Result<BTreeMap<String, git2::Oid>> {
        self.check_untampered()?;
        let mut remote = open_remote(&self.repo, &self.remote)?;
        let connection = remote
            .connect_auth(git2::Direction::Fetch, Some(self.remote.callbacks()), None)
            .map_err(|e| self.remote.classify("listing the remote's branches", e))?;
        let heads = connection
            .list()
            .map_err(git("listing the remote's branches"))?
            .iter()
            .filter_map(|h| {
                h.name()
                    .strip_prefix("refs/heads/")
                    .map(|b| (b.to_string(), h.oid()))
            })
            .collect();
        Ok(heads)
    }

    /// Fetches branches into `refs/remotes/origin/<branch>`.
    pub fn fetch(&self, branches: &[&str]) -> Result<()> {
        if branches.is_empty() {
            return Ok(());
        }
        let refspecs: Vec<String> = branches
            .iter()
            .map(|b| format!("+refs/heads/{b}:refs/remotes/origin/{b}"))
            .collect();
        self.check_untampered()?;
        let mut remote = open_remote(&self.repo, &self.remote)?;
        let mut options = git2::FetchOptions::new();
        options.remote_callbacks(self.remote.callbacks());
        if !self.remote.is_local() {
            options.depth(1);
        }
        remote
            .fetch(&refspecs, Some(&mut options), None)
            .map_err(|e| self.remote.classify("fetching from the remote", e))?;
        *self.fingerprint.borrow_mut() = fingerprint(self.repo.path());
        Ok(())
    }

    /// The fetched tip of `branch`.
    pub fn tip(&self, branch: &str) -> Option<git2::Oid> {
        self.repo
            .refname_to_id(&format!("refs/remotes/origin/{branch}"))
            .ok()
    }

    pub fn commit_info(&self, id: git2::Oid) -> Result<CommitInfo> {
        let commit = self.repo.find_commit(id).map_err(git("reading a commit"))?;
        // A shallow fetch grafts its boundary commits to have no parents; the commit object still
        // names them, and "is this branch one commit on top of main" needs the real ones.
        let parents = commit
            .raw_header()
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.strip_prefix("parent "))
            .filter_map(|p| git2::Oid::from_str(p.trim()).ok())
            .collect();
        Ok(CommitInfo {
            id,
            tree: commit.tree_id(),
            parents,
            author_email: commit.author().email().unwrap_or_default().to_string(),
            committer_email: commit.committer().email().unwrap_or_default().to_string(),
        })
    }

    /// Author and committer e-mail addresses of the commits on `tip` that `base` does not have.
    /// Where history is shallow and the walk cannot finish, the tip alone answers.
    pub fn branch_authors(&self, tip: git2::Oid, base: git2::Oid) -> Result<Vec<String>> {
        let walk = || -> std::result::Result<Vec<String>, git2::Error> {
            let mut walk = self.repo.revwalk()?;
            walk.push(tip)?;
            if self.repo.find_commit(base).is_ok() {
                walk.hide(base)?;
            }
            let mut emails = Vec::new();
            for id in walk {
                let commit = self.repo.find_commit(id?)?;
                emails.push(commit.author().email().unwrap_or_default().to_string());
                emails.push(commit.committer().email().unwrap_or_default().to_string());
            }
            Ok(emails)
        };
        match walk() {
            Ok(emails) => Ok(emails),
            Err(_) => {
                let tip = self.commit_info(tip)?;
                Ok(vec![tip.author_email, tip.committer_email])
            }
        }
    }

    /// A fresh workspace with `base` checked out.
    pub fn workspace(&self, base: git2::Oid) -> Result<Workspace> {
        Workspace::create(self, base)
    }

    /// Deletes `branch` on the remote if it still points at `expected`.
    pub fn delete_branch(&self, branch: &str, expected: git2::Oid) -> Result<()> {
        self.check_untampered()?;
        push(
            &self.repo,
            &self.remote,
            &format!(":refs/heads/{branch}"),
            branch,
            Some(expected),
        )
    }
}

/// Pushes one refspec to `refs/heads/<branch>` under a lease: the remote branch must still be at
/// `expected` (`None`: absent). The lease is checked in the push negotiation, on the connection
/// that pushes, and the server only applies the update if the branch is still where that
/// negotiation saw it. Per-ref rejections, which `Remote::push` does not report, are surfaced.
fn push(
    repo: &git2::Repository,
    spec: &RemoteSpec,
    refspec: &str,
    branch: &str,
    expected: Option<git2::Oid>,
) -> Result<()> {
    let mut remote = open_remote(repo, spec)?;
    let wanted = format!("refs/heads/{branch}");
    let moved: std::cell::RefCell<Option<Option<git2::Oid>>> = std::cell::RefCell::new(None);
    let rejection = std::cell::RefCell::new(None);
    // Servers explain refusals in `remote:` lines (GitHub's GH006/GH013, workflow permissions).
    let remote_says = std::cell::RefCell::new(Vec::new());
    let mut callbacks = spec.callbacks();
    callbacks.push_update_reference(|_name, status| {
        if let Some(message) = status {
            *rejection.borrow_mut() = Some(message.to_string());
        }
        Ok(())
    });
    callbacks.push_negotiation(|updates| {
        for update in updates {
            if update.dst_refname().ok() == Some(wanted.as_str()) {
                let current = (!update.src().is_zero()).then(|| update.src());
                if current != expected {
                    *moved.borrow_mut() = Some(current);
                    return Err(git2::Error::from_str("the branch moved"));
                }
            }
        }
        Ok(())
    });
    callbacks.sideband_progress(|data| {
        let mut said = remote_says.borrow_mut();
        if said.len() < 8192 {
            said.extend_from_slice(data);
        }
        true
    });
    let mut options = git2::PushOptions::new();
    options.remote_callbacks(callbacks);
    let pushed = remote.push(&[refspec], Some(&mut options));
    drop(options);
    if let Some(found) = moved.into_inner() {
        let show = |o: Option<git2::Oid>| o.map_or("nothing".to_string(), |o| o.to_string());
        return Err(GitError::LeaseMismatch {
            branch: branch.to_string(),
            expected: show(expected),
            found: show(found),
        });
    }
    let explained = |message: String| {
        let said = String::from_utf8_lossy(&remote_says.borrow())
            .trim()
            .to_string();
        if said.is_empty() {
            message
        } else {
            format!(
                "{message}; the server said: {}",
                said.replace(['\r', '\n'], " ")
            )
        }
    };
    pushed.map_err(|e| match spec.classify(&format!("pushing {branch}"), e) {
        GitError::Git { message, .. } => GitError::Rejected {
            branch: branch.to_string(),
            message: explained(message),
        },
        other => other,
    })?;
    match rejection.into_inner() {
        Some(message) => Err(GitError::Rejected {
            branch: branch.to_string(),
            message: explained(message),
        }),
        None => Ok(()),
    }
}

/// A new commit made in a workspace.
#[derive(Debug, Clone)]
pub struct NewCommit {
    pub id: git2::Oid,
    pub tree: git2::Oid,
    pub base: git2::Oid,
    /// Paths added, modified or deleted, relative to the repository root.
    pub files: Vec<String>,
}

/// A throwaway checkout of one commit: files in one temporary directory, the git directory in
/// another, so commands running among the files find no `.git` to tamper with.
pub struct Workspace {
    repo: git2::Repository,
    base: git2::Oid,
    tree_dir: tempfile::TempDir,
    git_dir: tempfile::TempDir,
    fingerprint: Vec<u8>,
}

impl Workspace {
    fn create(mirror: &Mirror, base: git2::Oid) -> Result<Self> {
        let tree_dir = tempfile::Builder::new()
            .prefix("quartermaster-ws-")
            .tempdir()
            .map_err(io("creating a workspace"))?;
        let git_dir = tempfile::Builder::new()
            .prefix("quartermaster-git-")
            .tempdir()
            .map_err(io("creating a workspace"))?;
        let mut options = git2::RepositoryInitOptions::new();
        options.workdir_path(tree_dir.path()).no_dotgit_dir(true);
        git2::Repository::init_opts(git_dir.path(), &options)
            .map_err(git("creating a workspace"))?;
        // libgit2 leaves a `.git` link among the files; the point is that there is none.
        let link = tree_dir.path().join(".git");
        if link.exists() {
            std::fs::remove_file(&link).map_err(io("creating a workspace"))?;
        }
        let objects = mirror.repo.path().join("objects");
        std::fs::write(
            git_dir.path().join("objects/info/alternates"),
            format!("{}\n", objects.display()),
        )
        .map_err(io("creating a workspace"))?;
        if let Ok(shallow) = std::fs::read(mirror.repo.path().join("shallow")) {
            std::fs::write(git_dir.path().join("shallow"), shallow)
                .map_err(io("creating a workspace"))?;
        }
        let repo = git2::Repository::open(git_dir.path()).map_err(git("opening a workspace"))?;
        repo.set_head_detached(base)
            .map_err(git("checking out the base commit"))?;
        repo.checkout_head(Some(git2::build::CheckoutBuilder::new().force()))
            .map_err(git("checking out the base commit"))?;
        let fingerprint = fingerprint(git_dir.path());
        Ok(Self {
            repo,
            base,
            tree_dir,
            git_dir,
            fingerprint,
        })
    }

    /// The workspace's files.
    pub fn root(&self) -> &Path {
        self.tree_dir.path()
    }

    /// The commit the workspace started from.
    pub fn base(&self) -> git2::Oid {
        self.base
    }

    /// Resolves `working_dir` inside the workspace, refusing anything (a symlink, say) that leads
    /// outside it.
    pub fn dir(&self, working_dir: Option<&str>) -> Result<PathBuf> {
        let Some(dir) = working_dir else {
            return Ok(self.root().to_path_buf());
        };
        let fail = |why| GitError::WorkingDir {
            dir: dir.to_string(),
            why,
        };
        let root = self
            .root()
            .canonicalize()
            .map_err(io("resolving the workspace"))?;
        let resolved = root
            .join(dir)
            .canonicalize()
            .map_err(|_| fail("does not exist in the repository"))?;
        if !resolved.starts_with(&root) {
            return Err(fail(
                "leads outside the repository (through a symbolic link)",
            ));
        }
        if !resolved.is_dir() {
            return Err(fail("is not a directory"));
        }
        Ok(resolved)
    }

    fn check_untampered(&self) -> Result<()> {
        if fingerprint(self.git_dir.path()) == self.fingerprint {
            Ok(())
        } else {
            Err(GitError::Tampered)
        }
    }

    /// Commits everything the commands changed (tracked files modified or deleted, new files not
    /// ignored) as the bot, on top of the base. `None` when nothing changed.
    pub fn commit(&self, message: &str, author: &Identity) -> Result<Option<NewCommit>> {
        self.check_untampered()?;
        let mut index = self.repo.index().map_err(git("reading the index"))?;
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .map_err(git("staging changes"))?;
        index
            .update_all(["*"], None)
            .map_err(git("staging deletions"))?;
        let tree_id = index.write_tree().map_err(git("writing the tree"))?;
        let base = self
            .repo
            .find_commit(self.base)
            .map_err(git("reading the base commit"))?;
        if tree_id == base.tree_id() {
            return Ok(None);
        }
        let tree = self
            .repo
            .find_tree(tree_id)
            .map_err(git("reading the tree"))?;
        let diff = self
            .repo
            .diff_tree_to_tree(
                Some(&base.tree().map_err(git("reading the base tree"))?),
                Some(&tree),
                None,
            )
            .map_err(git("comparing trees"))?;
        let files: Vec<String> = diff
            .deltas()
            .filter_map(|d| d.new_file().path().or_else(|| d.old_file().path()))
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if files.len() > MAX_CHANGED_FILES {
            return Err(GitError::TooManyChanges { count: files.len() });
        }
        let signature = author.signature()?;
        let id = self
            .repo
            .commit(None, &signature, &signature, message, &tree, &[&base])
            .map_err(git("committing"))?;
        Ok(Some(NewCommit {
            id,
            tree: tree_id,
            base: self.base,
            files,
        }))
    }

    /// Force-pushes `commit` to `branch` if the remote branch is still at `expected` (the lease).
    pub fn push(
        &self,
        remote: &RemoteSpec,
        branch: &str,
        commit: git2::Oid,
        expected: Option<git2::Oid>,
    ) -> Result<()> {
        self.check_untampered()?;
        let local = format!("refs/heads/{branch}");
        self.repo
            .reference(&local, commit, true, "quartermaster")
            .map_err(git("naming the commit"))?;
        push(
            &self.repo,
            remote,
            &format!("+{local}:{local}"),
            branch,
            expected,
        )
    }
}

/// The parts of a workspace's git directory a command could change to redirect a push.
fn fingerprint(git_dir: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    for file in ["config", "objects/info/alternates", "shallow", "HEAD"] {
        out.extend_from_slice(file.as_bytes());
        out.extend(std::fs::read(git_dir.join(file)).unwrap_or_default());
        out.push(0);
    }
    out
}

/// Credentials that CI left in the user's checkout (`http.<url>.extraheader` from
/// `actions/checkout`, credential files it includes, tokens in remote URLs as GitLab Runner leaves
/// them, `url.<url-with-token>.insteadOf` rewrites), hidden while agent commands run and restored
/// byte for byte when dropped. Every config of the checkout is covered: the shared one, a
/// worktree's `config.worktree`, and those of submodules (`actions/checkout` persists its header in
/// each).
pub struct CredentialGuard {
    saved: Vec<(PathBuf, Vec<u8>)>,
}

impl CredentialGuard {
    /// Neutralises the credentials persisted in the checkout at `checkout` (if it is a repository).
    pub fn neutralise(checkout: &Path) -> Result<Self> {
        let mut guard = Self { saved: Vec::new() };
        let Ok(repo) = git2::Repository::open(checkout) else {
            return Ok(guard);
        };
        for config_path in checkout_configs(&repo) {
            guard.neutralise_config(&config_path)?;
        }
        Ok(guard)
    }

    fn neutralise_config(&mut self, config_path: &Path) -> Result<()> {
        let Ok(original) = std::fs::read(config_path) else {
            return Ok(());
        };
        let found = PersistedCredentials::find(config_path)?;
        if found.is_empty() {
            return Ok(());
        }
        self.saved.push((config_path.to_path_buf(), original));
        for file in &found.included_files {
            if self.saved.iter().any(|(p, _)| p == file) {
                continue;
            }
            if let Ok(bytes) = std::fs::read(file) {
                self.saved.push((file.clone(), bytes));
                std::fs::write(file, b"")
                    .map_err(io("neutralising an included credential file"))?;
            }
        }
        let mut config =
            git2::Config::open(config_path).map_err(git("opening the checkout's config"))?;
        for name in &found.removed {
            config
                .remove_multivar(name, ".*")
                .map_err(git("removing a persisted credential"))?;
        }
        for (name, url) in &found.urls {
            config
                .set_str(name, url)
                .map_err(git("removing a token from a remote URL"))?;
        }
        drop(config);
        if found.subsections {
            strip_subsection_userinfo(config_path)?;
        }
        Ok(())
    }

    /// Whether anything was neutralised.
    pub fn is_active(&self) -> bool {
        !self.saved.is_empty()
    }

    /// Puts everything back now (as dropping does); for exits that skip destructors.
    pub fn restore(&mut self) {
        for (path, bytes) in self.saved.drain(..).rev() {
            if let Err(e) = std::fs::write(&path, &bytes) {
                tracing::error!("could not restore {}: {e}", path.display());
            }
        }
    }
}

impl Drop for CredentialGuard {
    fn drop(&mut self) {
        self.restore();
    }
}

/// The config files of a checkout: the shared config (in the common directory, which differs from
/// the git directory in a worktree), the worktree's own, and every submodule's, nested ones too.
fn checkout_configs(repo: &git2::Repository) -> Vec<PathBuf> {
    let mut out = vec![repo.commondir().join("config")];
    let worktree = repo.path().join("config.worktree");
    if worktree.is_file() {
        out.push(worktree);
    }
    let mut pending = vec![repo.commondir().join("modules")];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            // Symlinks are not followed: a submodule's git directory is a real directory.
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if path.join("HEAD").is_file() && path.join("config").is_file() {
                out.push(path.join("config"));
                pending.push(path.join("modules"));
            } else {
                pending.push(path);
            }
        }
    }
    out
}

/// What `CredentialGuard` looks for in a config file.
#[derive(Debug, Default)]
struct PersistedCredentials {
    /// Entries removed outright: `http.<url>.extraheader`, and `url.<base>.insteadOf` /
    /// `pushInsteadOf` whose base holds user information.
    removed: Vec<String>,
    /// `remote.<name>.url` / `pushurl` entries holding user information, with the URL stripped of it.
    urls: Vec<(String, String)>,
    /// Files pulled in by `include.path` / `includeIf.<cond>.path` that hold credentials.
    included_files: Vec<PathBuf>,
    /// Whether a section is named by a URL holding user information (`[url "https://x:tok@h/"]`).
    subsections: bool,
}

impl PersistedCredentials {
    fn find(config_path: &Path) -> Result<Self> {
        let config =
            git2::Config::open(config_path).map_err(git("opening the checkout's config"))?;
        let mut found = Self::default();
        let mut entries = config
            .entries(None)
            .map_err(git("reading the checkout's config"))?;
        while let Some(entry) = entries.next() {
            let Ok(entry) = entry else { continue };
            let (Ok(name), Ok(value)) = (entry.name(), entry.value()) else {
                continue;
            };
            let lower = name.to_ascii_lowercase();
            if entry.include_depth() > 0 {
                continue;
            }
            if let Some((_, rest)) = name.split_once('.')
                && let Some((subsection, _)) = rest.rsplit_once('.')
                && has_userinfo(subsection)
            {
                found.subsections = true;
            }
            let rewrite_base = name
                .get(4..)
                .filter(|_| lower.starts_with("url."))
                .and_then(|rest| {
                    strip_suffix_ci(rest, ".insteadof")
                        .or_else(|| strip_suffix_ci(rest, ".pushinsteadof"))
                });
            let removed = (lower.starts_with("http.") && lower.ends_with(".extraheader"))
                || rewrite_base.is_some_and(has_userinfo);
            if removed {
                if !found.removed.iter().any(|h| h.eq_ignore_ascii_case(name)) {
                    found.removed.push(name.to_string());
                }
            } else if lower.starts_with("remote.")
                && (lower.ends_with(".url") || lower.ends_with(".pushurl"))
            {
                if has_userinfo(value) {
                    found.urls.push((name.to_string(), display_url(value)));
                }
            } else if (lower == "include.path"
                || lower.starts_with("includeif.") && lower.ends_with(".path"))
                && let Some(file) = resolve_include(config_path, value)
                && holds_credentials(&file)
            {
                found.included_files.push(file);
            }
        }
        Ok(found)
    }

    fn is_empty(&self) -> bool {
        self.removed.is_empty()
            && self.urls.is_empty()
            && self.included_files.is_empty()
            && !self.subsections
    }
}

/// Rewrites section headers named by a URL with user information to the URL without it. libgit2
/// removes a section's entries but leaves its header, and the header is where the token is.
fn strip_subsection_userinfo(config_path: &Path) -> Result<()> {
    let text = std::fs::read_to_string(config_path).map_err(io("reading the checkout's config"))?;
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let header = line.trim_start().starts_with('[');
        match (header, line.find('"'), line.rfind('"')) {
            (true, Some(open), Some(close))
                if close > open && has_userinfo(&line[open + 1..close]) =>
            {
                out.push_str(&line[..=open]);
                out.push_str(&display_url(&line[open + 1..close]));
                out.push_str(&line[close..]);
            }
            _ => out.push_str(line),
        }
    }
    std::fs::write(config_path, out).map_err(io("removing a token from the checkout's config"))
}

/// Whether a URL carries `user[:password]@` before its host.
fn has_userinfo(url: &str) -> bool {
    url.contains("://") && display_url(url) != url
}

/// `strip_suffix`, ignoring ASCII case (git config variable names are case-insensitive).
fn strip_suffix_ci<'s>(s: &'s str, suffix: &str) -> Option<&'s str> {
    let split = s.len().checked_sub(suffix.len())?;
    (s.is_char_boundary(split) && s[split..].eq_ignore_ascii_case(suffix)).then(|| &s[..split])
}

fn resolve_include(config_path: &Path, value: &str) -> Option<PathBuf> {
    let path = if let Some(rest) = value.strip_prefix("~/") {
        PathBuf::from(std::env::var_os("HOME")?).join(rest)
    } else {
        let p = PathBuf::from(value);
        if p.is_absolute() {
            p
        } else {
            config_path.parent()?.join(p)
        }
    };
    path.is_file().then_some(path)
}

fn holds_credentials(file: &Path) -> bool {
    std::fs::read_to_string(file).is_ok_and(|text| {
        let lower = text.to_ascii_lowercase();
        lower.contains("extraheader")
            || lower.contains("authorization")
            || lower.contains("@") && lower.contains("://")
    })
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

    #[test]
    fn urls_lose_their_credentials_for_display() {
        assert_eq!(
            display_url("https://gitlab-ci-token:glcbt-abc@gitlab.example.com/g/p.git"),
            "https://gitlab.example.com/g/p.git"
        );
        assert_eq!(
            display_url("https://github.com/o/r"),
            "https://github.com/o/r"
        );
        assert_eq!(display_url("/srv/git/r.git"), "/srv/git/r.git");
        assert_eq!(display_url("https://u:p@host"), "https://host");
    }

    #[test]
    fn remotes_compare_without_credentials_or_suffixes() {
        assert!(same_remote(
            "https://github.com/o/r.git",
            "https://x-access-token@GitHub.com/o/r"
        ));
        assert!(same_remote("/srv/r.git", "/srv/r.git"));
        assert!(!same_remote(
            "https://github.com/o/r.git",
            "https://evil.example/o/r.git"
        ));
        assert!(!same_remote(
            "https://github.com/o/r.git",
            "https://github.com/o/other.git"
        ));
    }

    #[test]
    fn a_rewritten_remote_url_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let remote = dir.path().join("remote.git");
        git2::Repository::init_bare(&remote).unwrap();
        let spec = RemoteSpec {
            url: remote.display().to_string(),
            username: None,
            token: None,
        };
        let mirror = Mirror::new(spec.clone()).unwrap();
        assert!(mirror.list().is_ok());
        let mut config = git2::Config::open(&mirror.repo.path().join("config")).unwrap();
        config
            .set_str("url.https://evil.example/x.git.insteadOf", &spec.url)
            .unwrap();
        // Even with the change unnoticed by the fingerprint, the rewritten URL is refused.
        *mirror.fingerprint.borrow_mut() = fingerprint(mirror.repo.path());
        assert!(matches!(
            open_remote(&mirror.repo, &spec),
            Err(GitError::Tampered)
        ));
        assert!(matches!(mirror.list(), Err(GitError::Tampered)));
    }

    #[test]
    fn local_remotes_are_recognised() {
        let spec = |url: &str| RemoteSpec {
            url: url.into(),
            username: None,
            token: None,
        };
        assert!(spec("/srv/git/r.git").is_local());
        assert!(spec("file:///srv/git/r.git").is_local());
        assert!(!spec("https://github.com/o/r.git").is_local());
    }
}
