//! cargo: `Cargo.toml` (read with `toml`) and `Cargo.lock` (read with `cargo-lock`).

use super::error::TableError;
use super::read::{Place, guarded};
use super::{
    ChangesError, EcosystemSnapshot, LockedPackage, Manifest, ParsedLock, Source, manifest,
};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};

/// Dependency tables; `[workspace.dependencies]` is where inherited versions live.
const TABLES: [&str; 7] = [
    "dependencies",
    "dev-dependencies",
    "build-dependencies",
    "target.*.dependencies",
    "target.*.dev-dependencies",
    "target.*.build-dependencies",
    "workspace.dependencies",
];

pub(crate) fn snapshot(place: &Place) -> Result<EcosystemSnapshot, ChangesError> {
    let (file, text) = place.manifest("cargo", "Cargo.toml")?;
    let mut manifests = vec![cargo_toml(&file, &text)?];
    let (dir, name) = place
        .find_up(&["Cargo.lock"])
        .ok_or_else(|| place.missing_lock("cargo", "Cargo.lock"))?;
    if dir != place.working_dir() {
        let root = dir.join("Cargo.toml");
        if let Some(text) = place.read_optional(&root)? {
            manifests.push(cargo_toml(&place.rel(&root), &text)?);
        }
    }
    let path = dir.join(name);
    let lock_file = place.rel(&path);
    let roots = if workspace_root(&text) {
        Roots::Workspace
    } else {
        match manifests[0].fields.get("package.name") {
            Some(name) => Roots::Package(name, &manifests[0]),
            None => Roots::Declared(&manifests[0]),
        }
    };
    let lock = parse_lock(&lock_file, &place.read(&path)?, roots)?;
    Ok(EcosystemSnapshot {
        lock_file: Some(lock_file),
        packages: lock.packages,
        format: lock.format,
        manifests,
    })
}

pub(crate) fn cargo_toml(file: &str, text: &str) -> Result<Manifest, ChangesError> {
    Manifest::from_value(file, manifest::toml_to_json(file, text)?, &TABLES, entries)
}

/// A dependency table; a renamed entry (`alias = { package = "real" }`) is keyed by the real
/// name, which is what the lock file holds.
fn entries(value: Value) -> Result<BTreeMap<String, String>, TableError> {
    let Value::Object(table) = value else {
        return Err(TableError::NotATableOfSpecs);
    };
    Ok(table
        .into_iter()
        .map(|(key, spec)| {
            let name = spec
                .get("package")
                .and_then(Value::as_str)
                .map_or(key, str::to_string);
            (name, manifest::canonical(&spec))
        })
        .collect())
}

/// Whose dependencies are direct.
pub(crate) enum Roots<'m> {
    /// The working directory is a workspace's root (`[workspace]`, virtual or not): every
    /// member's dependencies, as the lock lists them for its local packages.
    Workspace,
    /// A package: its own dependencies, as the lock lists them (with the manifest, for a lock
    /// that does not list the package).
    Package(&'m str, &'m Manifest),
    /// Neither: every copy of a name the manifest declares.
    Declared(&'m Manifest),
}

/// Whether a `Cargo.toml` has a `[workspace]` table (an empty one included).
fn workspace_root(text: &str) -> bool {
    toml::from_str::<toml::Table>(text).is_ok_and(|t| t.contains_key("workspace"))
}

/// The lock as `cargo-lock` reads it.
fn lockfile(file: &str, text: &str) -> Result<cargo_lock::Lockfile, ChangesError> {
    // `cargo-lock` cuts a checksum at byte offsets and panics inside a character; cargo writes
    // checksums in hex.
    if let Some(line) = text
        .lines()
        .position(|l| l.contains("checksum") && !l.is_ascii())
    {
        return Err(ChangesError::parse(
            file,
            Some(line + 1),
            "a checksum that is not hexadecimal",
        ));
    }
    guarded(file, || {
        text.parse::<cargo_lock::Lockfile>().map_err(|e| {
            let message = e.to_string();
            ChangesError::parse(file, line_in(&message), message)
        })
    })
}

/// The locked packages. The direct copies are those the lock lists as dependencies of the
/// [`Roots`] (exact when a name has several versions). The format is the header's `version`,
/// which `cargo-lock` infers (1 or 2) for a lock written before cargo stated it.
pub(crate) fn parse_lock(
    file: &str,
    text: &str,
    roots: Roots<'_>,
) -> Result<ParsedLock, ChangesError> {
    let lock = lockfile(file, text)?;
    let dependencies = |p: &cargo_lock::Package| -> Vec<(String, String)> {
        p.dependencies
            .iter()
            .map(|d| (d.name.to_string(), d.version.to_string()))
            .collect()
    };
    let local = |p: &&cargo_lock::Package| p.source.is_none();
    let own = match roots {
        Roots::Package(name, manifest) => {
            match lock
                .packages
                .iter()
                .filter(local)
                .find(|p| p.name.as_str() == name)
            {
                Some(own) => Ok(dependencies(own)),
                None => Err(manifest),
            }
        }
        Roots::Workspace => Ok(lock
            .packages
            .iter()
            .filter(local)
            .flat_map(dependencies)
            .collect()),
        Roots::Declared(manifest) => Err(manifest),
    };
    let direct: HashSet<(String, String)> = match own {
        Ok(dependencies) => dependencies.into_iter().collect(),
        Err(manifest) => {
            let names: HashSet<&str> = manifest.names().collect();
            lock.packages
                .iter()
                .filter(|p| names.contains(p.name.as_str()))
                .map(|p| (p.name.to_string(), p.version.to_string()))
                .collect()
        }
    };
    let packages = lock
        .packages
        .iter()
        .map(|p| {
            let (name, version) = (p.name.to_string(), p.version.to_string());
            LockedPackage {
                source: match &p.source {
                    None => Source::Path(name.clone()),
                    Some(s) if s.is_git() => Source::Git(s.to_string()),
                    Some(s) => Source::Registry(s.to_string()),
                },
                integrity: p.checksum.as_ref().map(ToString::to_string),
                direct: direct.contains(&(name.clone(), version.clone())),
                name,
                version,
            }
        })
        .collect();
    Ok(ParsedLock {
        packages,
        format: Some(u32::from(lock.version).to_string()),
    })
}

/// `cargo-lock` passes TOML's message through, which says `at line N`.
fn line_in(message: &str) -> Option<usize> {
    let rest = &message[message.find("line ")? + "line ".len()..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}
