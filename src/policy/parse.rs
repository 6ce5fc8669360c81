//! `.quartermaster.toml` to a [`Policy`], every key checked: an unknown key or a bad value is an
//! error naming the key and what it accepts.

use super::{
    Advisories, Automerge, Deprecated, NamePatterns, Policy, PolicyError, ReleaseAge, ReleaseNotes,
    UnknownPublishTime, normalize_python,
};
use crate::finding::closest;
use crate::plan::UpdateType;
use globset::{GlobBuilder, GlobSetBuilder};
use std::time::Duration;
use toml::{Table, Value};

/// The longest minimum release age accepted: a year keeps every update out already.
const MAX_MINIMUM: Duration = Duration::from_secs(366 * 24 * 3600);
/// Entries a list key takes at most.
const MAX_ENTRIES: usize = 500;

const TABLES: &[&str] = &[
    "release-age",
    "advisories",
    "deprecated",
    "release-notes",
    "automerge",
];

/// Parses the policy `text`; `origin` names where it was read, for messages.
pub fn parse(text: &str, origin: &str) -> Result<Policy, PolicyError> {
    let table: Table = text
        .parse()
        .map_err(|e: toml::de::Error| PolicyError::Syntax {
            origin: origin.to_string(),
            message: e.message().to_string(),
        })?;
    let reader = Reader { origin };
    reader.known_keys(&table, "", TABLES)?;
    let mut policy = Policy {
        source: origin.to_string(),
        ..Policy::default()
    };
    if let Some(t) = reader.table(&table, "release-age")? {
        policy.release_age = reader.release_age(t, policy.release_age)?;
    }
    if let Some(t) = reader.table(&table, "advisories")? {
        reader.known_keys(t, "advisories", &["block", "ignore"])?;
        policy.advisories = Advisories {
            block: reader.boolean(t, "advisories", "block")?.unwrap_or(true),
            ignore: reader.list(t, "advisories", "ignore", advisory_id)?,
        };
    }
    if let Some(t) = reader.table(&table, "deprecated")? {
        reader.known_keys(t, "deprecated", &["block"])?;
        policy.deprecated = Deprecated {
            block: reader.boolean(t, "deprecated", "block")?.unwrap_or(true),
        };
    }
    if let Some(t) = reader.table(&table, "release-notes")? {
        reader.known_keys(t, "release-notes", &["enabled"])?;
        policy.release_notes = ReleaseNotes {
            enabled: reader
                .boolean(t, "release-notes", "enabled")?
                .unwrap_or(true),
        };
    }
    if let Some(t) = reader.table(&table, "automerge")? {
        policy.automerge = reader.automerge(t)?;
    }
    Ok(policy)
}

struct Reader<'a> {
    origin: &'a str,
}

