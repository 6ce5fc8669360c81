//! The sandbox of a run: the probe that picks the strongest isolation this process can have (by
//! trying it for real), and the slots units run in.

use super::cgroup::CgroupError;
use super::cgroup::Cgroups;
use super::claim;
use super::guard::{PermissionGuard, RootGuard, Watch};
use super::identity;
use super::job::SlotIdentity;
use super::layers::CacheLayers;
use super::layout::{self, Layout};
use super::reaper::processes_of;
use super::spawn::Zygote;
use super::unit::{Cell, UnitSpec};
use super::workspaces::WorkspaceLayers;
use super::{Isolation, LaunchError, Level, SandboxConfig, SandboxError};
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

/// Where commands get a fresh, writable tmpfs of their own (namespaced levels).
const FRESH: &[&str] = &["/tmp", "/var/tmp", "/dev/shm"];

/// The sandbox of a run. Dropping it restores the permissions it changed and removes its
/// directory; units borrow it.
#[derive(Debug)]
pub struct Sandbox {
    pub(crate) level: Level,
    pub(crate) config: SandboxConfig,
    pub(crate) protected: Vec<PathBuf>,
    pub(crate) hide: Vec<PathBuf>,
    pub(crate) fresh: Vec<PathBuf>,
    pub(crate) toolchain_dirs: Vec<PathBuf>,
    pub(crate) toolchain_env: Vec<(OsString, OsString)>,
    pub(crate) watch: Watch,
    fallbacks: Vec<String>,
    /// The units' cgroup tree, where the runner delegates one; else why there is none.
    pub(crate) cgroups: Option<Cgroups>,
    cgroup_note: Option<String>,
    /// The uids this run holds on the host (root levels).
    claim: Option<claim::UidClaim>,
    busy: Mutex<BTreeSet<u32>>,
    next: AtomicU64,
    pub(crate) zygote: Zygote,
    /// The units' cache layers; else why their caches are cold.
    pub(crate) caches: Result<CacheLayers, String>,
    /// Where the units' layered workspaces live; else why workspaces are checkouts.
    pub(crate) workspace_layers: Result<WorkspaceLayers, String>,
    _listed: RootGuard,
    // Dropped before `root`, and after every unit (they borrow the sandbox).
    _guard: Option<PermissionGuard>,
    root: tempfile::TempDir,
}

impl Drop for Sandbox {
    /// The units' layers still being removed in the background are in the sandbox's
    /// directory, which goes next.
    fn drop(&mut self) {
        crate::tree::finish_removals();
    }
}

/// Why a level was not taken: not available here (try the next), or a refusal to report.
enum LevelFailure {
    Unavailable(String),
    Refused(SandboxError),
}

impl From<SandboxError> for LevelFailure {
    /// A setting the operator must change stops the probe; anything else means this level does
    /// not work here (a missing capability, a refused system call), and the next one is tried.
    fn from(e: SandboxError) -> Self {
        match e {
            SandboxError::UidBusy { .. }
            | SandboxError::UidOwns { .. }
            | SandboxError::UidClaimed { .. }
            | SandboxError::NoFreeUids { .. }
            | SandboxError::ClaimsDir { .. }
            | SandboxError::BadUidBase { .. }
            | SandboxError::Reachable { .. }
            | SandboxError::Unreachable { .. } => LevelFailure::Refused(e),
            SandboxError::Setup(why) => LevelFailure::Unavailable(why.to_string()),
            other => LevelFailure::Unavailable(other.to_string()),
        }
    }
}

