//! Copy-on-write workspaces, the sandbox's side: where their layers live, and the overlay that
//! shows a slot's workspace.
//!
//! One checkout of a base commit per run is the read-only bottom layer of every slot's
//! workspace; each unit writes to an upper layer of its own, dropped when the workspace is reset
//! (see `crate::git` for the workspace itself). The overlay is mounted at the slot's workspace
//! path in Quartermaster's own mount namespace, made when the process starts
//! ([`enter_private_mounts`]), so that neither the host nor another process sees it; each
//! command's namespace is a copy of it and takes the workspace into view like any writable path.
//! As with the caches, the layers are idmapped: what is root's on disk is the slot's in view, so
//! nothing is handed over between units and one checkout serves every slot.

use super::Sandbox;
use super::job::SlotIdentity;
use super::layers::{self, UPPER, WORK};
use crate::git::Mounter;
use rustix::mount::MoveMountFlags;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Whether this process has a mount namespace of its own, else why not.
static PRIVATE: OnceLock<Result<(), String>> = OnceLock::new();

/// Gives this process a mount namespace of its own, whose mounts do not propagate to the host's.
/// Must run before any thread starts (the kernel refuses to move a process whose threads share
/// its file-system state); as a user other than root it does nothing and says why later.
pub fn enter_private_mounts() {
    let _ = PRIVATE.set(private_mounts());
}

fn private_mounts() -> Result<(), String> {
    if !nix::unistd::geteuid().is_root() {
        return Err("they need root with CAP_SYS_ADMIN".into());
    }
    nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNS)
        .map_err(|e| format!("no mount namespace of its own could be made: {e}"))?;
    super::mounts::make_private().map_err(|e| format!("its mounts could not be made private: {e}"))
}

/// How a run's workspaces are kept: the start-up line and the report say it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", content = "why", rename_all = "lowercase")]
pub enum Workspaces {
    /// Each unit's copy-on-write layer over one checkout of the base.
    Layered,
    /// Each slot's own checkout, brought back to the base between units, for this reason.
    Checkouts(String),
}

impl std::fmt::Display for Workspaces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Workspaces::Layered => f.write_str(
                "layered (each unit's copy-on-write layer over one checkout of the base)",
            ),
            Workspaces::Checkouts(why) => write!(f, "checkouts ({why})"),
        }
    }
}

/// Where a run's workspace layers live: `bases/` holds the base checkouts, in memory where it
/// can (a tmpfs of up to a quarter of the machine's memory), `bases-on-disk/` those that do not
/// fit, and `slot-N/` each slot's layer directory. Private to Quartermaster (mode 0700, and out
/// of every command's view).
#[derive(Debug)]
pub(crate) struct WorkspaceLayers {
    dir: PathBuf,
    /// Whether `bases/` is a tmpfs (unmounted when the run ends).
    in_memory: bool,
}

/// What a layered workspace in one slot is made with.
pub(crate) struct SlotLayers {
    /// Where a base checkout goes, in order of preference: the next is tried when one fails
    /// (a checkout too large for memory).
    pub(crate) bases: Vec<PathBuf>,
    /// The slot's own layer directory.
    pub(crate) dir: PathBuf,
    pub(crate) mounter: SlotMounter,
}

