//! Warm, poison-proof caches: the package managers' caches and cargo's build output, as
//! copy-on-write layers.
//!
//! Before the first unit, a warm-up on the base commit (its frozen install and pre-build, in a
//! cell of its own) writes them into the run's warm layer. Every later command sees them at one
//! path, the cache view ([`VIEW`] in the sandbox's directory), through an overlay: the warm
//! layer read-only below, its cell's own upper layer above. What a unit writes there stays in
//! that upper layer, which goes with the cell: it reaches neither another unit nor the next run.
//! One path for every command matters: cargo and Go key their build caches by absolute path.
//!
//! Quartermaster builds each command's overlay as a detached mount and hands it to the command's
//! helper with the job; the namespace's init attaches it, so nothing is mounted where
//! Quartermaster or the host would see it. The layers are idmapped: what they hold is owned by
//! uid 0 on disk and by the slot's uid in the view, so that one warm layer serves every slot.

mod idmap;
pub(crate) mod upper;

use super::job::SlotIdentity;
use super::{Cell, Sandbox, SandboxError};
use rustix::fs::{Mode, OFlags};
use rustix::mount::{FsMountFlags, FsOpenFlags, MountAttrFlags, OpenTreeFlags};
use serde::{Deserialize, Serialize};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// Where commands see the caches, in the sandbox's directory.
const VIEW: &str = "caches";
/// The names of the writable layer and of overlayfs' work directory in a layer directory: both
/// must sit on one file system.
pub(crate) const UPPER: &str = "upper";
pub(crate) const WORK: &str = "work";

#[derive(Debug, thiserror::Error)]
pub enum LayerError {
    #[error("cannot make the user namespace that maps uid {uid}: {source}")]
    Idmap {
        uid: u32,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot {step} {path}: {source}")]
    Mount {
        step: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn fail(step: &'static str, path: &Path) -> impl FnOnce(rustix::io::Errno) -> LayerError {
    let path = path.to_path_buf();
    move |e| LayerError::Mount {
        step,
        path,
        source: e.into(),
    }
}

fn fail_io(step: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> LayerError {
    let path = path.to_path_buf();
    move |source| LayerError::Mount { step, path, source }
}

/// How a run's caches are kept: the start-up line and the report say it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", content = "why", rename_all = "lowercase")]
pub enum Caches {
    /// Copy-on-write layers over the run's warm-up.
    Warm,
    /// Every unit starts with empty caches, for this reason.
    Cold(String),
}

impl std::fmt::Display for Caches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Caches::Warm => f.write_str(
                "warm (each unit's copy-on-write layer over a warm-up on the base commit)",
            ),
            Caches::Cold(why) => write!(f, "cold ({why})"),
        }
    }
}

/// The run's cache layers.
#[derive(Debug)]
pub(crate) struct CacheLayers {
    /// Where layer directories are made (not in any command's view).
    dir: PathBuf,
    /// Where commands see the caches.
    view: PathBuf,
    /// The operator's cache directory: the bottom layer, and where the warm-up's result is
    /// kept for the next run.
    seed: Option<PathBuf>,
    /// The read-only layers every unit gets, the top one first; empty before the warm-up.
    lowers: Mutex<Vec<PathBuf>>,
}

impl CacheLayers {
    /// The layers of a run in the sandbox directory `root`, tried for real with `owner` (slot
    /// 0's identity): `Err` says why the run's caches are cold.
    pub(crate) fn prepare(
        root: &Path,
        seed: Option<&Path>,
        owner: SlotIdentity,
    ) -> Result<CacheLayers, String> {
        let (dir, view) = (root.join("layers"), root.join(VIEW));
        for (path, mode) in [(&dir, 0o700), (&view, 0o755), (&dir.join("empty"), 0o755)] {
            std::fs::create_dir(path)
                .and_then(|()| std::fs::set_permissions(path, PermissionsExt::from_mode(mode)))
                .map_err(|e| format!("creating {}: {e}", path.display()))?;
        }
        let seed = match seed {
            Some(path) => Some(seed_dir(path)?),
            None => None,
        };
        let layers = CacheLayers {
            dir,
            view,
            seed,
            lowers: Mutex::new(Vec::new()),
        };
        let trial = layers.layer_dir("trial").map_err(|e| e.to_string())?;
        let made = layers.overlay(&trial, owner).map(drop);
        let _ = crate::tree::remove(&trial);
        made.map_err(|e| format!("overlayfs over idmapped layers failed here: {e}"))?;
        Ok(layers)
    }

    /// Where commands see the caches.
    pub(crate) fn view(&self) -> &Path {
        &self.view
    }

    /// A new, empty layer directory named `name` (the warm-up's is the run's warm layer).
    pub(crate) fn layer_dir(&self, name: &str) -> Result<PathBuf, LayerError> {
        let dir = self.dir.join(name);
        for path in [&dir, &dir.join(UPPER), &dir.join(WORK)] {
            std::fs::create_dir(path).map_err(fail_io("create", path))?;
        }
        Ok(dir)
    }

