//! The versions a repository declares, read from the files in its base tree (never from the
//! plan), nearest first from the unit's working directory up to the repository root, as the
//! version managers themselves look for them. Only the tools the unit's ecosystems run are read.

use super::{DeclaredVersion, Rule, Tool};
use crate::changes::ChangesError;
use crate::changes::read::Place;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub(crate) enum DeclaredError {
    #[error(transparent)]
    Read(#[from] ChangesError),
    #[error("cannot parse {file}: {message}")]
    Parse { file: String, message: String },
}

/// The declarations for `tools` seen from `dir`, a directory of the checkout at `root`.
pub(crate) fn read(
    root: &Path,
    dir: &Path,
    tools: &[Tool],
) -> Result<Vec<DeclaredVersion>, DeclaredError> {
    let place = Place::new(root, dir)?;
    let want = |t: Tool| tools.contains(&t);
    let mut out = Vec::new();
    if want(Tool::Go) {
        out.extend(go_mod(&place)?);
    }
    if want(Tool::Node) {
        out.extend(first_line(
            &place,
            &[".nvmrc", ".node-version"],
            Tool::Node,
        )?);
    }
    out.extend(package_json(&place, tools)?);
    if want(Tool::Rustc) {
        out.extend(rust_toolchain(&place)?);
    }
    if want(Tool::Python) {
        out.extend(first_line(&place, &[".python-version"], Tool::Python)?);
    }
    out.extend(pyproject(&place, tools)?);
    if want(Tool::Ruby) {
        out.extend(first_line(&place, &[".ruby-version"], Tool::Ruby)?);
    }
    if want(Tool::Bundler) {
        out.extend(bundled_with(&place)?);
    }
    out.extend(tool_versions(&place, tools)?);
    Ok(out)
}

/// The nearest of `names`: its path from the root and its text.
fn nearest(
    place: &Place,
    names: &[&'static str],
) -> Result<Option<(String, String)>, ChangesError> {
    let Some((dir, name)) = place.find_up(names) else {
        return Ok(None);
    };
    let path = dir.join(name);
    Ok(place
        .read_optional(&path)?
        .map(|text| (place.rel(&path), text)))
}

fn declared(tool: Tool, file: &str, value: &str, rule: Rule) -> DeclaredVersion {
    DeclaredVersion {
        tool,
        file: file.to_string(),
        value: value.trim().to_string(),
        rule,
    }
}

/// go.mod: `go 1.21` is the least version that may build the module, `toolchain go1.22.3` the one
/// it prefers.
fn go_mod(place: &Place) -> Result<Vec<DeclaredVersion>, DeclaredError> {
    let Some((file, text)) = nearest(place, &["go.mod"])? else {
        return Ok(Vec::new());
    };
    let module: gomod_parser::GoMod = crate::changes::read::guarded(&file, || {
        text.parse()
            .map_err(|message: String| ChangesError::parse(&file, None, message))
    })?;
    let mut out = Vec::new();
    if let Some(go) = &module.go {
        out.push(declared(Tool::Go, &file, go, Rule::Minimum));
    }
    if let Some(toolchain) = &module.toolchain {
        let version = toolchain.trim().strip_prefix("go").unwrap_or(toolchain);
        out.push(declared(Tool::Go, &file, version, Rule::Exact));
    }
    Ok(out)
}

/// A version file of one line (`.nvmrc`, `.python-version`, `.ruby-version`): a version or a
/// prefix of one (`20`, `v20.11.1`, `3.12`, `ruby-3.3.0`), or an alias that cannot be checked.
fn first_line(
    place: &Place,
    names: &[&'static str],
    tool: Tool,
) -> Result<Option<DeclaredVersion>, DeclaredError> {
    let Some((file, text)) = nearest(place, names)? else {
        return Ok(None);
    };
    let line = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .find(|l| !l.is_empty());
    Ok(line.map(|l| {
        // rbenv and chruby accept the interpreter's name before the version.
        let value = match tool {
            Tool::Ruby => l.strip_prefix("ruby-").unwrap_or(l),
            _ => l,
        };
        declared(tool, &file, value, Rule::Prefix)
    }))
}

/// package.json: `engines` ranges, and `packageManager` (`pnpm@9.15.0+sha512.…`, exact).
fn package_json(place: &Place, tools: &[Tool]) -> Result<Vec<DeclaredVersion>, DeclaredError> {
    const ENGINES: &[(&str, Tool)] = &[
        ("node", Tool::Node),
        ("npm", Tool::Npm),
        ("pnpm", Tool::Pnpm),
        ("yarn", Tool::Yarn),
        ("bun", Tool::Bun),
    ];
    if !ENGINES.iter().any(|(_, t)| tools.contains(t)) {
        return Ok(Vec::new());
    }
    let Some((file, text)) = nearest(place, &["package.json"])? else {
        return Ok(Vec::new());
    };
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| DeclaredError::Parse {
            file: file.clone(),
            message: e.to_string(),
        })?;
    let mut out = Vec::new();
    for (name, tool) in ENGINES.iter().filter(|(_, t)| tools.contains(t)) {
        if let Some(range) = json["engines"][name].as_str() {
            out.push(declared(*tool, &file, range, Rule::Range));
        }
    }
    let manager = json["packageManager"]
        .as_str()
        .and_then(|s| s.split_once('@'));
    if let Some((name, version)) = manager {
        let tool = ENGINES.iter().find(|(n, _)| *n == name).map(|(_, t)| *t);
        if let Some(tool) = tool.filter(|t| tools.contains(t)) {
            let version = version.split('+').next().unwrap_or(version);
            out.push(declared(tool, &file, version, Rule::Exact));
        }
    }
    Ok(out)
}

/// rust-toolchain.toml's `[toolchain] channel`, or the legacy `rust-toolchain` (the same TOML, or
/// the channel alone).
fn rust_toolchain(place: &Place) -> Result<Option<DeclaredVersion>, DeclaredError> {
    let Some((file, text)) = nearest(place, &["rust-toolchain.toml", "rust-toolchain"])? else {
        return Ok(None);
    };
    let channel = match text.parse::<toml::Table>() {
        Ok(table) => table
            .get("toolchain")
            .and_then(|t| t.get("channel"))
            .and_then(|c| c.as_str())
            .map(String::from),
        Err(e) if file.ends_with(".toml") => {
            return Err(DeclaredError::Parse {
                file,
                message: e.message().to_string(),
            });
        }
        Err(_) => text.lines().next().map(String::from),
    };
    Ok(channel
        .filter(|c| !c.trim().is_empty())
        .map(|c| declared(Tool::Rustc, &file, &c, Rule::Prefix)))
}

/// pyproject.toml: `requires-python`, poetry's `requires-poetry` and uv's `required-version`, all
/// PEP 440 specifiers.
fn pyproject(place: &Place, tools: &[Tool]) -> Result<Vec<DeclaredVersion>, DeclaredError> {
    const FIELDS: &[(&[&str], Tool)] = &[
        (&["project", "requires-python"], Tool::Python),
        (&["tool", "poetry", "requires-poetry"], Tool::Poetry),
        (&["tool", "uv", "required-version"], Tool::Uv),
    ];
    if !FIELDS.iter().any(|(_, t)| tools.contains(t)) {
        return Ok(Vec::new());
    }
    let Some((file, text)) = nearest(place, &["pyproject.toml"])? else {
        return Ok(Vec::new());
    };
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| DeclaredError::Parse {
            file: file.clone(),
            message: e.message().to_string(),
        })?;
    let mut out = Vec::new();
    for (path, tool) in FIELDS.iter().filter(|(_, t)| tools.contains(t)) {
        let mut value = table.get(path[0]);
        for key in &path[1..] {
            value = value.and_then(|v| v.get(key));
        }
        if let Some(spec) = value.and_then(|v| v.as_str()) {
            out.push(declared(*tool, &file, spec, Rule::Specifier));
        }
    }
    Ok(out)
}

/// Gemfile.lock's `BUNDLED WITH`: the bundler that wrote it.
fn bundled_with(place: &Place) -> Result<Option<DeclaredVersion>, DeclaredError> {
    let Some((file, text)) = nearest(place, &["Gemfile.lock", "gems.locked"])? else {
        return Ok(None);
    };
    let lock = crate::changes::parse_gemfile_lock(&file, &text)?;
    Ok(lock
        .format
        .map(|v| declared(Tool::Bundler, &file, &v, Rule::Major)))
}

/// asdf's and mise's `.tool-versions`: `nodejs 20.11.1` and the like, one tool a line (the first
/// version of a line is the one used).
fn tool_versions(place: &Place, tools: &[Tool]) -> Result<Vec<DeclaredVersion>, DeclaredError> {
    let Some((file, text)) = nearest(place, &[".tool-versions"])? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for line in text.lines() {
        let mut words = line.split('#').next().unwrap_or("").split_whitespace();
        let (Some(name), Some(version)) = (words.next(), words.next()) else {
            continue;
        };
        let tool = match name {
            "golang" | "go" => Tool::Go,
            "nodejs" | "node" => Tool::Node,
            "rust" => Tool::Rustc,
            "python" => Tool::Python,
            "ruby" => Tool::Ruby,
            "npm" => Tool::Npm,
            "pnpm" => Tool::Pnpm,
            "yarn" => Tool::Yarn,
            "bun" => Tool::Bun,
            "poetry" => Tool::Poetry,
            "uv" => Tool::Uv,
            "bundler" => Tool::Bundler,
            _ => continue,
        };
        if tools.contains(&tool) {
            out.push(declared(tool, &file, version, Rule::Prefix));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
