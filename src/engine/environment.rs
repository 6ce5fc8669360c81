//! The tests' environment, built from the committed files alone.
//!
//! After the commit, the workspace is brought back to exactly the committed tree: whatever the
//! update commands installed or cached among the files (`node_modules`, a `.venv`, build output)
//! is gone. Their sandbox unit ends with its HOME, caches and temporary files, and a fresh one
//! takes its place. There each ecosystem's frozen install (the mission's `install`: `npm ci`,
//! `uv sync --frozen`, ...) runs in the directory of the ecosystem's lock file, and the tests run
//! on what it built. Python's environment is the unit's own virtualenv, first on PATH and named
//! by `VIRTUAL_ENV`, `UV_PROJECT_ENVIRONMENT` and Poetry's settings, never the operator's; the
//! toolchains (interpreters, package managers) still come from the machine.

use super::build;
use super::build::Exec;
use super::stop::Stop;
use super::unit::BranchUnit;
use super::verify::canonical_root;
use super::warnings::resolver_warnings;
use super::{RunContext, WorkerSlot};
use crate::changes::{Ecosystem, Snapshot};
use crate::git::NewCommit;
use crate::markdown::code;
use crate::mission::{InstallPlace, TestCommand};
use crate::report::{ActionReport, InstallRecord, ProcessRecord};
use crate::sandbox::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Where the tests run: a fresh cell, and the environment the frozen install built in it.
pub(super) struct Tested<'s> {
    pub cell: Cell<'s>,
    pub env: BTreeMap<OsString, OsString>,
}

/// Why the committed files cannot be tested: the unit fails, saying so.
#[derive(Debug, thiserror::Error)]
pub(super) enum Untestable {
    /// A frozen install failed.
    #[error("{0}")]
    InstallFailed(String),
    /// The install left out the test's runner.
    #[error("{0}")]
    NoRunner(String),
}

/// The largest requirements file read to see whether it pins with hashes.
const MAX_REQUIREMENTS: u64 = 16 * 1024 * 1024;

/// Builds the tests' environment for `commit` (see the module documentation), or says why
/// the unit fails when the frozen install fails or leaves the test's runner out. `env` is
/// the update commands' environment, `before` what they started from (where the lock files
/// are), `dir` the working directory.
pub(super) fn test_environment<'a>(
    run: &RunContext<'a>,
    slot: &mut WorkerSlot,
    unit: &BranchUnit<'_>,
    commit: &NewCommit,
    (env, before, dir): (&BTreeMap<OsString, OsString>, &Snapshot, &Path),
    test: &TestCommand,
    report: &mut ActionReport,
) -> Result<Result<Tested<'a>, Untestable>, Stop> {
    let Some(workspace) = slot.workspace.as_mut() else {
        return Err(Stop::failed("the workspace is gone"));
    };
    workspace.reset(commit.id)?;
    let root = canonical_root(workspace)?;
    let cell = super::workspace::cell(run, slot.number, workspace, false)?;
    let ecosystems: BTreeSet<&str> = unit.commands.iter().map(|m| m.ecosystem.as_str()).collect();
    let venv = cell.home().join("venv");
    let env = install_env(run, env, &ecosystems, &venv);
    // Read before anything is installed: the install runs package code.
    let places = ecosystems
        .iter()
        .map(|name| {
            let run_dir = install_dir(name, before, &root, dir);
            InstallConditions::read(&run_dir, dir).map(|place| (*name, run_dir, place))
        })
        .collect::<Result<Vec<_>, Stop>>()?;
    for (name, run_dir, place) in &places {
        let install = InstallPlace {
            env: &venv,
            requirements: &place.requirements,
            hashed: place.hashed,
            yarn_berry: place.yarn_berry,
        };
        for command in run.plan.install(name) {
            if !command.applies(&install) {
                continue;
            }
            let argv = command.argv(&install);
            let record = (unit.branch.as_str(), *name, venv.as_path());
            if let Some(why) = run_install(run, (&cell, &env), &argv, run_dir, record, report)? {
                return Ok(Err(Untestable::InstallFailed(why)));
            }
        }
    }
    let venv = venv.is_dir().then_some(venv.as_path());
    if let Some(why) = missing_runner(test, venv, &root, dir) {
        run.progress.step(&why);
        return Ok(Err(Untestable::NoRunner(why)));
    }
    Ok(Ok(Tested { cell, env }))
}