    /// The file a cell's command sees at `rel` in the cache view, as written in the cell's
    /// layer directory `layer` (where Quartermaster puts the cell's own configuration).
    pub(crate) fn in_layer(layer: &Path, rel: &str) -> PathBuf {
        layer.join(UPPER).join(rel)
    }

    /// The read-only layers a unit gets now, the top one first.
    fn lowers(&self) -> Vec<PathBuf> {
        let lowers = self.lowers.lock().unwrap_or_else(PoisonError::into_inner);
        if !lowers.is_empty() {
            return lowers.clone();
        }
        vec![self.seed.clone().unwrap_or_else(|| self.dir.join("empty"))]
    }

    /// The warm-up succeeded in the layer directories `warm` (one for each place it warmed, in
    /// the warm-up's order): their writable layers, stacked with the first on top, are every later
    /// unit's bottom layers, merged into the operator's cache directory when there is one.
    /// Where two places wrote one path (a cache both filled), the first one's entry shows.
    pub(crate) fn warmed(&self, warm: &[PathBuf]) -> Result<(), LayerError> {
        let uppers: Vec<PathBuf> = warm.iter().map(|layer| layer.join(UPPER)).collect();
        let lowers = match &self.seed {
            Some(seed) => {
                // Merged last first, so that the first place's entries stay, as in the stack.
                // The directory was settled when the run began: only what comes in needs it.
                for upper in uppers.iter().rev() {
                    settle(upper)
                        .and_then(|()| upper::merge(upper, seed))
                        .map_err(fail_io("keep the warm layer in", seed))?;
                }
                vec![seed.clone()]
            }
            None => uppers,
        };
        *self.lowers.lock().unwrap_or_else(PoisonError::into_inner) = lowers;
        Ok(())
    }

    /// An overlay of the unit layers over the writable layer of `layer`, detached (attached by
    /// the command's init at the cache view), idmapped to `owner`.
    pub(crate) fn overlay(&self, layer: &Path, owner: SlotIdentity) -> Result<OwnedFd, LayerError> {
        overlay(&self.lowers(), layer, owner)
    }
}

/// A detached overlay of the read-only `lowers` (the top one first) under the writable layer of
/// the layer directory `layer` (its [`UPPER`] and [`WORK`] directories), every layer idmapped to
/// `owner`.
pub(crate) fn overlay(
    lowers: &[PathBuf],
    layer: &Path,
    owner: SlotIdentity,
) -> Result<OwnedFd, LayerError> {
    let userns = idmap::namespace(owner)?;
    let fs = rustix::mount::fsopen("overlay", FsOpenFlags::FSOPEN_CLOEXEC)
        .map_err(fail("create an overlay for", layer))?;
    // A detached mount lasts as long as its descriptor: each must outlive the overlay's
    // creation, which takes its own copy of the layers.
    let mut held = Vec::new();
    for lower in lowers {
        let fd = idmapped(lower, &userns)?;
        rustix::mount::fsconfig_set_fd(&fs, "lowerdir+", fd.as_fd())
            .map_err(fail("add the layer", lower))?;
        held.push(fd);
    }
    // The writable layer and the work directory must be on one mount: one idmapped copy.
    let top = idmapped(layer, &userns)?;
    for (key, name) in [("upperdir", UPPER), ("workdir", WORK)] {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        let dir = rustix::fs::openat(&top, name, flags, Mode::empty())
            .map_err(fail("open", &layer.join(name)))?;
        rustix::mount::fsconfig_set_fd(&fs, key, dir.as_fd())
            .map_err(fail("set the overlay's layer", &layer.join(name)))?;
    }
    // What an upper layer holds must read as plain entries, whiteouts and opaque directories
    // (merged into the operator's directory, or walked for a workspace's changes): no
    // metadata-only copies, no redirects.
    for (key, value) in [
        ("index", "off"),
        ("metacopy", "off"),
        ("redirect_dir", "off"),
        ("xino", "off"),
    ] {
        rustix::mount::fsconfig_set_string(&fs, key, value)
            .map_err(fail("configure the overlay for", layer))?;
    }
    volatile(&fs, layer);
    rustix::mount::fsconfig_create(&fs).map_err(fail("create the overlay for", layer))?;
    drop((held, top));
    rustix::mount::fsmount(
        &fs,
        FsMountFlags::FSMOUNT_CLOEXEC,
        MountAttrFlags::MOUNT_ATTR_NODEV | MountAttrFlags::MOUNT_ATTR_NOSUID,
    )
    .map_err(fail("mount the overlay for", layer))
}

/// Asks for a volatile overlay: its layers last one run and need not survive a crash, and a
/// plain overlay syncs the whole file system under its upper layer when it goes (at the end of
/// every command), which on a busy disk waits for everything any process wrote. A kernel without
/// the option (before 5.10) mounts a plain one. Overlayfs leaves a marker in the work directory
/// that refuses the next volatile mount, in case the system crashed in between; within a run the
/// last mount of a layer (the cell's previous command) ended cleanly, so it is removed first.
fn volatile(fs: &OwnedFd, layer: &Path) {
    let _ = crate::tree::remove(&layer.join(WORK).join("work/incompat/volatile"));
    let _ = rustix::mount::fsconfig_set_flag(fs, "volatile");
}

/// A detached copy of the mount of `path`, idmapped through `userns`.
fn idmapped(path: &Path, userns: &OwnedFd) -> Result<OwnedFd, LayerError> {
    let fd = rustix::mount::open_tree(
        rustix::fs::CWD,
        path,
        OpenTreeFlags::OPEN_TREE_CLONE | OpenTreeFlags::OPEN_TREE_CLOEXEC,
    )
    .map_err(fail("open the layer", path))?;
    idmap::apply(&fd, userns).map_err(fail_io("idmap the layer", path))?;
    Ok(fd)
}

/// The operator's cache directory, made when missing and taken over (see [`settle`]).
fn seed_dir(path: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(path)
        .and_then(|()| path.canonicalize())
        .and_then(|path| settle(&path).map(|()| path))
        .map_err(|e| format!("taking over the cache directory {}: {e}", path.display()))
}

/// Makes `path` and everything below it root's, writable by root alone (every unit's bottom
/// layer: no one else may change it, and the idmap shows only uid 0 as the slot's) and readable
/// by everyone (the CI's cache step saves it as an ordinary user).
fn settle(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path)?;
    if (meta.uid(), meta.gid()) != (0, 0) {
        std::os::unix::fs::lchown(path, Some(0), Some(0))?;
    }
    if meta.is_symlink() {
        return Ok(());
    }
    let mode = meta.permissions().mode() & 0o7777;
    let wanted = if meta.is_dir() {
        0o755
    } else {
        (mode & !0o7022) | 0o444
    };
    if mode != wanted {
        std::fs::set_permissions(path, PermissionsExt::from_mode(wanted))?;
    }
    if meta.is_dir() {
        for entry in std::fs::read_dir(path)? {
            settle(&entry?.path())?;
        }
    }
    Ok(())
}

