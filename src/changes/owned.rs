//! Every file a commit changes is one the ecosystem readers verified, or the unit is refused.
//!
//! The readers read the manifests of the working directory and the lock files that govern it
//! ([`super::Snapshot::files`]), and the commit holds exactly the bytes they read. A manifest or
//! lock file anywhere else (the `Cargo.toml` of another directory, which a mission's file pattern
//! matches as well) was never read, so nothing vouches for it. The other files an ecosystem's
//! commands may write (yarn's cache and Plug'n'Play loader, `bun.lockb`, `go.work.sum`) must at
//! least lie where a reader looked. Git's own files change what git commits and checks out, and
//! no update needs them.

use super::read::Place;
use super::rules::{ChangeFinding, Code};
use super::{Ecosystem, Snapshot};
use crate::markdown::code;
use std::collections::BTreeSet;

/// Names of the files the readers read (manifests and lock files), and of those that stand
/// beside them as such although no reader parses them (`go.work`, `requirements*.in`). One of
/// them changed but not read is refused.
const READER_FILES: &[&str] = &[
    "go.mod",
    "go.sum",
    "go.work",
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "pnpm-workspace.yaml",
    "bun.lock",
    "Cargo.toml",
    "Cargo.lock",
    "pyproject.toml",
    "uv.lock",
    "poetry.lock",
    "requirements*.txt",
    "requirements*.in",
    "Gemfile",
    "Gemfile.lock",
    "gems.rb",
    "gems.locked",
];

/// Git's own files in a tree: attributes (filters, end of lines, `ident`), ignore rules,
/// submodules, the mail map, Git LFS's configuration.
const GIT_FILES: &[&str] = &[
    ".gitattributes",
    ".gitignore",
    ".gitmodules",
    ".mailmap",
    ".lfsconfig",
];

/// The lock files that tell ecosystems of one family apart, for a plan that names the wrong one.
const LOCKS: &[(&str, Ecosystem)] = &[
    ("package-lock.json", Ecosystem::Npm),
    ("npm-shrinkwrap.json", Ecosystem::Npm),
    ("yarn.lock", Ecosystem::Yarn),
    ("pnpm-lock.yaml", Ecosystem::Pnpm),
    ("bun.lock", Ecosystem::Bun),
    ("bun.lockb", Ecosystem::Bun),
    ("uv.lock", Ecosystem::Uv),
    ("poetry.lock", Ecosystem::Poetry),
    ("requirements.txt", Ecosystem::Pip),
];

/// Whether `path` (relative, `/`-separated; a directory may end with `/`) is one of git's own
/// files, or lies in a `.git` directory.
pub(crate) fn is_git_file(path: &str) -> bool {
    let path = path.trim_end_matches('/');
    path.split('/').any(|part| part == ".git") || GIT_FILES.contains(&file_name(path))
}

/// The refusal of git's own files written, changed or removed by the commands (ignored ones
/// included: a `.gitignore` can hide itself).
pub(crate) fn git_files(paths: &[String]) -> Option<ChangeFinding> {
    let found: Vec<String> = paths
        .iter()
        .filter(|p| is_git_file(p))
        .map(|p| code(p))
        .collect();
    if found.is_empty() {
        return None;
    }
    Some(blocking(
        Code::ChangeGitFile,
        None,
        format!(
            "the commands wrote or removed {}, git's own {}: attributes, ignore rules and submodules change what git commits and checks out, and no update needs them, so the unit is denied; a dependency whose code does this needs looking into",
            found.join(", "),
            if found.len() == 1 { "file" } else { "files" },
        ),
    ))
}

/// The refusals of changed files (`changed`, relative to the repository root) that `after`'s
/// readers did not read: a manifest or lock file anywhere else, or another dependency file in a
/// directory no reader looked at. `working_dir` is relative to the root (`.` for the root).
pub(crate) fn unverified_files(
    changed: &[String],
    after: &Snapshot,
    working_dir: &str,
) -> Vec<ChangeFinding> {
    let read: BTreeSet<&str> = after.files.keys().map(String::as_str).collect();
    let read_dirs: BTreeSet<&str> = read.iter().map(|p| parent(p)).collect();
    let wd = if working_dir == "." { "" } else { working_dir };
    let looked_at = |dir: &str| within(wd, dir) || read_dirs.iter().any(|d| within(dir, d));
    let mut findings = Vec::new();
    for path in changed.iter().filter(|p| !read.contains(p.as_str())) {
        let dir = parent(path);
        let shown = if dir.is_empty() { "." } else { dir };
        let message = if READER_FILES
            .iter()
            .any(|n| name_matches(n, file_name(path)))
        {
            format!(
                "{} changed, but no reader verified it: it is a manifest or lock file outside what working_dir {} and its lock file govern, so the unit is denied; update {} in an action of its own with `working_dir` {}",
                code(path),
                code(working_dir),
                code(shown),
                code(shown)
            )
        } else if !looked_at(dir) {
            format!(
                "{} changed in {}, a directory where no manifest or lock file was read for working_dir {}, so the unit is denied; update {} in an action of its own with `working_dir` {}",
                code(path),
                code(shown),
                code(working_dir),
                code(shown),
                code(shown)
            )
        } else {
            continue;
        };
        findings.push(blocking(Code::ChangeUnverifiedFile, None, message));
    }
    findings
}

