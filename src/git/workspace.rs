//! Workspaces: a throwaway checkout of one commit whose git directory lives apart from its files.

use super::push::{confirm, push};
use super::{
    GitError, Identity, MAX_CHANGED_FILES, Mirror, RemoteSpec, Result, fingerprint, git, io,
};
use std::path::{Path, PathBuf};

/// The changes of a workspace, staged: a tree and the paths that differ from the base.
#[derive(Debug, Clone)]
pub struct Staged {
    pub tree: git2::Oid,
    /// Paths added, modified or deleted, relative to the repository root.
    pub files: Vec<String>,
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

/// A checkout of one commit whose git directory lives apart from its files, in Quartermaster's
/// private directory: commands running among the files find no `.git` to tamper with.
pub struct Workspace {
    repo: git2::Repository,
    base: git2::Oid,
    tree: PathBuf,
    git_dir: tempfile::TempDir,
    fingerprint: Vec<u8>,
}

impl Workspace {
    pub(super) fn create(mirror: &Mirror, base: git2::Oid, tree: &Path) -> Result<Self> {
        let git_dir = tempfile::Builder::new()
            .prefix("git-")
            .tempdir_in(mirror.scratch())
            .map_err(io("creating a workspace"))?;
        let mut options = git2::RepositoryInitOptions::new();
        options.workdir_path(tree).no_dotgit_dir(true);
        git2::Repository::init_opts(git_dir.path(), &options)
            .map_err(git("creating a workspace"))?;
        // libgit2 leaves a `.git` link among the files; the point is that there is none.
        let link = tree.join(".git");
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
            tree: tree.to_path_buf(),
            git_dir,
            fingerprint,
        })
    }

    /// The workspace's files.
    pub fn root(&self) -> &Path {
        &self.tree
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

    /// Stages everything the commands changed (tracked files modified or deleted, new files not
    /// ignored). `None` when nothing changed.
    pub fn stage(&self) -> Result<Option<Staged>> {
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
        Ok(Some(Staged {
            tree: tree_id,
            files,
        }))
    }

    /// Commits what was staged as the bot, on top of the base.
    pub fn commit(&self, staged: Staged, message: &str, author: &Identity) -> Result<NewCommit> {
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
    pub fn push(
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
