//! Missions: what a plan may do, and with which commands.
//!
//! A mission is a directory `missions/<name>/` holding `allowlist.json`:
//!
//! ```json
//! {
//!   "description": "what the mission is for",
//!   "action_types": ["create_mr", "skip", ...],
//!   "ecosystems": {
//!     "go": { "packages": "go-module", "versions": "go",
//!             "commands": ["go get <pkg>@<ver>", "go mod tidy"],
//!             "files": ["go.mod", "go.sum"] },
//!     "bundle": { "packages": "rubygems", "versions": "rubygems",
//!                 "commands": [{"form": "bundle update <pkg>", "runs": "bundle lock --update <pkg>"}],
//!                 "files": ["Gemfile", "Gemfile.lock"], "install": ["bundle install"] }
//!   },
//!   "test_runners": { ... optional, same shape as missions/test-runners.json ... }
//! }
//! ```
//!
//! The missions shipped with Quartermaster (`deps`, `docs-drift`) and the default test-runner
//! policy (`missions/test-runners.json`) are embedded in the binary; `--missions-dir DIR` adds
//! missions from `DIR/<name>/allowlist.json`, which take precedence over embedded ones of the same
//! name. The pattern language is described in [`pattern`].
//!
//! A `commands` entry is a pattern, run exactly as the plan writes it, or an object whose `form` the
//! plan writes and whose `runs` is what Quartermaster executes for it, filled with what the form
//! bound: how an ecosystem's lock-only mode is used, so that the lock file is computed before any
//! package code (a gem's `extconf.rb`, an sdist's build backend) can run. See [`UpdateCommand`].
//!
//! `files` are the only files an ecosystem's commands may change: globs (`*` within a name) that
//! match the end of a path, so `go.sum` matches `go.sum` and `providers/s3/go.sum`. A change to any
//! other file (a workflow, a script, an `.npmrc`) refuses the branch; nothing is committed.
//!
//! `install` is the ecosystem's frozen install (`npm ci`, `uv sync --frozen`): after the commit,
//! it builds the tests' environment from the committed files alone. See [`InstallCommand`].

mod commands;
mod files;
pub(crate) mod grammar;
mod install;
pub(crate) mod paths;
pub mod pattern;
mod runners;
mod update;
mod workspace;

pub use commands::CommandMatch;
pub use files::{FilePolicy, FilesError};
pub use install::{Condition, InstallCommand, InstallError, InstallPlace};
pub use paths::{PathArg, PathRole};
pub use runners::{RunnersError, TestCommand};
pub use update::{RunsError, RunsProblem, UpdateCommand};
pub(crate) use workspace::check_test_paths;

use crate::finding::clip;
use crate::plan::ActionType;
use grammar::{PackageGrammar, VersionGrammar};
use pattern::{PatternError, TestPattern};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The mission used when none is named.
pub(crate) const DEFAULT_MISSION: &str = "deps";

const EMBEDDED: &[(&str, &str)] = &[
    ("deps", include_str!("../../missions/deps/allowlist.json")),
    (
        "docs-drift",
        include_str!("../../missions/docs-drift/allowlist.json"),
    ),
];
const EMBEDDED_TEST_RUNNERS: &str = include_str!("../../missions/test-runners.json");

/// Why a mission could not be loaded. These are configuration errors: the operator's, not the
/// agent's, so they stop the run before the plan is looked at.
#[derive(Debug, thiserror::Error)]
pub enum MissionError {
    #[error("`{0}` is not a valid mission name (lower-case letters, digits, `-` and `_`)")]
    InvalidName(String),
    #[error("unknown mission `{name}`; available: {available}")]
    Unknown { name: String, available: String },
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{origin}: {source}")]
    Parse {
        origin: String,
        #[source]
        source: serde_json::Error,
    },
    /// An ecosystem's update command whose form does not parse.
    #[error("{origin}: ecosystem `{ecosystem}`, pattern `{form}`: {source}")]
    Form {
        origin: String,
        ecosystem: String,
        form: String,
        #[source]
        source: Box<PatternError>,
    },
    #[error(
        "{origin}: ecosystem `{ecosystem}`, maintenance command `{form}`: a lock-maintenance command refreshes the whole lock file and takes no placeholder"
    )]
    MaintenancePlaceholder {
        origin: String,
        ecosystem: String,
        form: String,
    },
    #[error("{origin}: ecosystem `{ecosystem}`, files: {source}")]
    Files {
        origin: String,
        ecosystem: String,
        #[source]
        source: Box<FilesError>,
    },
    #[error("{origin}: ecosystem `{ecosystem}`, install: {source}")]
    Install {
        origin: String,
        ecosystem: String,
        #[source]
        source: Box<InstallError>,
    },
    #[error("{origin}: {source}")]
    Runners {
        origin: String,
        #[source]
        source: Box<RunnersError>,
    },
    /// An ecosystem command's `runs` pattern does not fit its form.
    #[error(transparent)]
    Runs(Box<RunsError>),
}

