//! The registries a unit's configuration points at, read from the same files and variables the
//! unit's tools read (the tool configurations copied into every unit, and the commands'
//! environment): Quartermaster asks the registry the tools resolved from, so a mirror or a
//! private registry serves the facts the gates check. Official registries when nothing says
//! otherwise.

use crate::changes::{Ecosystem, Source};
use crate::sandbox::{Seed, ToolConfig};
use globset::{GlobBuilder, GlobMatcher};
use secrecy::SecretString;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub(crate) const NPM: &str = "https://registry.npmjs.org/";
pub(crate) const PYPI: &str = "https://pypi.org/simple/";
pub(crate) const CRATES_IO_INDEX: &str = "https://index.crates.io/";
pub(crate) const RUBYGEMS: &str = "https://rubygems.org/";
pub(crate) const GO_PROXY: &str = "https://proxy.golang.org";

/// Where one lookup goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// An npm registry (base URL ending in `/`), with the credential npm would send to it.
    Npm {
        base: String,
        token: Option<Credential>,
    },
    /// A Python package index (PEP 503 simple URL); its JSON API is beside it.
    Python { index: String },
    /// A cargo sparse index (base URL ending in `/`).
    CratesSparse { index: String },
    /// A cargo local registry: `index/` in a directory.
    CratesLocal { dir: PathBuf },
    /// A gem source (ending in `/`).
    Gems { source: String },
    /// A Go module proxy (no trailing `/`; `file://` allowed).
    GoProxy { base: String },
    /// Nowhere a publish time can be learned, and why.
    None(String),
}

/// An `Authorization` value, kept out of every log and report.
#[derive(Clone)]
pub(crate) struct Credential(pub SecretString);

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credential(..)")
    }
}

impl PartialEq for Credential {
    fn eq(&self, other: &Self) -> bool {
        use secrecy::ExposeSecret;
        self.0.expose_secret() == other.0.expose_secret()
    }
}

impl Eq for Credential {}

/// The registries configured for a run.
#[derive(Debug, Clone, Default)]
pub struct Registries {
    npm_default: Option<String>,
    npm_scopes: BTreeMap<String, String>,
    /// `//host/path/` → credential, from npmrc `_authToken` / `_auth` lines.
    npm_auth: Vec<(String, Credential)>,
    yarn_berry: Option<String>,
    bun: Option<String>,
    pip_index: Option<String>,
    uv_index: Option<String>,
    /// `[source.crates-io]`'s replacement.
    crates_io: Option<Endpoint>,
    go_proxies: Vec<String>,
    go_direct: Vec<GlobMatcher>,
    gem_mirrors: BTreeMap<String, String>,
}

impl Registries {
    /// What the tool configurations `seeds` and the commands' environment `env` configure;
    /// `${VAR}` in an npmrc is expanded from `operator` (where `NODE_AUTH_TOKEN` lives).
    pub(crate) fn from_config(
        seeds: &[Seed],
        env: &BTreeMap<OsString, OsString>,
        operator: &BTreeMap<OsString, OsString>,
    ) -> Self {
        let var = |name: &str| {
            env.get(&OsString::from(name))
                .map(|v| v.to_string_lossy().into_owned())
                .filter(|v| !v.is_empty())
        };
        let mut r = Registries::default();
        for seed in seeds {
            let Ok(text) = std::fs::read_to_string(&seed.source) else {
                continue;
            };
            match seed.tool {
                ToolConfig::Npmrc => r.read_npmrc(&text, operator),
                ToolConfig::YarnrcYml => r.yarn_berry = yaml_key(&text, "npmRegistryServer"),
                ToolConfig::Pip => r.pip_index = ini_key(&text, "index-url"),
                ToolConfig::Uv => r.uv_index = uv_index(&text),
                ToolConfig::Cargo => r.crates_io = crates_io_replacement(&text),
                ToolConfig::Go => r.read_go(&go_env(&text)),
                ToolConfig::Bundle => r.gem_mirrors.extend(bundle_mirrors(&text)),
                _ => {}
            }
        }
        if let Some(registry) = var("npm_config_registry").or_else(|| var("NPM_CONFIG_REGISTRY")) {
            r.npm_default = Some(registry);
        }
        r.bun = var("BUN_CONFIG_REGISTRY").or(r.bun);
        r.pip_index = var("PIP_INDEX_URL").or(r.pip_index);
        r.uv_index = var("UV_DEFAULT_INDEX")
            .or_else(|| var("UV_INDEX_URL"))
            .or(r.uv_index);
        let go: BTreeMap<String, String> = ["GOPROXY", "GOPRIVATE", "GONOPROXY"]
            .into_iter()
            .filter_map(|k| Some((k.to_string(), var(k)?)))
            .collect();
        if !go.is_empty() {
            r.read_go(&go);
        }
        for (name, value) in env {
            let name = name.to_string_lossy();
            if let Some(key) = name.strip_prefix("BUNDLE_MIRROR__") {
                let key = key.replace("__", ".").to_lowercase();
                r.gem_mirrors
                    .insert(key, value.to_string_lossy().into_owned());
            }
        }
        r
    }