impl Sandbox {
    /// Picks the strongest level the preference allows and proves it works by running a trial
    /// command that resolves `config.programs` as the sandbox identity. Never picks `none`
    /// unless asked to.
    pub fn probe(config: SandboxConfig) -> Result<Sandbox, SandboxError> {
        let euid = nix::unistd::geteuid().as_raw();
        let mut tried = Vec::new();
        // Before any helper starts: Quartermaster must be alone in its cgroup to leave it.
        let mut cgroups = match config.isolation {
            Isolation::None => Err(CgroupError::NoSandbox),
            _ => Cgroups::open(),
        };
        for level in candidates(config.isolation, euid)? {
            match Sandbox::attempt(level, &config) {
                Ok(mut sandbox) => {
                    sandbox.fallbacks = tried;
                    match std::mem::replace(&mut cgroups, Err(CgroupError::NoSandbox)) {
                        Ok(tree) => sandbox.cgroups = Some(tree),
                        Err(why) => sandbox.cgroup_note = Some(why.to_string()),
                    }
                    return Ok(sandbox);
                }
                Err(LevelFailure::Unavailable(why)) => tried.push(format!("{level}: {why}")),
                Err(LevelFailure::Refused(e)) => return Err(e),
            }
        }
        Err(no_isolation(euid, &tried))
    }

    /// The isolation commands get, as the report should name it.
    pub fn level(&self) -> Level {
        self.level
    }

    /// How many units may run at once, each in its own slot.
    pub fn slots(&self) -> u32 {
        self.config.slots
    }

    /// Why stronger levels were not taken (empty when the first choice worked).
    pub(crate) fn fallbacks(&self) -> &[String] {
        &self.fallbacks
    }

    /// What each unit may take of the runner.
    pub fn limits(&self) -> &super::Limits {
        &self.config.limits
    }

    /// How the limits hold: `cgroup v2`, `rlimits` (with why no cgroup), or `none` (no sandbox).
    pub(crate) fn limits_by(&self) -> (&'static str, Option<&str>) {
        match (&self.cgroups, self.level) {
            (_, Level::None) => ("none", None),
            (Some(_), _) => ("cgroup v2", None),
            (None, _) => ("rlimits", self.cgroup_note.as_deref()),
        }
    }

