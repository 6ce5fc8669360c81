//! pnpm: `pnpm-lock.yaml` (lockfile formats 5.x, 6.x and 9.x), read with `yaml-rust2`.
//!
//! `yaml-rust2` is maintained (it is the continuation of `yaml-rust`) and reports error
//! positions; `serde_yaml` is unmaintained. Its loader would expand aliases, so the document is
//! built by [`budget::yaml`] instead, which refuses them (pnpm writes none).

use super::read::{Place, guarded};
use super::{ChangesError, EcosystemSnapshot, LockedPackage, ParsedLock, Source, budget, npm};
use std::collections::HashSet;
use yaml_rust2::Yaml;

const DEPENDENCY_KEYS: [&str; 3] = ["dependencies", "devDependencies", "optionalDependencies"];

pub(crate) fn snapshot(place: &Place) -> Result<EcosystemSnapshot, ChangesError> {
    let (dir, name) = place
        .find_up(&["pnpm-lock.yaml"])
        .ok_or_else(|| place.missing_lock("pnpm", "pnpm-lock.yaml"))?;
    let path = dir.join(name);
    let file = place.rel(&path);
    let text = place.read(&path)?;
    let manifests = npm::manifests(place, "pnpm", &dir)?;
    let lock = parse(&file, &text, &place.working_dir_from(&dir))?;
    Ok(EcosystemSnapshot {
        lock_file: Some(file),
        packages: lock.packages,
        format: lock.format,
        manifests,
    })
}

/// The locked packages, with the direct copies of the importer at `working_dir` (relative to
/// the lock's directory) marked, and the lock's `lockfileVersion`.
pub(crate) fn parse(file: &str, text: &str, working_dir: &str) -> Result<ParsedLock, ChangesError> {
    let doc = guarded(file, || budget::yaml(file, text))?;
    if doc.is_badvalue() {
        return Err(ChangesError::parse(file, None, "the file is empty"));
    }
    let v5 = doc["lockfileVersion"].as_f64().is_some_and(|v| v < 6.0)
        || doc["lockfileVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with('5'));
    let importer_key = if working_dir.is_empty() {
        "."
    } else {
        working_dir
    };
    let importer = match &doc["importers"] {
        Yaml::BadValue => &doc,
        importers => &importers[importer_key],
    };
    let direct = direct_versions(importer);
    let format = lockfile_version(&doc["lockfileVersion"]);
    let Some(entries) = doc["packages"].as_hash() else {
        return Ok(ParsedLock {
            packages: Vec::new(),
            format,
        });
    };
    let mut seen = HashSet::new();
    let mut packages = Vec::new();
    for (key, entry) in entries {
        let Some((name, version)) = key.as_str().and_then(|k| split_key(k, v5)) else {
            return Err(ChangesError::parse(
                file,
                None,
                format!("unexpected package key {key:?}"),
            ));
        };
        // pnpm 6 repeats a package once per peer-dependency set; one copy per version suffices.
        if !seen.insert((name.clone(), version.clone())) {
            continue;
        }
        let resolution = &entry["resolution"];
        let direct = direct.contains(&(name.clone(), version.clone()));
        packages.push(LockedPackage {
            source: source(resolution),
            integrity: resolution["integrity"].as_str().map(str::to_string),
            direct,
            name,
            version,
        });
    }
    Ok(ParsedLock { packages, format })
}

/// `'9.0'` (a string since pnpm 8), or a number in older locks (`5.4`).
fn lockfile_version(value: &Yaml) -> Option<String> {
    match value {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        _ => None,
    }
}

/// (name, version) of every dependency of an importer, peer suffixes removed.
fn direct_versions(importer: &Yaml) -> HashSet<(String, String)> {
    let mut found = HashSet::new();
    for table in DEPENDENCY_KEYS {
        let Some(deps) = importer[table].as_hash() else {
            continue;
        };
        for (name, spec) in deps {
            let version = spec.as_str().or_else(|| spec["version"].as_str());
            if let (Some(name), Some(version)) = (name.as_str(), version) {
                found.insert((name.to_string(), strip_peers(version).to_string()));
            }
        }
    }
    found
}

/// `/name@1.2.3(peer@1)` (6.x), `name@1.2.3` (9.x) or `/name/1.2.3_peer@1` (5.x).
pub(super) fn split_key(key: &str, v5: bool) -> Option<(String, String)> {
    let key = key.strip_prefix('/').unwrap_or(key);
    let (name, version) = if v5 {
        let key = key.split('_').next()?;
        key.rsplit_once('/')?
    } else {
        let key = strip_peers(key);
        let at = key[1..].find('@')? + 1;
        (&key[..at], &key[at + 1..])
    };
    Some((name.to_string(), version.to_string()))
}

fn strip_peers(version: &str) -> &str {
    version.split('(').next().unwrap_or(version)
}

fn source(resolution: &Yaml) -> Source {
    if let Some(tarball) = resolution["tarball"].as_str() {
        return Source::from_url(tarball);
    }
    if let Some(repo) = resolution["repo"].as_str() {
        let commit = resolution["commit"].as_str().unwrap_or_default();
        return Source::Git(format!("{repo}#{commit}"));
    }
    if let Some(directory) = resolution["directory"].as_str() {
        return Source::Path(directory.to_string());
    }
    Source::DefaultRegistry
}
