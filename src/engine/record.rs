//! What built a branch, kept in its PR as a hidden marker so that a later run can look after the
//! PR without a plan: the updates it carries, as the lock files showed them (to close it once they
//! reached the default branch, or when a newer PR supersedes it), and the commands and test that
//! built it (to rebuild it). The dependency dashboard keeps the same record for an update that
//! failed, so that it can be retried.
//!
//! A record is read back from text anyone with write access can edit: it is untrusted, and a
//! rebuild or retry validates it as a plan against the mission before anything runs.

use super::unit::BranchUnit;
use crate::changes;
use crate::plan::UpdateType;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// How a record marker starts; plan text cannot hold one (`<!--` is escaped in it).
const MARKER: &str = "<!-- quartermaster:record:";
/// Records longer than this (encoded) are not kept: a hundred updates fit easily.
const MAX_ENCODED: usize = 16 * 1024;

/// One update of a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RecordedUpdate {
    pub package: String,
    /// The ecosystem its lock file belongs to, when the lock files told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecosystem: Option<String>,
    pub from: String,
    pub to: String,
    pub update_type: UpdateType,
}

/// What built a branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Record {
    pub mission: String,
    pub branch: String,
    pub title: String,
    /// The ecosystems of its commands.
    pub ecosystems: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    pub updates: Vec<RecordedUpdate>,
    /// The update commands, as the plan wrote them.
    pub commands: Vec<String>,
    pub test: String,
    #[serde(default)]
    pub labels: Vec<String>,
    /// The commit Quartermaster had the forge make (signed commits): it names the forge's
    /// identity, not the bot's, and is Quartermaster's all the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_commit: Option<String>,
}

/// Where a record comes from: a unit and what it ran.
pub(crate) struct RecordSource<'a> {
    pub unit: &'a BranchUnit<'a>,
    pub mission: &'a str,
    pub test: &'a str,
    pub working_dir: Option<&'a str>,
    pub labels: &'a [String],
}

impl Record {
    /// The record of a built unit: its updates as `facts` show them, or as declared.
    pub(super) fn of(b: &RecordSource<'_>, facts: Option<&changes::Verdict>) -> Record {
        let mut ecosystems: Vec<String> = b
            .unit
            .commands
            .iter()
            .map(|c| c.ecosystem.clone())
            .collect();
        ecosystems.sort();
        ecosystems.dedup();
        let updates = b
            .unit
            .updates
            .iter()
            .map(|u| {
                let fact = facts.and_then(|f| f.updates.iter().find(|x| x.package == u.package));
                RecordedUpdate {
                    package: u.package.clone(),
                    ecosystem: fact
                        .and_then(|f| f.ecosystem)
                        .map(|e| e.as_str().to_string()),
                    from: fact
                        .and_then(|f| f.from.clone())
                        .unwrap_or_else(|| u.from.clone()),
                    to: fact
                        .and_then(|f| f.to.clone())
                        .unwrap_or_else(|| u.to.clone()),
                    update_type: u.update_type,
                }
            })
            .collect();
        Record {
            mission: b.mission.to_string(),
            branch: b.unit.branch.clone(),
            title: b.unit.title.clone(),
            ecosystems,
            working_dir: b.working_dir.map(String::from),
            updates,
            commands: b.unit.commands.iter().map(|c| c.text.clone()).collect(),
            test: b.test.to_string(),
            labels: b.labels.to_vec(),
            api_commit: None,
        }
    }

    /// The hidden marker holding this record (`None` when it is too long to keep).
    pub(super) fn marker(&self) -> Option<String> {
        let json = serde_json::to_vec(self).ok()?;
        let encoded = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json);
        (encoded.len() <= MAX_ENCODED).then(|| format!("{MARKER}{encoded} -->"))
    }

    /// The record in the first record marker of `text`, if it holds a readable one.
    pub(super) fn read(text: &str) -> Option<Record> {
        let start = text.find(MARKER)? + MARKER.len();
        let rest = &text[start..];
        let encoded = &rest[..rest.find(" -->")?];
        if encoded.len() > MAX_ENCODED {
            return None;
        }
        let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(encoded)
            .ok()?;
        serde_json::from_slice(&json).ok()
    }

    /// Whether every update moves a package to a version (a lock refresh never "arrives").
    pub(crate) fn moves_versions(&self) -> bool {
        !self.updates.is_empty()
            && self
                .updates
                .iter()
                .all(|u| u.update_type != UpdateType::LockFileMaintenance)
    }
}

/// The hidden markers a PR body carries: its build's digest ([`super::digest`]) and its record.
pub(crate) struct Stamp {
    pub build: String,
    pub record: Record,
}

impl Stamp {
    pub(super) fn apply(&self, body: &str) -> String {
        mark(&super::digest::mark(body, &self.build), &self.record)
    }
}

/// `body` with its record saying that `commit`, which the forge made, is Quartermaster's.
pub(crate) fn with_api_commit(body: &str, commit: git2::Oid) -> String {
    match Record::read(body) {
        Some(mut record) => {
            record.api_commit = Some(commit.to_string());
            mark(body, &record)
        }
        None => body.to_string(),
    }
}

/// `body` with its record marker, if any, replaced by `record`'s (or removed, when the record
/// is too long to keep).
pub(super) fn mark(body: &str, record: &Record) -> String {
    let mut lines: Vec<&str> = body.lines().filter(|l| !l.starts_with(MARKER)).collect();
    let marker = record.marker();
    if let Some(marker) = &marker {
        lines.push(marker);
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        Record {
            mission: "deps".into(),
            branch: "quartermaster/x".into(),
            title: "Bump".into(),
            ecosystems: vec!["cargo".into()],
            working_dir: None,
            updates: vec![RecordedUpdate {
                package: "greeting".into(),
                ecosystem: Some("cargo".into()),
                from: "1.0.0".into(),
                to: "1.0.1".into(),
                update_type: UpdateType::Patch,
            }],
            commands: vec!["cargo update -p greeting --precise 1.0.1".into()],
            test: "cargo test".into(),
            labels: vec![],
            api_commit: None,
        }
    }

    #[test]
    fn a_body_holds_one_record_that_reads_back() {
        let first = record();
        let body = mark("Bumps.\n<!-- quartermaster:pr:1 -->", &first);
        assert_eq!(Record::read(&body), Some(first.clone()));
        let mut second = first;
        second.api_commit = Some("0123".into());
        let body = mark(&body, &second);
        assert_eq!(body.matches(MARKER).count(), 1, "{body}");
        assert_eq!(Record::read(&body), Some(second));
        assert!(body.starts_with("Bumps.\n<!-- quartermaster:pr:1 -->\n"));
    }

    #[test]
    fn garbage_and_oversized_records_are_not_read() {
        assert_eq!(Record::read("<!-- quartermaster:record:%%% -->"), None);
        assert_eq!(Record::read("<!-- quartermaster:record:e30 -->"), None);
        let mut huge = record();
        huge.commands = vec!["x".repeat(MAX_ENCODED)];
        assert_eq!(huge.marker(), None);
        assert!(!mark("body", &huge).contains(MARKER));
    }
}
