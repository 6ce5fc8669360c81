//! Copy-on-write workspaces: one checkout of a commit per run (the [`BaseCheckout`]) is the
//! read-only bottom layer of every workspace; each workspace adds an upper layer of its own.
//! Creating one is a mount; bringing it to another commit is dropping its upper layer and
//! writing, into a new one, only what that commit has that the base checkout has not (nothing,
//! for the commit the checkout holds). What changed is then what the upper layer holds
//! ([`super::walk`]), never a walk of the whole tree.

use super::extract::{extract, make_dir, safe_path, write_entry};
use super::{Files, Workspace, WorkspaceSource, private_repository};
use crate::git::{Result, git, io};
use crate::sandbox::layers::upper;
use crate::sandbox::layers::{UPPER, WORK};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Shows a workspace's layers at a path: the sandbox's side, which knows whose they are.
pub(crate) trait Mounter: Send + Sync {
    /// Mounts at `view` an overlay of the layer directory `layer` (its `upper` and `work`
    /// directories) over the read-only `lower`.
    fn mount(&self, lower: &Path, layer: &Path, view: &Path) -> std::io::Result<()>;
    fn unmount(&self, view: &Path) -> std::io::Result<()>;
}

/// The bottom layer of a run's workspaces: a checkout of one commit, never written after.
pub(crate) struct BaseCheckout {
    dir: PathBuf,
    commit: git2::Oid,
}

impl BaseCheckout {
    /// Writes the files of `commit` into `dir` (made here), raw (no attribute of the tree
    /// applies), from the mirror `source` describes. A checkout that fails (the file system is
    /// full, the tree names a path git refuses) is removed.
    pub(crate) fn create(source: &WorkspaceSource, commit: git2::Oid, dir: &Path) -> Result<Self> {
        let made = Self {
            dir: dir.to_path_buf(),
            commit,
        };
        std::fs::create_dir_all(dir).map_err(io("making the base checkout"))?;
        extract(&source.repo, commit, dir)?;
        Ok(made)
    }

    pub(crate) fn commit(&self) -> git2::Oid {
        self.commit
    }
}

impl Drop for BaseCheckout {
    fn drop(&mut self) {
        let _ = crate::tree::remove(&self.dir);
    }
}

/// What a layered workspace is made of.
pub(crate) struct LayerSpec {
    pub base: Arc<BaseCheckout>,
    /// Where the files show: the mount point.
    pub view: PathBuf,
    /// This workspace's layer directory: its upper layer and overlayfs' work directory.
    pub dir: PathBuf,
    pub mounter: Box<dyn Mounter>,
}

pub(super) struct Layers {
    spec: LayerSpec,
    mounted: bool,
}

impl Layers {
    pub(super) fn view(&self) -> &Path {
        &self.spec.view
    }

    pub(super) fn upper(&self) -> PathBuf {
        self.spec.dir.join(UPPER)
    }

    fn unmount(&mut self) -> Result<()> {
        if std::mem::take(&mut self.mounted) {
            self.spec
                .mounter
                .unmount(&self.spec.view)
                .map_err(io("taking the workspace down"))?;
        }
        Ok(())
    }

    /// A new upper layer holding what `at` has that the base checkout has not, mounted.
    pub(super) fn reset(&mut self, repo: &git2::Repository, at: git2::Oid) -> Result<()> {
        self.unmount()?;
        let (upper, work) = (self.upper(), self.spec.dir.join(WORK));
        for dir in [&work, &upper] {
            crate::tree::remove_later(dir).map_err(io("dropping the upper layer"))?;
        }
        for dir in [&self.spec.dir, &upper, &work] {
            std::fs::create_dir_all(dir).map_err(io("making the upper layer"))?;
        }
        std::fs::set_permissions(&upper, std::fs::Permissions::from_mode(0o755))
            .map_err(io("making the upper layer"))?;
        let tree = |id| {
            repo.find_commit(id)
                .and_then(|c| c.tree())
                .map_err(git("reading a commit's tree"))
        };
        if at != self.spec.base.commit {
            seed(repo, &tree(self.spec.base.commit)?, &tree(at)?, &upper)?;
        }
        self.spec
            .mounter
            .mount(&self.spec.base.dir, &self.spec.dir, &self.spec.view)
            .map_err(io("mounting the workspace"))?;
        self.mounted = true;
        Ok(())
    }
}

impl Drop for Layers {
    fn drop(&mut self) {
        if self.unmount().is_ok() {
            let _ = crate::tree::remove_later(&self.spec.dir);
        }
    }
}

