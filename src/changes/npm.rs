//! npm: `package.json` and `package-lock.json` / `npm-shrinkwrap.json` (lockfile versions 1-3).
//! The `package.json` reader is shared with yarn, pnpm and bun.

use super::read::Place;
use super::{ChangesError, EcosystemSnapshot, LockedPackage, Manifest, Source, budget, manifest};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// The dependency tables of `package.json`.
const TABLES: [&str; 4] = [
    "dependencies",
    "devDependencies",
    "optionalDependencies",
    "peerDependencies",
];

/// npm prefers the shrinkwrap when both exist.
const LOCKS: [&str; 2] = ["npm-shrinkwrap.json", "package-lock.json"];

pub(crate) fn parse_json(file: &str, text: &str) -> Result<Value, ChangesError> {
    budget::check_json(file, text)?;
    serde_json::from_str(text).map_err(|e| ChangesError::parse(file, Some(e.line()), e))
}

pub(crate) fn package_json(file: &str, text: &str) -> Result<Manifest, ChangesError> {
    Manifest::from_value(
        file,
        parse_json(file, text)?,
        &TABLES,
        manifest::object_entries,
    )
}

/// The working directory's `package.json`, and the root one when the lock lives in an ancestor
/// (its `overrides`, `resolutions` and `workspaces` govern the working directory too).
pub(crate) fn manifests(
    place: &Place,
    ecosystem: &'static str,
    lock_dir: &Path,
) -> Result<Vec<Manifest>, ChangesError> {
    let (file, text) = place.manifest(ecosystem, "package.json")?;
    let mut manifests = vec![package_json(&file, &text)?];
    if lock_dir != place.working_dir() {
        let root = lock_dir.join("package.json");
        if let Some(text) = place.read_optional(&root)? {
            manifests.push(package_json(&place.rel(&root), &text)?);
        }
    }
    Ok(manifests)
}

pub(crate) fn snapshot(place: &Place) -> Result<EcosystemSnapshot, ChangesError> {
    let (dir, name) = place
        .find_up(&LOCKS)
        .ok_or_else(|| place.missing_lock("npm", "package-lock.json"))?;
    let path = dir.join(name);
    let file = place.rel(&path);
    let text = place.read(&path)?;
    let ((mut packages, keys), format) = parse_lock(&file, &text)?;
    let manifests = manifests(place, "npm", &dir)?;
    mark_direct(
        &mut packages,
        &keys,
        &place.working_dir_from(&dir),
        &manifests[0],
    );
    Ok(EcosystemSnapshot {
        lock_file: Some(file),
        packages,
        format,
        manifests,
    })
}

/// Every locked copy with its install path, and the lock's `lockfileVersion`.
pub(crate) fn parse_lock(file: &str, text: &str) -> Result<(Copies, Option<String>), ChangesError> {
    budget::check_json(file, text)?;
    let lock: Lock =
        serde_json::from_str(text).map_err(|e| ChangesError::parse(file, Some(e.line()), e))?;
    let format = lock.lockfile_version.as_ref().map(scalar);
    Ok((lock_packages(file, text, lock)?, format))
}

/// A header value as written: a string without its quotes, a number as is.
pub(crate) fn scalar(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_string)
}

/// The fields read from a lock file; serde skips the rest (`dependencies` ranges, `engines`,
/// `bin`...) without building them, which keeps a 3,000-entry lock cheap to read.
#[derive(Deserialize)]
struct Lock {
    #[serde(rename = "lockfileVersion")]
    lockfile_version: Option<Value>,
    packages: Option<HashMap<String, PackageEntry>>,
}

#[derive(Deserialize)]
struct PackageEntry {
    name: Option<String>,
    version: Option<String>,
    resolved: Option<String>,
    integrity: Option<String>,
    #[serde(default)]
    link: bool,
}

/// lockfileVersion 1, read only when `packages` is absent: copies nest in `dependencies`.
#[derive(Deserialize)]
struct LegacyLock {
    dependencies: Option<HashMap<String, LegacyEntry>>,
}

#[derive(Deserialize)]
struct LegacyEntry {
    #[serde(flatten)]
    entry: PackageEntry,
    #[serde(default)]
    dependencies: HashMap<String, LegacyEntry>,
}

pub(crate) type Copies = (Vec<LockedPackage>, Vec<String>);

/// Every locked copy, with its install path (`node_modules/a/node_modules/b`).
fn lock_packages(file: &str, text: &str, lock: Lock) -> Result<Copies, ChangesError> {
    let mut out = (Vec::new(), Vec::new());
    if let Some(packages) = lock.packages {
        for (key, entry) in packages {
            if key.is_empty() || entry.link {
                continue;
            }
            let (name, source) = match key.rfind("node_modules/") {
                Some(at) => (
                    key[at + "node_modules/".len()..].to_string(),
                    entry_source(&entry),
                ),
                None => match &entry.name {
                    Some(name) => (name.clone(), Source::Path(key.clone())),
                    None => continue,
                },
            };
            push(&mut out, key, name, entry, source);
        }
        return Ok(out);
    }
    let legacy: LegacyLock =
        serde_json::from_str(text).map_err(|e| ChangesError::parse(file, Some(e.line()), e))?;
    let Some(deps) = legacy.dependencies else {
        return Err(ChangesError::parse(
            file,
            None,
            "neither `packages` nor `dependencies` is an object",
        ));
    };
    nested(&mut out, "", deps);
    Ok(out)
}

fn nested(out: &mut Copies, prefix: &str, deps: HashMap<String, LegacyEntry>) {
    for (name, legacy) in deps {
        let key = format!("{prefix}node_modules/{name}");
        let source = entry_source(&legacy.entry);
        push(out, key.clone(), name, legacy.entry, source);
        nested(out, &format!("{key}/"), legacy.dependencies);
    }
}

fn push(out: &mut Copies, key: String, name: String, entry: PackageEntry, source: Source) {
    out.0.push(LockedPackage {
        name,
        version: entry.version.unwrap_or_default(),
        source,
        integrity: entry.integrity,
        direct: false,
    });
    out.1.push(key);
}

fn entry_source(entry: &PackageEntry) -> Source {
    entry
        .resolved
        .as_deref()
        .map_or(Source::Unrecorded, Source::from_url)
}

/// Marks the copy each dependency of `manifest` resolves to from `working_dir` (relative to the
/// lock's directory), as Node resolves it: the nearest `node_modules` walking up.
pub(crate) fn mark_direct(
    packages: &mut [LockedPackage],
    keys: &[String],
    working_dir: &str,
    manifest: &Manifest,
) {
    let index: HashMap<&str, usize> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    let mut hits = Vec::new();
    for name in manifest.names() {
        let mut dir = working_dir.to_string();
        loop {
            let key = if dir.is_empty() {
                format!("node_modules/{name}")
            } else {
                format!("{dir}/node_modules/{name}")
            };
            if let Some(i) = index.get(key.as_str()) {
                hits.push(*i);
                break;
            }
            if dir.is_empty() {
                break;
            }
            dir = dir
                .rsplit_once('/')
                .map(|(parent, _)| parent.to_string())
                .unwrap_or_default();
        }
    }
    for i in hits {
        packages[i].direct = true;
    }
}