impl Reader<'_> {
    fn bad(&self, key: &str, problem: impl Into<String>) -> PolicyError {
        PolicyError::BadValue {
            origin: self.origin.to_string(),
            key: key.to_string(),
            problem: problem.into(),
        }
    }

    /// Refuses any key of `table` outside `allowed`, suggesting the closest.
    fn known_keys(&self, table: &Table, prefix: &str, allowed: &[&str]) -> Result<(), PolicyError> {
        let Some(unknown) = table.keys().find(|k| !allowed.contains(&k.as_str())) else {
            return Ok(());
        };
        let suggestion = closest(unknown, allowed)
            .map(|near| format!(" (did you mean `{near}`?)"))
            .unwrap_or_default();
        let allowed = if prefix.is_empty() {
            allowed
                .iter()
                .map(|t| format!("[{t}]"))
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            allowed.join(", ")
        };
        Err(PolicyError::UnknownKey {
            origin: self.origin.to_string(),
            key: joined(prefix, &crate::finding::clip(unknown)),
            suggestion,
            allowed,
        })
    }

    fn table<'t>(&self, parent: &'t Table, name: &str) -> Result<Option<&'t Table>, PolicyError> {
        match parent.get(name) {
            None => Ok(None),
            Some(Value::Table(t)) => Ok(Some(t)),
            Some(other) => Err(self.bad(
                name,
                format!(
                    "must be a table (`[{name}]` followed by its keys), not {}",
                    kind(other)
                ),
            )),
        }
    }

    fn boolean(&self, t: &Table, table: &str, key: &str) -> Result<Option<bool>, PolicyError> {
        match t.get(key) {
            None => Ok(None),
            Some(Value::Boolean(b)) => Ok(Some(*b)),
            Some(other) => Err(self.bad(
                &joined(table, key),
                format!("must be true or false, not {}", kind(other)),
            )),
        }
    }

    /// A list of strings, each checked by `check` (which says what is wrong with one).
    fn list(
        &self,
        t: &Table,
        table: &str,
        key: &str,
        check: fn(&str) -> Result<String, BadEntry>,
    ) -> Result<Vec<String>, PolicyError> {
        let name = joined(table, key);
        let items = match t.get(key) {
            None => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(self.bad(
                    &name,
                    format!(
                        "must be a list of strings, such as [\"a\", \"b\"], not {}",
                        kind(other)
                    ),
                ));
            }
        };
        if items.len() > MAX_ENTRIES {
            return Err(self.bad(
                &name,
                format!(
                    "has {} entries; at most {MAX_ENTRIES} are allowed",
                    items.len()
                ),
            ));
        }
        let mut out: Vec<String> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let Value::String(text) = item else {
                return Err(self.bad(
                    &format!("{name}[{i}]"),
                    format!("must be a string, not {}", kind(item)),
                ));
            };
            let value =
                check(text).map_err(|why| self.bad(&format!("{name}[{i}]"), why.to_string()))?;
            if !out.contains(&value) {
                out.push(value);
            }
        }
        Ok(out)
    }

    fn release_age(&self, t: &Table, mut age: ReleaseAge) -> Result<ReleaseAge, PolicyError> {
        reader_keys(self, t)?;
        match t.get("minimum") {
            None => {}
            Some(Value::String(text)) => age.minimum = self.minimum(text)?,
            Some(Value::Integer(0)) => age.minimum = Duration::ZERO,
            Some(other) => {
                return Err(self.bad(
                    "release-age.minimum",
                    format!("must be a duration in quotes, such as \"3 days\", \"36 hours\" or \"0\" (no minimum), not {}", kind(other)),
                ));
            }
        }
        let patterns = self.list(t, "release-age", "exclude", name_pattern)?;
        age.exclude = self.patterns(patterns)?;
        match t.get("unknown-publish-time") {
            None => {}
            Some(Value::String(s)) if s == "refuse" => {
                age.unknown_publish_time = UnknownPublishTime::Refuse;
            }
            Some(Value::String(s)) if s == "allow" => {
                age.unknown_publish_time = UnknownPublishTime::Allow;
            }
            Some(other) => {
                return Err(self.bad(
                    "release-age.unknown-publish-time",
                    format!("must be \"refuse\" or \"allow\", not {}", shown(other)),
                ));
            }
        }
        Ok(age)
    }

    fn minimum(&self, text: &str) -> Result<Duration, PolicyError> {
        let key = "release-age.minimum";
        let trimmed = text.trim();
        let parsed = if trimmed.chars().all(|c| c.is_ascii_digit()) && trimmed != "0" {
            Err("a number needs a unit".to_string())
        } else {
            humantime::parse_duration(trimmed).map_err(|e| e.to_string())
        };
        match parsed {
            Ok(d) if d <= MAX_MINIMUM => Ok(d),
            Ok(_) => Err(self.bad(key, format!("is `{}`: at most 366 days is allowed", crate::finding::clip(text)))),
            Err(why) => Err(self.bad(
                key,
                format!(
                    "must be a duration such as \"3 days\", \"36 hours\", \"1 week\" or \"0\" (no minimum), not `{}` ({why})",
                    crate::finding::clip(text)
                ),
            )),
        }
    }

    fn patterns(&self, patterns: Vec<String>) -> Result<NamePatterns, PolicyError> {
        let mut exact = GlobSetBuilder::new();
        let mut python = GlobSetBuilder::new();
        for (i, pattern) in patterns.iter().enumerate() {
            let glob = |text: &str| {
                GlobBuilder::new(text)
                    .literal_separator(false)
                    .build()
                    .map_err(|e| {
                        self.bad(
                            &format!("release-age.exclude[{i}]"),
                            format!("is not a glob: {}", e.kind()),
                        )
                    })
            };
            exact.add(glob(pattern)?);
            python.add(glob(&normalize_python(pattern))?);
        }
        let built = |b: GlobSetBuilder| {
            b.build()
                .map_err(|e| self.bad("release-age.exclude", format!("cannot be used: {e}")))
        };
        Ok(NamePatterns {
            exact: built(exact)?,
            python: built(python)?,
            patterns,
        })
    }

    fn automerge(&self, t: &Table) -> Result<Automerge, PolicyError> {
        let keys = ["update-types", "reviewers", "assignees", "team-reviewers"];
        self.known_keys(t, "automerge", &keys)?;
        let update_types = self
            .list(t, "automerge", "update-types", update_type)?
            .iter()
            .filter_map(|name| UpdateType::parse(name))
            .collect();
        Ok(Automerge {
            update_types,
            reviewers: self.list(t, "automerge", "reviewers", user_name)?,
            assignees: self.list(t, "automerge", "assignees", user_name)?,
            team_reviewers: self.list(t, "automerge", "team-reviewers", team_name)?,
        })
    }
}

