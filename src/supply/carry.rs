//! The operator's registry configuration, as it is already set up on the machine, carried into
//! every unit read-only instead of being dropped: the npmrc `actions/setup-node` writes
//! (`NPM_CONFIG_USERCONFIG`, with `NODE_AUTH_TOKEN`) or `~/.npmrc`, berry's `~/.yarnrc.yml`, pip and
//! uv index variables and files, cargo's registries and source replacement in `CARGO_HOME`, the
//! Go proxy variables, and Bundler mirrors. A file the operator names with `--tool-config` wins
//! over what is found. Variables that can run code (`GOFLAGS`, `npm_config_*` other than the
//! registry) are never carried.

use crate::changes::Ecosystem;
use crate::sandbox::{Seed, ToolConfig};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What was found, and how it reaches the units.
#[derive(Debug, Default)]
pub(crate) struct Carried {
    /// Configuration files copied read-only into every unit.
    pub seeds: Vec<Seed>,
    /// Variables passed to every command.
    pub env: Vec<String>,
    /// Values never to print (tokens, index URLs with credentials).
    pub secrets: Vec<String>,
    /// Directories commands may read (a local cargo registry).
    pub expose: Vec<PathBuf>,
    /// Registry hosts the carried configuration points at: lock files may resolve from them.
    pub(crate) hosts: BTreeSet<String>,
    /// What was carried, for the start-up line (names and paths, never values).
    pub found: Vec<String>,
}

const PYTHON_VARS: &[&str] = &[
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_INDEX",
    "UV_EXTRA_INDEX_URL",
];
const NPM_VARS: &[&str] = &[
    "npm_config_registry",
    "NPM_CONFIG_REGISTRY",
    "BUN_CONFIG_REGISTRY",
];
const GO_VARS: &[&str] = &[
    "GOPROXY",
    "GOPRIVATE",
    "GONOPROXY",
    "GONOSUMDB",
    "GOSUMDB",
    "GOINSECURE",
];

/// Finds the registry configuration of `ecosystems` in the operator's environment `operator`
/// (and HOME), leaving alone the tools `explicit` configures and the variables `extra_env`
/// already passes.
pub(crate) fn discover(
    ecosystems: &BTreeSet<Ecosystem>,
    explicit: &[Seed],
    extra_env: &[String],
    operator: &BTreeMap<OsString, OsString>,
) -> Carried {
    let finder = Finder {
        operator,
        explicit,
        extra_env,
    };
    let has = |e: &[Ecosystem]| e.iter().any(|e| ecosystems.contains(e));
    let mut c = Carried::default();
    if has(&[
        Ecosystem::Npm,
        Ecosystem::Yarn,
        Ecosystem::Pnpm,
        Ecosystem::Bun,
    ]) {
        finder.npm(&mut c, has(&[Ecosystem::Yarn]));
    }
    if has(&[Ecosystem::Pip, Ecosystem::Poetry, Ecosystem::Uv]) {
        finder.python(&mut c);
    }
    if has(&[Ecosystem::Cargo]) {
        let cargo_home = finder
            .var("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| finder.at_home(".cargo"));
        finder.seed(
            &mut c,
            ToolConfig::Cargo,
            vec![("CARGO_HOME", cargo_home.map(|h| h.join("config.toml")))],
        );
    }
    if has(&[Ecosystem::Go]) {
        finder.pass_all(&mut c, GO_VARS);
    }
    if has(&[Ecosystem::Bundle]) {
        finder.bundle(&mut c);
    }
    c
}

/// Where the operator's configuration is looked for.
struct Finder<'a> {
    operator: &'a BTreeMap<OsString, OsString>,
    explicit: &'a [Seed],
    extra_env: &'a [String],
}