/// A cell's own layer over the run's caches.
#[derive(Debug)]
pub(crate) struct CellCaches {
    /// The layer directory: the cell's writable layer and overlayfs' work directory.
    pub(crate) layer: PathBuf,
    /// One of the run's warm layers (a warm-up's cell): kept when the cell ends.
    kept: bool,
}

impl CellCaches {
    /// Removes the layer, unless it is one of the run's warm layers.
    pub(crate) fn drop_layer(self) {
        if !self.kept {
            let _ = crate::tree::remove_later(&self.layer);
        }
    }
}

/// The start of the name of a warm-up cell's layer directory.
const WARM: &str = "warm";

impl Sandbox {
    /// How this run's caches are kept.
    pub fn caches(&self) -> Caches {
        match &self.caches {
            Ok(_) => Caches::Warm,
            Err(why) => Caches::Cold(why.clone()),
        }
    }

    /// Where commands see the caches, when they are layered.
    pub(crate) fn cache_view(&self) -> Option<&Path> {
        self.caches.as_ref().ok().map(CacheLayers::view)
    }

    /// The layer of the cell named `name` (the run's warm layer for the warm-up).
    pub(crate) fn cell_caches(
        &self,
        name: &str,
        warm_up: bool,
        identity: Option<SlotIdentity>,
    ) -> Result<Option<CellCaches>, SandboxError> {
        let (Ok(layers), Some(_)) = (&self.caches, identity) else {
            return Ok(None);
        };
        let layer = layers
            .layer_dir(&if warm_up {
                format!("{WARM}-{name}")
            } else {
                name.to_string()
            })
            .map_err(|e| SandboxError::Caches(Box::new(e)))?;
        Ok(Some(CellCaches {
            layer,
            kept: warm_up,
        }))
    }

    /// The warm-up succeeded in the layers `warm` (see [`CacheLayers::warmed`]).
    pub(crate) fn warmed(&self, warm: &[PathBuf]) -> Result<(), SandboxError> {
        match &self.caches {
            Ok(layers) => layers
                .warmed(warm)
                .map_err(|e| SandboxError::Caches(Box::new(e))),
            Err(_) => Ok(()),
        }
    }
}

impl Cell<'_> {
    /// The layer directory of a warm-up's cell, kept when the cell ends.
    pub(crate) fn warm_layer(&self) -> Option<&Path> {
        self.caches
            .as_ref()
            .filter(|caches| caches.kept)
            .map(|caches| caches.layer.as_path())
    }

    /// A new overlay of this cell's caches for one command, detached, if the cell has caches.
    pub(crate) fn cache_mount(&self) -> Result<Option<OwnedFd>, SandboxError> {
        let (Ok(layers), Some(caches), Some(owner)) =
            (&self.sandbox.caches, &self.caches, self.identity)
        else {
            return Ok(None);
        };
        layers
            .overlay(&caches.layer, owner)
            .map(Some)
            .map_err(|e| SandboxError::Caches(Box::new(e)))
    }
}

#[cfg(test)]
mod tests;
