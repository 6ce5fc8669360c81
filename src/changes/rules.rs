//! The publication rules applied to a diff, and the facts a PR must state.
//!
//! `lock_file_maintenance` is the one update type that declares no single package. With it in
//! a unit, locked versions may move (direct dependencies included, transitive ones freely) as
//! long as no manifest changed: no dependency entry of an undeclared package and no other
//! field. Its `package`, `from` and `to` are not checked. Within-constraint is not re-verified
//! here: the manifests are unchanged and the tool resolved against them; the source and
//! integrity rules still apply to every changed entry.

use super::diff::{ChangeKind, Diff, EcosystemDiff, FormatChange, PackageDiff, Resolved};
use super::source::registry_link;
pub use super::trust::Trust;
use super::version::same_version;
use super::{Ecosystem, Source};
pub use crate::finding::Code;
pub use crate::plan::UpdateType;
use std::collections::{BTreeSet, HashSet};
use std::fmt;

/// One update as the plan declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredUpdate {
    pub package: String,
    pub from: String,
    pub to: String,
    pub update_type: UpdateType,
}

/// Whether a finding of `code` forbids publishing: every rule does, except a `from` the base did
/// not have (the real value is published instead).
fn blocks(code: Code) -> bool {
    code != Code::UpdateFromMismatch
}

/// Whether an update of this type moves its package to another version.
const fn changes_version(t: UpdateType) -> bool {
    matches!(
        t,
        UpdateType::Major
            | UpdateType::Minor
            | UpdateType::Patch
            | UpdateType::Pin
            | UpdateType::Rollback
    )
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeFinding {
    pub code: Code,
    pub ecosystem: Option<Ecosystem>,
    pub package: Option<String>,
    /// Names the package and says what to change.
    pub message: String,
    /// Whether the unit must not be published.
    pub blocking: bool,
}

/// A declared update with the values read from the locks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateFact {
    pub package: String,
    pub ecosystem: Option<Ecosystem>,
    pub update_type: UpdateType,
    pub declared_from: String,
    pub declared_to: String,
    /// Where the base had it ([`Resolved::ended_at`] of the base).
    pub from: Option<String>,
    /// Where it ended.
    pub to: Option<String>,
    pub reached: bool,
    pub link: Option<String>,
}

/// One changed package as a PR table row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeFact {
    pub ecosystem: Ecosystem,
    pub name: String,
    pub kind: ChangeKind,
    pub from: Option<String>,
    pub to: Option<String>,
    /// The registry page of `to`, for a single public version.
    pub link: Option<String>,
}

impl fmt::Display for ChangeFact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.from, &self.to) {
            (Some(from), Some(to)) => write!(f, "{} {from} → {to}", self.name),
            (None, Some(to)) => write!(f, "{} {to} (added)", self.name),
            (Some(from), None) => write!(f, "{} {from} (removed)", self.name),
            (None, None) => write!(f, "{}", self.name),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    pub findings: Vec<ChangeFinding>,
    /// Per declared update, in plan order.
    pub updates: Vec<UpdateFact>,
    /// Packages whose direct copy changed (the PR table).
    pub direct: Vec<ChangeFact>,
    /// Every other changed package (folded in the PR).
    pub transitive: Vec<ChangeFact>,
    /// Lock files the commands rewrote in another format. A fact, not a finding: the toolchain
    /// check is what holds a unit to the project's tool versions.
    pub formats: Vec<FormatChange>,
}

impl Verdict {
    /// Whether any finding forbids publishing the unit.
    pub fn blocked(&self) -> bool {
        self.findings.iter().any(|f| f.blocking)
    }

    /// Direct dependencies that moved although no update names them: what a lock refresh moved
    /// (anywhere else such a move blocks the unit).
    pub fn refreshed(&self) -> Vec<&ChangeFact> {
        self.direct
            .iter()
            .filter(|c| {
                !self.updates.iter().any(|u| {
                    u.update_type != UpdateType::LockFileMaintenance
                        && c.ecosystem.normalize_name(&u.package) == c.name
                })
            })
            .collect()
    }
}