/// The frozen install of `unit`'s ecosystems, as the mission writes it (for the build digest).
pub(super) fn install_sources<'a>(run: &RunContext<'a>, unit: &BranchUnit<'_>) -> Vec<&'a str> {
    let ecosystems: BTreeSet<&str> = unit.commands.iter().map(|m| m.ecosystem.as_str()).collect();
    let plan = run.plan;
    ecosystems
        .into_iter()
        .flat_map(|e| plan.install(e).iter().map(|c| c.source()))
        .collect()
}

/// The environment of the frozen install and the tests: the update commands' without their
/// update-only defaults, and each ecosystem's own settings.
pub(super) fn install_env(
    run: &RunContext<'_>,
    env: &BTreeMap<OsString, OsString>,
    ecosystems: &BTreeSet<&str>,
    venv: &Path,
) -> BTreeMap<OsString, OsString> {
    let mut env = crate::process::install_env(env, &run.settings.extra_env);
    let mut set = |name: &str, value: OsString| {
        env.insert(name.into(), value);
    };
    let installed = ecosystems
        .iter()
        .filter(|e| !run.plan.install(e).is_empty())
        .filter_map(|e| Ecosystem::from_name(e));
    for ecosystem in installed {
        match ecosystem {
            Ecosystem::Pip | Ecosystem::Uv | Ecosystem::Poetry => {
                set("VIRTUAL_ENV", venv.into());
                set("UV_PROJECT_ENVIRONMENT", venv.into());
                // A project's poetry.toml must not send Poetry to a `.venv` of its own.
                set("POETRY_VIRTUALENVS_IN_PROJECT", "false".into());
            }
            Ecosystem::Go => set("GOFLAGS", "-mod=readonly".into()),
            Ecosystem::Bundle => set("BUNDLE_FROZEN", "true".into()),
            _ => {}
        }
    }
    if env.contains_key(&OsString::from("UV_PROJECT_ENVIRONMENT")) {
        let path = env
            .get(&OsString::from("PATH"))
            .cloned()
            .unwrap_or_default();
        let dirs = std::iter::once(venv.join("bin")).chain(std::env::split_paths(&path));
        if let Ok(path) = std::env::join_paths(dirs) {
            env.insert("PATH".into(), path);
        }
    }
    env
}

/// Runs one install command and records it; why the unit fails, if it does.
fn run_install(
    run: &RunContext<'_>,
    (cell, env): Exec<'_>,
    argv: &[String],
    dir: &Path,
    (branch, ecosystem, venv): (&str, &str, &Path),
    report: &mut ActionReport,
) -> Result<Option<String>, Stop> {
    let outcome = build::execute(run, (cell, env), argv, dir, branch)?;
    let shown = argv.join(" ").replace(&venv.display().to_string(), "<env>");
    let ok = outcome.exit.success();
    run.progress.step(&format!(
        "$ {shown}  ({}, {:.1}s) frozen install",
        outcome.exit,
        outcome.duration.as_secs_f64()
    ));
    if !ok {
        run.progress.failure_output(&outcome.output_tail);
    }
    let warnings = resolver_warnings(&outcome.output_tail);
    let process = ProcessRecord::of(outcome);
    let failed = (!ok).then(|| {
        format!(
            "the frozen install {} failed: {}; the committed lock files do not install as they are",
            code(&shown),
            process.result
        )
    });
    report.installs.push(InstallRecord {
        branch: branch.to_string(),
        ecosystem: ecosystem.to_string(),
        command: shown,
        ok,
        process,
        warnings,
    });
    Ok(failed)
}

/// Where an ecosystem's frozen install runs: the directory of the lock file that governs the
/// working directory (a workspace's root), else the working directory.
pub(super) fn install_dir(ecosystem: &str, before: &Snapshot, root: &Path, dir: &Path) -> PathBuf {
    let at_lock = !matches!(ecosystem, "go" | "pip");
    Ecosystem::from_name(ecosystem)
        .filter(|_| at_lock)
        .and_then(|e| before.ecosystems.get(&e))
        .and_then(|s| s.lock_file.as_deref())
        .and_then(|lock| root.join(lock).parent().map(Path::to_path_buf))
        .filter(|d| d.starts_with(root) && d.is_dir())
        .unwrap_or_else(|| dir.to_path_buf())
}

/// What the committed files say of the install conditions.
pub(super) struct InstallConditions {
    pub requirements: Vec<String>,
    pub hashed: bool,
    pub yarn_berry: bool,
}