    fn attempt(level: Level, config: &SandboxConfig) -> Result<Sandbox, LevelFailure> {
        let canonical = |paths: &mut dyn Iterator<Item = &PathBuf>| -> Vec<PathBuf> {
            paths.filter_map(|p| p.canonicalize().ok()).collect()
        };
        let mut protected = canonical(&mut config.hidden.iter());
        protected.extend(canonical(&mut config.checkout.iter()));
        protected.extend(canonical(&mut config.file_commands.iter()));
        protected.extend(canonical(&mut config.operator_home.iter()));
        // Covering or closing "/" would take the whole system away from commands.
        protected.retain(|p| p != Path::new("/"));
        protected.sort();
        protected.dedup();
        let root = tempfile::Builder::new()
            .prefix("qm-sandbox-")
            .tempdir_in(&config.state_dir)
            .map_err(SandboxError::io(format!(
                "cannot create the sandbox directory in {}",
                config.state_dir.display()
            )))?;
        // Slot uids must traverse to their unit; nobody may list the units.
        let mode = if level.drops_uid() { 0o711 } else { 0o700 };
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(mode))
            .map_err(SandboxError::io("cannot protect the sandbox directory"))?;
        let mut sandbox = Sandbox {
            level,
            config: config.clone(),
            hide: Vec::new(),
            fresh: Vec::new(),
            toolchain_dirs: Vec::new(),
            toolchain_env: Vec::new(),
            watch: Watch::new(&canonical(&mut config.file_commands.iter())),
            fallbacks: Vec::new(),
            cgroups: None,
            cgroup_note: None,
            claim: None,
            busy: Mutex::new(BTreeSet::new()),
            next: AtomicU64::new(0),
            zygote: Zygote::start(&config.helper)?,
            caches: Err(String::new()),
            workspace_layers: Err(String::new()),
            _listed: RootGuard::new(root.path()),
            _guard: None,
            root,
            protected,
        };
        sandbox.prepare()?;
        sandbox.trial()?;
        sandbox.caches = sandbox.cache_layers();
        sandbox.workspace_layers = sandbox.layered_workspaces();
        Ok(sandbox)
    }

    /// Level-specific setup: the mount plan's parts, or the slot uid checks and permissions.
    fn prepare(&mut self) -> Result<(), LevelFailure> {
        let home = self.config.operator_home.as_deref();
        let (dirs, vars) = layout::toolchains(&self.config.env, home, &self.config.toolchain_dirs);
        self.toolchain_env = vars;
        if self.level.namespaced() {
            self.fresh = FRESH
                .iter()
                .filter_map(|p| Path::new(p).canonicalize().ok())
                .collect();
            self.hide = self.protected.clone();
            self.hide.push(self.root.path().to_path_buf());
            self.toolchain_dirs = dirs.into_iter().filter(|d| self.exposable(d)).collect();
        }
        if self.level.drops_uid() {
            let (base, slots) = (self.config.uid_base, self.config.slots);
            if base == 0 || base.checked_add(slots).is_none_or(|end| end > u32::MAX - 1) {
                return Err(SandboxError::BadUidBase { base, slots }.into());
            }
            let claim = claim::claim(
                &self.config.claims_dir,
                base,
                slots,
                self.config.uid_search,
                |uid, slot| self.check_uid(uid, slot),
            )?;
            self.config.uid_base = claim.base;
            self.claim = Some(claim);
            if !self.level.namespaced() {
                self._guard = Some(PermissionGuard::restrict(&self.protected));
            }
        }
        Ok(())
    }

    /// A toolchain directory is put back in view only under the operator's HOME or a fresh
    /// directory, and never when that would uncover a protected path (a `.` in PATH, HOME
    /// itself) or reach into one (the checkout).
    fn exposable(&self, dir: &Path) -> bool {
        let home = self.config.operator_home.as_deref();
        let home = home.and_then(|h| h.canonicalize().ok());
        let under_home = home
            .as_deref()
            .is_some_and(|h| dir.starts_with(h) && dir != h);
        let under_fresh = self.fresh.iter().any(|f| dir.starts_with(f) && dir != f);
        let clash = self.protected.iter().any(|p| {
            p.starts_with(dir) || (dir.starts_with(p) && Some(p.as_path()) != home.as_deref())
        });
        (under_home || under_fresh) && !clash
    }

    /// The first sandbox uid of the run, when commands run as dedicated uids.
    pub fn uid_base(&self) -> Option<u32> {
        self.claim.as_ref().map(|c| c.base)
    }

    /// Whether `uid` (slot `slot`'s, gid the same) is free of processes and owns nothing
    /// protected.
    fn check_uid(&self, uid: u32, slot: u32) -> Result<(), SandboxError> {
        let id = SlotIdentity { uid, gid: uid };
        let pids = processes_of(id.uid, -1)?;
        if !pids.is_empty() {
            let pids: Vec<String> = pids.iter().map(i32::to_string).collect();
            return Err(SandboxError::UidBusy {
                uid: id.uid,
                slot,
                pids: pids.join(", "),
            });
        }
        for path in &self.protected {
            let owns =
                std::fs::metadata(path).is_ok_and(|m| m.uid() == id.uid || m.gid() == id.gid);
            if owns {
                return Err(SandboxError::UidOwns {
                    uid: id.uid,
                    slot,
                    path: path.clone(),
                });
            }
        }
        Ok(())
    }

    /// Runs the trial: the programs resolve for the sandbox identity wherever they resolve for
    /// Quartermaster, and no protected path is within its reach.
    fn trial(&self) -> Result<(), LevelFailure> {
        let unit = self.unit(UnitSpec::default())?;
        let found = unit.resolve(&self.config.programs, &self.config.env)?;
        let path = self.config.env.get(&OsString::from("PATH"));
        let path = path.and_then(|p| p.to_str());
        let missing: Vec<String> = found
            .iter()
            .filter(|(_, theirs)| theirs.is_none())
            .filter_map(|(program, _)| {
                let ours = identity::resolve(program, path)?;
                Some(format!("`{program}` ({})", ours.display()))
            })
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let uid = unit
            .identity
            .map_or_else(|| nix::unistd::geteuid().as_raw(), |i| i.uid);
        Err(LevelFailure::Refused(SandboxError::Unreachable {
            uid,
            programs: missing.join(", "),
        }))
    }

    /// The units' cache layers, or why their caches are cold.
    fn cache_layers(&self) -> Result<CacheLayers, String> {
        if !self.config.warm_caches {
            return Err("asked for (`--caches cold`)".into());
        }
        let owner = self.layer_owner()?;
        CacheLayers::prepare(self.root.path(), self.config.cache_dir.as_deref(), owner)
    }

    /// The units' layered workspaces, or why workspaces are checkouts.
    fn layered_workspaces(&self) -> Result<WorkspaceLayers, String> {
        if !self.config.layered_workspaces {
            return Err("asked for (`--workspaces checkouts`)".into());
        }
        WorkspaceLayers::prepare(self.root.path(), self.layer_owner()?)
    }

    /// Whom copy-on-write layers are tried for (slot 0's identity), or why there are none: they
    /// are idmapped to a slot's uid, which only the `uid+namespaces` level has.
    fn layer_owner(&self) -> Result<SlotIdentity, String> {
        match (self.level, self.identity(0)) {
            (Level::UidNamespaces, Some(owner)) => Ok(owner),
            (level, _) => Err(format!(
                "copy-on-write layers need root with CAP_SYS_ADMIN, and this run's isolation is {level}"
            )),
        }
    }

    pub(crate) fn identity(&self, slot: u32) -> Option<SlotIdentity> {
        let id = self.config.uid_base.checked_add(slot)?;
        self.level
            .drops_uid()
            .then_some(SlotIdentity { uid: id, gid: id })
    }

    /// Starts a unit in `spec.slot`: a fresh HOME, TMPDIR and work directory, seeded with the
    /// operator's opted-in configuration.
    pub fn unit(&self, spec: UnitSpec) -> Result<Cell<'_>, SandboxError> {
        let slots = self.config.slots;
        if spec.slot >= slots {
            return Err(SandboxError::NoSuchSlot {
                slot: spec.slot,
                slots,
            });
        }
        if !self.lock_busy().insert(spec.slot) {
            return Err(SandboxError::SlotBusy(spec.slot));
        }
        let claimed = SlotClaim(self, spec.slot);
        // The slot's uid had no process at the probe, and every command's end kills them all.
        let identity = self.identity(spec.slot);
        let name = format!(
            "unit-{}-{}",
            spec.slot,
            self.next.fetch_add(1, Ordering::SeqCst)
        );
        let layout = Layout::create(self.root.path(), &name, identity)?;
        let caches = match self.cell_caches(&name, spec.warm_up, identity) {
            Ok(caches) => caches,
            Err(e) => {
                let _ = layout::remove_tree(&layout.dir);
                return Err(e);
            }
        };
        let cache_layer = caches.as_ref().map(|c| c.layer.as_path());
        let seeds = match layout.seed(&self.config.seeds, identity, cache_layer) {
            Ok(seeds) => seeds,
            Err(e) => {
                let _ = layout::remove_tree(&layout.dir);
                if let Some(caches) = caches {
                    caches.drop_layer();
                }
                return Err(e);
            }
        };
        let cgroup = self
            .cgroups
            .as_ref()
            .map(|tree| tree.unit(&name, &self.config.limits));
        let cgroup = match cgroup.transpose() {
            Ok(cgroup) => cgroup,
            Err(why) => {
                let _ = layout::remove_tree(&layout.dir);
                if let Some(caches) = caches {
                    caches.drop_layer();
                }
                return Err(LaunchError::from(why).into());
            }
        };
        let canonical =
            |paths: Vec<PathBuf>| paths.into_iter().filter_map(|p| p.canonicalize().ok());
        let writable: Vec<PathBuf> = canonical(spec.writable).collect();
        let unit = Cell {
            sandbox: self,
            slot: spec.slot,
            identity,
            seed_watch: Watch::new(&seeds.iter().map(|(_, p)| p.clone()).collect::<Vec<_>>()),
            seeds,
            layout,
            hidden: canonical(spec.hidden).collect(),
            writable,
            permissions: None,
            cgroup,
            caches,
        };
        std::mem::forget(claimed);
        let mut unit = unit;
        if self.level == Level::Uid {
            unit.permissions = Some(PermissionGuard::restrict(&unit.hidden));
        }
        // A layered workspace is the slot's already, through its idmap.
        if !spec.layered {
            for path in &unit.writable {
                unit.grant(path)?;
            }
        }
        Ok(unit)
    }

    /// An empty directory for `slot`'s reused workspace, lasting as long as the sandbox (what an
    /// earlier one left there is removed). Only the slot's identity may enter the directory
    /// above it, and Quartermaster owns that one, so no command can open it to other slots; the
    /// workspace is handed to the slot when a unit lists it as writable.
    pub(crate) fn slot_workspace(&self, slot: u32) -> Result<PathBuf, SandboxError> {
        let dir = self.root.path().join(format!("slot-{slot}"));
        let io =
            |what: &str, path: &Path| SandboxError::io(format!("cannot {what} {}", path.display()));
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                let mode = match self.identity(slot) {
                    Some(id) => {
                        std::os::unix::fs::lchown(&dir, None, Some(id.gid))
                            .map_err(io("share", &dir))?;
                        0o710
                    }
                    None => 0o700,
                };
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode))
                    .map_err(io("protect", &dir))?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io("create", &dir)(e)),
        }
        let work = dir.join("work");
        if std::fs::symlink_metadata(&work).is_ok() {
            layout::remove_tree(&work).map_err(io("remove", &work))?;
        }
        std::fs::create_dir(&work).map_err(io("create", &work))?;
        Ok(work)
    }

    fn lock_busy(&self) -> std::sync::MutexGuard<'_, BTreeSet<u32>> {
        self.busy.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn release(&self, slot: u32) {
        self.lock_busy().remove(&slot);
    }
}