fn reader_keys(reader: &Reader<'_>, t: &Table) -> Result<(), PolicyError> {
    reader.known_keys(
        t,
        "release-age",
        &["minimum", "exclude", "unknown-publish-time"],
    )
}

fn joined(table: &str, key: &str) -> String {
    if table.is_empty() {
        key.to_string()
    } else {
        format!("{table}.{key}")
    }
}

/// A TOML value's kind, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "a string",
        Value::Integer(_) => "a number",
        Value::Float(_) => "a number",
        Value::Boolean(_) => "true or false",
        Value::Datetime(_) => "a date",
        Value::Array(_) => "a list",
        Value::Table(_) => "a table",
    }
}

/// A value as the message quotes it: short strings themselves, anything else by kind.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => format!("`{}`", crate::finding::clip(s)),
        other => kind(other).to_string(),
    }
}

/// What is wrong with one entry of a list; the policy's error quotes it after the entry's key.
#[derive(Debug, thiserror::Error)]
enum BadEntry {
    #[error("must be a package name or a glob such as \"@acme/*\", without spaces")]
    NamePattern,
    #[error(
        "must be an advisory id such as \"GHSA-xxxx-xxxx-xxxx\" or \"CVE-2024-1234\", not `{0}`"
    )]
    AdvisoryId(String),
    #[error("must be an update type: {types}, not `{0}`", types = update_types())]
    UpdateType(String),
    #[error("is a user name without the `@`: write \"{0}\"")]
    AtUserName(String),
    #[error("must be a user name (letters, digits, `-`, `_`, `.`), not `{0}`")]
    UserName(String),
    #[error(
        "must be a team such as \"acme/platform\" (names of letters, digits, `-`, `_`, `.`), not `{0}`"
    )]
    TeamName(String),
}

fn update_types() -> String {
    UpdateType::ALL
        .iter()
        .map(|t| t.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn name_pattern(text: &str) -> Result<String, BadEntry> {
    let ok = !text.is_empty()
        && text.len() <= 214
        && !text.chars().any(|c| c.is_control() || c.is_whitespace());
    if ok {
        Ok(text.to_string())
    } else {
        Err(BadEntry::NamePattern)
    }
}

fn advisory_id(text: &str) -> Result<String, BadEntry> {
    let ok = !text.is_empty()
        && text.len() <= 100
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c));
    if ok {
        Ok(text.to_string())
    } else {
        Err(BadEntry::AdvisoryId(crate::finding::clip(text)))
    }
}

fn update_type(text: &str) -> Result<String, BadEntry> {
    match UpdateType::parse(text) {
        Some(_) => Ok(text.to_string()),
        None => Err(BadEntry::UpdateType(crate::finding::clip(text))),
    }
}

/// A forge user name: letters, digits, `-`, `_` and `.`, as GitHub and GitLab spell them.
fn user_name(text: &str) -> Result<String, BadEntry> {
    if let Some(bare) = text.strip_prefix('@') {
        return Err(BadEntry::AtUserName(crate::finding::clip(bare)));
    }
    if is_name(text) {
        Ok(text.to_string())
    } else {
        Err(BadEntry::UserName(crate::finding::clip(text)))
    }
}

/// A team: `org/team` on GitHub, a group path on GitLab.
fn team_name(text: &str) -> Result<String, BadEntry> {
    let text = text.strip_prefix('@').unwrap_or(text);
    if text.split('/').all(is_name) && text.len() <= 255 {
        Ok(text.to_string())
    } else {
        Err(BadEntry::TeamName(crate::finding::clip(text)))
    }
}

fn is_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 100
        && text
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}