impl InstallConditions {
    /// Reads the requirements files of `dir` and the yarn.lock of `run_dir` (regular files only).
    pub(super) fn read(run_dir: &Path, dir: &Path) -> Result<InstallConditions, Stop> {
        let read = |path: &Path| -> Option<String> {
            let meta = std::fs::symlink_metadata(path).ok()?;
            if !meta.is_file() || meta.len() > MAX_REQUIREMENTS {
                return None;
            }
            std::fs::read_to_string(path).ok()
        };
        let mut requirements: Vec<String> = std::fs::read_dir(dir)
            .map_err(|e| Stop::failed(format!("reading the working directory: {e}")))?
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.starts_with("requirements") && n.ends_with(".txt"))
            .collect();
        requirements.sort();
        let hashed = requirements
            .iter()
            .filter_map(|r| read(&dir.join(r)))
            .any(|text| text.contains("--hash"));
        let yarn_berry = read(&run_dir.join("yarn.lock"))
            .is_some_and(|text| text.lines().any(|l| l.starts_with("__metadata:")));
        Ok(InstallConditions {
            requirements,
            hashed,
            yarn_berry,
        })
    }
}

/// Why the test's runner would not come from the environment the frozen install built, if it
/// would not: `npx NAME` needs NAME in a `node_modules/.bin` of the checkout (npx would otherwise
/// run a global copy or download one); in a unit with a virtualenv, `pytest`, or what `uv run` or
/// `poetry run` runs, must be one of its scripts (the operator's copy would import the
/// operator's packages).
fn missing_runner(
    test: &TestCommand,
    venv: Option<&Path>,
    root: &Path,
    dir: &Path,
) -> Option<String> {
    let argv = &test.argv;
    let word = |i: usize| argv.get(i).map(String::as_str).unwrap_or_default();
    if word(0) == "npx" {
        let name = match argv.iter().position(|w| w == "--") {
            Some(end) => argv.get(end + 1)?,
            None => argv[1..].iter().find(|w| !w.starts_with('-'))?,
        };
        let installed = dir
            .ancestors()
            .take_while(|d| d.starts_with(root))
            .any(|d| d.join("node_modules/.bin").join(name).exists());
        return (!installed).then(|| {
            format!(
                "{} is not installed in node_modules/.bin: the frozen install did not install it from the committed lock, and `npx` does not download it; add it to the project's devDependencies",
                code(name)
            )
        });
    }
    let venv = venv?;
    let program = match (word(0), word(1)) {
        ("uv" | "poetry", "run") => argv[2..].iter().find(|w| !w.starts_with('-'))?,
        ("pytest", _) => &argv[0],
        _ => return None,
    };
    let found = matches!(program.as_str(), "python" | "python3")
        || venv.join("bin").join(program).is_file();
    (!found).then(|| {
        format!(
            "{} is not installed in the unit's virtualenv, which the frozen install built from the committed lock; the operator's copy is never used: lock it with the project's dependencies (a dev dependency or group)",
            code(program)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(argv: &str) -> TestCommand {
        TestCommand {
            text: argv.into(),
            argv: argv.split_whitespace().map(String::from).collect(),
            script: None,
            paths: vec![],
            cargo_packages: vec![],
        }
    }

    #[test]
    fn the_runner_must_come_from_the_unit_environment() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let venv = root.join("venv");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::write(venv.join("bin/pytest"), "").unwrap();
        let app = root.join("work/app");
        std::fs::create_dir_all(app.join("../node_modules/.bin")).unwrap();
        std::fs::write(app.join("../node_modules/.bin/jest"), "").unwrap();
        let missing =
            |argv: &str, venv: Option<&Path>| missing_runner(&test(argv), venv, &root, &app);
        assert_eq!(missing("npx --no -- jest --ci", None), None);
        assert_eq!(missing("npx jest", None), None);
        assert!(missing("npx --no mocha", None).is_some());
        assert_eq!(missing("uv run --no-sync pytest -q", Some(&venv)), None);
        assert_eq!(missing("poetry run python -m unittest", Some(&venv)), None);
        assert_eq!(missing("python3 -m pytest", Some(&venv)), None);
        assert_eq!(
            missing("pytest", None),
            None,
            "no unit virtualenv: as before"
        );
        insta::assert_snapshot!(
            "missing_runners",
            [
                missing("npx --no -- vitest run", None),
                missing("pytest -q", Some(&venv.join("elsewhere"))),
                missing("poetry run mytests", Some(&venv)),
            ]
            .into_iter()
            .map(Option::unwrap)
            .collect::<Vec<_>>()
            .join("\n")
        );
    }
}
