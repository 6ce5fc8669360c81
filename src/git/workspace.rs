//! Workspaces: the files of one commit, whose git directory lives apart from them. Either a
//! checkout of the slot's own, brought back to the base between units ([`Workspace::create`]),
//! or copy-on-write layers over one checkout of the run ([`Workspace::layered`], see
//! [`layers`]).

use super::push::{confirm, push};
use super::reset::{self, Entries};
use super::{GitError, Identity, RemoteSpec, Result, fingerprint, git, io};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

mod extract;
mod layers;
mod stage;
mod walk;

pub(crate) use layers::{BaseCheckout, LayerSpec, Mounter};

/// The attributes of every path, in the workspace's own `info/attributes`, which outranks every
/// `.gitattributes` of the tree: no end-of-line conversion, `ident`, filter driver or encoding
/// applies when checking out, comparing or staging, so the bytes committed are the bytes on
/// disk, which are the bytes the verifier read.
const RAW: &str = "* -text -crlf -ident -filter -working-tree-encoding !eol\n";

/// The changes of a workspace, staged: a tree and the paths that differ from the base.
#[derive(Debug, Clone)]
pub(crate) struct Staged {
    pub tree: git2::Oid,
    /// Paths added, modified or deleted, relative to the repository root.
    pub files: Vec<String>,
}

/// A new commit made in a workspace.
#[derive(Debug, Clone)]
pub(crate) struct NewCommit {
    pub id: git2::Oid,
    pub tree: git2::Oid,
    pub base: git2::Oid,
    /// Paths added, modified or deleted, relative to the repository root.
    pub files: Vec<String>,
}

/// Where a workspace borrows its objects from (the mirror) and keeps its git directory: taken
/// from the mirror, so that a checkout needs no hold on it.
#[derive(Debug, Clone)]
pub(crate) struct WorkspaceSource {
    repo: PathBuf,
    scratch: PathBuf,
}

impl WorkspaceSource {
    pub(super) fn new(repo: PathBuf, scratch: PathBuf) -> Self {
        Self { repo, scratch }
    }
}

/// The files of one commit whose git directory lives apart from them, in Quartermaster's private
/// directory: commands running among the files find no `.git` to tamper with.
pub(crate) struct Workspace {
    pub(super) repo: git2::Repository,
    base: git2::Oid,
    git_dir: tempfile::TempDir,
    /// The mirror's `shallow` file, whose boundary the workspace follows (see [`Self::reset`]).
    mirror_shallow: PathBuf,
    fingerprint: Vec<u8>,
    files: Files,
}

/// Where the files are.
enum Files {
    /// A checkout of the workspace's own.
    Checkout {
        tree: PathBuf,
        /// The paths of the base tree, for bringing the workspace back to it.
        entries: Option<Entries>,
        /// The mode and owner the workspace's root had when it was checked out.
        root: reset::Root,
    },
    Layers(layers::Layers),
}

/// A private git directory whose work tree is `tree`, borrowing the objects of the mirror.
fn private_repository(
    source: &WorkspaceSource,
    tree: &Path,
) -> Result<(git2::Repository, tempfile::TempDir)> {
    let git_dir = tempfile::Builder::new()
        .prefix("git-")
        .tempdir_in(&source.scratch)
        .map_err(io("creating a workspace"))?;
    let mut options = git2::RepositoryInitOptions::new();
    options.workdir_path(tree).no_dotgit_dir(true);
    git2::Repository::init_opts(git_dir.path(), &options).map_err(git("creating a workspace"))?;
    // libgit2 leaves a `.git` link among the files; the point is that there is none.
    let link = tree.join(".git");
    if std::fs::symlink_metadata(&link).is_ok_and(|m| m.is_file()) {
        std::fs::remove_file(&link).map_err(io("creating a workspace"))?;
    }
    std::fs::create_dir_all(git_dir.path().join("info"))
        .and_then(|()| std::fs::write(git_dir.path().join("info/attributes"), RAW))
        .map_err(io("creating a workspace"))?;
    let objects = source.repo.join("objects");
    std::fs::write(
        git_dir.path().join("objects/info/alternates"),
        format!("{}\n", objects.display()),
    )
    .map_err(io("creating a workspace"))?;
    copy_shallow(&source.repo.join("shallow"), git_dir.path())?;
    let repo = git2::Repository::open(git_dir.path()).map_err(git("opening a workspace"))?;
    Ok((repo, git_dir))
}

