//! A lock file or manifest given as text, read by the reader a snapshot uses for that file name:
//! what the fuzz targets drive, and what a tool holding a file's text can check.

use super::{ChangesError, Manifest, bun, cargo, go, npm, pnpm, pylock, python, read, ruby, yarn};
use std::collections::HashSet;

/// The file names [`parse_text`] reads.
pub const READABLE: &[&str] = &[
    "package-lock.json",
    "package.json",
    "pnpm-lock.yaml",
    "yarn.lock",
    "bun.lock",
    "Cargo.lock",
    "Cargo.toml",
    "poetry.lock",
    "uv.lock",
    "pyproject.toml",
    "requirements.txt",
    "Gemfile.lock",
    "Gemfile",
    "go.mod",
    "go.sum",
];

/// Parses `text` as the file `name` (one of [`READABLE`]) within the same cap and budgets as a
/// snapshot; the number of entries read (locked copies, or manifest entries).
pub fn parse_text(name: &str, text: &str) -> Result<usize, ChangesError> {
    let limit = read::size_limit(name);
    if text.len() as u64 > limit {
        return Err(ChangesError::TooLarge {
            file: name.to_string(),
            limit,
        });
    }
    let entries = |m: Manifest| m.dependencies.values().map(|t| t.len()).sum();
    let none = HashSet::new();
    Ok(match name {
        "package-lock.json" => npm::parse_lock(name, text)?.0.0.len(),
        "package.json" => entries(npm::package_json(name, text)?),
        "pnpm-lock.yaml" => pnpm::parse(name, text, "")?.packages.len(),
        "yarn.lock" => yarn::parse(name, text, &Manifest::default())?
            .packages
            .len(),
        "bun.lock" => bun::parse(name, text, "")?.packages.len(),
        "Cargo.lock" => cargo::parse_lock(name, text, cargo::Roots::Workspace)?
            .packages
            .len(),
        "Cargo.toml" => entries(cargo::cargo_toml(name, text)?),
        "poetry.lock" => pylock::poetry_lock(name, text, &none)?.packages.len(),
        "uv.lock" => pylock::uv_lock(name, text, &none)?.packages.len(),
        "pyproject.toml" => entries(python::pyproject(name, text)?),
        "requirements.txt" => python::requirements(name, name, text)?.1.len(),
        "Gemfile.lock" => ruby::gemfile_lock(name, text)?.packages.len(),
        "Gemfile" => entries(ruby::gemfile(name, text)?),
        "go.mod" => go::parse_mod(name, text)?.1.len(),
        "go.sum" => go::parse_sum(name, text)?.len(),
        other => return Err(ChangesError::UnknownFile(other.to_string())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_readable_file_is_read() {
        for name in READABLE {
            let result = parse_text(name, "");
            assert!(
                !matches!(result, Err(ChangesError::UnknownFile(_))),
                "{name}"
            );
        }
        assert_eq!(
            parse_text("composer.lock", "{}").unwrap_err().to_string(),
            "composer.lock is not a lock file or manifest Quartermaster reads"
        );
        assert_eq!(
            parse_text("go.sum", "a v1 h1:x\na v1/go.mod h1:y\n").unwrap(),
            1
        );
    }
}
