//! The run-time half of the test-command policy.
//!
//! Validation sees a test command as text; only the workspace shows where its paths lead. Right
//! before the test runs (after the update commands, which may have created files), every path
//! argument is resolved in the workspace: it must stay inside the checkout once symbolic links are
//! followed, stay out of dependency directories and of what the repository ignores, and exist as
//! what it must be. Cargo's `-p` packages must be workspace members.

use super::TestCommand;
use super::paths::{PathArg, PathRole, dependency_dir, dependency_refusal};
use super::pattern::Refusal;
use crate::finding::{Code, clip};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::collections::{BTreeSet, HashMap};
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

/// Resolves the path arguments of an allowed test command in the workspace whose checkout is at
/// `workspace_root`, the command running in `dir` (the resolved working directory). Call it
/// immediately before running the test.
pub(crate) fn check_test_paths(
    test: &TestCommand,
    workspace_root: &Path,
    dir: &Path,
) -> Result<(), Refusal> {
    let root = workspace_root.canonicalize().map_err(|e| {
        Refusal::new(
            Code::TestPathMissing,
            format!("cannot resolve the workspace: {e}"),
        )
    })?;
    let base = dir.canonicalize().map_err(|e| {
        Refusal::new(
            Code::TestPathMissing,
            format!("cannot resolve the working directory: {e}"),
        )
    })?;
    if !base.starts_with(&root) {
        return Err(Refusal::new(
            Code::TestPathOutside,
            "the working directory leads outside the checkout; choose a directory of the repository",
        ));
    }
    let mut ignores = Ignores::new(&root);
    for arg in &test.paths {
        check_path(&root, &base, arg, &shown(test, arg), &mut ignores)?;
    }
    if test.cargo_packages.is_empty() {
        return Ok(());
    }
    let manifest = test
        .paths
        .iter()
        .find(|p| p.flag.as_deref() == Some("--manifest-path"));
    let start = match manifest {
        Some(m) => lexical(&base, &m.path)
            .parent()
            .and_then(|p| p.canonicalize().ok())
            .unwrap_or_else(|| base.clone()),
        None => base.clone(),
    };
    check_cargo_packages(&test.cargo_packages, &root, &start)
}

/// The argument as the plan wrote it: `-C shared`, `--directory=shared` or `tests/a.py`.
fn shown(test: &TestCommand, arg: &PathArg) -> String {
    let word = test
        .argv
        .get(arg.word)
        .map(String::as_str)
        .unwrap_or_default();
    match &arg.flag {
        Some(flag) if !word.starts_with(flag.as_str()) => format!("{flag} {}", clip(word)),
        _ => clip(word),
    }
}

fn check_path(
    root: &Path,
    base: &Path,
    arg: &PathArg,
    shown: &str,
    ignores: &mut Ignores,
) -> Result<(), Refusal> {
    let refuse = |code, why: &str| Refusal::new(code, format!("`{shown}` {why}"));
    let path = lexical(base, &arg.path);
    let (resolved, exists) = match path.symlink_metadata() {
        Ok(_) => match path.canonicalize() {
            Ok(resolved) => (resolved, true),
            Err(_) => {
                return Err(refuse(
                    Code::TestPathOutside,
                    "is a symbolic link that leads nowhere inside the checkout; name the file it should point to",
                ));
            }
        },
        Err(e) if e.kind() == ErrorKind::NotFound => match arg.role {
            // Not a path in this checkout, so the runner takes it as a name pattern.
            PathRole::Filter => return Ok(()),
            PathRole::Output => (resolve_missing(&path), false),
            _ => {
                return Err(refuse(
                    Code::TestPathMissing,
                    "does not exist in the working directory; name an existing path of the repository",
                ));
            }
        },
        Err(e) => {
            return Err(refuse(
                Code::TestPathMissing,
                &format!("cannot be read ({e}); name a readable path of the repository"),
            ));
        }
    };
    let Ok(inside) = resolved.strip_prefix(root) else {
        return Err(refuse(
            Code::TestPathOutside,
            "leads outside the checkout through a symbolic link; name a path inside the repository that is not a link out of it",
        ));
    };
    if let Some(dir) = dependency_dir(inside) {
        return Err(dependency_refusal(shown, dir, "resolves"));
    }
    let is_dir = resolved.is_dir();
    if arg.role != PathRole::Output && ignores.is_ignored(inside, is_dir) {
        return Err(refuse(
            Code::TestPathIgnored,
            "is ignored by the repository's .gitignore, so it holds generated or downloaded files rather than the repository's sources; name a tracked path",
        ));
    }
    match arg.role {
        PathRole::Dir | PathRole::Cwd if exists && !is_dir => Err(refuse(
            Code::TestPathMissing,
            "is not a directory; name a directory of the repository",
        )),
        PathRole::File if !resolved.is_file() => Err(refuse(
            Code::TestPathMissing,
            "is not a file; name a file of the repository",
        )),
        _ => Ok(()),
    }
}

/// `base` joined with a relative path that validation already kept free of `..` and roots.
fn lexical(base: &Path, path: &str) -> PathBuf {
    let mut joined = base.to_path_buf();
    joined.extend(Path::new(path).components().filter_map(|c| match c {
        Component::Normal(name) => Some(name),
        _ => None,
    }));
    joined
}