pub fn check(diff: &Diff, declared: &[DeclaredUpdate], trust: &Trust) -> Verdict {
    let mut verdict = Verdict::default();
    let maintenance = declared
        .iter()
        .any(|d| d.update_type == UpdateType::LockFileMaintenance);
    for update in declared {
        let fact = check_update(diff, update, &mut verdict.findings);
        verdict.updates.push(fact);
    }
    for eco in &diff.ecosystems {
        let names: HashSet<String> = declared
            .iter()
            .filter(|d| d.update_type != UpdateType::LockFileMaintenance)
            .map(|d| eco.ecosystem.normalize_name(&d.package))
            .collect();
        undeclared(eco, &names, declared, maintenance, &mut verdict.findings);
        fields(eco, &mut verdict.findings);
        trust.check(eco, &mut verdict.findings);
        integrity(eco, &mut verdict.findings);
        verdict.formats.extend(eco.format.clone());
        for change in &eco.packages {
            let fact = change_fact(eco.ecosystem, change);
            // A declared update is the PR's subject wherever it sits in the lock (a transitive
            // package, a member of a workspace): never also a transitive change.
            if direct_changed(change) || names.contains(&change.name) {
                verdict.direct.push(fact);
            } else {
                verdict.transitive.push(fact);
            }
        }
    }
    let mut seen = HashSet::new();
    verdict
        .findings
        .retain(|f| seen.insert((f.code, f.message.clone())));
    verdict
}

pub(super) fn finding(
    code: Code,
    ecosystem: Option<Ecosystem>,
    package: Option<&str>,
    message: String,
) -> ChangeFinding {
    ChangeFinding {
        code,
        ecosystem,
        package: package.map(str::to_string),
        message,
        blocking: blocks(code),
    }
}

/// The ecosystem where a declared package is locked, preferring one where it changed.
fn locate<'a>(
    diff: &'a Diff,
    package: &str,
) -> Option<(&'a EcosystemDiff, String, &'a Resolved, &'a Resolved)> {
    let mut found = diff.ecosystems.iter().filter_map(|eco| {
        let name = eco.ecosystem.normalize_name(package);
        eco.states(&name).map(|(b, a)| (eco, name, b, a))
    });
    let first = found.next()?;
    if first.2 != first.3 {
        return Some(first);
    }
    Some(found.find(|(_, _, b, a)| b != a).unwrap_or(first))
}

fn check_update(
    diff: &Diff,
    update: &DeclaredUpdate,
    findings: &mut Vec<ChangeFinding>,
) -> UpdateFact {
    let mut fact = UpdateFact {
        package: update.package.clone(),
        ecosystem: None,
        update_type: update.update_type,
        declared_from: update.from.clone(),
        declared_to: update.to.clone(),
        from: None,
        to: None,
        reached: false,
        link: None,
    };
    let p = &update.package;
    if update.update_type == UpdateType::LockFileMaintenance {
        fact.reached = diff.ecosystems.iter().any(|e| !e.packages.is_empty());
        return fact;
    }
    let Some((eco, name, before, after)) = locate(diff, p) else {
        let message = format!(
            "`{p}` is in none of the lock files read, so it cannot have reached {}: check the package name, or drop the update",
            update.to
        );
        findings.push(finding(Code::UpdateNotReached, None, Some(p), message));
        return fact;
    };
    let lock = eco.lock_file.as_deref().unwrap_or("the lock file");
    let e = eco.ecosystem;
    (fact.from, fact.to) = ends(e, update, before, after);
    fact.ecosystem = Some(e);
    fact.link = after
        .copies
        .iter()
        .find(|c| fact.to.as_ref() == Some(&c.version))
        .map(|c| (c.version.as_str(), &c.source))
        .or_else(|| single(after))
        .and_then(|(v, s)| registry_link(e, &name, v, s));
    fact.reached = reached(eco, &name, update, before, after);
    if !fact.reached {
        let message = not_reached(p, lock, update, before, after);
        findings.push(finding(Code::UpdateNotReached, Some(e), Some(p), message));
    }
    if let Some(message) = from_mismatch(e, p, lock, update, before) {
        findings.push(finding(Code::UpdateFromMismatch, Some(e), Some(p), message));
    }
    fact
}

