//! The typed difference between two snapshots.
//!
//! Packages are compared per name as *sets* of copies, because several versions of one name
//! can be locked at once (npm nested copies, Cargo duplicates, gem platforms). Each snapshot is
//! grouped by name once and the two sorted groupings are merged, so the diff is linear in the
//! number of locked copies.

use super::source::Origin;
use super::{Ecosystem, EcosystemSnapshot, LockedPackage, Manifest, Snapshot, Source};
use std::collections::{BTreeMap, BTreeSet};

/// One locked copy of a package.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Copy {
    pub version: String,
    pub source: Source,
    pub integrity: Option<String>,
    pub direct: bool,
}

/// Every locked copy of one name, sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolved {
    pub copies: Vec<Copy>,
}

impl Resolved {
    /// The distinct versions, sorted as strings.
    pub fn versions(&self) -> Vec<&str> {
        let set: BTreeSet<&str> = self.copies.iter().map(|c| c.version.as_str()).collect();
        set.into_iter().collect()
    }

    /// The copy the working directory's manifest resolves to.
    pub fn direct(&self) -> Option<&Copy> {
        self.copies.iter().find(|c| c.direct)
    }

    /// Where the package "ended at": the direct copy's version when the working directory
    /// depends on it directly (other copies are someone else's), else every locked version,
    /// comma-separated; `None` when nothing is locked.
    pub(crate) fn ended_at(&self) -> Option<String> {
        match self.direct() {
            Some(copy) => Some(copy.version.clone()),
            None if self.copies.is_empty() => None,
            None => Some(self.versions().join(", ")),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Removed,
    Changed,
}

/// A name whose copies (versions, sources, or which one is direct) changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageDiff {
    pub name: String,
    pub kind: ChangeKind,
    pub before: Resolved,
    pub after: Resolved,
}

impl PackageDiff {
    /// Whether the working directory depends on it directly, before or after.
    pub(crate) fn is_direct(&self) -> bool {
        self.before.direct().is_some() || self.after.direct().is_some()
    }
}

/// A version locked before and after whose integrity differs: same version, other content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntegrityChange {
    pub name: String,
    pub version: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// A copy present after the commands with a (version, source) the base did not lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceChange {
    pub name: String,
    pub version: String,
    pub source: Source,
}

/// A dependency entry of a manifest added, removed or given another constraint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryChange {
    pub file: String,
    pub table: String,
    pub name: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// A non-dependency field of a manifest added, removed or changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldChange {
    pub file: String,
    pub field: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// A lock file whose format (as its header states it) differs after the commands: another
/// version of the tool wrote it than the one that wrote the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatChange {
    pub ecosystem: Ecosystem,
    pub lock_file: String,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EcosystemDiff {
    pub ecosystem: Ecosystem,
    pub lock_file: Option<String>,
    /// The lock's format before and after, when both are stated and differ.
    pub format: Option<FormatChange>,
    /// Changed names, sorted.
    pub packages: Vec<PackageDiff>,
    /// Names whose copies did not change, with their copies (to say where an update stayed).
    pub unchanged: BTreeMap<String, Resolved>,
    pub integrity: Vec<IntegrityChange>,
    pub(crate) new_copies: Vec<SourceChange>,
    pub entries: Vec<EntryChange>,
    pub fields: Vec<FieldChange>,
    /// The origins (see [`Source::origin`]) of every copy the base locked.
    pub(crate) base_origins: BTreeSet<Origin>,
}

