//! A unit's own directories (HOME, TMPDIR, a work directory), the environment that points every
//! tool's configuration and cache inside them, and the toolchains that must stay reachable once
//! HOME is no longer the operator's.

use super::job::SlotIdentity;
use super::layers::CacheLayers;
use super::{SandboxError, Seed, ToolConfig};
pub(crate) use crate::tree::remove as remove_tree;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Variables pointed at a path under the unit's HOME: user configuration, caches and install
/// locations of each ecosystem, so that nothing a command writes there reaches another unit.
/// With warm caches, [`CACHE_VARS`] moves the caches into the unit's cache view.
const HOME_VARS: &[(&str, &str)] = &[
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_CACHE_HOME", ".cache"),
    ("XDG_DATA_HOME", ".local/share"),
    ("XDG_STATE_HOME", ".local/state"),
    ("npm_config_userconfig", ".npmrc"),
    ("npm_config_cache", ".cache/npm"),
    ("YARN_CACHE_FOLDER", ".cache/yarn"),
    ("YARN_GLOBAL_FOLDER", ".local/share/yarn"),
    ("BUN_INSTALL_CACHE_DIR", ".cache/bun"),
    ("PIP_CACHE_DIR", ".cache/pip"),
    ("POETRY_CONFIG_DIR", ".config/pypoetry"),
    ("POETRY_CACHE_DIR", ".cache/pypoetry"),
    ("POETRY_DATA_DIR", ".local/share/pypoetry"),
    ("UV_CACHE_DIR", ".cache/uv"),
    ("CARGO_HOME", ".cargo"),
    ("GOPATH", "go"),
    ("GOMODCACHE", "go/pkg/mod"),
    ("GOCACHE", ".cache/go-build"),
    ("GOENV", ".config/go/env"),
    ("BUNDLE_USER_HOME", ".bundle"),
    ("BUNDLE_USER_CONFIG", ".bundle/config"),
    ("BUNDLE_USER_CACHE", ".bundle/cache"),
    ("BUNDLE_USER_PLUGIN", ".bundle/plugin"),
    ("BUNDLE_APP_CONFIG", ".bundle/app"),
    ("GEM_HOME", ".gem"),
    ("GEM_SPEC_CACHE", ".cache/gem/specs"),
    ("GRADLE_USER_HOME", ".gradle"),
    ("NUGET_PACKAGES", ".nuget/packages"),
    ("DOTNET_CLI_HOME", "."),
    ("COMPOSER_HOME", ".config/composer"),
    ("COMPOSER_CACHE_DIR", ".cache/composer"),
    ("DENO_DIR", ".cache/deno"),
];

/// With warm caches, the package managers' caches and cargo's home and build output live in the
/// unit's cache view instead of its HOME, over the run's warm layer (see [`super::layers`]).
/// What is there is checked against the lock file installed from (a hash, a checksum, an
/// integrity), keyed by name and version, or a build cache keyed by its inputs; and a unit's
/// writes stay in its own layer.
const CACHE_VARS: &[(&str, &str)] = &[
    ("npm_config_cache", "npm"),
    ("npm_config_store_dir", "pnpm-store"),
    ("YARN_CACHE_FOLDER", "yarn"),
    ("BUN_INSTALL_CACHE_DIR", "bun"),
    ("PIP_CACHE_DIR", "pip"),
    ("POETRY_CACHE_DIR", "pypoetry"),
    ("UV_CACHE_DIR", "uv"),
    ("GOMODCACHE", "go/mod"),
    ("GOCACHE", "go/build"),
    ("CARGO_HOME", "cargo"),
    ("CARGO_TARGET_DIR", "cargo-target"),
];
/// Where cargo's seeded configuration goes in a cache layer (CARGO_HOME is `cargo` there).
const CARGO_SEED: &str = "cargo/config.toml";

/// Variables removed: the operator's session sockets, and settings that would point a tool at a
/// configuration or install location outside the unit (npm reads its variables in any case).
const UNSET: &[&str] = &[
    "XDG_RUNTIME_DIR",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "PIP_CONFIG_FILE",
    "UV_CONFIG_FILE",
    "GEMRC",
    "BUNDLE_PATH",
    "NPM_CONFIG_USERCONFIG",
    "NPM_CONFIG_CACHE",
];