    /// Where to ask about `name` locked from `source` by `ecosystem`'s tool.
    pub(crate) fn endpoint(&self, ecosystem: Ecosystem, name: &str, source: &Source) -> Endpoint {
        match ecosystem {
            Ecosystem::Npm | Ecosystem::Yarn | Ecosystem::Pnpm | Ecosystem::Bun => {
                self.npm(ecosystem, name)
            }
            Ecosystem::Pip | Ecosystem::Poetry | Ecosystem::Uv => self.python(ecosystem, source),
            Ecosystem::Cargo => self.cargo(source),
            Ecosystem::Bundle => self.gems(source),
            Ecosystem::Go => self.go(name),
        }
    }

    fn npm(&self, ecosystem: Ecosystem, name: &str) -> Endpoint {
        let scoped = name
            .split_once('/')
            .filter(|_| name.starts_with('@'))
            .and_then(|(scope, _)| self.npm_scopes.get(scope));
        let configured = match ecosystem {
            Ecosystem::Yarn => self.yarn_berry.as_ref().or(self.npm_default.as_ref()),
            Ecosystem::Bun => self.bun.as_ref().or(self.npm_default.as_ref()),
            _ => self.npm_default.as_ref(),
        };
        let base = with_slash(scoped.or(configured).map_or(NPM, String::as_str));
        let bare = base
            .split_once("://")
            .map_or(base.as_str(), |(_, rest)| rest);
        let token = self
            .npm_auth
            .iter()
            .filter(|(prefix, _)| format!("//{bare}").starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, c)| c.clone());
        Endpoint::Npm { base, token }
    }

    fn python(&self, ecosystem: Ecosystem, source: &Source) -> Endpoint {
        let index = match source {
            Source::Registry(url) if url.starts_with("http") => Some(url.clone()),
            _ => match ecosystem {
                Ecosystem::Pip => self.pip_index.clone(),
                Ecosystem::Uv => self.uv_index.clone(),
                _ => None,
            },
        };
        Endpoint::Python {
            index: index.unwrap_or_else(|| PYPI.to_string()),
        }
    }

    fn cargo(&self, source: &Source) -> Endpoint {
        let id = match source {
            Source::Registry(id) => id.as_str(),
            // Asked about by name alone (`check_update`): the default registry.
            Source::DefaultRegistry => "sparse+https://index.crates.io/",
            _ => return Endpoint::None("not from a registry".into()),
        };
        let crates_io = id == "registry+https://github.com/rust-lang/crates.io-index"
            || id.trim_end_matches('/') == "sparse+https://index.crates.io";
        if crates_io {
            return self.crates_io.clone().unwrap_or(Endpoint::CratesSparse {
                index: CRATES_IO_INDEX.to_string(),
            });
        }
        match id.strip_prefix("sparse+") {
            Some(url) => Endpoint::CratesSparse {
                index: with_slash(url),
            },
            None => Endpoint::None(format!(
                "the registry {id} has a git index, which Quartermaster does not read"
            )),
        }
    }

    fn gems(&self, source: &Source) -> Endpoint {
        let remote = match source {
            Source::Registry(url) => with_slash(url),
            Source::DefaultRegistry => RUBYGEMS.to_string(),
            _ => return Endpoint::None("not from a gem source".into()),
        };
        let host = crate::supply::host_of(&remote).to_lowercase();
        let mirror = self
            .gem_mirrors
            .get(&remote.to_lowercase())
            .or_else(|| self.gem_mirrors.get(remote.trim_end_matches('/')))
            .or_else(|| self.gem_mirrors.get(&host))
            .or_else(|| self.gem_mirrors.get("all"));
        Endpoint::Gems {
            source: with_slash(mirror.unwrap_or(&remote)),
        }
    }

    fn go(&self, module: &str) -> Endpoint {
        if self.go_direct.iter().any(|m| matches_module(m, module)) {
            return Endpoint::None(format!(
                "{module} is fetched directly from its repository (GOPRIVATE/GONOPROXY), not through a module proxy"
            ));
        }
        let proxies: Vec<&str> = if self.go_proxies.is_empty() {
            vec![GO_PROXY]
        } else {
            self.go_proxies.iter().map(String::as_str).collect()
        };
        match proxies.first() {
            Some(base) => Endpoint::GoProxy {
                base: base.trim_end_matches('/').to_string(),
            },
            None => Endpoint::None("GOPROXY names no module proxy (direct or off)".into()),
        }
    }

    fn read_npmrc(&mut self, text: &str, operator: &BTreeMap<OsString, OsString>) {
        for (key, value) in ini_pairs(text) {
            let value = expand(&value, operator);
            if key == "registry" {
                self.npm_default = Some(value);
            } else if let Some(scope) = key.strip_suffix(":registry") {
                self.npm_scopes.insert(scope.to_string(), value);
            } else if let Some(prefix) = key.strip_suffix(":_authToken") {
                let bearer = SecretString::from(format!("Bearer {value}"));
                self.npm_auth.push((with_slash(prefix), Credential(bearer)));
            } else if let Some(prefix) = key.strip_suffix(":_auth") {
                let basic = SecretString::from(format!("Basic {value}"));
                self.npm_auth.push((with_slash(prefix), Credential(basic)));
            }
        }
    }

    fn read_go(&mut self, vars: &BTreeMap<String, String>) {
        if let Some(proxy) = vars.get("GOPROXY") {
            self.go_proxies = proxy
                .split([',', '|'])
                .map(str::trim)
                .take_while(|p| !matches!(*p, "direct" | "off"))
                .filter(|p| p.contains("://"))
                .map(String::from)
                .collect();
            if proxy.trim().is_empty() {
                self.go_proxies.clear();
            }
        }
        let direct = vars.get("GONOPROXY").or_else(|| vars.get("GOPRIVATE"));
        if let Some(patterns) = direct {
            self.go_direct = patterns
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .filter_map(|p| {
                    GlobBuilder::new(p)
                        .literal_separator(true)
                        .build()
                        .ok()
                        .map(|g| g.compile_matcher())
                })
                .collect();
        }
    }
}

