//! What the operator chooses, and the isolation levels the probe can pick from.

use super::SandboxError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The operator's preference. `Auto` never falls back to no sandbox: only `None` does that.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    /// The strongest level available; an error when there is none.
    #[default]
    Auto,
    /// A dedicated uid per slot, without namespaces (root only): what a container without
    /// CAP_SYS_ADMIN gets, and a way to exercise that path on a machine that has more.
    Uid,
    /// Namespaces (plus the uid drop when root); an error when the kernel refuses them.
    Namespaces,
    /// No sandbox: commands run as Quartermaster's own user.
    None,
}

impl FromStr for Isolation {
    type Err = SandboxError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Isolation::Auto),
            "uid" => Ok(Isolation::Uid),
            "namespaces" => Ok(Isolation::Namespaces),
            "none" => Ok(Isolation::None),
            other => Err(SandboxError::UnknownIsolation(other.to_string())),
        }
    }
}

/// The isolation a run actually has, as the report names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Level {
    /// Root with CAP_SYS_ADMIN: a slot uid inside mount, PID and IPC namespaces.
    #[serde(rename = "uid+namespaces")]
    UidNamespaces,
    /// Root without namespaces (a container): a slot uid, file permissions, kill-by-uid.
    #[serde(rename = "uid")]
    Uid,
    /// Unprivileged: user, mount, PID and IPC namespaces; commands keep the operator's uid.
    #[serde(rename = "namespaces")]
    Namespaces,
    /// Asked for explicitly: no isolation beyond a scrubbed environment.
    #[serde(rename = "none")]
    None,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::UidNamespaces => "uid+namespaces",
            Level::Uid => "uid",
            Level::Namespaces => "namespaces",
            Level::None => "none",
        }
    }

    /// Commands run as the slot's dedicated uid.
    pub(crate) fn drops_uid(self) -> bool {
        matches!(self, Level::UidNamespaces | Level::Uid)
    }

    /// Commands run in their own mount and PID namespaces.
    pub(crate) fn namespaced(self) -> bool {
        matches!(self, Level::UidNamespaces | Level::Namespaces)
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool whose configuration file the operator lets into every unit (a private registry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolConfig {
    Npmrc,
    Yarnrc,
    YarnrcYml,
    Pnpm,
    Cargo,
    Pip,
    Uv,
    Poetry,
    Go,
    Bundle,
    Gemrc,
}

const TOOLS: &[(&str, ToolConfig)] = &[
    ("npmrc", ToolConfig::Npmrc),
    ("yarnrc", ToolConfig::Yarnrc),
    ("yarnrc-yml", ToolConfig::YarnrcYml),
    ("pnpm", ToolConfig::Pnpm),
    ("cargo", ToolConfig::Cargo),
    ("pip", ToolConfig::Pip),
    ("uv", ToolConfig::Uv),
    ("poetry", ToolConfig::Poetry),
    ("go", ToolConfig::Go),
    ("bundle", ToolConfig::Bundle),
    ("gemrc", ToolConfig::Gemrc),
];

impl ToolConfig {
    pub fn name(self) -> &'static str {
        TOOLS
            .iter()
            .find(|(_, t)| *t == self)
            .map_or("?", |(n, _)| n)
    }

    /// Where the tool reads its user configuration, relative to the unit's HOME (the unit's
    /// environment points every tool's config variable inside that HOME).
    pub(crate) fn target(self) -> &'static str {
        match self {
            ToolConfig::Npmrc => ".npmrc",
            ToolConfig::Yarnrc => ".yarnrc",
            ToolConfig::YarnrcYml => ".yarnrc.yml",
            ToolConfig::Pnpm => ".config/pnpm/rc",
            ToolConfig::Cargo => ".cargo/config.toml",
            ToolConfig::Pip => ".config/pip/pip.conf",
            ToolConfig::Uv => ".config/uv/uv.toml",
            ToolConfig::Poetry => ".config/pypoetry/config.toml",
            ToolConfig::Go => ".config/go/env",
            ToolConfig::Bundle => ".bundle/config",
            ToolConfig::Gemrc => ".gemrc",
        }
    }
}

/// An operator-provided configuration file copied read-only into every unit: `npmrc=/path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seed {
    pub tool: ToolConfig,
    pub source: PathBuf,
}

impl FromStr for Seed {
    type Err = SandboxError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: String| SandboxError::BadSeed {
            given: s.to_string(),
            why,
        };
        let (name, path) = s
            .split_once('=')
            .ok_or_else(|| bad("expected TOOL=PATH".into()))?;
        let tool = TOOLS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                let names: Vec<&str> = TOOLS.iter().map(|(n, _)| *n).collect();
                bad(format!(
                    "unknown tool `{name}`; known: {}",
                    names.join(", ")
                ))
            })?;
        let source = PathBuf::from(path);
        if !source.is_absolute() {
            return Err(bad(format!("the path `{path}` must be absolute")));
        }
        Ok(Seed { tool, source })
    }
}

/// Variables through which GitHub's runner reads commands back from a step.
pub const FILE_COMMAND_VARS: &[&str] = &[
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_OUTPUT",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_STATE",
];
/// Where a container action sees those files.
pub const CONTAINER_FILE_COMMANDS: &str = "/github/file_commands";
/// First slot uid when none is configured: below systemd's dynamic users (61184-65519) and far
/// above the ids images and distributions hand out.
pub const DEFAULT_UID_BASE: u32 = 60_900;

