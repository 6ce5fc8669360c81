//! yarn: `yarn.lock`, classic (v1) and berry (v2+), read with `yarn-lock-parser`, which handles
//! both formats (berry's `resolution:` and `checksum:` map to its `resolved` and `integrity`).

use super::read::{Place, guarded};
use super::{
    ChangesError, EcosystemSnapshot, LockedPackage, Manifest, ParsedLock, Source, error, npm,
};
use std::collections::HashSet;

pub(crate) fn snapshot(place: &Place) -> Result<EcosystemSnapshot, ChangesError> {
    let (dir, name) = place
        .find_up(&["yarn.lock"])
        .ok_or_else(|| place.missing_lock("yarn", "yarn.lock"))?;
    let path = dir.join(name);
    let file = place.rel(&path);
    let text = place.read(&path)?;
    let manifests = npm::manifests(place, "yarn", &dir)?;
    let lock = parse(&file, &text, &manifests[0])?;
    Ok(EcosystemSnapshot {
        lock_file: Some(file),
        packages: lock.packages,
        format: lock.format,
        manifests,
    })
}

/// The format is berry's `__metadata` `version`, and 1 for a classic lock ("yarn lockfile v1").
pub(crate) fn parse(
    file: &str,
    text: &str,
    manifest: &Manifest,
) -> Result<ParsedLock, ChangesError> {
    // A descriptor (name, range) of the working directory's manifest marks the direct copy;
    // berry writes default-registry ranges with an `npm:` prefix.
    let wanted: HashSet<(String, String)> = manifest
        .dependencies
        .values()
        .flat_map(|t| t.iter())
        .flat_map(|(n, r)| [(n.clone(), r.clone()), (n.clone(), format!("npm:{r}"))])
        .collect();
    guarded(file, || {
        let lock = yarn_lock_parser::parse_str(text).map_err(|e| parse_error(file, text, &e))?;
        let berry = lock.version > 1;
        let packages = lock
            .entries
            .iter()
            .map(|entry| LockedPackage {
                name: entry.name.to_string(),
                version: entry.version.to_string(),
                source: if berry {
                    berry_source(entry.name, entry.resolved)
                } else {
                    Source::from_url(entry.resolved)
                },
                integrity: (!entry.integrity.is_empty()).then(|| entry.integrity.to_string()),
                direct: entry
                    .descriptors
                    .iter()
                    .any(|(n, r)| wanted.contains(&((*n).to_string(), (*r).to_string()))),
            })
            .collect();
        Ok(ParsedLock {
            packages,
            format: Some(lock.version.to_string()),
        })
    })
}

/// The line where the parser stopped, from the rest of the input it reports.
fn parse_error(file: &str, text: &str, error: &yarn_lock_parser::YarnLockError) -> ChangesError {
    let yarn_lock_parser::YarnLockError::Parser { source } = error;
    // The parser's own error sits in a `nom::Err`, whose `map` reaches it without naming `nom`
    // (an `Incomplete` has none, and leaves `rest` unset).
    let mut rest = None;
    let _ = source
        .clone()
        .map(|e| rest = e.errors.first().map(|(rest, _)| rest.len()));
    let line = rest.map(|len| error::line_of(text, text.len().saturating_sub(len)));
    ChangesError::parse(file, line, "not a valid yarn.lock entry")
}

/// berry's `resolution: "name@protocol:rest"`. A `patch:` resolution
/// (`patch:typescript@npm%3A5.3.3#<patch>`) comes from where its inner resolution says.
fn berry_source(name: &str, resolution: &str) -> Source {
    let mut resolution = resolution.to_string();
    loop {
        let spec = resolution
            .strip_prefix(name)
            .and_then(|s| s.strip_prefix('@'))
            .unwrap_or(&resolution);
        return match spec.split_once(':') {
            Some(("npm", _)) => Source::DefaultRegistry,
            Some(("patch", rest)) => {
                let inner = rest.split('#').next().unwrap_or_default();
                resolution = inner.replace("%3A", ":").replace("%3a", ":");
                continue;
            }
            Some(("workspace" | "link" | "portal" | "file", rest)) => {
                Source::Path(rest.to_string())
            }
            Some(("http" | "https", _)) => Source::Registry(spec.to_string()),
            _ => Source::from_url(spec),
        };
    }
}