/// Where a file that does not exist yet would be created: its deepest existing ancestor,
/// resolved, followed by the missing components (which, missing, cannot be links).
fn resolve_missing(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut at = path;
    while at.symlink_metadata().is_err() {
        let (Some(parent), Some(name)) = (at.parent(), at.file_name()) else {
            break;
        };
        missing.push(name);
        at = parent;
    }
    // A dangling link on the way resolves to nothing, so the path counts as outside.
    let mut resolved = at.canonicalize().unwrap_or_default();
    resolved.extend(missing.into_iter().rev());
    resolved
}

/// Confirms that every `-p` package is a workspace member: a package the nearest Cargo.lock (in
/// `start` or above it, inside the checkout) lists without a `source`, which dependencies have.
fn check_cargo_packages(packages: &[String], root: &Path, start: &Path) -> Result<(), Refusal> {
    let refuse = |name: &str, why: String| {
        Refusal::new(
            Code::TestCargoPackage,
            format!(
                "`-p {}`: {why}; cargo would build and run the tests of whatever package it names, dependencies included, so name a workspace member or drop `-p`",
                clip(name)
            ),
        )
    };
    let lock = start
        .ancestors()
        .take_while(|d| d.starts_with(root))
        .map(|d| d.join("Cargo.lock"))
        .find(|p| p.symlink_metadata().is_ok_and(|m| m.is_file()));
    let members = lock
        .as_deref()
        .ok_or(LockError::NotFound)
        .and_then(local_packages);
    for name in packages {
        match &members {
            Ok(members) if members.contains(name.as_str()) => {}
            Ok(_) => {
                return Err(refuse(
                    name,
                    "Cargo.lock lists no such workspace package".into(),
                ));
            }
            Err(why) => return Err(refuse(name, format!("cannot confirm it ({why})"))),
        }
    }
    Ok(())
}

/// Why a Cargo.lock could not name the workspace's packages.
#[derive(Debug, thiserror::Error)]
enum LockError {
    #[error(transparent)]
    Read(#[from] crate::changes::ChangesError),
    #[error("there is no Cargo.lock in the working directory or above it")]
    NotFound,
    #[error("Cargo.lock: there is none")]
    Missing,
    #[error("Cargo.lock: {0}")]
    Toml(#[source] toml::de::Error),
}

/// The names of the packages a Cargo.lock lists without a `source`: the workspace's own.
fn local_packages(lock: &Path) -> Result<BTreeSet<String>, LockError> {
    let text = crate::changes::read::read_file(lock, "Cargo.lock")?.ok_or(LockError::Missing)?;
    let table: toml::Table = toml::from_str(&text).map_err(LockError::Toml)?;
    let packages = table
        .get("package")
        .and_then(toml::Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    Ok(packages
        .iter()
        .filter(|p| p.get("source").is_none())
        .filter_map(|p| p.get("name").and_then(toml::Value::as_str))
        .map(String::from)
        .collect())
}

/// The repository's `.gitignore` files, read as git reads them: each applies below its directory,
/// the deepest match decides, and nothing below an ignored directory can be re-included.
struct Ignores<'r> {
    root: &'r Path,
    loaded: HashMap<PathBuf, Option<Gitignore>>,
}

impl<'r> Ignores<'r> {
    fn new(root: &'r Path) -> Self {
        Self {
            root,
            loaded: HashMap::new(),
        }
    }

    /// Whether `inside` (relative to the root) or one of its parents is ignored.
    fn is_ignored(&mut self, inside: &Path, is_dir: bool) -> bool {
        let parts: Vec<&std::ffi::OsStr> = inside
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => Some(name),
                _ => None,
            })
            .collect();
        let mut prefix = PathBuf::new();
        let mut dirs = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            dirs.push(prefix.clone());
            prefix.push(part);
            let as_dir = is_dir || i + 1 < parts.len();
            for dir in dirs.iter().rev() {
                let Some(gitignore) = self.load(dir) else {
                    continue;
                };
                let below = prefix.strip_prefix(dir).unwrap_or(&prefix);
                match gitignore.matched(below, as_dir) {
                    Match::Ignore(_) => return true,
                    Match::Whitelist(_) => break,
                    Match::None => {}
                }
            }
        }
        false
    }

    /// The `.gitignore` of `dir` (relative to the root); git does not follow one that is a
    /// symbolic link, and neither does this.
    fn load(&mut self, dir: &Path) -> Option<&Gitignore> {
        let root = self.root;
        self.loaded
            .entry(dir.to_path_buf())
            .or_insert_with(|| {
                let file = root.join(dir).join(".gitignore");
                if !file.symlink_metadata().is_ok_and(|m| m.is_file()) {
                    return None;
                }
                let mut builder = GitignoreBuilder::new(root.join(dir));
                // A malformed line is skipped, as git skips it; the others still apply.
                let _partial = builder.add(&file);
                builder.build().ok()
            })
            .as_ref()
    }
}

#[cfg(test)]
mod tests;