/// Where a declared package was and where it ended ([`Resolved::ended_at`]). With several
/// versions locked and none of them direct (two versions of one crate), the copy the update
/// names: its `from` when the base locked that version, its `to` when the lock now does.
fn ends(
    e: Ecosystem,
    update: &DeclaredUpdate,
    before: &Resolved,
    after: &Resolved,
) -> (Option<String>, Option<String>) {
    let (from, to) = (before.ended_at(), after.ended_at());
    if before.direct().is_some() || after.direct().is_some() {
        return (from, to);
    }
    let locked = |side: &Resolved, version: &str| {
        side.copies
            .iter()
            .find(|c| same_version(e, version, &c.version))
            .map(|c| c.version.clone())
    };
    let several = |side: &Resolved| side.versions().len() > 1;
    (
        locked(before, &update.from)
            .filter(|_| several(before))
            .or(from),
        locked(after, &update.to).filter(|_| several(after)).or(to),
    )
}

fn reached(
    eco: &EcosystemDiff,
    name: &str,
    update: &DeclaredUpdate,
    before: &Resolved,
    after: &Resolved,
) -> bool {
    let e = eco.ecosystem;
    match update.update_type {
        t if changes_version(t) => match after.direct() {
            Some(copy) => same_version(e, &update.to, &copy.version),
            None => {
                before != after
                    && after
                        .copies
                        .iter()
                        .any(|c| same_version(e, &update.to, &c.version))
            }
        },
        UpdateType::Replacement => after.direct().is_none(),
        _ => before != after || eco.integrity.iter().any(|i| i.name == name),
    }
}

fn not_reached(
    p: &str,
    lock: &str,
    update: &DeclaredUpdate,
    before: &Resolved,
    after: &Resolved,
) -> String {
    let to = &update.to;
    let was = before.ended_at().unwrap_or_else(|| "absent".to_string());
    match after.ended_at() {
        _ if update.update_type == UpdateType::Replacement => format!(
            "`{p}` is still a direct dependency in {lock}: the replacement did not happen; drop the update or use a command that removes it"
        ),
        None => format!(
            "`{p}` is no longer in {lock} (it was {was}), so it did not reach {to}: drop the update or fix the commands"
        ),
        Some(now) if before == after => format!(
            "`{p}` stayed at {now} in {lock}: the commands did not update it, so it did not reach {to} (a requirement such as an `=` pin or a range may hold it back); drop the update from the unit or change what holds it"
        ),
        Some(now) => format!(
            "`{p}` ended at {now} in {lock}, not at the declared {to} (it was {was}): declare {now} as `to`, or use a command that reaches {to}"
        ),
    }
}

fn from_mismatch(
    e: Ecosystem,
    p: &str,
    lock: &str,
    update: &DeclaredUpdate,
    before: &Resolved,
) -> Option<String> {
    let from = &update.from;
    let checked = match update.update_type {
        UpdateType::Digest | UpdateType::PinDigest | UpdateType::LockFileMaintenance => false,
        UpdateType::Pin => from.starts_with(|c: char| c.is_ascii_digit() || c == 'v'),
        _ => true,
    };
    if !checked {
        return None;
    }
    let matches = match before.direct() {
        Some(copy) => same_version(e, from, &copy.version),
        None => before
            .copies
            .iter()
            .any(|c| same_version(e, from, &c.version)),
    };
    if matches {
        return None;
    }
    Some(match before.ended_at() {
        Some(real) => format!(
            "`{p}` was declared from {from}, but the base {lock} had {real}; {real} is what gets published"
        ),
        None => format!(
            "`{p}` was declared from {from}, but the base {lock} did not lock it; it is published as added"
        ),
    })
}

/// The direct copy's version or source changed (not merely another copy of the name).
fn direct_changed(change: &PackageDiff) -> bool {
    let key = |r: &Resolved| r.direct().map(|c| (c.version.clone(), c.source.clone()));
    change.is_direct() && key(&change.before) != key(&change.after)
}

/// The direct copy moved to another version or source. A source that was merely dropped (npm's
/// `omit-lockfile-registry-resolved`) is not a move: the new-source rule reports it.
fn undeclared_move(change: &PackageDiff) -> bool {
    let (before, after) = (change.before.direct(), change.after.direct());
    match (before, after) {
        (Some(b), Some(a)) => {
            b.version != a.version || (b.source != a.source && a.source != Source::Unrecorded)
        }
        (None, None) => false,
        _ => true,
    }
}

