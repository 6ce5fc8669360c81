//! What a matched test command's arguments may name.
//!
//! Matching checks each value's shape; this pass checks what values mean to their runner, so that
//! a plan cannot pick code to run: go fetches and tests any import path it is given, unittest
//! imports and calls any dotted name, pytest and dotnet read more arguments from `@file`, cargo
//! tests any package of the lock file and loads a linker from a target specification file, and a
//! path into `node_modules` runs a registry tarball's Makefile. Every path argument is recorded
//! with what it must be, so that [`super::check_test_paths`] can resolve it in the workspace, where
//! symbolic links and ignored directories are visible.

use super::pattern::{Arg, Refusal, ValueKind};
use crate::finding::{Code, clip};
use std::path::{Component, Path};

/// Directories whose contents come from packages, virtual environments or build output rather
/// than from the repository's sources (compared ignoring ASCII case). `build`, `dist`, `out`, `bin`
/// and `packages` are deliberately absent: many repositories keep sources or scripts under those
/// names, and where such a directory holds generated files the repository ignores it, which the
/// run-time check refuses.
pub(crate) const DEPENDENCY_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "bower_components",
    "jspm_packages",
    ".yarn",
    ".pnpm-store",
    "vendor",
    ".venv",
    "venv",
    "__pypackages__",
    "site-packages",
    "dist-packages",
    ".tox",
    ".nox",
    ".eggs",
    "target",
    ".gradle",
    ".m2",
    ".bundle",
    ".cargo",
    ".nuget",
];

/// What a path argument must be when the command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathRole {
    /// An existing file or directory (a test file, a package directory).
    Existing,
    /// An existing directory (`ruby -I`, `unittest -s`).
    Dir,
    /// An existing file (`cargo --manifest-path`, a unittest test file).
    File,
    /// An existing directory the tool changes into (`make -C`, `gradle -p`).
    Cwd,
    /// A file the tool writes (`pytest --junitxml`); it need not exist and may be ignored.
    Output,
    /// A test filter that is a path only if such a path exists (`npm test auth`).
    Filter,
}

/// An argument of an allowed test command that names something in the checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathArg {
    /// Its index in the command's argv.
    pub word: usize,
    /// The option it is the value of (`--manifest-path`); `None` for a positional.
    pub flag: Option<String>,
    /// The path it names, relative to the working directory (`tests/a.py` for `tests/a.py::t`).
    pub path: String,
    pub role: PathRole,
}

