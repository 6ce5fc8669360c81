//! What a unit's update commands really changed, read from lock files and manifests.
//!
//! The plan says what an update will do; the lock files say what it did. [`snapshot`] reads the
//! manifests of a working directory and the lock files that govern it, once before the commands
//! and once after; [`diff`] compares the two; [`check`] applies the publication rules to the diff
//! and returns the facts a PR, a commit message and the report must state instead of the plan's
//! claims.

pub(crate) mod budget;
mod bun;
mod cargo;
mod diff;
mod error;
mod go;
mod manifest;
mod npm;
mod owned;
mod pnpm;
mod pylock;
mod python;
pub(crate) mod read;
mod registry;
mod ruby;
mod rules;
mod source;
mod text;
mod trust;
pub(crate) mod version;
mod yarn;

#[cfg(test)]
mod tests;

pub use diff::{
    ChangeKind, Copy, Diff, EcosystemDiff, EntryChange, FieldChange, FormatChange, IntegrityChange,
    PackageDiff, Resolved, SourceChange, diff,
};
pub use error::ChangesError;
pub(crate) use go::parse_mod as parse_go_mod;
pub use manifest::Manifest;
pub(crate) use owned::{git_files, unverified_files};
pub(crate) use registry::{Configuration, configured as configured_registries};
pub(crate) use ruby::gemfile_lock as parse_gemfile_lock;
pub use rules::{
    ChangeFact, ChangeFinding, Code, DeclaredUpdate, Trust, UpdateFact, UpdateType, Verdict, check,
};
pub use source::{Origin, Source};
pub use text::{READABLE, parse_text};

use std::collections::BTreeMap;
use std::path::Path;

/// The ecosystems whose lock files can be read (the deps mission's names, plus `uv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ecosystem {
    Go,
    Npm,
    Yarn,
    Pnpm,
    Bun,
    Pip,
    Poetry,
    Uv,
    Bundle,
    Cargo,
}

impl Ecosystem {
    pub const ALL: [Ecosystem; 10] = [
        Ecosystem::Go,
        Ecosystem::Npm,
        Ecosystem::Yarn,
        Ecosystem::Pnpm,
        Ecosystem::Bun,
        Ecosystem::Pip,
        Ecosystem::Poetry,
        Ecosystem::Uv,
        Ecosystem::Bundle,
        Ecosystem::Cargo,
    ];

    /// The mission's name of the ecosystem.
    pub const fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Go => "go",
            Ecosystem::Npm => "npm",
            Ecosystem::Yarn => "yarn",
            Ecosystem::Pnpm => "pnpm",
            Ecosystem::Bun => "bun",
            Ecosystem::Pip => "pip",
            Ecosystem::Poetry => "poetry",
            Ecosystem::Uv => "uv",
            Ecosystem::Bundle => "bundle",
            Ecosystem::Cargo => "cargo",
        }
    }

    pub fn from_name(name: &str) -> Option<Ecosystem> {
        Ecosystem::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// Package names as the ecosystem compares them: PEP 503 for Python, exact elsewhere.
    pub(crate) fn normalize_name(self, name: &str) -> String {
        match self {
            Ecosystem::Pip | Ecosystem::Poetry | Ecosystem::Uv => python::normalize(name),
            _ => name.to_string(),
        }
    }
}

/// What a lock reader found: the locked copies and the lock's format.
pub(crate) struct ParsedLock {
    pub(crate) packages: Vec<LockedPackage>,
    pub(crate) format: Option<String>,
}

/// One locked copy of a package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockedPackage {
    /// The name the ecosystem compares (normalised for Python).
    pub name: String,
    /// The version as the lock records it (a Go version keeps its `v`; a gem loses its platform).
    pub version: String,
    pub source: Source,
    /// The lock's checksum or integrity for this copy, when it records one.
    pub integrity: Option<String>,
    /// Whether this copy is the one the manifest of the working directory resolves to.
    pub direct: bool,
}