impl WorkspaceLayers {
    /// The layers of a run in the sandbox directory `root`, tried for real with `owner` (slot
    /// 0's identity): `Err` says why the run's workspaces are checkouts.
    pub(crate) fn prepare(root: &Path, owner: SlotIdentity) -> Result<Self, String> {
        match PRIVATE.get() {
            Some(Ok(())) => {}
            Some(Err(why)) => return Err(why.clone()),
            None => return Err("the process has no mount namespace of its own".into()),
        }
        let dir = root.join("workspaces");
        for path in [&dir, &dir.join("bases"), &dir.join("bases-on-disk")] {
            std::fs::create_dir(path)
                .and_then(|()| std::fs::set_permissions(path, PermissionsExt::from_mode(0o700)))
                .map_err(|e| format!("creating {}: {e}", path.display()))?;
        }
        // In memory, a checkout of many small files is written, and removed, without the disk.
        let in_memory = nix::mount::mount(
            Some("tmpfs"),
            &dir.join("bases"),
            Some("tmpfs"),
            nix::mount::MsFlags::MS_NOSUID | nix::mount::MsFlags::MS_NODEV,
            Some("size=25%,mode=0700"),
        )
        .is_ok();
        let layers = WorkspaceLayers { dir, in_memory };
        layers
            .trial(owner)
            .map_err(|e| format!("overlayfs over idmapped layers failed here: {e}"))?;
        Ok(layers)
    }

    /// Mounts a one-file workspace, reads the file through it, and takes it down.
    fn trial(&self, owner: SlotIdentity) -> std::io::Result<()> {
        let trial = self.dir.join("trial");
        let (base, view) = (trial.join("base"), trial.join("view"));
        let layer = trial.join("layer");
        for dir in [
            &trial,
            &base,
            &view,
            &layer,
            &layer.join(UPPER),
            &layer.join(WORK),
        ] {
            std::fs::create_dir(dir)?;
        }
        std::fs::write(base.join("file"), "base")?;
        let mounter = SlotMounter { owner };
        let read = mounter.mount(&base, &layer, &view).and_then(|()| {
            let read = std::fs::read_to_string(view.join("file"));
            mounter.unmount(&view)?;
            read
        });
        crate::tree::remove(&trial)?;
        match read? {
            text if text == "base" => Ok(()),
            _ => Err(std::io::Error::other("the overlay did not show its layer")),
        }
    }
}

impl Drop for WorkspaceLayers {
    fn drop(&mut self) {
        if self.in_memory {
            let _ = nix::mount::umount2(&self.dir.join("bases"), nix::mount::MntFlags::MNT_DETACH);
        }
    }
}

/// Mounts a slot's workspace: its layers idmapped to the slot's identity.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SlotMounter {
    owner: SlotIdentity,
}

#[cfg(test)]
impl SlotMounter {
    /// A mounter for the slot whose uid and gid are `id`.
    pub(crate) fn new(id: u32) -> Self {
        Self {
            owner: SlotIdentity { uid: id, gid: id },
        }
    }
}

impl Mounter for SlotMounter {
    fn mount(&self, lower: &Path, layer: &Path, view: &Path) -> std::io::Result<()> {
        let fd = layers::overlay(&[lower.to_path_buf()], layer, self.owner)
            .map_err(std::io::Error::other)?;
        rustix::mount::move_mount(
            &fd,
            "",
            rustix::fs::CWD,
            view,
            MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
        )
        .map_err(Into::into)
    }

    fn unmount(&self, view: &Path) -> std::io::Result<()> {
        nix::mount::umount2(view, nix::mount::MntFlags::MNT_DETACH).map_err(Into::into)
    }
}

impl Sandbox {
    /// How this run's workspaces are kept.
    pub fn workspaces(&self) -> Workspaces {
        match &self.workspace_layers {
            Ok(_) => Workspaces::Layered,
            Err(why) => Workspaces::Checkouts(why.clone()),
        }
    }

    /// What a layered workspace in `slot` is made with; `None` when workspaces are checkouts.
    pub(crate) fn workspace_layers(&self, slot: u32) -> Option<SlotLayers> {
        let (Ok(layers), Some(owner)) = (&self.workspace_layers, self.identity(slot)) else {
            return None;
        };
        let on_disk = layers.dir.join("bases-on-disk");
        let bases = if layers.in_memory {
            vec![layers.dir.join("bases"), on_disk]
        } else {
            vec![on_disk]
        };
        Some(SlotLayers {
            bases,
            dir: layers.dir.join(format!("slot-{slot}")),
            mounter: SlotMounter { owner },
        })
    }
}