impl EcosystemDiff {
    /// The copies of `name` before and after (empty when not locked).
    pub fn states(&self, name: &str) -> Option<(&Resolved, &Resolved)> {
        if let Some(state) = self.unchanged.get(name) {
            return Some((state, state));
        }
        let at = self
            .packages
            .binary_search_by(|p| p.name.as_str().cmp(name))
            .ok()?;
        Some((&self.packages[at].before, &self.packages[at].after))
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    pub ecosystems: Vec<EcosystemDiff>,
}

pub fn diff(before: &Snapshot, after: &Snapshot) -> Diff {
    let names: BTreeSet<Ecosystem> = before
        .ecosystems
        .keys()
        .chain(after.ecosystems.keys())
        .copied()
        .collect();
    let empty = EcosystemSnapshot::default();
    Diff {
        ecosystems: names
            .into_iter()
            .map(|e| {
                let b = before.ecosystems.get(&e).unwrap_or(&empty);
                let a = after.ecosystems.get(&e).unwrap_or(&empty);
                ecosystem_diff(e, b, a)
            })
            .collect(),
    }
}

fn ecosystem_diff(
    ecosystem: Ecosystem,
    before: &EcosystemSnapshot,
    after: &EcosystemSnapshot,
) -> EcosystemDiff {
    let mut out = EcosystemDiff {
        ecosystem,
        lock_file: after.lock_file.clone().or_else(|| before.lock_file.clone()),
        format: format_change(ecosystem, before, after),
        packages: Vec::new(),
        unchanged: BTreeMap::new(),
        integrity: Vec::new(),
        new_copies: Vec::new(),
        entries: Vec::new(),
        fields: Vec::new(),
        base_origins: origins(&before.packages),
    };
    let (old, new) = (group(&before.packages), group(&after.packages));
    let names: BTreeSet<&str> = old.keys().chain(new.keys()).copied().collect();
    for name in names {
        let b = old.get(name).map_or(&[][..], Vec::as_slice);
        let a = new.get(name).map_or(&[][..], Vec::as_slice);
        integrity_changes(name, b, a, &mut out.integrity);
        for copy in a {
            if !b
                .iter()
                .any(|c| c.version == copy.version && c.source == copy.source)
            {
                out.new_copies.push(SourceChange {
                    name: name.to_string(),
                    version: copy.version.clone(),
                    source: copy.source.clone(),
                });
            }
        }
        if shape(b) == shape(a) {
            out.unchanged.insert(name.to_string(), resolved(a));
            continue;
        }
        let kind = match (b.is_empty(), a.is_empty()) {
            (true, _) => ChangeKind::Added,
            (_, true) => ChangeKind::Removed,
            _ => ChangeKind::Changed,
        };
        out.packages.push(PackageDiff {
            name: name.to_string(),
            kind,
            before: resolved(b),
            after: resolved(a),
        });
    }
    manifest_changes(&before.manifests, &after.manifests, &mut out);
    out
}

/// The same lock file in another format; a lock created or replaced by another file (npm's
/// shrinkwrap) is no change of format.
fn format_change(
    ecosystem: Ecosystem,
    before: &EcosystemSnapshot,
    after: &EcosystemSnapshot,
) -> Option<FormatChange> {
    let lock_file = after.lock_file.as_ref()?;
    if before.lock_file.as_ref() != Some(lock_file) {
        return None;
    }
    let (from, to) = (before.format.as_ref()?, after.format.as_ref()?);
    (from != to).then(|| FormatChange {
        ecosystem,
        lock_file: lock_file.clone(),
        from: from.clone(),
        to: to.clone(),
    })
}

/// The distinct origins of a lock's copies; each distinct source is read once.
fn origins(packages: &[LockedPackage]) -> BTreeSet<Origin> {
    let sources: std::collections::HashSet<&Source> = packages.iter().map(|p| &p.source).collect();
    sources.into_iter().map(Source::origin).collect()
}

/// The copies of each name, sorted and without duplicates, borrowed: only what the diff keeps
/// is copied.
fn group(packages: &[LockedPackage]) -> BTreeMap<&str, Vec<&LockedPackage>> {
    let mut groups: BTreeMap<&str, Vec<&LockedPackage>> = BTreeMap::new();
    for p in packages {
        groups.entry(p.name.as_str()).or_default().push(p);
    }
    for copies in groups.values_mut() {
        copies.sort_by(|x, y| key(x).cmp(&key(y)));
        copies.dedup_by(|x, y| key(x) == key(y));
    }
    groups
}

fn shape<'a>(side: &[&'a LockedPackage]) -> Vec<(&'a str, &'a Source, bool)> {
    side.iter()
        .map(|p| (p.version.as_str(), &p.source, p.direct))
        .collect()
}

fn key(p: &LockedPackage) -> (&str, &Source, Option<&str>, bool) {
    (&p.version, &p.source, p.integrity.as_deref(), p.direct)
}

/// The distinct integrities recorded for `version`, sorted.
fn sums<'a>(side: &[&'a LockedPackage], version: &str) -> Vec<&'a str> {
    let mut all: Vec<&str> = side
        .iter()
        .filter(|c| c.version == version)
        .filter_map(|c| c.integrity.as_deref())
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

fn resolved(copies: &[&LockedPackage]) -> Resolved {
    Resolved {
        copies: copies
            .iter()
            .map(|p| Copy {
                version: p.version.clone(),
                source: p.source.clone(),
                integrity: p.integrity.clone(),
                direct: p.direct,
            })
            .collect(),
    }
}

/// Same version before and after, other integrities (a removed one counts).
fn integrity_changes(
    name: &str,
    before: &[&LockedPackage],
    after: &[&LockedPackage],
    out: &mut Vec<IntegrityChange>,
) {
    for (i, copy) in before.iter().enumerate() {
        let version = copy.version.as_str();
        let seen = before[..i].iter().any(|c| c.version == version);
        if seen || !after.iter().any(|c| c.version == version) {
            continue;
        }
        let (b, a) = (sums(before, version), sums(after, version));
        if !b.is_empty() && b != a {
            let joined = |all: Vec<&str>| (!all.is_empty()).then(|| all.join(" "));
            out.push(IntegrityChange {
                name: name.to_string(),
                version: version.to_string(),
                before: joined(b),
                after: joined(a),
            });
        }
    }
}

fn manifest_changes(before: &[Manifest], after: &[Manifest], out: &mut EcosystemDiff) {
    let files: BTreeSet<&str> = before
        .iter()
        .chain(after)
        .map(|m| m.file.as_str())
        .collect();
    let empty = Manifest::default();
    for file in files {
        let b = before.iter().find(|m| m.file == file).unwrap_or(&empty);
        let a = after.iter().find(|m| m.file == file).unwrap_or(&empty);
        let tables: BTreeSet<&String> =
            b.dependencies.keys().chain(a.dependencies.keys()).collect();
        let no_entries = BTreeMap::new();
        for table in tables {
            let (tb, ta) = (
                b.dependencies.get(table).unwrap_or(&no_entries),
                a.dependencies.get(table).unwrap_or(&no_entries),
            );
            for (name, before, after) in changed_keys(tb, ta) {
                out.entries.push(EntryChange {
                    file: file.to_string(),
                    table: table.clone(),
                    name,
                    before,
                    after,
                });
            }
        }
        for (field, before, after) in changed_keys(&b.fields, &a.fields) {
            out.fields.push(FieldChange {
                file: file.to_string(),
                field,
                before,
                after,
            });
        }
    }
}

type KeyChange = (String, Option<String>, Option<String>);

fn changed_keys(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Vec<KeyChange> {
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter_map(|k| {
            let (b, a) = (before.get(k), after.get(k));
            (b != a).then(|| (k.clone(), b.cloned(), a.cloned()))
        })
        .collect()
}