/// Everything the sandbox needs to know, gathered once per run.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    pub isolation: Isolation,
    /// Units that may run at once; slot `n` runs as uid and gid `uid_base + n` (root levels).
    pub slots: u32,
    /// The first slot uid to try.
    pub uid_base: u32,
    /// Whether the next free range of uids may be taken when `uid_base`'s is in use (the base was
    /// not chosen by the operator).
    pub(crate) uid_search: bool,
    /// Where the locks that keep concurrent runs' uids apart live.
    pub(crate) claims_dir: PathBuf,
    /// Where unit directories (HOME, TMPDIR, work) are created.
    pub(crate) state_dir: PathBuf,
    /// Quartermaster's private paths (its git mirror...), out of reach of every command.
    pub hidden: Vec<PathBuf>,
    /// The user's checkout, out of reach of every command.
    pub checkout: Option<PathBuf>,
    /// The runner's file-command files (or their directory): out of reach, checked unchanged.
    pub file_commands: Vec<PathBuf>,
    /// The operator's HOME: hidden; toolchains under it are exposed read-only.
    pub(crate) operator_home: Option<PathBuf>,
    /// More toolchain directories to expose read-only when they sit under a hidden path.
    pub(crate) toolchain_dirs: Vec<PathBuf>,
    /// The environment commands start from (PATH and toolchain homes are read from it).
    pub env: BTreeMap<OsString, OsString>,
    /// Programs the plan's commands run: the probe checks the sandbox identity can run them.
    pub programs: Vec<String>,
    pub seeds: Vec<Seed>,
    /// What each unit's commands may take of the runner.
    pub limits: super::Limits,
    /// The executable re-run as the sandbox helper: Quartermaster's own binary.
    pub helper: PathBuf,
    /// Whether units get warm caches (copy-on-write layers over a warm-up) where the machine
    /// allows them; off, every unit starts with empty caches.
    pub warm_caches: bool,
    /// The operator's cache directory (restored by the CI's cache): the warm-up starts from it
    /// and leaves its result there.
    pub cache_dir: Option<PathBuf>,
    /// Whether workspaces are copy-on-write layers where the machine allows them; off, each
    /// slot keeps a checkout of its own.
    pub layered_workspaces: bool,
}

impl SandboxConfig {
    /// Defaults taken from Quartermaster's own environment (`own`): the runner's file-command
    /// files, HOME, the temporary directory, and the sockets of the operator's session.
    pub fn new(
        isolation: Isolation,
        own: &BTreeMap<OsString, OsString>,
        child_env: BTreeMap<OsString, OsString>,
    ) -> Self {
        let var = |name: &str| own.get(&OsString::from(name)).filter(|v| !v.is_empty());
        let mut file_commands: Vec<PathBuf> = FILE_COMMAND_VARS
            .iter()
            .filter_map(|name| var(name).map(PathBuf::from))
            .collect();
        if Path::new(CONTAINER_FILE_COMMANDS).is_dir() {
            file_commands.push(PathBuf::from(CONTAINER_FILE_COMMANDS));
        }
        let mut hidden: Vec<PathBuf> = ["/run/docker.sock", "/var/run/docker.sock"]
            .iter()
            .map(PathBuf::from)
            .collect();
        hidden.extend(var("XDG_RUNTIME_DIR").map(PathBuf::from));
        hidden.extend(var("SSH_AUTH_SOCK").map(PathBuf::from));
        SandboxConfig {
            isolation,
            slots: 1,
            uid_base: DEFAULT_UID_BASE,
            uid_search: true,
            claims_dir: PathBuf::from(super::CLAIMS_DIR),
            state_dir: std::env::temp_dir(),
            hidden,
            checkout: None,
            file_commands,
            operator_home: var("HOME").map(PathBuf::from),
            toolchain_dirs: Vec::new(),
            env: child_env,
            programs: Vec::new(),
            seeds: Vec::new(),
            limits: super::Limits::default(),
            helper: PathBuf::from("/proc/self/exe"),
            warm_caches: true,
            cache_dir: None,
            layered_workspaces: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolation_names_parse_and_unknown_ones_are_refused() {
        assert_eq!("auto".parse::<Isolation>().unwrap(), Isolation::Auto);
        assert_eq!("none".parse::<Isolation>().unwrap(), Isolation::None);
        let err = "off".parse::<Isolation>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown isolation `off`: use auto, uid, namespaces or none"
        );
    }

    #[test]
    fn seeds_parse_and_bad_ones_say_why() {
        let seed: Seed = "npmrc=/etc/qm/.npmrc".parse().unwrap();
        assert_eq!(seed.tool, ToolConfig::Npmrc);
        assert_eq!(seed.tool.target(), ".npmrc");
        let err = |s: &str| s.parse::<Seed>().unwrap_err().to_string();
        assert_eq!(err("npmrc"), "invalid seed `npmrc`: expected TOOL=PATH");
        assert!(
            err("maven=/x").starts_with(
                "invalid seed `maven=/x`: unknown tool `maven`; known: npmrc, yarnrc,"
            ),
            "{}",
            err("maven=/x")
        );
        assert_eq!(
            err("cargo=config.toml"),
            "invalid seed `cargo=config.toml`: the path `config.toml` must be absolute"
        );
    }
}
