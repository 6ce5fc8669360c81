//! poetry (`poetry.lock`) and uv (`uv.lock`), both TOML, read with `toml` into typed records.
//! Their manifest is `pyproject.toml`; the lock may sit at a workspace root.

use super::read::Place;
use super::{ChangesError, EcosystemSnapshot, LockedPackage, ParsedLock, Source, error, python};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};

#[derive(Deserialize)]
struct PoetryLock {
    #[serde(default)]
    package: Vec<PoetryPackage>,
    #[serde(default)]
    metadata: PoetryMetadata,
}

#[derive(Deserialize, Default)]
struct PoetryMetadata {
    #[serde(rename = "lock-version")]
    lock_version: Option<String>,
    /// Lock format 1.x kept the hashes here rather than per package.
    #[serde(default)]
    files: BTreeMap<String, Vec<FileHash>>,
}

#[derive(Deserialize)]
struct PoetryPackage {
    name: String,
    version: String,
    #[serde(default)]
    files: Vec<FileHash>,
    source: Option<PoetrySource>,
}

#[derive(Deserialize)]
struct PoetrySource {
    #[serde(rename = "type")]
    kind: String,
    url: String,
    resolved_reference: Option<String>,
}

#[derive(Deserialize)]
struct FileHash {
    hash: String,
}

#[derive(Deserialize)]
struct UvLock {
    version: Option<u32>,
    revision: Option<u32>,
    #[serde(default)]
    package: Vec<UvPackage>,
}

impl UvLock {
    /// `1 (revision 3)`: uv raises the revision for changes older uv versions can still read.
    fn format(&self) -> Option<String> {
        let version = self.version?;
        Some(match self.revision {
            Some(revision) => format!("{version} (revision {revision})"),
            None => version.to_string(),
        })
    }
}

#[derive(Deserialize)]
struct UvPackage {
    name: String,
    #[serde(default)]
    version: String,
    #[serde(default)]
    source: BTreeMap<String, String>,
    sdist: Option<FileHash>,
    #[serde(default)]
    wheels: Vec<FileHash>,
}

pub(crate) fn poetry(place: &Place) -> Result<EcosystemSnapshot, ChangesError> {
    read(place, "poetry", "poetry.lock", poetry_lock)
}

/// `poetry.lock`'s packages, those in `direct` marked.
pub(crate) fn poetry_lock(
    file: &str,
    text: &str,
    direct: &HashSet<String>,
) -> Result<ParsedLock, ChangesError> {
    let lock: PoetryLock = toml_records(file, text)?;
    let packages = lock
        .package
        .iter()
        .map(|p| {
            let name = python::normalize(&p.name);
            let files = if p.files.is_empty() {
                lock.metadata.files.get(&p.name)
            } else {
                Some(&p.files)
            };
            LockedPackage {
                version: p.version.clone(),
                source: p
                    .source
                    .as_ref()
                    .map_or(Source::DefaultRegistry, poetry_source),
                integrity: files.and_then(|f| hashes(f.iter())),
                direct: direct.contains(&name),
                name,
            }
        })
        .collect();
    Ok(ParsedLock {
        packages,
        format: lock.metadata.lock_version.clone(),
    })
}

pub(crate) fn uv(place: &Place) -> Result<EcosystemSnapshot, ChangesError> {
    read(place, "uv", "uv.lock", uv_lock)
}

/// `uv.lock`'s packages, those in `direct` marked.
pub(crate) fn uv_lock(
    file: &str,
    text: &str,
    direct: &HashSet<String>,
) -> Result<ParsedLock, ChangesError> {
    let lock: UvLock = toml_records(file, text)?;
    let packages = lock
        .package
        .iter()
        .map(|p| {
            let name = python::normalize(&p.name);
            LockedPackage {
                version: p.version.clone(),
                source: uv_source(&p.source),
                integrity: hashes(p.sdist.iter().chain(&p.wheels)),
                direct: direct.contains(&name),
                name,
            }
        })
        .collect();
    Ok(ParsedLock {
        packages,
        format: lock.format(),
    })
}

type Parse = fn(&str, &str, &HashSet<String>) -> Result<ParsedLock, ChangesError>;

fn read(
    place: &Place,
    ecosystem: &'static str,
    lock: &'static str,
    parse: Parse,
) -> Result<EcosystemSnapshot, ChangesError> {
    let (file, text) = place.manifest(ecosystem, "pyproject.toml")?;
    let mut manifests = vec![python::pyproject(&file, &text)?];
    let (dir, name) = place
        .find_up(&[lock])
        .ok_or_else(|| place.missing_lock(ecosystem, lock))?;
    if dir != place.working_dir() {
        let root = dir.join("pyproject.toml");
        if let Some(text) = place.read_optional(&root)? {
            manifests.push(python::pyproject(&place.rel(&root), &text)?);
        }
    }
    let direct: HashSet<String> = manifests[0].names().map(str::to_string).collect();
    let path = dir.join(name);
    let lock_file = place.rel(&path);
    let lock = parse(&lock_file, &place.read(&path)?, &direct)?;
    Ok(EcosystemSnapshot {
        lock_file: Some(lock_file),
        packages: lock.packages,
        format: lock.format,
        manifests,
    })
}

pub(crate) fn toml_records<T: serde::de::DeserializeOwned>(
    file: &str,
    text: &str,
) -> Result<T, ChangesError> {
    toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| error::line_of(text, s.start));
        ChangesError::parse(file, line, e.message())
    })
}

/// Every file hash of a package, sorted, as one comparable value.
fn hashes<'a>(files: impl Iterator<Item = &'a FileHash>) -> Option<String> {
    let mut all: Vec<&str> = files.map(|f| f.hash.as_str()).collect();
    all.sort_unstable();
    (!all.is_empty()).then(|| all.join(" "))
}

fn poetry_source(source: &PoetrySource) -> Source {
    match source.kind.as_str() {
        "git" => Source::Git(format!(
            "{}#{}",
            source.url,
            source.resolved_reference.as_deref().unwrap_or("")
        )),
        "directory" | "file" => Source::Path(source.url.clone()),
        _ => Source::Registry(source.url.clone()),
    }
}

/// `{ registry = URL }`, `{ git = URL }`, `{ url = URL }`, or a local `editable`, `virtual`,
/// `path` or `directory`.
fn uv_source(source: &BTreeMap<String, String>) -> Source {
    source
        .iter()
        .next()
        .map_or(Source::Unrecorded, |(kind, value)| match kind.as_str() {
            "registry" | "url" => Source::Registry(value.clone()),
            "git" => Source::Git(value.clone()),
            _ => Source::Path(value.clone()),
        })
}
