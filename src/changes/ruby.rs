//! bundler: `Gemfile` and `Gemfile.lock` (or `gems.rb` and `gems.locked`).
//!
//! No maintained Rust crate parses either (the one lock parser on crates.io is an unreleased
//! work in progress), so both are read by hand. The lock's format is indentation-based
//! sections; the Gemfile is Ruby, of which only the shape bundler documents is understood:
//! `gem "name", ...` lines are dependency entries (table: the enclosing `group`/`source`/
//! `platforms` blocks, or `gem`), and every other statement is a field named by its block path
//! and first word (`source`, `ruby`, `group :test > git_source`).

use super::read::Place;
use super::{ChangesError, EcosystemSnapshot, LockedPackage, Manifest, ParsedLock, Source};
use std::collections::{HashMap, HashSet};

pub(crate) fn snapshot(place: &Place) -> Result<EcosystemSnapshot, ChangesError> {
    let gems_rb = place.working_dir().join("gems.rb");
    let (manifest_name, lock_names) = if gems_rb.exists() {
        ("gems.rb", ["gems.locked"])
    } else {
        ("Gemfile", ["Gemfile.lock"])
    };
    let (file, text) = place.manifest("bundle", manifest_name)?;
    let manifest = gemfile(&file, &text)?;
    let (dir, name) = place
        .find_up(&lock_names)
        .ok_or_else(|| place.missing_lock("bundle", lock_names[0]))?;
    let path = dir.join(name);
    let lock_file = place.rel(&path);
    let lock = gemfile_lock(&lock_file, &place.read(&path)?)?;
    Ok(EcosystemSnapshot {
        lock_file: Some(lock_file),
        packages: lock.packages,
        format: lock.format,
        manifests: vec![manifest],
    })
}

pub(crate) fn gemfile(file: &str, text: &str) -> Result<Manifest, ChangesError> {
    let mut manifest = Manifest {
        file: file.to_string(),
        ..Manifest::default()
    };
    let mut blocks: Vec<String> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = strip_comment(raw.trim());
        if line.is_empty() {
            continue;
        }
        if line == "end" {
            blocks.pop().ok_or_else(|| {
                ChangesError::parse(file, Some(i + 1), "`end` without an open block")
            })?;
            continue;
        }
        let path = blocks.join(" > ");
        if let Some(rest) = line
            .strip_prefix("gem ")
            .or_else(|| line.strip_prefix("gem("))
        {
            let (name, constraint) = gem_args(rest).ok_or_else(|| {
                ChangesError::parse(file, Some(i + 1), "`gem` without a quoted name")
            })?;
            let table = if path.is_empty() {
                "gem".to_string()
            } else {
                path
            };
            manifest
                .dependencies
                .entry(table)
                .or_default()
                .insert(name, constraint);
            continue;
        }
        let word = line.split([' ', '(']).next().unwrap_or(line);
        let key = if path.is_empty() {
            word.to_string()
        } else {
            format!("{path} > {word}")
        };
        let field = manifest.fields.entry(key).or_default();
        field.push_str(line);
        field.push('\n');
        if let Some(header) = line
            .strip_suffix(" do")
            .or_else(|| line.split_once(" do |").map(|(h, _)| h))
        {
            blocks.push(header.to_string());
        }
    }
    Ok(manifest)
}

/// `"name", "~> 1.0", require: false` -> (`name`, `"~> 1.0", require: false`).
fn gem_args(rest: &str) -> Option<(String, String)> {
    let rest = rest.trim().trim_end_matches(')');
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let end = rest[1..].find(quote)? + 1;
    let name = rest[1..end].to_string();
    let constraint = rest[end + 1..]
        .trim()
        .trim_start_matches(',')
        .trim()
        .to_string();
    Some((name, constraint))
}

/// A `#` outside quotes starts a comment.
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (c, quote) {
            ('"' | '\'', None) => quote = Some(c),
            (q, Some(open)) if q == open => quote = None,
            ('#', None) => return line[..i].trim_end(),
            _ => {}
        }
    }
    line
}

/// The specs of every `GEM`, `GIT` and `PATH` section, with `DEPENDENCIES` marking the direct
/// gems and `CHECKSUMS` (bundler 2.6+) giving integrities. A platform-specific spec
/// (`nokogiri (1.19.4-x86_64-linux-gnu)`) is a copy of the gem's version. The format is the
/// version of Bundler that wrote the lock, under `BUNDLED WITH`.
pub(crate) fn gemfile_lock(file: &str, text: &str) -> Result<ParsedLock, ChangesError> {
    let mut packages = Vec::new();
    let mut format = None;
    let mut direct = HashSet::new();
    let mut checksums = HashMap::new();
    let (mut section, mut remote, mut revision) = ("", String::new(), String::new());
    for (i, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start().len();
        let content = line.trim();
        let bad =
            || ChangesError::parse(file, Some(i + 1), format!("unexpected line in {section}"));
        match indent {
            0 if !content.is_empty() => {
                (section, remote, revision) = (content, String::new(), String::new());
            }
            // Older Bundler versions indented it by three spaces.
            2 | 3 if section == "BUNDLED WITH" => format = Some(content.to_string()),
            2 => match section {
                "DEPENDENCIES" => {
                    direct.insert(
                        content
                            .split([' ', '!'])
                            .next()
                            .unwrap_or(content)
                            .to_string(),
                    );
                }
                "CHECKSUMS" => {
                    let (spec, sum) = content.split_once(") ").ok_or_else(bad)?;
                    checksums.insert(format!("{spec})"), sum.to_string());
                }
                _ => {
                    if let Some(url) = content.strip_prefix("remote: ") {
                        remote = url.to_string();
                    } else if let Some(rev) = content.strip_prefix("revision: ") {
                        revision = rev.to_string();
                    }
                }
            },
            4 if matches!(section, "GEM" | "GIT" | "PATH") => {
                let (name, version) = spec(content).ok_or_else(bad)?;
                let source = match section {
                    "GEM" => Source::Registry(remote.clone()),
                    "GIT" => Source::Git(format!("{remote}#{revision}")),
                    _ => Source::Path(remote.clone()),
                };
                let integrity = checksums.get(content).cloned();
                packages.push((
                    content.to_string(),
                    LockedPackage {
                        name,
                        version,
                        source,
                        integrity,
                        direct: false,
                    },
                ));
            }
            _ => {}
        }
    }
    let packages = packages
        .into_iter()
        .map(|(spec, mut package)| {
            package.integrity = package.integrity.or_else(|| checksums.get(&spec).cloned());
            package.direct = direct.contains(&package.name);
            package
        })
        .collect();
    Ok(ParsedLock { packages, format })
}

/// `name (version[-platform])` -> (name, version).
fn spec(content: &str) -> Option<(String, String)> {
    let (name, rest) = content.split_once(" (")?;
    let full = rest.strip_suffix(')')?;
    let version = full.split('-').next().unwrap_or(full);
    Some((name.to_string(), version.to_string()))
}