fn undeclared(
    eco: &EcosystemDiff,
    names: &HashSet<String>,
    declared: &[DeclaredUpdate],
    maintenance: bool,
    findings: &mut Vec<ChangeFinding>,
) {
    let e = eco.ecosystem;
    let mut replacements: Vec<&str> = declared
        .iter()
        .filter(|d| d.update_type == UpdateType::Replacement)
        .map(|d| d.to.as_str())
        .collect();
    let mut reported = BTreeSet::new();
    for entry in eco
        .entries
        .iter()
        .filter(|entry| !names.contains(&entry.name))
    {
        // A replacement brings in its successor: one added entry locked at the declared `to`.
        let locked = eco
            .states(&entry.name)
            .and_then(|(_, after)| after.direct().map(|c| c.version.clone()));
        if entry.before.is_none()
            && let Some(at) = replacements
                .iter()
                .position(|to| locked.as_deref().is_some_and(|v| same_version(e, to, v)))
        {
            replacements.remove(at);
            reported.insert(entry.name.as_str());
            continue;
        }
        let what = match (&entry.before, &entry.after) {
            (None, Some(c)) => format!("was added to {} ({}) with `{c}`", entry.file, entry.table),
            (Some(c), None) => format!(
                "was removed from {} ({}; it had `{c}`)",
                entry.file, entry.table
            ),
            (b, a) => format!(
                "changed in {} ({}) from `{}` to `{}`",
                entry.file,
                entry.table,
                b.as_deref().unwrap_or_default(),
                a.as_deref().unwrap_or_default()
            ),
        };
        let message = format!(
            "`{}` {what}, but the plan declares no update for it: the unit is denied; declare the update or remove the command that changes it",
            entry.name
        );
        findings.push(finding(
            Code::ChangeUndeclaredDependency,
            Some(e),
            Some(&entry.name),
            message,
        ));
        reported.insert(entry.name.as_str());
    }
    if maintenance {
        return;
    }
    let lock = eco.lock_file.as_deref().unwrap_or("the lock file");
    let moved = |c: &&PackageDiff| {
        undeclared_move(c) && !names.contains(&c.name) && !reported.contains(c.name.as_str())
    };
    for change in eco.packages.iter().filter(moved) {
        let fact = change_fact(e, change);
        let message = format!(
            "`{}` is a direct dependency that changed in {lock} ({fact}), but the plan declares no update for it: the unit is denied; declare the update or leave it unchanged",
            change.name
        );
        findings.push(finding(
            Code::ChangeUndeclaredDependency,
            Some(e),
            Some(&change.name),
            message,
        ));
    }
}

fn fields(eco: &EcosystemDiff, findings: &mut Vec<ChangeFinding>) {
    for field in &eco.fields {
        let how = match (&field.before, &field.after) {
            (None, _) => "added",
            (_, None) => "removed",
            _ => "changed",
        };
        let message = format!(
            "`{}: {}` was {how} by the commands; an update may change only dependency entries, so the unit is denied: undo that change",
            field.file, field.field
        );
        findings.push(finding(
            Code::ChangeManifestField,
            Some(eco.ecosystem),
            None,
            message,
        ));
    }
}

fn integrity(eco: &EcosystemDiff, findings: &mut Vec<ChangeFinding>) {
    let lock = eco.lock_file.as_deref().unwrap_or("the lock file");
    for change in &eco.integrity {
        let short = |s: &Option<String>| {
            s.as_deref()
                .map_or("none".to_string(), |s| s.chars().take(24).collect())
        };
        let message = format!(
            "`{}` {} has another integrity in {lock} than in the base ({}… → {}…): same version, other content, so the unit is denied; restore the base entry",
            change.name,
            change.version,
            short(&change.before),
            short(&change.after)
        );
        findings.push(finding(
            Code::ChangeIntegrity,
            Some(eco.ecosystem),
            Some(&change.name),
            message,
        ));
    }
}

fn change_fact(ecosystem: Ecosystem, change: &PackageDiff) -> ChangeFact {
    ChangeFact {
        ecosystem,
        name: change.name.clone(),
        kind: change.kind,
        from: change.before.ended_at(),
        to: change.after.ended_at(),
        link: single(&change.after).and_then(|(v, s)| registry_link(ecosystem, &change.name, v, s)),
    }
}

/// The version and source a link can name: the direct copy, or the only version locked.
fn single(resolved: &Resolved) -> Option<(&str, &Source)> {
    if let Some(copy) = resolved.direct() {
        return Some((&copy.version, &copy.source));
    }
    match resolved.versions()[..] {
        [_] => resolved
            .copies
            .first()
            .map(|c| (c.version.as_str(), &c.source)),
        _ => None,
    }
}