impl Finder<'_> {
    fn var(&self, name: &str) -> Option<String> {
        self.operator
            .get(&OsString::from(name))
            .map(|v| v.to_string_lossy().into_owned())
            .filter(|v| !v.is_empty())
    }

    fn at_home(&self, rel: &str) -> Option<PathBuf> {
        self.var("HOME").map(|h| PathBuf::from(h).join(rel))
    }

    /// Carries the first of `candidates` (label, path) that is a file, unless the operator
    /// configured `tool` explicitly.
    fn seed(&self, c: &mut Carried, tool: ToolConfig, candidates: Vec<(&str, Option<PathBuf>)>) {
        if self.explicit.iter().any(|s| s.tool == tool) {
            return;
        }
        let found = candidates
            .into_iter()
            .find_map(|(label, path)| Some((label, path.filter(|p| p.is_file())?)));
        let Some((label, path)) = found else {
            return;
        };
        c.found
            .push(format!("{} from {label} ({})", tool.name(), path.display()));
        c.hosts.extend(file_hosts(tool, &path));
        if tool == ToolConfig::Cargo
            && let Some(dir) = super::registries::local_registry_dir(&path)
        {
            c.expose.push(dir);
        }
        c.seeds.push(Seed { tool, source: path });
    }

    fn pass_all(&self, c: &mut Carried, names: &[&str]) {
        for name in names {
            if let Some(value) = self.var(name) {
                pass(c, self.extra_env, name, &value, false);
            }
        }
    }

    fn npm(&self, c: &mut Carried, yarn: bool) {
        let userconfig = self
            .var("NPM_CONFIG_USERCONFIG")
            .or_else(|| self.var("npm_config_userconfig"));
        self.seed(
            c,
            ToolConfig::Npmrc,
            vec![
                ("NPM_CONFIG_USERCONFIG", userconfig.map(PathBuf::from)),
                ("~/.npmrc", self.at_home(".npmrc")),
            ],
        );
        if yarn {
            let yarnrc = self.at_home(".yarnrc.yml");
            self.seed(c, ToolConfig::YarnrcYml, vec![("~/.yarnrc.yml", yarnrc)]);
        }
        // setup-node's npmrc reads the token from the environment: it goes with the file.
        let wanted = self
            .explicit
            .iter()
            .chain(&c.seeds)
            .filter(|s| s.tool == ToolConfig::Npmrc)
            .any(|s| {
                std::fs::read_to_string(&s.source).is_ok_and(|t| t.contains("${NODE_AUTH_TOKEN}"))
            });
        if let Some(token) = self.var("NODE_AUTH_TOKEN").filter(|_| wanted) {
            pass(c, self.extra_env, "NODE_AUTH_TOKEN", &token, true);
        }
        self.pass_all(c, NPM_VARS);
    }

    fn python(&self, c: &mut Carried) {
        self.pass_all(c, PYTHON_VARS);
        let pip_config = self.var("PIP_CONFIG_FILE").map(PathBuf::from);
        self.seed(
            c,
            ToolConfig::Pip,
            vec![
                ("PIP_CONFIG_FILE", pip_config),
                (
                    "~/.config/pip/pip.conf",
                    self.at_home(".config/pip/pip.conf"),
                ),
                ("~/.pip/pip.conf", self.at_home(".pip/pip.conf")),
            ],
        );
        let uv_config = self.var("UV_CONFIG_FILE").map(PathBuf::from);
        self.seed(
            c,
            ToolConfig::Uv,
            vec![
                ("UV_CONFIG_FILE", uv_config),
                ("~/.config/uv/uv.toml", self.at_home(".config/uv/uv.toml")),
            ],
        );
    }

    fn bundle(&self, c: &mut Carried) {
        for (name, value) in self.operator {
            let name = name.to_string_lossy();
            if name.starts_with("BUNDLE_MIRROR__") {
                pass(c, self.extra_env, &name, &value.to_string_lossy(), false);
            }
        }
        let user_config = self.var("BUNDLE_USER_CONFIG").map(PathBuf::from);
        self.seed(
            c,
            ToolConfig::Bundle,
            vec![
                ("BUNDLE_USER_CONFIG", user_config),
                ("~/.bundle/config", self.at_home(".bundle/config")),
            ],
        );
    }
}

/// Passes the operator's variable `name` to the commands, unless `--extra-env` already does.
fn pass(c: &mut Carried, extra_env: &[String], name: &str, value: &str, secret: bool) {
    if extra_env.iter().any(|e| e == name) || c.env.iter().any(|e| e == name) {
        return;
    }
    c.env.push(name.to_string());
    let credentials = value.contains('@') && value.contains("://");
    if secret || credentials {
        c.secrets.push(value.to_string());
    }
    if value.contains("://") {
        c.hosts.extend(url_hosts(value));
    }
    c.found.push(if secret {
        format!("{name} (a secret: passed to commands, redacted from their output)")
    } else {
        name.to_string()
    });
}

/// The hosts (without credentials) of the URLs in a value (`GOPROXY`'s list, an index URL).
fn url_hosts(value: &str) -> Vec<String> {
    value
        .split([',', '|', ' '])
        .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
        .map(|u| super::host_of(u).to_lowercase())
        .filter(|h| !h.is_empty())
        .collect()
}

/// The registry hosts a configuration file names.
fn file_hosts(tool: ToolConfig, path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let urls: Vec<String> = match tool {
        ToolConfig::Npmrc | ToolConfig::Pip => super::registries::ini_pairs(&text)
            .into_iter()
            .filter(|(k, _)| k.ends_with("registry") || k.ends_with("index-url"))
            .map(|(_, v)| v)
            .collect(),
        _ => text
            .split(['"', '\'', ' ', '\n', '='])
            .filter(|w| {
                w.starts_with("http://")
                    || w.starts_with("https://")
                    || w.starts_with("sparse+http")
            })
            .map(|w| w.trim_start_matches("sparse+").to_string())
            .collect(),
    };
    urls.iter().flat_map(|u| url_hosts(u)).collect()
}

#[cfg(test)]
mod tests;