/// Releases a slot if creating its unit fails half-way.
struct SlotClaim<'a>(&'a Sandbox, u32);

impl Drop for SlotClaim<'_> {
    fn drop(&mut self) {
        self.0.release(self.1);
    }
}

fn candidates(isolation: Isolation, euid: u32) -> Result<Vec<Level>, SandboxError> {
    let root = euid == 0;
    Ok(match (isolation, root) {
        (Isolation::None, _) => vec![Level::None],
        (Isolation::Auto, true) => vec![Level::UidNamespaces, Level::Uid],
        (Isolation::Namespaces, true) => vec![Level::UidNamespaces],
        (Isolation::Uid, true) => vec![Level::Uid],
        (Isolation::Auto | Isolation::Namespaces, false) => vec![Level::Namespaces],
        (Isolation::Uid, false) => {
            return Err(SandboxError::NeedsRoot {
                wanted: "uid",
                uid: euid,
            });
        }
    })
}

fn no_isolation(euid: u32, tried: &[String]) -> SandboxError {
    let tried = tried.join("; ");
    SandboxError::NoIsolation(if euid == 0 {
        format!(
            "as root, {tried}. Give the container CAP_SETUID, CAP_SETGID, CAP_CHOWN, CAP_FOWNER and CAP_SETPCAP (Docker grants them by default) for a dedicated user per slot, and CAP_SYS_ADMIN for namespaces, or pass isolation `none` to run commands unsandboxed, as root"
        )
    } else {
        format!(
            "Quartermaster runs as uid {euid}, so it cannot give commands a user of their own, and user namespaces failed ({tried}). Allow unprivileged user namespaces (user.max_user_namespaces above 0; where they exist, kernel.unprivileged_userns_clone=1 and kernel.apparmor_restrict_unprivileged_userns=0), run Quartermaster as root (its container image does), or pass isolation `none` to run commands unsandboxed, as yourself"
        )
    })
}