impl Workspace {
    /// Checks `base` out into `tree`, borrowing the objects of the mirror `source` describes.
    pub(crate) fn create(source: &WorkspaceSource, base: git2::Oid, tree: &Path) -> Result<Self> {
        let (repo, git_dir) = private_repository(source, tree)?;
        repo.set_head_detached(base)
            .map_err(git("checking out the base commit"))?;
        repo.checkout_head(Some(git2::build::CheckoutBuilder::new().force()))
            .map_err(git("checking out the base commit"))?;
        let files = Files::Checkout {
            root: reset::Root::of(tree)?,
            tree: tree.to_path_buf(),
            entries: None,
        };
        Ok(Self::assemble(source, (repo, git_dir), base, files))
    }

    /// A workspace at `base` of the repository `repo` (in `git_dir`), whose files are `files`.
    fn assemble(
        source: &WorkspaceSource,
        (repo, git_dir): (git2::Repository, tempfile::TempDir),
        base: git2::Oid,
        files: Files,
    ) -> Self {
        let fingerprint = fingerprint(git_dir.path());
        Self {
            repo,
            base,
            git_dir,
            mirror_shallow: source.repo.join("shallow"),
            fingerprint,
            files,
        }
    }

    /// Whether the files are copy-on-write layers.
    pub(crate) fn is_layered(&self) -> bool {
        matches!(self.files, Files::Layers(_))
    }

    /// Records in the index the files' new owner and ctime after Quartermaster handed a fresh
    /// checkout to the sandbox's user: a change of owner changes no content, and without this
    /// git would read every file of the tree again to find that out. A file whose size, mtime or
    /// inode changed as well is left for git to read.
    pub(crate) fn refresh_owners(&self) -> Result<()> {
        let Files::Checkout { tree, .. } = &self.files else {
            // Layers are the slot's through an idmap: nothing changed on disk.
            return Ok(());
        };
        let mut index = self.repo.index().map_err(git("reading the index"))?;
        let entries: Vec<git2::IndexEntry> = index.iter().collect();
        for mut entry in entries {
            let path = tree.join(std::ffi::OsStr::from_bytes(&entry.path));
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let same = u64::from(entry.ino) == meta.ino() & 0xffff_ffff
                && u64::from(entry.file_size) == meta.size() & 0xffff_ffff
                && i64::from(entry.mtime.seconds()) == meta.mtime()
                && i64::from(entry.mtime.nanoseconds()) == meta.mtime_nsec();
            if !same {
                continue;
            }
            entry.uid = meta.uid();
            entry.gid = meta.gid();
            entry.ctime = git2::IndexTime::new(
                i32::try_from(meta.ctime()).unwrap_or(i32::MAX),
                u32::try_from(meta.ctime_nsec()).unwrap_or(0),
            );
            index.add(&entry).map_err(git("updating the index"))?;
        }
        index.write().map_err(git("writing the index"))
    }

    /// Brings the workspace back to exactly `base`, ready for the next unit. Layers: the upper
    /// layer is dropped, and a new one holds what `base` has that the base checkout has not. A
    /// checkout: what the last unit's commands added, removed, changed, linked or re-moded is
    /// undone, and a status that counts ignored and untracked files must then find nothing (the
    /// cost follows what changed, plus one walk of the tree). An error means the workspace must
    /// not be used again.
    pub(crate) fn reset(&mut self, base: git2::Oid) -> Result<()> {
        self.check_untampered()?;
        self.follow_shallow()?;
        match &mut self.files {
            Files::Layers(layers) => {
                layers.reset(&self.repo, base)?;
                self.repo
                    .set_head_detached(base)
                    .map_err(git("recording the base commit"))?;
            }
            Files::Checkout {
                tree,
                entries,
                root,
            } => reset_checkout(&self.repo, (tree, entries, root), base)?,
        }
        self.base = base;
        self.fingerprint = fingerprint(self.git_dir.path());
        Ok(())
    }

    /// The commit the workspace started from.
    #[cfg(test)]
    pub(crate) fn base(&self) -> git2::Oid {
        self.base
    }

    /// The workspace's files.
    pub(crate) fn root(&self) -> &Path {
        match &self.files {
            Files::Checkout { tree, .. } => tree,
            Files::Layers(layers) => layers.view(),
        }
    }