/// Another ecosystem of the same family whose lock file is where `ecosystem`'s is missing: an
/// npm plan in a pnpm project. The ecosystem and the lock file, relative to the root.
pub(crate) fn other_ecosystem(place: &Place, ecosystem: Ecosystem) -> Option<(Ecosystem, String)> {
    let names: Vec<&'static str> = LOCKS
        .iter()
        .filter(|(_, e)| *e != ecosystem && family(*e) == family(ecosystem))
        .map(|(name, _)| *name)
        .collect();
    let (dir, name) = place.find_up(&names)?;
    let (_, other) = LOCKS.iter().find(|(n, _)| *n == name)?;
    Some((*other, place.rel(&dir.join(name))))
}

fn family(e: Ecosystem) -> u8 {
    match e {
        Ecosystem::Npm | Ecosystem::Yarn | Ecosystem::Pnpm | Ecosystem::Bun => 0,
        Ecosystem::Pip | Ecosystem::Poetry | Ecosystem::Uv => 1,
        Ecosystem::Go => 2,
        Ecosystem::Bundle => 3,
        Ecosystem::Cargo => 4,
    }
}

fn blocking(code: Code, ecosystem: Option<Ecosystem>, message: String) -> ChangeFinding {
    ChangeFinding {
        code,
        ecosystem,
        package: None,
        message,
        blocking: true,
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The directory of a relative path, `""` for the root.
fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// Whether `dir` is `base` or below it (`""` is the root).
fn within(dir: &str, base: &str) -> bool {
    base.is_empty()
        || dir == base
        || dir
            .strip_prefix(base)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// A file name against a name with at most one `*` (any text).
fn name_matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        Some((head, tail)) => {
            name.len() >= head.len() + tail.len() && name.starts_with(head) && name.ends_with(tail)
        }
        None => pattern == name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn after(files: &[&str]) -> Snapshot {
        Snapshot {
            files: files
                .iter()
                .map(|f| (f.to_string(), Some(Vec::new())))
                .collect::<BTreeMap<_, _>>(),
            ..Snapshot::default()
        }
    }

    fn refused(changed: &[&str], read: &[&str], working_dir: &str) -> Vec<String> {
        let changed: Vec<String> = changed.iter().map(|s| s.to_string()).collect();
        unverified_files(&changed, &after(read), working_dir)
            .into_iter()
            .map(|f| {
                assert_eq!(f.code, Code::ChangeUnverifiedFile);
                assert!(f.blocking);
                f.message
            })
            .collect()
    }

    #[test]
    fn a_manifest_no_reader_read_is_refused() {
        let read = ["Cargo.toml", "Cargo.lock"];
        assert!(refused(&["Cargo.toml", "Cargo.lock"], &read, ".").is_empty());
        assert_eq!(
            refused(&["Cargo.lock", "tools/Cargo.toml"], &read, "."),
            [
                "`tools/Cargo.toml` changed, but no reader verified it: it is a manifest or lock file outside what working_dir `.` and its lock file govern, so the unit is denied; update `tools` in an action of its own with `working_dir` `tools`"
            ]
        );
        let app = ["app/package.json", "package-lock.json", "package.json"];
        assert_eq!(
            refused(
                &["web/requirements-dev.txt", "package-lock.json"],
                &app,
                "app"
            )
            .len(),
            1
        );
    }

    #[test]
    fn other_dependency_files_must_lie_where_a_reader_looked() {
        let yarn = ["app/package.json", "app/yarn.lock"];
        assert!(refused(&["app/.pnp.cjs", "app/.yarn/cache/a-1.zip"], &yarn, "app").is_empty());
        assert_eq!(
            refused(&["web/.pnp.cjs"], &yarn, "app"),
            [
                "`web/.pnp.cjs` changed in `web`, a directory where no manifest or lock file was read for working_dir `app`, so the unit is denied; update `web` in an action of its own with `working_dir` `web`"
            ]
        );
        // go.work.sum sits with go.work, above the module.
        assert!(refused(&["go.work.sum"], &["mod/go.mod", "mod/go.sum"], "mod").is_empty());
    }

    #[test]
    fn git_files_are_named_wherever_they_are() {
        for path in [
            ".gitattributes",
            "app/.gitignore",
            ".gitmodules",
            "sub/.git/",
            "sub/.git/config",
            ".mailmap",
        ] {
            assert!(is_git_file(path), "{path}");
        }
        for path in [
            ".github/workflows/ci.yml",
            "gitignore",
            "a/.gitkeeps",
            ".yarn/cache/x.zip",
        ] {
            assert!(!is_git_file(path), "{path}");
        }
        let f = git_files(&[
            "Cargo.lock".into(),
            "app/.gitignore".into(),
            ".gitattributes".into(),
        ])
        .unwrap();
        assert_eq!(f.code, Code::ChangeGitFile);
        assert_eq!(
            f.message,
            "the commands wrote or removed `app/.gitignore`, `.gitattributes`, git's own files: attributes, ignore rules and submodules change what git commits and checks out, and no update needs them, so the unit is denied; a dependency whose code does this needs looking into"
        );
        assert!(git_files(&["Cargo.lock".into()]).is_none());
    }

    #[test]
    fn names_with_a_star() {
        assert!(name_matches("requirements*.txt", "requirements.txt"));
        assert!(name_matches("requirements*.txt", "requirements-dev.txt"));
        assert!(!name_matches("requirements*.txt", "requirements.in"));
        assert!(!name_matches("requirements*.txt", "requirements.tx"));
        assert!(name_matches("Cargo.toml", "Cargo.toml"));
    }
}
