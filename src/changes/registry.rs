//! The registry a unit's configuration resolves to, per ecosystem: where the tools fetch what a
//! lock file records without a URL (npm's `omit-lockfile-registry-resolved`, pnpm, yarn berry's
//! `npm:`, bun).
//!
//! Read in the order the tools read it: a variable the operator passes to commands, the
//! repository's own configuration file (the nearest from `working_dir` up to the root; a command
//! that changes one is denied before this is read), then the operator's seeded configuration.
//! A value that names a variable (`${REGISTRY}`) is not followed: the tools' default applies.

use super::budget;
use super::read::{Place, read_file};
use super::source::registry_host;
use super::{ChangesError, Ecosystem};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

/// Where a unit's configuration lives.
pub(crate) struct Configuration<'a> {
    /// The environment of the unit's commands.
    pub env: &'a BTreeMap<OsString, OsString>,
    /// The operator's npmrc and yarn berry configuration (`--tool-config`), if given.
    pub npmrc: Option<&'a Path>,
    pub yarnrc_yml: Option<&'a Path>,
}

/// The configured registry host of each ecosystem that has one.
pub(crate) fn configured(
    root: &Path,
    working_dir: &Path,
    config: &Configuration<'_>,
) -> Result<BTreeMap<Ecosystem, String>, ChangesError> {
    let place = Place::new(root, working_dir)?;
    let var = |name: &str| {
        config
            .env
            .get(&OsString::from(name))
            .and_then(|v| v.to_str())
            .map(str::to_string)
    };
    let nearest = |name: &'static str| -> Result<Option<String>, ChangesError> {
        match place.find_up(&[name]) {
            Some((dir, name)) => place.read_optional(&dir.join(name)),
            None => Ok(None),
        }
    };
    let seeded = |path: Option<&Path>, name: &str| -> Result<Option<String>, ChangesError> {
        path.map_or(Ok(None), |p| read_file(p, name))
    };
    let npm = var("npm_config_registry")
        .or_else(|| var("NPM_CONFIG_REGISTRY"))
        .or(nearest(".npmrc")?.as_deref().and_then(npmrc_registry))
        .or(seeded(config.npmrc, ".npmrc")?
            .as_deref()
            .and_then(npmrc_registry));
    let berry = var("YARN_NPM_REGISTRY_SERVER")
        .or(yarnrc_registry(nearest(".yarnrc.yml")?.as_deref()))
        .or(yarnrc_registry(
            seeded(config.yarnrc_yml, ".yarnrc.yml")?.as_deref(),
        ));
    let pypi = var("PIP_INDEX_URL");
    let uv = var("UV_DEFAULT_INDEX").or_else(|| var("UV_INDEX_URL"));
    let mut out = BTreeMap::new();
    let mut set = |ecosystem: Ecosystem, url: &Option<String>| {
        if let Some(host) = url.as_deref().and_then(host_of) {
            out.insert(ecosystem, host);
        }
    };
    for ecosystem in [Ecosystem::Npm, Ecosystem::Pnpm, Ecosystem::Bun] {
        set(ecosystem, &npm);
    }
    set(Ecosystem::Yarn, &berry.or(npm));
    set(Ecosystem::Pip, &pypi);
    set(Ecosystem::Uv, &uv);
    Ok(out)
}

/// The host of a configured registry URL.
fn host_of(url: &str) -> Option<String> {
    registry_host(url.trim()).ok()
}

/// A configured value, unless it names a variable (the tools' default applies then).
fn literal(value: String) -> Option<String> {
    (!value.contains("${")).then_some(value)
}

/// The `registry` of an npmrc (`key = value` lines, `;` or `#` comments).
fn npmrc_registry(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with([';', '#']))
        .filter_map(|l| l.split_once('='))
        .filter(|(key, _)| key.trim() == "registry")
        .map(|(_, value)| value.trim().trim_matches(['"', '\'']).to_string())
        .next_back()
        .and_then(literal)
}

/// berry's `npmRegistryServer`.
fn yarnrc_registry(text: Option<&str>) -> Option<String> {
    let doc = budget::yaml(".yarnrc.yml", text?).ok()?;
    doc["npmRegistryServer"]
        .as_str()
        .map(str::to_string)
        .and_then(literal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_configuration_wins_and_variables_are_not_followed() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let app = root.join("app");
        std::fs::create_dir(&app).unwrap();
        std::fs::write(root.join(".npmrc"), "registry=https://root.example/\n").unwrap();
        std::fs::write(
            app.join(".npmrc"),
            "; comment\nregistry = \"https://Npm.Example:8443/npm/\"\n@x:registry=https://x.example/\n",
        )
        .unwrap();
        std::fs::write(root.join(".yarnrc.yml"), "npmRegistryServer: \"${R}\"\n").unwrap();
        let env = BTreeMap::from([(
            OsString::from("UV_INDEX_URL"),
            OsString::from("https://uv.example/simple"),
        )]);
        let config = Configuration {
            env: &env,
            npmrc: None,
            yarnrc_yml: None,
        };
        let found = configured(&root, &app, &config).unwrap();
        assert_eq!(found[&Ecosystem::Npm], "npm.example:8443");
        assert_eq!(found[&Ecosystem::Yarn], "npm.example:8443");
        assert_eq!(found[&Ecosystem::Uv], "uv.example");
        assert!(!found.contains_key(&Ecosystem::Pip));
        let env = BTreeMap::from([(
            OsString::from("npm_config_registry"),
            OsString::from("http://127.0.0.1:4873/"),
        )]);
        let config = Configuration {
            env: &env,
            npmrc: None,
            yarnrc_yml: None,
        };
        let found = configured(&root, &root, &config).unwrap();
        assert_eq!(found[&Ecosystem::Pnpm], "127.0.0.1:4873");
    }
}
