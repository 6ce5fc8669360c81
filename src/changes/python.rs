//! Python manifests: `pyproject.toml` (shared by poetry and uv) and pip's `requirements*.txt`,
//! whose requirements are read with `pep508_rs`. Requirement files are both manifest and lock:
//! `==` pins (pip-compile output, with `--hash` options) are the locked versions.

use super::error::{RequirementError, TableError};
use super::read::Place;
use super::{ChangesError, EcosystemSnapshot, LockedPackage, Manifest, Source, manifest};
use pep440_rs::Operator;
use pep508_rs::{Requirement, VersionOrUrl};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::str::FromStr;

const PYPROJECT_TABLES: [&str; 7] = [
    "project.dependencies",
    "project.optional-dependencies.*",
    "dependency-groups.*",
    "tool.poetry.dependencies",
    "tool.poetry.dev-dependencies",
    "tool.poetry.group.*.dependencies",
    "tool.uv.dev-dependencies",
];

/// PEP 503: lower case, runs of `-`, `_` and `.` as one `-`.
pub(crate) fn normalize(name: &str) -> String {
    pep508_rs::PackageName::new(name.to_string())
        .map_or_else(|_| name.to_lowercase(), |n| n.to_string())
}

pub(crate) fn pyproject(file: &str, text: &str) -> Result<Manifest, ChangesError> {
    Manifest::from_value(
        file,
        manifest::toml_to_json(file, text)?,
        &PYPROJECT_TABLES,
        pyproject_entries,
    )
}

/// A PEP 508 list (`project.dependencies`) or a poetry table (`name = constraint`).
fn pyproject_entries(value: Value) -> Result<BTreeMap<String, String>, TableError> {
    match value {
        Value::Array(items) => items
            .iter()
            .map(|item| match item.as_str() {
                Some(text) => requirement(text)
                    .map(|r| (r.name.to_string(), r.to_string()))
                    .map_err(|source| TableError::Requirement {
                        text: text.to_string(),
                        source,
                    }),
                None => Ok((manifest::canonical(item), String::new())),
            })
            .collect(),
        other => Ok(manifest::object_entries(other)?
            .into_iter()
            .map(|(k, v)| (normalize(&k), v))
            .collect()),
    }
}

pub(crate) fn snapshot(place: &Place) -> Result<EcosystemSnapshot, ChangesError> {
    let dir = place.working_dir();
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .map_err(|source| ChangesError::Read {
            file: place.rel(dir),
            source,
        })?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("requirements") && name.ends_with(".txt"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(ChangesError::MissingManifest {
            ecosystem: "pip",
            expected: "requirements*.txt",
            dir: place.rel(dir),
        });
    }
    let mut snapshot = EcosystemSnapshot::default();
    for name in &files {
        let path = dir.join(name);
        let file = place.rel(&path);
        let (manifest, packages) = requirements(&file, name, &place.read(&path)?)?;
        snapshot.lock_file.get_or_insert(file);
        snapshot.manifests.push(manifest);
        snapshot.packages.extend(packages);
    }
    Ok(snapshot)
}