/// Toolchain homes that default to a directory under HOME: once HOME is the unit's, their
/// variable must name the operator's copy explicitly.
const TOOLCHAIN_HOMES: &[(&str, &str)] = &[
    ("RUSTUP_HOME", ".rustup"),
    ("PYENV_ROOT", ".pyenv"),
    ("NVM_DIR", ".nvm"),
    ("VOLTA_HOME", ".volta"),
    ("SDKMAN_DIR", ".sdkman"),
    ("BUN_INSTALL", ".bun"),
    ("DOTNET_ROOT", ".dotnet"),
];
/// Variables naming a toolchain installation wherever it is.
const TOOLCHAIN_VARS: &[&str] = &[
    "GOROOT",
    "JAVA_HOME",
    "PNPM_HOME",
    "POETRY_HOME",
    "MAVEN_HOME",
    "GRADLE_HOME",
];

/// The toolchain directories commands need (to expose read-only where they are hidden), and the
/// variables that keep naming them.
pub(crate) fn toolchains(
    env: &BTreeMap<OsString, OsString>,
    home: Option<&Path>,
    extra: &[PathBuf],
) -> (Vec<PathBuf>, Vec<(OsString, OsString)>) {
    let get = |name: &str| env.get(&OsString::from(name)).map(PathBuf::from);
    let mut dirs = extra.to_vec();
    let mut vars = Vec::new();
    for (name, default) in TOOLCHAIN_HOMES {
        let dir = get(name).or_else(|| home.map(|h| h.join(default)).filter(|d| d.is_dir()));
        if let Some(dir) = dir {
            vars.push((OsString::from(name), dir.clone().into_os_string()));
            dirs.push(dir);
        }
    }
    dirs.extend(TOOLCHAIN_VARS.iter().filter_map(|name| get(name)));
    // rustup's proxies live in the operator's CARGO_HOME, which the unit's replaces.
    let cargo = get("CARGO_HOME").or_else(|| home.map(|h| h.join(".cargo")));
    dirs.extend(cargo.map(|c| c.join("bin")));
    if let Some(path) = env.get(&OsString::from("PATH")) {
        dirs.extend(std::env::split_paths(path));
    }
    let mut dirs: Vec<PathBuf> = dirs
        .iter()
        .filter_map(|d| d.canonicalize().ok())
        .map(installation_root)
        .collect();
    dirs.sort();
    dirs.dedup();
    let outer: Vec<PathBuf> = dirs
        .iter()
        .filter(|d| !dirs.iter().any(|o| o != *d && d.starts_with(o)))
        .cloned()
        .collect();
    (outer, vars)
}

/// A `bin` on PATH stands for the installation it belongs to where its programs read the rest of
/// it: a Python virtualenv (its scripts import from the `lib` beside them) and a Go root (`go`
/// finds its GOROOT, `pkg/tool` and `src`, from where the binary is).
fn installation_root(dir: PathBuf) -> PathBuf {
    match dir.parent() {
        Some(root) if root.join("pyvenv.cfg").is_file() => root.to_path_buf(),
        Some(root) if dir.ends_with("bin") && is_go_root(root) => root.to_path_buf(),
        _ => dir,
    }
}

fn is_go_root(dir: &Path) -> bool {
    dir.join("VERSION").is_file() && dir.join("pkg/tool").is_dir() && dir.join("src").is_dir()
}

/// A unit's directories.
#[derive(Debug)]
pub(crate) struct Layout {
    pub dir: PathBuf,
    pub home: PathBuf,
    pub tmp: PathBuf,
    pub work: PathBuf,
}

impl Layout {
    /// Creates `root/name` with `home`, `tmp` and `work` inside, owned by `owner` when given.
    pub(crate) fn create(
        root: &Path,
        name: &str,
        owner: Option<SlotIdentity>,
    ) -> Result<Layout, SandboxError> {
        let dir = root.join(name);
        let layout = Layout {
            home: dir.join("home"),
            tmp: dir.join("tmp"),
            work: dir.join("work"),
            dir,
        };
        for path in [&layout.dir, &layout.home, &layout.tmp, &layout.work] {
            make_dir(path, owner)?;
        }
        Ok(layout)
    }