/// What validation leaves for the run-time check.
#[derive(Debug, Default)]
pub(super) struct RuntimeChecks {
    pub paths: Vec<PathArg>,
    pub(crate) cargo_packages: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runner {
    Go,
    Unittest { discover: bool },
    Pytest,
    Dotnet,
    Cargo,
    Other,
}

/// How many words run the test runner in the project's environment (`uv run`, `poetry run`)
/// before the runner itself.
fn wrapper_len(words: &[String]) -> usize {
    match (
        words.first().map(String::as_str),
        words.get(1).map(String::as_str),
    ) {
        (Some("uv" | "poetry"), Some("run")) => 2,
        _ => 0,
    }
}

impl Runner {
    fn of(words: &[String]) -> Self {
        let words = &words[wrapper_len(words)..];
        let w = |i: usize| words.get(i).map(String::as_str).unwrap_or_default();
        match (w(0), w(1), w(2)) {
            ("go", "test" | "vet", _) => Runner::Go,
            ("python" | "python3", "-m", "unittest") => Runner::Unittest {
                discover: w(3) == "discover",
            },
            ("python" | "python3", "-m", "pytest") | ("pytest", _, _) => Runner::Pytest,
            ("dotnet", _, _) => Runner::Dotnet,
            ("cargo", _, _) => Runner::Cargo,
            _ => Runner::Other,
        }
    }
}

/// Checks what a matched command's bound values mean, and collects its path arguments.
pub(super) fn check(words: &[String], args: &[Arg]) -> Result<RuntimeChecks, Refusal> {
    let runner = Runner::of(words);
    let wrapper = wrapper_len(words);
    let reader = match runner {
        Runner::Pytest => Some("pytest"),
        Runner::Dotnet => Some("dotnet"),
        _ => None,
    };
    if let Some(reader) = reader
        && let Some(word) = words.iter().skip(1).find(|w| w.starts_with('@'))
    {
        return Err(Refusal::new(
            Code::TestResponseFile,
            format!(
                "`{}` makes {reader} read more arguments from the file `{}`, which validation cannot see; write the arguments in the command itself",
                clip(word),
                clip(&word[1..])
            ),
        ));
    }
    let mut resolved = RuntimeChecks::default();
    let mut cwd: Option<&Arg> = None;
    for arg in args {
        if matches!(runner, Runner::Unittest { discover: true }) && arg.word == wrapper + 3 {
            // The `discover` subcommand itself, bound as a positional by the general pattern.
            continue;
        }
        runner_rules(runner, arg, &mut resolved)?;
        if arg.kind == ValueKind::Cwd {
            if let Some(first) = cwd {
                return Err(Refusal::new(
                    Code::TestDirectoryRepeated,
                    format!(
                        "`{}` changes directory a second time: {} resolves it from `{}`, so validation cannot tell where it leads; give a single directory",
                        shown(arg),
                        words[0],
                        shown(first)
                    ),
                ));
            }
            cwd = Some(arg);
        }
        let role = role(runner, arg);
        let path = match role {
            Some(_) => path_part(runner, arg),
            None => arg.value.as_str(),
        };
        // A target is a path only when it has a directory part: `make vendor` is a task.
        let names_path = role.is_some() || arg.kind == ValueKind::Target && path.contains('/');
        if names_path && let Some(dir) = dependency_dir(Path::new(path)) {
            return Err(dependency_refusal(&shown(arg), dir, "points"));
        }
        if let Some(role) = role {
            resolved.paths.push(PathArg {
                word: arg.word,
                flag: arg.flag.clone(),
                path: path.to_string(),
                role,
            });
        }
    }
    Ok(resolved)
}

/// The rules that hold for a runner whatever its patterns in the mission say.
fn runner_rules(runner: Runner, arg: &Arg, resolved: &mut RuntimeChecks) -> Result<(), Refusal> {
    let flag = arg.flag.as_deref();
    let value = arg.value.as_str();
    match (runner, flag) {
        (Runner::Go, None) if !is_go_pattern(value) => Err(Refusal::new(
            Code::TestGoPackage,
            format!(
                "`{}` is not a package pattern inside this module: go takes `./` patterns (`./...`, `./pkg/...`, `.`); an import path, `all` or `std` makes go fetch or test code from outside the repository",
                clip(value)
            ),
        )),
        (Runner::Go, Some("-mod")) if !matches!(value, "readonly" | "vendor") => Err(Refusal::new(
            Code::TestGoModMode,
            format!(
                "`-mod {}` lets go resolve and download modules that go.mod and go.sum do not pin; use `-mod=readonly` or `-mod=vendor`, or drop it",
                clip(value)
            ),
        )),
        (Runner::Unittest { discover: true }, None) => Err(Refusal::new(
            Code::TestUnittestName,
            format!(
                "`{}` after `discover` is a start directory or module that unittest may import; give the start directory as `-s DIR` and the file pattern as `-p PATTERN`",
                clip(value)
            ),
        )),
        (Runner::Unittest { discover: false }, None) if !value.ends_with(".py") => {
            Err(Refusal::new(
                Code::TestUnittestName,
                format!(
                    "`{}` is a module name to unittest, which imports it and calls it when it is callable; name test files inside the checkout (`tests/test_x.py`) or use `python -m unittest discover -s DIR`",
                    clip(value)
                ),
            ))
        }
        (Runner::Cargo, Some("--target"))
            if value.contains('/') || value.to_ascii_lowercase().ends_with(".json") =>
        {
            Err(Refusal::new(
                Code::TestTargetSpec,
                format!(
                    "`--target {}` loads a target specification file, which chooses the linker and tools cargo runs; give a built-in target triple (`x86_64-unknown-linux-gnu`)",
                    clip(value)
                ),
            ))
        }
        (Runner::Cargo, Some("-p" | "--package")) => {
            let plain = !value.is_empty()
                && value
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !plain {
                return Err(Refusal::new(
                    Code::TestCargoPackage,
                    format!(
                        "`{} {}` is not a plain package name: cargo matches package specs against every package in the lock file, dependencies included; name a workspace member exactly",
                        flag.unwrap_or_default(),
                        clip(value)
                    ),
                ));
            }
            resolved.cargo_packages.push(value.to_string());
            Ok(())
        }
        _ => Ok(()),
    }
}

/// `.`, `./pkg`, `./...`, `./pkg/...` (or a `.go` file under `./`): `...` only as a last
/// component, so the pattern cannot reach past the module's own directories.
fn is_go_pattern(value: &str) -> bool {
    if value == "." {
        return true;
    }
    let Some(rest) = value.strip_prefix("./") else {
        return false;
    };
    let parts: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
    parts.iter().enumerate().all(|(i, p)| {
        !p.is_empty() && (!p.contains("...") || (*p == "..." && i + 1 == parts.len()))
    })
}

/// What a bound value must be in the workspace, if it names something there.
fn role(runner: Runner, arg: &Arg) -> Option<PathRole> {
    match (runner, arg.flag.as_deref()) {
        (Runner::Unittest { .. }, None) => return Some(PathRole::File),
        (
            Runner::Unittest { .. },
            Some("-s" | "--start-directory" | "-t" | "--top-level-directory"),
        ) => return Some(PathRole::Dir),
        (Runner::Go, None) => return Some(PathRole::Existing),
        _ => {}
    }
    Some(match arg.kind {
        ValueKind::Path | ValueKind::Test | ValueKind::GoPackage => PathRole::Existing,
        ValueKind::Dir => PathRole::Dir,
        ValueKind::File | ValueKind::PythonFile => PathRole::File,
        ValueKind::Cwd => PathRole::Cwd,
        ValueKind::Out => PathRole::Output,
        ValueKind::Filter => PathRole::Filter,
        ValueKind::Number | ValueKind::Word | ValueKind::Expr | ValueKind::Target => return None,
    })
}

/// The path in a value: `tests/a.py` of `tests/a.py::test_b`, `spec/a_spec.rb` of
/// `spec/a_spec.rb:12`, `./pkg` of `./pkg/...`.
fn path_part(runner: Runner, arg: &Arg) -> &str {
    let value = arg.value.as_str();
    if runner == Runner::Go || arg.kind == ValueKind::GoPackage {
        return match value.strip_suffix("...") {
            Some(dir) => match dir.trim_end_matches('/') {
                "" => ".",
                dir => dir,
            },
            None => value,
        };
    }
    if arg.kind != ValueKind::Test {
        return value;
    }
    if let Some((path, _)) = value.split_once("::") {
        return path;
    }
    match value.split_once(':') {
        Some((path, lines)) if lines.bytes().all(|b| b.is_ascii_digit() || b == b':') => path,
        _ => value,
    }
}

/// The first component of `path` that is a dependency or build directory.
pub(super) fn dependency_dir(path: &Path) -> Option<&'static str> {
    path.components().find_map(|c| match c {
        Component::Normal(name) => {
            let name = name.to_str()?;
            DEPENDENCY_DIRS
                .iter()
                .find(|d| d.eq_ignore_ascii_case(name))
                .copied()
        }
        _ => None,
    })
}

pub(super) fn dependency_refusal(argument: &str, dir: &str, how: &str) -> Refusal {
    Refusal::new(
        Code::TestDependencyDir,
        format!(
            "`{argument}` {how} into `{dir}`, which holds installed packages or build output rather than the repository's sources; name a path among the repository's own files"
        ),
    )
}

/// An argument as the plan wrote it: `-C node_modules/x` or `tests/a.py`.
fn shown(arg: &Arg) -> String {
    match &arg.flag {
        Some(flag) => format!("{flag} {}", clip(&arg.value)),
        None => clip(&arg.value),
    }
}

#[cfg(test)]
mod tests;