/// A loaded, checked mission.
#[derive(Debug, Clone)]
pub struct Mission {
    pub name: String,
    pub description: String,
    pub action_types: BTreeSet<ActionType>,
    pub ecosystems: BTreeMap<String, EcosystemRules>,
    pub tests: Vec<TestPattern>,
    /// The files each ecosystem's commands may change.
    pub files: FilePolicy,
    /// Where it came from: `embedded` or the file path.
    pub origin: String,
}

/// An ecosystem's grammars, allowed update commands and frozen install (its files are in
/// [`Mission::files`]).
#[derive(Debug, Clone)]
pub struct EcosystemRules {
    pub packages: PackageGrammar,
    pub versions: VersionGrammar,
    pub commands: Vec<UpdateCommand>,
    /// What builds a unit's test environment from the committed files, in order; none leaves the
    /// committed files as they are.
    pub install: Vec<InstallCommand>,
    /// What the warm-up runs after the frozen install on the base commit, to leave the tests'
    /// build in the warm caches (`cargo test --no-run`); never run in a unit.
    pub prebuild: Vec<InstallCommand>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MissionFile {
    description: String,
    action_types: Vec<ActionType>,
    #[serde(default)]
    ecosystems: BTreeMap<String, EcosystemFile>,
    #[serde(default)]
    test_runners: Option<TestRunnersFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EcosystemFile {
    packages: PackageGrammar,
    versions: VersionGrammar,
    commands: Vec<update::CommandFile>,
    /// Lock-maintenance commands: they take no package and refresh the whole lock file.
    #[serde(default)]
    maintenance: Vec<update::CommandFile>,
    files: Vec<String>,
    /// The frozen install that builds the tests' environment from the committed files.
    #[serde(default)]
    install: Vec<install::InstallFile>,
    /// The warm-up's compile-only build of the tests, after the frozen install.
    #[serde(default)]
    prebuild: Vec<install::InstallFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TestRunnersFile {
    #[serde(default)]
    flag_sets: BTreeMap<String, Vec<String>>,
    commands: Vec<TestCommandFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TestCommandFile {
    pattern: String,
    /// What executes for a command of this form, when it differs.
    #[serde(default)]
    runs: Option<String>,
    #[serde(default)]
    flags: Vec<String>,
    #[serde(default)]
    positionals: Option<PositionalsFile>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum PositionalsFile {
    Kind(PositionalKind),
    OneOf(Vec<String>),
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
enum PositionalKind {
    Path,
    Target,
    Word,
    Test,
    GoPackage,
    PythonFile,
    Filter,
}

/// Names of the embedded missions.
pub(crate) fn embedded_names() -> Vec<&'static str> {
    EMBEDDED.iter().map(|(n, _)| *n).collect()
}

/// Loads mission `name`, from `missions_dir` if it has it, else from the embedded missions.
pub fn load(name: &str, missions_dir: Option<&Path>) -> Result<Mission, MissionError> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if !valid {
        return Err(MissionError::InvalidName(clip(name)));
    }
    if let Some(dir) = missions_dir {
        let path = dir.join(name).join("allowlist.json");
        match std::fs::read_to_string(&path) {
            Ok(text) => return Mission::from_json(name, &text, &path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(MissionError::Io { path, source }),
        }
    }
    match EMBEDDED.iter().find(|(n, _)| *n == name) {
        Some((_, text)) => Mission::from_json(name, text, "embedded"),
        None => {
            let mut available: BTreeSet<String> =
                embedded_names().into_iter().map(String::from).collect();
            if let Some(dir) = missions_dir
                && let Ok(entries) = std::fs::read_dir(dir)
            {
                for entry in entries.flatten() {
                    if entry.path().join("allowlist.json").is_file() {
                        available.insert(entry.file_name().to_string_lossy().into_owned());
                    }
                }
            }
            Err(MissionError::Unknown {
                name: name.to_string(),
                available: available.into_iter().collect::<Vec<_>>().join(", "),
            })
        }
    }
}

impl Mission {
    /// Builds a mission from its `allowlist.json` text, checking every pattern and reference.
    pub fn from_json(name: &str, text: &str, origin: &str) -> Result<Self, MissionError> {
        let file: MissionFile =
            serde_json::from_str(text).map_err(|source| MissionError::Parse {
                origin: origin.to_string(),
                source,
            })?;
        let mut ecosystems = BTreeMap::new();
        let mut files = FilePolicy::default();
        for (eco, spec) in file.ecosystems {
            let mut commands = spec
                .commands
                .iter()
                .map(|c| compile_command(origin, &eco, c))
                .collect::<Result<Vec<_>, _>>()?;
            for entry in &spec.maintenance {
                commands.push(compile_maintenance(origin, &eco, entry)?);
            }
            files
                .insert(&eco, &spec.files)
                .map_err(|source| MissionError::Files {
                    origin: origin.to_string(),
                    ecosystem: eco.clone(),
                    source: Box::new(source),
                })?;
            let compile = |files: &[install::InstallFile]| {
                files
                    .iter()
                    .map(InstallCommand::compile)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|source| MissionError::Install {
                        origin: origin.to_string(),
                        ecosystem: eco.clone(),
                        source: Box::new(source),
                    })
            };
            let (install, prebuild) = (compile(&spec.install)?, compile(&spec.prebuild)?);
            ecosystems.insert(
                eco,
                EcosystemRules {
                    packages: spec.packages,
                    versions: spec.versions,
                    commands,
                    install,
                    prebuild,
                },
            );
        }
        let runners = match file.test_runners {
            Some(r) => r,
            None => serde_json::from_str(EMBEDDED_TEST_RUNNERS).map_err(|source| {
                MissionError::Parse {
                    origin: "embedded test-runners.json".into(),
                    source,
                }
            })?,
        };
        let tests = runners::compile(runners).map_err(|source| MissionError::Runners {
            origin: origin.to_string(),
            source: Box::new(source),
        })?;
        Ok(Self {
            name: name.to_string(),
            description: file.description,
            action_types: file.action_types.into_iter().collect(),
            ecosystems,
            tests,
            files,
            origin: origin.to_string(),
        })
    }

    /// Whether some ecosystem in `ecosystems` owns `path`.
    pub(crate) fn owns_file<'e>(
        &self,
        ecosystems: impl Iterator<Item = &'e str>,
        path: &str,
    ) -> bool {
        self.files.owns(ecosystems, path)
    }

    /// The file patterns of `ecosystems`, joined for messages (`none` when there are none).
    pub(crate) fn files_of<'e>(&self, ecosystems: impl Iterator<Item = &'e str>) -> String {
        self.files.describe(ecosystems)
    }

    /// The files each ecosystem's commands may change.
    pub(crate) fn file_policy(&self) -> FilePolicy {
        self.files.clone()
    }

    /// Programs that may start an update command, sorted.
    pub(crate) fn update_programs(&self) -> BTreeSet<&str> {
        self.ecosystems
            .values()
            .flat_map(|e| e.commands.iter().map(UpdateCommand::program))
            .collect()
    }

    /// Programs that may start a test command, sorted.
    pub fn test_runners(&self) -> BTreeSet<&str> {
        self.tests.iter().map(|t| t.pattern.program()).collect()
    }
}

/// Compiles an entry of ecosystem `eco`'s `commands`, naming both in any error.
fn compile_command(
    origin: &str,
    eco: &str,
    entry: &update::CommandFile,
) -> Result<UpdateCommand, MissionError> {
    UpdateCommand::compile(entry).map_err(|e| match e {
        update::CommandError::Form(source) => MissionError::Form {
            origin: origin.to_string(),
            ecosystem: eco.to_string(),
            form: entry.form().to_string(),
            source: Box::new(source),
        },
        update::CommandError::Runs(problem) => MissionError::Runs(Box::new(RunsError {
            origin: origin.to_string(),
            ecosystem: eco.to_string(),
            form: entry.form().to_string(),
            runs: entry.runs().unwrap_or_default().to_string(),
            problem,
        })),
    })
}

/// Compiles an entry of ecosystem `eco`'s `maintenance`: a command that binds no package, since
/// it refreshes every one.
fn compile_maintenance(
    origin: &str,
    eco: &str,
    entry: &update::CommandFile,
) -> Result<UpdateCommand, MissionError> {
    let mut command = compile_command(origin, eco, entry)?;
    if !command.form.update_placeholders().is_empty() {
        return Err(MissionError::MaintenancePlaceholder {
            origin: origin.to_string(),
            ecosystem: eco.to_string(),
            form: entry.form().to_string(),
        });
    }
    command.maintenance = true;
    Ok(command)
}

#[cfg(test)]
mod tests;