    /// Copies each seed, read-only, to where its tool reads it; returns what was installed.
    /// With a cache layer (`cache_layer`), cargo reads its configuration there, in CARGO_HOME.
    pub(crate) fn seed(
        &self,
        seeds: &[Seed],
        owner: Option<SlotIdentity>,
        cache_layer: Option<&Path>,
    ) -> Result<Vec<(ToolConfig, PathBuf)>, SandboxError> {
        let mut installed = Vec::new();
        for seed in seeds {
            let bytes = std::fs::read(&seed.source).map_err(SandboxError::io(format!(
                "cannot read the {} seed {}",
                seed.tool.name(),
                seed.source.display()
            )))?;
            // A layer's entries are owned by uid 0 on disk: the idmap shows them as the slot's.
            let (base, rel, owner) = match (seed.tool, cache_layer) {
                (ToolConfig::Cargo, Some(layer)) => {
                    (CacheLayers::in_layer(layer, ""), CARGO_SEED, None)
                }
                _ => (self.home.clone(), seed.tool.target(), owner),
            };
            let target = base.join(rel);
            let mut parent = base.clone();
            let rel = target.parent().and_then(|p| p.strip_prefix(&base).ok());
            for part in rel.into_iter().flat_map(|r| r.components()) {
                parent.push(part);
                make_dir(&parent, owner)?;
            }
            let io = SandboxError::io(format!("cannot install {}", target.display()));
            std::fs::write(&target, bytes).map_err(io)?;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o444)).map_err(
                SandboxError::io(format!("cannot protect {}", target.display())),
            )?;
            installed.push((seed.tool, target));
        }
        Ok(installed)
    }

    /// The environment of a command in this unit: `base` without what must not pass, with
    /// HOME, TMPDIR and every tool location inside the unit, and the caches in the cache view
    /// `caches` when the unit has one.
    pub(crate) fn env(
        &self,
        base: &BTreeMap<OsString, OsString>,
        seeded: &[ToolConfig],
        toolchain_env: &[(OsString, OsString)],
        caches: Option<&Path>,
    ) -> BTreeMap<OsString, OsString> {
        let mut env = base.clone();
        for name in UNSET {
            env.remove(&OsString::from(name));
        }
        let mut set = |name: &str, value: PathBuf| {
            env.insert(OsString::from(name), value.into_os_string());
        };
        set("HOME", self.home.clone());
        for name in ["TMPDIR", "TMP", "TEMP"] {
            set(name, self.tmp.clone());
        }
        for (name, rel) in HOME_VARS {
            set(name, self.home.join(rel));
        }
        if let Some(view) = caches {
            for (name, rel) in CACHE_VARS {
                set(name, view.join(rel));
            }
        }
        for (tool, name) in [
            (ToolConfig::Pip, "PIP_CONFIG_FILE"),
            (ToolConfig::Uv, "UV_CONFIG_FILE"),
        ] {
            if seeded.contains(&tool) {
                set(name, self.home.join(tool.target()));
            }
        }
        env.extend(toolchain_env.iter().cloned());
        env
    }
}

fn make_dir(path: &Path, owner: Option<SlotIdentity>) -> Result<(), SandboxError> {
    let io = |what: &str| SandboxError::io(format!("cannot {what} {}", path.display()));
    match std::fs::create_dir(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io("create")(e)),
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
        .map_err(io("protect"))?;
    if let Some(SlotIdentity { uid, gid }) = owner {
        std::os::unix::fs::lchown(path, Some(uid), Some(gid))
            .map_err(io("give to the sandbox user"))?;
    }
    Ok(())
}