/// Go's rule: a pattern matches a module whose path, or a leading part of it cut at a `/`,
/// matches.
fn matches_module(pattern: &GlobMatcher, module: &str) -> bool {
    let parts: Vec<&str> = module.split('/').collect();
    (1..=parts.len()).any(|n| pattern.is_match(parts[..n].join("/")))
}

pub(crate) fn with_slash(url: &str) -> String {
    if url.ends_with('/') {
        url.to_string()
    } else {
        format!("{url}/")
    }
}

/// `key = value` lines of an ini-like file (npmrc, pip.conf), comments and sections skipped.
pub(crate) fn ini_pairs(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with(['#', ';', '[']))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| {
            let v = v.trim().trim_matches('"').trim_matches('\'');
            (k.trim().to_string(), v.to_string())
        })
        .collect()
}

fn ini_key(text: &str, key: &str) -> Option<String> {
    ini_pairs(text)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

/// `${NAME}` replaced by the operator's variable, as npm does.
fn expand(value: &str, operator: &BTreeMap<OsString, OsString>) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let Some(end) = rest[start..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        let name = &rest[start + 2..start + end];
        if let Some(v) = operator.get(&OsString::from(name)) {
            out.push_str(&v.to_string_lossy());
        }
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    out
}

fn yaml_key(text: &str, key: &str) -> Option<String> {
    let docs = yaml_rust2::YamlLoader::load_from_str(text).ok()?;
    docs.first()?[key].as_str().map(String::from)
}

fn uv_index(text: &str) -> Option<String> {
    let table: toml::Table = text.parse().ok()?;
    if let Some(url) = table.get("index-url").and_then(|v| v.as_str()) {
        return Some(url.to_string());
    }
    table
        .get("index")?
        .as_array()?
        .iter()
        .find(|i| i.get("default").and_then(|d| d.as_bool()) == Some(true))?
        .get("url")?
        .as_str()
        .map(String::from)
}

/// `[source.crates-io] replace-with = "x"` and `[source.x]`'s `registry` (sparse) or
/// `local-registry`.
fn crates_io_replacement(text: &str) -> Option<Endpoint> {
    let table: toml::Table = text.parse().ok()?;
    let sources = table.get("source")?.as_table()?;
    let name = sources.get("crates-io")?.get("replace-with")?.as_str()?;
    let source = sources.get(name)?;
    if let Some(dir) = source.get("local-registry").and_then(|v| v.as_str()) {
        return Some(Endpoint::CratesLocal {
            dir: PathBuf::from(dir),
        });
    }
    let registry = source.get("registry").and_then(|v| v.as_str());
    Some(match registry.and_then(|r| r.strip_prefix("sparse+")) {
        Some(url) => Endpoint::CratesSparse {
            index: with_slash(url),
        },
        None => Endpoint::None(format!(
            "crates-io is replaced by `{name}`, which has no sparse index Quartermaster reads"
        )),
    })
}

/// The `KEY=value` lines of a `go env` file.
fn go_env(text: &str) -> BTreeMap<String, String> {
    ini_pairs(text).into_iter().collect()
}

/// `BUNDLE_MIRROR__<SOURCE>: "<mirror>"` lines of a Bundler config file, keyed by the source
/// as Bundler writes it (`https://rubygems.org/`), lower case.
fn bundle_mirrors(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("BUNDLE_MIRROR__"))
        .filter_map(|l| {
            let (key, value) = l.rsplit_once(": ").or_else(|| l.rsplit_once(":"))?;
            let key = key.trim_matches('"').replace("__", ".").to_lowercase();
            Some((key, value.trim().trim_matches('"').to_string()))
        })
        .collect()
}

/// The directory of a cargo local registry the configuration names, if any (to expose it).
pub(crate) fn local_registry_dir(config: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(config).ok()?;
    match crates_io_replacement(&text)? {
        Endpoint::CratesLocal { dir } => Some(dir),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