/// Everything read for one ecosystem.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EcosystemSnapshot {
    /// The lock file read, relative to the repository root (`None` when the ecosystem has none:
    /// a go module without requirements).
    pub lock_file: Option<String>,
    pub packages: Vec<LockedPackage>,
    /// The lock's format as its header states it (`4` for `Cargo.lock` `version = 4`,
    /// `1 (revision 3)` for uv), when the format has one.
    pub format: Option<String>,
    /// The working directory's manifest first, then the workspace root's when the lock lives
    /// there (its `[patch]`, `overrides` or `replace` govern the working directory too).
    pub manifests: Vec<Manifest>,
}

/// The dependency state of a working directory, per ecosystem asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub ecosystems: BTreeMap<Ecosystem, EcosystemSnapshot>,
    /// Every file the readers read, by path relative to the repository root, with the bytes
    /// they read (`None`: looked for and absent). A commit publishes exactly these.
    pub files: BTreeMap<String, Option<Vec<u8>>>,
}

impl Snapshot {
    /// The distinct versions `ecosystem`'s lock file holds of `name` (sorted), and that lock
    /// file (`the lock file` when none was read).
    pub(crate) fn locked_versions(&self, ecosystem: Ecosystem, name: &str) -> (Vec<String>, &str) {
        let Some(read) = self.ecosystems.get(&ecosystem) else {
            return (Vec::new(), "the lock file");
        };
        let name = ecosystem.normalize_name(name);
        let mut versions: Vec<String> = read
            .packages
            .iter()
            .filter(|p| p.name == name)
            .map(|p| p.version.clone())
            .collect();
        versions.sort();
        versions.dedup();
        (
            versions,
            read.lock_file.as_deref().unwrap_or("the lock file"),
        )
    }
}

/// Reads the manifests in `working_dir` and the lock files that govern it, for each of
/// `ecosystems` (the mission's names). Only the ecosystems asked for are parsed.
pub fn snapshot(
    repo_root: &Path,
    working_dir: &Path,
    ecosystems: &[&str],
) -> Result<Snapshot, ChangesError> {
    let place = read::Place::new(repo_root, working_dir)?;
    let mut snapshot = Snapshot::default();
    for name in ecosystems {
        let ecosystem = Ecosystem::from_name(name)
            .ok_or_else(|| ChangesError::UnknownEcosystem((*name).to_string()))?;
        if snapshot.ecosystems.contains_key(&ecosystem) {
            continue;
        }
        let mut read = match read_ecosystem(&place, ecosystem) {
            Err(ChangesError::MissingLock {
                ecosystem: name,
                expected,
                dir,
            }) => {
                return Err(match owned::other_ecosystem(&place, ecosystem) {
                    Some((other, found)) => ChangesError::OtherEcosystem {
                        ecosystem: name,
                        expected,
                        dir,
                        found,
                        other: other.as_str(),
                    },
                    None => ChangesError::MissingLock {
                        ecosystem: name,
                        expected,
                        dir,
                    },
                });
            }
            read => read?,
        };
        read.format = read.format.as_deref().and_then(format_value);
        snapshot.ecosystems.insert(ecosystem, read);
    }
    snapshot.files = place.into_read();
    Ok(snapshot)
}

fn read_ecosystem(
    place: &read::Place,
    ecosystem: Ecosystem,
) -> Result<EcosystemSnapshot, ChangesError> {
    match ecosystem {
        Ecosystem::Go => go::snapshot(place),
        Ecosystem::Npm => npm::snapshot(place),
        Ecosystem::Yarn => yarn::snapshot(place),
        Ecosystem::Pnpm => pnpm::snapshot(place),
        Ecosystem::Bun => bun::snapshot(place),
        Ecosystem::Pip => python::snapshot(place),
        Ecosystem::Poetry => pylock::poetry(place),
        Ecosystem::Uv => pylock::uv(place),
        Ecosystem::Bundle => ruby::snapshot(place),
        Ecosystem::Cargo => cargo::snapshot(place),
    }
}

/// Longer than any real format value; the lock is written by the commands that ran, so what it
/// states is quoted short and on one line.
const MAX_FORMAT: usize = 40;

fn format_value(stated: &str) -> Option<String> {
    let value: String = stated
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_FORMAT)
        .collect();
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_string())
}
