//! The scratch mirror: a bare repository in a temporary directory holding what one run fetched.

use super::push::push;
use super::remote::open_remote;
use super::workspace::WorkspaceSource;
use super::{CommitInfo, GitError, RemoteSpec, Result, fingerprint, git, io};
use std::collections::BTreeMap;

/// A bare scratch repository holding what was fetched from the remote during one run.
pub(crate) struct Mirror {
    pub(super) repo: git2::Repository,
    remote: RemoteSpec,
    /// See [`fingerprint`]: checked before every connection, since commands run meanwhile;
    /// taken again after Quartermaster's own fetches (a shallow fetch rewrites `shallow`).
    fingerprint: std::cell::RefCell<Vec<u8>>,
    /// Quartermaster's private directory: the mirror and every workspace's git directory live in
    /// it, out of reach of the commands.
    scratch: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Mirror {
    /// A mirror of `remote` in a new directory inside `scratch`. A local remote lends the
    /// mirror its objects, as `git clone` of a local path shares them: fetching from it moves
    /// the refs, where libgit2's local transport would pack every object again (0.9 s at 50,000
    /// files for an unchanged branch).
    pub(crate) fn new(remote: RemoteSpec, scratch: &std::path::Path) -> Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("mirror-")
            .tempdir_in(scratch)
            .map_err(io("creating the scratch mirror"))?;
        git2::Repository::init_bare(dir.path()).map_err(git("creating the scratch mirror"))?;
        if let Some(objects) = remote.url.local_objects() {
            let mut line = objects.into_os_string().into_encoded_bytes();
            line.push(b'\n');
            std::fs::write(dir.path().join("objects/info/alternates"), line)
                .map_err(io("creating the scratch mirror"))?;
        }
        let repo =
            git2::Repository::open_bare(dir.path()).map_err(git("creating the scratch mirror"))?;
        Ok(Self {
            fingerprint: std::cell::RefCell::new(fingerprint(dir.path())),
            repo,
            remote,
            scratch: scratch.to_path_buf(),
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

    /// The remote's branches and their tips (`git ls-remote --heads`).
    pub(crate) fn list(&self) -> Result<BTreeMap<String, git2::Oid>> {
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
    pub(crate) fn fetch(&self, branches: &[&str]) -> Result<()> {
        self.fetch_deep(branches, 1)
    }

    /// Fetches branches with their last `depth` commits where history is shallow (a PR's commit
    /// and the base it was built on: depth 2).
    pub(crate) fn fetch_deep(&self, branches: &[&str], depth: i32) -> Result<()> {
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
        if !self.remote.url.is_local() {
            options.depth(depth);
        }
        remote
            .fetch(&refspecs, Some(&mut options), None)
            .map_err(|e| self.remote.classify("fetching from the remote", e))?;
        *self.fingerprint.borrow_mut() = fingerprint(self.repo.path());
        Ok(())
    }

    /// The fetched tip of `branch`.
    pub(crate) fn tip(&self, branch: &str) -> Option<git2::Oid> {
        self.repo
            .refname_to_id(&format!("refs/remotes/origin/{branch}"))
            .ok()
    }

    pub(crate) fn commit_info(&self, id: git2::Oid) -> Result<CommitInfo> {
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
            message: String::from_utf8_lossy(commit.message_bytes()).into_owned(),
        })
    }

    /// Author and committer e-mail addresses of the commits on `tip` that `base` does not have.
    /// Where history is shallow and the walk cannot finish, the tip alone answers.
    pub(crate) fn branch_authors(&self, tip: git2::Oid, base: git2::Oid) -> Result<Vec<String>> {
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

    /// A workspace with `base` checked out into the empty directory `tree`; its git directory is
    /// private.
    /// What a workspace needs of the mirror, to check out without holding it.
    pub(crate) fn source(&self) -> WorkspaceSource {
        WorkspaceSource::new(self.repo.path().to_path_buf(), self.scratch.clone())
    }

    /// The file at `path` (one name, at the root) in the tree of the fetched commit `commit`:
    /// `None` when absent, `Some(Err(kind))` when it is not a regular file, else its bytes (at
    /// most `limit` and one more, for the caller to refuse).
    pub(crate) fn root_file(
        &self,
        commit: git2::Oid,
        path: &str,
        limit: usize,
    ) -> Result<Option<std::result::Result<Vec<u8>, &'static str>>> {
        let tree = self
            .repo
            .find_commit(commit)
            .and_then(|c| c.tree())
            .map_err(git("reading the default branch's tree"))?;
        let Some(entry) = tree.get_name(path) else {
            return Ok(None);
        };
        let kind = match entry.filemode() {
            0o100644 | 0o100755 => None,
            0o120000 => Some("a symbolic link"),
            0o040000 => Some("a directory"),
            0o160000 => Some("a submodule"),
            _ => Some("not a file"),
        };
        if let Some(kind) = kind {
            return Ok(Some(Err(kind)));
        }
        let blob = self
            .repo
            .find_blob(entry.id())
            .map_err(git("reading a file of the default branch"))?;
        let bytes = blob.content();
        Ok(Some(Ok(bytes[..bytes.len().min(limit + 1)].to_vec())))
    }

    /// Deletes `branch` on the remote if it still points at `expected`.
    pub(crate) fn delete_branch(&self, branch: &str, expected: git2::Oid) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::RemoteUrl;

    #[test]
    fn a_rewritten_remote_url_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let remote = dir.path().join("remote.git");
        git2::Repository::init_bare(&remote).unwrap();
        let url = remote.display().to_string();
        let spec = RemoteSpec {
            url: RemoteUrl::new(url.clone()),
            username: None,
            token: None,
        };
        let mirror = Mirror::new(spec.clone(), dir.path()).unwrap();
        assert!(mirror.list().is_ok());
        let mut config = git2::Config::open(&mirror.repo.path().join("config")).unwrap();
        config
            .set_str("url.https://evil.example/x.git.insteadOf", &url)
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
    fn a_local_remote_lends_its_objects_and_a_file_url_too() {
        let dir = tempfile::tempdir().unwrap();
        let seed = dir.path().join("seed");
        crate::git::reset::tests::sh(
            dir.path(),
            "git init -q -b main seed && cd seed && git -c user.name=t -c user.email=t@t \
             commit -q --allow-empty -m one",
        );
        for url in [
            seed.display().to_string(),
            format!("file://{}", seed.display()),
        ] {
            let spec = RemoteSpec {
                url: RemoteUrl::new(url.clone()),
                username: None,
                token: None,
            };
            let scratch = tempfile::tempdir_in(dir.path()).unwrap();
            let mirror = Mirror::new(spec, scratch.path()).unwrap();
            mirror.list().unwrap();
            mirror.fetch(&["main"]).unwrap();
            let tip = mirror.tip("main").unwrap();
            assert!(mirror.commit_info(tip).is_ok(), "{url}");
            let objects = mirror.repo.path().join("objects");
            let own = |sub: &str| std::fs::read_dir(objects.join(sub)).unwrap().count();
            assert_eq!(own("pack"), 0, "{url}: no pack was fetched");
            // Control: the commit is there only through the remote's objects.
            std::fs::remove_file(objects.join("info/alternates")).unwrap();
            let alone = git2::Repository::open_bare(mirror.repo.path()).unwrap();
            assert!(alone.find_commit(tip).is_err(), "{url}");
        }
    }
}