    /// Resolves `working_dir` inside the workspace, refusing anything (a symlink, say) that leads
    /// outside it.
    pub(crate) fn dir(&self, working_dir: Option<&str>) -> Result<PathBuf> {
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

    /// Takes the mirror's shallow boundary again: a fetch since the workspace was made (a PR's
    /// branch fetched deeper, to rebuild it) moves it, and a push walks history down to it. With
    /// a stale boundary, libgit2 looks for commits below it that neither holds, and the push fails.
    fn follow_shallow(&mut self) -> Result<()> {
        let ours = std::fs::read(self.git_dir.path().join("shallow")).ok();
        if std::fs::read(&self.mirror_shallow).ok() == ours {
            return Ok(());
        }
        copy_shallow(&self.mirror_shallow, self.git_dir.path())?;
        // libgit2 reads the boundary when a repository is opened.
        self.repo =
            git2::Repository::open(self.git_dir.path()).map_err(git("opening a workspace"))?;
        if let Files::Layers(layers) = &self.files {
            self.repo
                .set_workdir(layers.view(), false)
                .map_err(git("pointing the workspace at its files"))?;
        }
        self.fingerprint = fingerprint(self.git_dir.path());
        Ok(())
    }

    fn check_untampered(&self) -> Result<()> {
        if fingerprint(self.git_dir.path()) == self.fingerprint {
            Ok(())
        } else {
            Err(GitError::Tampered)
        }
    }

    /// Commits what was staged as the bot, on top of the base.
    pub(crate) fn commit(
        &self,
        staged: Staged,
        message: &str,
        author: &Identity,
    ) -> Result<NewCommit> {
        self.check_untampered()?;
        let tree = self
            .repo
            .find_tree(staged.tree)
            .map_err(git("reading the tree"))?;
        let base = self
            .repo
            .find_commit(self.base)
            .map_err(git("reading the base commit"))?;
        let signature = author.signature()?;
        let id = self
            .repo
            .commit(None, &signature, &signature, message, &tree, &[&base])
            .map_err(git("committing"))?;
        Ok(NewCommit {
            id,
            tree: staged.tree,
            base: self.base,
            files: staged.files,
        })
    }

    /// Force-pushes `commit` to `branch` if the remote branch is still at `expected` (the lease).
    pub(crate) fn push(
        &self,
        remote: &RemoteSpec,
        branch: &str,
        commit: git2::Oid,
        expected: Option<git2::Oid>,
    ) -> Result<()> {
        self.check_untampered()?;
        // The commit id itself goes out, not a local ref naming it: nothing can move a ref between
        // the check and the push.
        push(
            &self.repo,
            remote,
            &format!("+{commit}:refs/heads/{branch}"),
            branch,
            expected,
        )?;
        confirm(&self.repo, remote, branch, commit)
    }
}

/// Brings the checkout at `tree` back to exactly `base` (see [`Workspace::reset`]): its root's
/// mode and owner, then what the base does not hold removed, then a hard reset, checked clean.
fn reset_checkout(
    repo: &git2::Repository,
    (tree, entries, root): (&Path, &mut Option<Entries>, &reset::Root),
    base: git2::Oid,
) -> Result<()> {
    root.restore(tree)?;
    let commit = repo
        .find_commit(base)
        .map_err(git("reading the base commit"))?;
    let base_tree = commit.tree().map_err(git("reading the base tree"))?;
    if entries.as_ref().is_none_or(|e| e.tree != base_tree.id()) {
        *entries = Some(reset::entries(&base_tree)?);
    }
    if let Some(entries) = entries {
        reset::clean(tree, entries)?;
    }
    repo.set_head_detached(base)
        .map_err(git("checking out the base commit"))?;
    let mut checkout = git2::build::CheckoutBuilder::new();
    checkout.force().remove_untracked(true).remove_ignored(true);
    repo.reset(
        commit.as_object(),
        git2::ResetType::Hard,
        Some(&mut checkout),
    )
    .map_err(git("resetting the workspace"))?;
    match reset::first_difference(repo)? {
        Some(path) => Err(GitError::Dirty { path }),
        None => Ok(()),
    }
}

/// Gives the workspace's git directory the mirror's shallow boundary (`mirror_shallow`), or none.
fn copy_shallow(mirror_shallow: &Path, git_dir: &Path) -> Result<()> {
    let ours = git_dir.join("shallow");
    match std::fs::read(mirror_shallow) {
        Ok(shallow) => std::fs::write(&ours, shallow),
        Err(_) if ours.exists() => std::fs::remove_file(&ours),
        Err(_) => Ok(()),
    }
    .map_err(io("copying the mirror's shallow boundary"))
}