/// Gives a tree to `owner` without following symbolic links. What it owns already is left as it
/// is: a change of owner changes a file's ctime, and git would then read the file again.
pub(crate) fn chown_tree(path: &Path, owner: SlotIdentity) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if (meta.uid(), meta.gid()) != (owner.uid, owner.gid) {
        std::os::unix::fs::lchown(path, Some(owner.uid), Some(owner.gid))?;
    }
    if meta.is_dir() {
        for entry in std::fs::read_dir(path)? {
            chown_tree(&entry?.path(), owner)?;
        }
    }
    Ok(())
}

/// Removes what `uid` left in the world-writable directories shared by every slot.
pub(crate) fn sweep_shared_dirs(uid: u32) {
    for dir in ["/tmp", "/var/tmp", "/dev/shm"] {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.uid() == uid && meta.is_dir() => {
                    let _ = remove_tree(&path);
                }
                Ok(meta) if meta.uid() == uid => {
                    let _ = std::fs::remove_file(&path);
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_virtualenv_on_path_is_exposed_whole() {
        let root = tempfile::tempdir().unwrap();
        let venv = root.path().join("tools");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::create_dir_all(root.path().join("plain/bin")).unwrap();
        std::fs::write(venv.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        let path = std::env::join_paths([venv.join("bin"), root.path().join("plain/bin")]).unwrap();
        let env = BTreeMap::from([(OsString::from("PATH"), path)]);
        let (dirs, _) = toolchains(&env, None, &[]);
        let root = root.path().canonicalize().unwrap();
        assert_eq!(dirs, vec![root.join("plain/bin"), root.join("tools")]);
    }

    #[test]
    fn a_go_root_on_path_is_exposed_whole() {
        let root = tempfile::tempdir().unwrap();
        let go = root.path().join("go-1.26/go");
        for dir in ["bin", "pkg/tool", "src"] {
            std::fs::create_dir_all(go.join(dir)).unwrap();
        }
        std::fs::write(go.join("VERSION"), "go1.26.6\n").unwrap();
        std::fs::create_dir_all(root.path().join("almost/bin")).unwrap();
        std::fs::create_dir_all(root.path().join("almost/pkg/tool")).unwrap();
        let path = std::env::join_paths([go.join("bin"), root.path().join("almost/bin")]).unwrap();
        let env = BTreeMap::from([(OsString::from("PATH"), path)]);
        let (dirs, _) = toolchains(&env, None, &[]);
        let root = root.path().canonicalize().unwrap();
        assert_eq!(dirs, vec![root.join("almost/bin"), root.join("go-1.26/go")]);
    }

    #[test]
    fn the_unit_environment_points_every_tool_inside_the_unit() {
        let root = tempfile::tempdir().unwrap();
        let layout = Layout::create(root.path(), "u", None).unwrap();
        let base: BTreeMap<OsString, OsString> = [
            ("PATH", "/usr/bin"),
            ("HOME", "/root"),
            ("CARGO_HOME", "/root/.cargo"),
            ("PIP_CONFIG_FILE", "/root/pip.conf"),
            ("SSH_AUTH_SOCK", "/run/user/0/ssh"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
        let rustup = [(
            OsString::from("RUSTUP_HOME"),
            OsString::from("/root/.rustup"),
        )];
        let env = layout.env(&base, &[ToolConfig::Uv], &rustup, None);
        let get = |k: &str| env.get(&OsString::from(k)).map(PathBuf::from);
        assert_eq!(get("HOME"), Some(layout.home.clone()));
        assert_eq!(get("CARGO_HOME"), Some(layout.home.join(".cargo")));
        assert_eq!(get("GOENV"), Some(layout.home.join(".config/go/env")));
        assert_eq!(get("TMPDIR"), Some(layout.tmp.clone()));
        assert_eq!(
            get("UV_CONFIG_FILE"),
            Some(layout.home.join(".config/uv/uv.toml"))
        );
        assert_eq!(get("PIP_CONFIG_FILE"), None);
        assert_eq!(get("SSH_AUTH_SOCK"), None);
        assert_eq!(get("RUSTUP_HOME"), Some(PathBuf::from("/root/.rustup")));
        assert_eq!(get("PATH"), Some(PathBuf::from("/usr/bin")));
    }
}
