//! bun: the text lock file `bun.lock`. It is JSON with trailing commas, which `serde_json`
//! refuses, so it is read with `jsonc-parser` (dprint's maintained JSONC parser) into a
//! `serde_json::Value`. The binary `bun.lockb` cannot be verified and is refused.

use super::read::Place;
use super::{ChangesError, EcosystemSnapshot, LockedPackage, ParsedLock, Source, budget, npm};
use serde_json::Value;

pub(crate) fn snapshot(place: &Place) -> Result<EcosystemSnapshot, ChangesError> {
    let (dir, name) = place
        .find_up(&["bun.lock", "bun.lockb"])
        .ok_or_else(|| place.missing_lock("bun", "bun.lock"))?;
    let path = dir.join(name);
    let file = place.rel(&path);
    if name == "bun.lockb" {
        return Err(ChangesError::BunLockb { file });
    }
    let text = place.read(&path)?;
    let manifests = npm::manifests(place, "bun", &dir)?;
    let lock = parse(&file, &text, &place.working_dir_from(&dir))?;
    Ok(EcosystemSnapshot {
        lock_file: Some(file),
        packages: lock.packages,
        format: lock.format,
        manifests,
    })
}

/// The locked packages and the lock's `lockfileVersion`.
pub(crate) fn parse(file: &str, text: &str, working_dir: &str) -> Result<ParsedLock, ChangesError> {
    budget::check_json(file, text)?;
    let lock: Value = jsonc_parser::parse_to_serde_value(text, &Default::default())
        .map_err(|e| ChangesError::parse(file, Some(e.line_display()), e.kind()))?;
    let workspace = &lock["workspaces"][working_dir];
    let workspace_name = workspace["name"].as_str().unwrap_or_default();
    let direct: Vec<&str> = [
        "dependencies",
        "devDependencies",
        "optionalDependencies",
        "peerDependencies",
    ]
    .iter()
    .filter_map(|table| workspace[table].as_object())
    .flat_map(|deps| deps.keys().map(String::as_str))
    .collect();
    let Some(entries) = lock["packages"].as_object() else {
        return Err(ChangesError::parse(
            file,
            None,
            "`packages` is not an object",
        ));
    };
    // A dependency's copy for a workspace is keyed `<workspace>/<name>` when it differs from
    // the hoisted `<name>`.
    let direct_key = |name: &str| {
        let scoped = format!("{workspace_name}/{name}");
        if !working_dir.is_empty() && entries.contains_key(&scoped) {
            scoped
        } else {
            name.to_string()
        }
    };
    let direct_keys: std::collections::HashSet<String> =
        direct.iter().map(|n| direct_key(n)).collect();
    let mut packages = Vec::with_capacity(entries.len());
    for (key, entry) in entries {
        let ident = entry[0].as_str().unwrap_or_default();
        let Some(at) = ident.get(1..).and_then(|s| s.find('@')).map(|i| i + 1) else {
            return Err(ChangesError::parse(
                file,
                None,
                format!("package `{key}`: no `name@version`"),
            ));
        };
        let (name, spec) = (&ident[..at], &ident[at + 1..]);
        let (version, source) = match spec.split_once(':') {
            Some(("workspace" | "file" | "link", path)) => {
                (String::new(), Source::Path(path.to_string()))
            }
            Some(("github" | "git" | "git+https" | "git+ssh", _)) => {
                (String::new(), Source::Git(spec.to_string()))
            }
            _ => (spec.to_string(), registry(&entry[1])),
        };
        let integrity = entry[3]
            .as_str()
            .filter(|s| s.starts_with("sha"))
            .map(str::to_string);
        packages.push(LockedPackage {
            name: name.to_string(),
            version,
            source,
            integrity,
            direct: direct_keys.contains(key),
        });
    }
    let format = lock.get("lockfileVersion").map(npm::scalar);
    Ok(ParsedLock { packages, format })
}

/// The second element of an npm package entry: empty for the default registry, else its URL.
fn registry(value: &Value) -> Source {
    match value.as_str() {
        Some("") | None => Source::DefaultRegistry,
        Some(url) => Source::from_url(url),
    }
}
