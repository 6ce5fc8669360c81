//! A manifest split into dependency entries and everything else.
//!
//! Dependency entries are what an update may change; any other field (scripts, bin, `[patch]`,
//! `replace`, `source`, build-system, workspace settings...) is named by its path so that a change
//! to it can be refused by name.

use super::ChangesError;
use super::error::TableError;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Non-dependency fields are compared down to this many path components (`scripts.postinstall`,
/// `patch.crates-io.serde`, `tool.poetry.scripts`); deeper values are compared whole.
const FIELD_DEPTH: usize = 3;

/// One manifest file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// Path relative to the repository root.
    pub file: String,
    /// Dependency table (`dependencies`, `target.'cfg(unix)'.dependencies`, `require`,
    /// `group :test`...) -> package name -> constraint as written (or as canonical JSON when
    /// the entry is a table).
    pub dependencies: BTreeMap<String, BTreeMap<String, String>>,
    /// Every other field: path -> canonical value.
    pub fields: BTreeMap<String, String>,
}

impl Manifest {
    /// Every dependency name of every table.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.dependencies
            .values()
            .flat_map(|t| t.keys().map(String::as_str))
    }

    /// Splits a parsed JSON or TOML document: `tables` are dotted paths (`*` matches any key) of
    /// the dependency tables, `entries` turns one table into name -> constraint.
    pub(crate) fn from_value(
        file: &str,
        mut value: Value,
        tables: &[&str],
        entries: impl Fn(Value) -> Result<BTreeMap<String, String>, TableError>,
    ) -> Result<Manifest, ChangesError> {
        let mut manifest = Manifest {
            file: file.to_string(),
            ..Manifest::default()
        };
        for pattern in tables {
            let segments: Vec<&str> = pattern.split('.').collect();
            for (table, content) in take_tables(&mut value, &segments) {
                let parsed = entries(content).map_err(|message| {
                    ChangesError::parse(file, None, format!("{table}: {message}"))
                })?;
                manifest.dependencies.insert(table, parsed);
            }
        }
        flatten("", &value, FIELD_DEPTH, &mut manifest.fields);
        Ok(manifest)
    }
}

/// Removes and returns the tables matching `segments` (with their dotted names).
fn take_tables(value: &mut Value, segments: &[&str]) -> Vec<(String, Value)> {
    let Some(object) = value.as_object_mut() else {
        return Vec::new();
    };
    let Some((first, rest)) = segments.split_first() else {
        return Vec::new();
    };
    let keys: Vec<String> = if *first == "*" {
        object.keys().cloned().collect()
    } else if object.contains_key(*first) {
        vec![(*first).to_string()]
    } else {
        Vec::new()
    };
    let mut found = Vec::new();
    for key in keys {
        if rest.is_empty() {
            if let Some(table) = object.remove(&key) {
                found.push((key, table));
            }
        } else if let Some(child) = object.get_mut(&key) {
            let nested = take_tables(child, rest);
            found.extend(
                nested
                    .into_iter()
                    .map(|(name, v)| (format!("{key}.{name}"), v)),
            );
            if child.as_object().is_some_and(Map::is_empty) {
                object.remove(&key);
            }
        }
    }
    found
}

/// Writes every field of `value` under `prefix`, objects split down to `depth` components.
pub(crate) fn flatten(
    prefix: &str,
    value: &Value,
    depth: usize,
    out: &mut BTreeMap<String, String>,
) {
    match value {
        Value::Object(map) if depth > 0 => {
            for (key, child) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&path, child, depth - 1, out);
            }
        }
        _ => {
            out.insert(prefix.to_string(), canonical(value));
        }
    }
}

/// A value as it is compared: strings bare, everything else as compact JSON.
pub(crate) fn canonical(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A `name = constraint` table (package.json, Cargo.toml, poetry): every key is a dependency.
pub(crate) fn object_entries(value: Value) -> Result<BTreeMap<String, String>, TableError> {
    match value {
        Value::Object(map) => Ok(map.iter().map(|(k, v)| (k.clone(), canonical(v))).collect()),
        other => Err(TableError::NotATable(other)),
    }
}

/// A TOML document as a JSON value, so that one splitter serves both formats.
pub(crate) fn toml_to_json(file: &str, text: &str) -> Result<Value, ChangesError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| super::error::line_of(text, s.start));
        ChangesError::parse(file, line, e.message())
    })?;
    serde_json::to_value(table).map_err(|e| ChangesError::parse(file, None, e))
}