impl Workspace {
    /// A workspace at `base` made of layers (see the module documentation), shown at
    /// `spec.view`.
    pub(crate) fn layered(
        source: &WorkspaceSource,
        base: git2::Oid,
        spec: LayerSpec,
    ) -> Result<Self> {
        // The repository is made with a work tree of its own (libgit2 writes a `.git` link into
        // it), then pointed at the view, which shows nothing before it is mounted.
        let made = spec.dir.join("git-init");
        std::fs::create_dir_all(&made).map_err(io("making the workspace's layers"))?;
        let (repo, git_dir) = private_repository(source, &made)?;
        repo.set_workdir(&spec.view, false)
            .map_err(git("pointing the workspace at its files"))?;
        let mut layers = Layers {
            spec,
            mounted: false,
        };
        layers.reset(&repo, base)?;
        repo.set_head_detached(base)
            .map_err(git("recording the base commit"))?;
        let files = Files::Layers(layers);
        Ok(Self::assemble(source, (repo, git_dir), base, files))
    }
}

/// Writes into the empty upper layer `upper` what `to` holds that `from` (the base checkout's
/// tree) does not: files and links as they are, whiteouts where `from` has a path `to` lacks.
fn seed(
    repo: &git2::Repository,
    from: &git2::Tree<'_>,
    to: &git2::Tree<'_>,
    upper: &Path,
) -> Result<()> {
    let diff = repo
        .diff_tree_to_tree(Some(from), Some(to), None)
        .map_err(git("comparing the base checkout with the commit"))?;
    let fail = || io("writing the upper layer");
    for delta in diff.deltas() {
        let new = delta.new_file();
        let Some(path) = new.path().or_else(|| delta.old_file().path()) else {
            continue;
        };
        safe_path(path, u32::from(new.mode()))?;
        if hidden_by_upper(upper, path) {
            continue;
        }
        if delta.status() == git2::Delta::Deleted {
            // A directory `to` no longer has goes whole: no empty directory is left to show.
            let gone = gone_with(path, to);
            let at = upper.join(gone);
            if std::fs::symlink_metadata(&at).is_err() {
                parents(upper, gone, from).map_err(fail())?;
                upper::whiteout(&at).map_err(fail())?;
            }
            continue;
        }
        let at = upper.join(path);
        parents(upper, path, from).map_err(fail())?;
        if std::fs::symlink_metadata(&at).is_ok() {
            crate::tree::remove(&at).map_err(fail())?;
        }
        if new.mode() == git2::FileMode::Commit {
            make_dir(&at).map_err(fail())?;
            continue;
        }
        let blob = repo
            .find_blob(new.id())
            .map_err(git(format!("reading {}", path.display())))?;
        write_entry(&at, blob.content(), u32::from(new.mode())).map_err(fail())?;
    }
    Ok(())
}

/// What goes with the deleted `path`: its highest directory that `to` does not have as a
/// directory, else the path itself.
fn gone_with<'p>(path: &'p Path, to: &git2::Tree<'_>) -> &'p Path {
    let mut dirs: Vec<&Path> = path
        .ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
        .collect();
    dirs.reverse();
    dirs.into_iter()
        .find(|dir| {
            to.get_path(dir)
                .map_or(true, |e| e.kind() != Some(git2::ObjectType::Tree))
        })
        .unwrap_or(path)
}

/// Whether an ancestor of `path` is, in the upper layer, a file or a link (which replaced a
/// directory): what was below it is hidden already.
fn hidden_by_upper(upper: &Path, path: &Path) -> bool {
    path.ancestors().skip(1).any(|a| {
        !a.as_os_str().is_empty()
            && std::fs::symlink_metadata(upper.join(a)).is_ok_and(|m| m.is_file() || m.is_symlink())
    })
}

/// Makes the upper layer's directories above `path`: opaque where the base checkout has a
/// file instead (or where a whiteout stands), plain otherwise.
fn parents(upper: &Path, path: &Path, from: &git2::Tree<'_>) -> std::io::Result<()> {
    let mut sofar = PathBuf::new();
    let parts: Vec<_> = path.components().collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        sofar.push(part);
        let at = upper.join(&sofar);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => {
                std::fs::remove_file(&at)?;
                upper::opaque_dir(&at)?;
            }
            Err(_) => {
                let file_below = from
                    .get_path(&sofar)
                    .is_ok_and(|e| e.kind() != Some(git2::ObjectType::Tree));
                if file_below {
                    upper::opaque_dir(&at)?;
                } else {
                    make_dir(&at)?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