/// One requirements file: its entries (table = the file name), its options as fields, and its
/// pinned or URL requirements as locked packages. When pip-compile's `# via` notes are present,
/// only requirements `via -r <file>` are direct; otherwise every requirement is.
pub(crate) fn requirements(
    file: &str,
    table: &str,
    text: &str,
) -> Result<(Manifest, Vec<LockedPackage>), ChangesError> {
    let mut manifest = Manifest {
        file: file.to_string(),
        ..Manifest::default()
    };
    let mut packages: Vec<LockedPackage> = Vec::new();
    let mut via_input = HashSet::new();
    let (mut annotated, mut in_via) = (false, false);
    let mut index = Source::DefaultRegistry;
    for (line_no, line) in logical_lines(text) {
        let trimmed = line.trim();
        if let Some(comment) = trimmed.strip_prefix('#') {
            let comment = comment.trim();
            let note = comment.strip_prefix("via").map(str::trim);
            annotated |= note.is_some();
            in_via = note.is_some() || (in_via && !comment.is_empty());
            let cites_input = note.unwrap_or(comment).starts_with("-r ")
                || note.unwrap_or(comment).starts_with("-c ");
            if in_via
                && cites_input
                && let Some(last) = packages.last()
            {
                via_input.insert(last.name.clone());
            }
            continue;
        }
        in_via = false;
        let content = strip_comment(trimmed);
        if content.is_empty() {
            continue;
        }
        if content.starts_with('-') {
            option_line(&mut manifest, content, &mut index);
            continue;
        }
        let (spec, options) = content
            .split_once(" --")
            .map_or((content, ""), |(s, o)| (s, o));
        let requirement =
            requirement(spec.trim()).map_err(|e| ChangesError::parse(file, Some(line_no), e))?;
        let name = requirement.name.to_string();
        manifest
            .dependencies
            .entry(table.to_string())
            .or_default()
            .insert(name.clone(), requirement.to_string());
        if let Some((version, source)) = locked(&requirement, &index) {
            let mut hashes: Vec<&str> = options
                .split_whitespace()
                .filter_map(|o| o.trim_start_matches('-').strip_prefix("hash="))
                .collect();
            hashes.sort_unstable();
            let integrity = (!hashes.is_empty()).then(|| hashes.join(" "));
            packages.push(LockedPackage {
                name,
                version,
                source,
                integrity,
                direct: true,
            });
        }
    }
    if annotated {
        for package in &mut packages {
            package.direct = via_input.contains(&package.name);
        }
    }
    Ok((manifest, packages))
}

/// A PEP 508 requirement. `pep508_rs` panics on some names it fails to validate
/// (`email-)alidator`, found by the `lock_pip` fuzz target): that is a parse error too.
fn requirement(text: &str) -> Result<Requirement<pep508_rs::VerbatimUrl>, RequirementError> {
    std::panic::catch_unwind(|| Requirement::<pep508_rs::VerbatimUrl>::from_str(text))
        .map_err(|_| RequirementError::Unparsable)?
        .map_err(|e| RequirementError::Invalid(Box::new(e)))
}

/// A global option (`--index-url`, `-r`, `--find-links`...): a field named after it; the
/// index URL also becomes the source of the pinned requirements.
fn option_line(manifest: &mut Manifest, content: &str, index: &mut Source) {
    let (option, value) = content.split_once([' ', '=']).unwrap_or((content, ""));
    let option = if option == "-i" {
        "--index-url"
    } else {
        option
    };
    if option == "--index-url" {
        *index = Source::Registry(value.trim().to_string());
    }
    let field = manifest.fields.entry(option.to_string()).or_default();
    field.push_str(value.trim());
    field.push('\n');
}

/// The version and source of a pinned (`==`, `===`) or URL requirement.
fn locked(
    requirement: &Requirement<pep508_rs::VerbatimUrl>,
    index: &Source,
) -> Option<(String, Source)> {
    match requirement.version_or_url.as_ref()? {
        VersionOrUrl::VersionSpecifier(specifiers) => {
            let [only] = &specifiers[..] else { return None };
            matches!(only.operator(), Operator::Equal | Operator::ExactEqual)
                .then(|| (only.version().to_string(), index.clone()))
        }
        VersionOrUrl::Url(url) => Some((String::new(), Source::from_url(&url.to_string()))),
    }
}

/// Lines joined across trailing backslashes, each with its first line number.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let (start, mut joined) = current.take().unwrap_or((i + 1, String::new()));
        match raw.strip_suffix('\\') {
            Some(part) => {
                joined.push_str(part);
                joined.push(' ');
                current = Some((start, joined));
            }
            None => {
                joined.push_str(raw);
                lines.push((start, joined));
            }
        }
    }
    lines.extend(current);
    lines
}

/// pip's comment rule: `#` at the start or after whitespace.
fn strip_comment(line: &str) -> &str {
    line.find(" #").map_or(line, |at| &line[..at]).trim()
}
