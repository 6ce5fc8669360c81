//! One docker-agent plan file: its fields, read the way docker-agent reads them and written back
//! the way it writes them, with any field docker-agent does not know kept where it was.

use super::error::StoreError;
use super::gojson;
use super::name::PlanName;
use serde_json::{Map, Value};
use std::path::Path;
use std::time::SystemTime;

/// docker-agent's fields, in the order its struct declares them (and so writes them).
const FIELDS: [&str; 7] = [
    "name",
    "title",
    "content",
    "author",
    "status",
    "revision",
    "updatedAt",
];
/// Fields tagged `omitempty`: Go leaves them out when they are empty.
const OMIT_EMPTY: [&str; 3] = ["title", "author", "status"];

/// A named plan as stored on disk.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanFile {
    name: PlanName,
    /// The whole document, in file order, unknown fields included.
    doc: Map<String, Value>,
}

/// What a write changes; `None` keeps the current value (docker-agent's upsert semantics).
#[derive(Debug, Clone, Copy, Default)]
pub struct Change<'a> {
    pub title: Option<&'a str>,
    pub content: Option<&'a str>,
    pub author: Option<&'a str>,
    pub status: Option<&'a str>,
}

impl PlanFile {
    /// A plan that does not exist yet (revision 0, so its first write is revision 1).
    pub fn new(name: PlanName) -> Self {
        Self {
            name,
            doc: Map::new(),
        }
    }

    /// Parses a plan file. The file name is the plan's name, whatever the stored `name` says (as in
    /// docker-agent). Strings may be `null` (Go reads that as empty); `revision` must be an integer.
    pub fn parse(name: PlanName, bytes: &[u8], path: &Path) -> Result<Self, StoreError> {
        let doc = match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(doc)) => doc,
            Ok(other) => {
                let kind = json_kind(&other);
                return Err(StoreError::corrupt(
                    path,
                    format!("it holds {kind}, not a plan object"),
                ));
            }
            Err(e) => return Err(StoreError::corrupt(path, e.to_string())),
        };
        for field in FIELDS {
            let ok = match (field, doc.get(field)) {
                (_, None | Some(Value::Null)) => true,
                ("revision", Some(v)) => v.as_i64().is_some(),
                (_, Some(v)) => v.is_string(),
            };
            if !ok {
                let expected = if field == "revision" {
                    "an integer"
                } else {
                    "a string"
                };
                return Err(StoreError::corrupt(
                    path,
                    format!("`{field}` must be {expected}"),
                ));
            }
        }
        Ok(Self { name, doc })
    }

    pub fn name(&self) -> &PlanName {
        &self.name
    }

    pub fn title(&self) -> &str {
        self.text("title")
    }

    pub fn content(&self) -> &str {
        self.text("content")
    }

    pub fn author(&self) -> &str {
        self.text("author")
    }

    pub fn status(&self) -> &str {
        self.text("status")
    }

    pub fn updated_at(&self) -> &str {
        self.text("updatedAt")
    }

    /// The revision; 0 for a plan never written (or a hand-written file without one).
    pub fn revision(&self) -> i64 {
        self.doc
            .get("revision")
            .and_then(Value::as_i64)
            .unwrap_or(0)
    }

    /// A field docker-agent does not know, as stored.
    pub fn extra(&self, key: &str) -> Option<&Value> {
        if FIELDS.contains(&key) {
            None
        } else {
            self.doc.get(key)
        }
    }

    fn text(&self, field: &str) -> &str {
        self.doc.get(field).and_then(Value::as_str).unwrap_or("")
    }

    /// Applies `change` as a new revision stamped `now`, as docker-agent's storage does: the name
    /// is the file name, the revision goes up by one, `updatedAt` is RFC 3339 UTC in seconds.
    pub fn apply(&mut self, change: Change<'_>, now: SystemTime) -> Result<(), StoreError> {
        let revision =
            self.revision()
                .checked_add(1)
                .ok_or_else(|| StoreError::RevisionOverflow {
                    name: self.name.to_string(),
                    revision: self.revision(),
                })?;
        self.set("name", Value::from(self.name.as_str()));
        let texts = [
            ("title", change.title),
            ("content", change.content),
            ("author", change.author),
            ("status", change.status),
        ];
        for (field, value) in texts {
            if let Some(value) = value {
                self.set(field, Value::from(value));
            }
        }
        self.set("revision", Value::from(revision));
        let stamp = humantime::format_rfc3339_seconds(now).to_string();
        self.set("updatedAt", Value::from(stamp));
        Ok(())
    }

    /// Sets a known field in place, or inserts it where docker-agent's field order puts it.
    fn set(&mut self, field: &str, value: Value) {
        if let Some(slot) = self.doc.get_mut(field) {
            *slot = value;
            return;
        }
        let rank = FIELDS
            .iter()
            .position(|f| *f == field)
            .unwrap_or(FIELDS.len());
        let after = FIELDS[..rank]
            .iter()
            .rev()
            .find_map(|f| self.doc.keys().position(|k| k == f).map(|i| i + 1));
        let before = || {
            FIELDS[rank..]
                .iter()
                .find_map(|f| self.doc.keys().position(|k| k == f))
        };
        let at = after.or_else(before).unwrap_or(self.doc.len());
        self.doc.shift_insert(at, field.to_string(), value);
    }

    /// The file's bytes, as Go's `json.MarshalIndent(plan, "", "  ")` writes them: empty `omitempty`
    /// fields dropped, `null`s of the other known fields written as Go's zero values.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut doc = self.doc.clone();
        for field in OMIT_EMPTY {
            if doc.get(field).is_some_and(|v| v.is_null() || v == "") {
                doc.shift_remove(field);
            }
        }
        let zeros = [
            ("name", Value::from("")),
            ("content", Value::from("")),
            ("revision", Value::from(0)),
            ("updatedAt", Value::from("")),
        ];
        for (field, zero) in zeros {
            if let Some(slot) = doc.get_mut(field).filter(|v| v.is_null()) {
                *slot = zero;
            }
        }
        gojson::marshal_indent(&doc)
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
