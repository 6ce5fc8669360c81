//! An ecosystem's allowed update commands: the form a plan writes, and what Quartermaster runs for
//! it.
//!
//! An entry of an ecosystem's `commands` is either a pattern, which runs exactly as the plan wrote
//! it, or `{"form": "bundle update <pkg>", "runs": "bundle lock --update <pkg>"}`: the plan writes
//! (and the report shows) the form, and what runs is `runs` with its placeholders filled with what
//! the form bound. That is how an ecosystem's lock-only mode is used without the plan having to
//! know it. `runs` must start with the form's program and use exactly the form's placeholders.

use super::pattern::{Bound, Pattern, PatternError, PatternKind};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use std::fmt;

/// An allowed update command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateCommand {
    /// What the plan writes.
    pub form: Pattern,
    /// What runs instead, when it differs from the form.
    pub runs: Option<Pattern>,
    /// A lock-maintenance command (`cargo update`): it refreshes the whole lock file, so only an
    /// action declaring a `lock_file_maintenance` update may run it.
    pub maintenance: bool,
}

impl UpdateCommand {
    /// The form as written in the mission, for messages and documentation.
    pub fn source(&self) -> &str {
        self.form.source()
    }

    /// The program the command runs (the form's and its `runs`'s).
    pub fn program(&self) -> &str {
        self.form.program()
    }

    /// The pattern the executed argv follows: `runs` when there is one, else the form.
    pub fn executed(&self) -> &Pattern {
        self.runs.as_ref().unwrap_or(&self.form)
    }

    /// The argv to execute for a command whose `words` matched the form, binding `bound`; `None`
    /// only if `runs` needs a value the match did not bind, which loading the mission rules out.
    pub fn argv(&self, words: Vec<String>, bound: &Bound) -> Option<Vec<String>> {
        match &self.runs {
            None => Some(words),
            Some(runs) => runs.fill(bound),
        }
    }

    /// Parses and checks an entry of an ecosystem's `commands`.
    pub(super) fn compile(entry: &CommandFile) -> Result<Self, CommandError> {
        let form = Pattern::parse(entry.form(), PatternKind::Update).map_err(CommandError::Form)?;
        let Some(source) = entry.runs() else {
            return Ok(Self {
                form,
                runs: None,
                maintenance: false,
            });
        };
        let runs = Pattern::parse(source, PatternKind::Update)
            .map_err(|e| CommandError::Runs(RunsProblem::Parse(e)))?;
        check_runs(&form, &runs).map_err(CommandError::Runs)?;
        Ok(Self {
            form,
            runs: Some(runs),
            maintenance: false,
        })
    }
}

/// `runs` may differ from its form only in literal words: same program, same placeholders.
fn check_runs(form: &Pattern, runs: &Pattern) -> Result<(), RunsProblem> {
    if runs.program() != form.program() {
        return Err(RunsProblem::Program {
            runs: runs.program().to_string(),
            form: form.program().to_string(),
        });
    }
    let bound = form.update_placeholders();
    let used = runs.update_placeholders();
    if let Some(extra) = used.iter().find(|p| !bound.contains(p)) {
        return Err(RunsProblem::Unbound(extra.clone()));
    }
    if let Some(dropped) = bound.iter().find(|p| !used.contains(p)) {
        return Err(RunsProblem::Dropped(dropped.clone()));
    }
    Ok(())
}

/// Why an entry of an ecosystem's `commands` was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CommandError {
    /// The form itself does not parse.
    Form(PatternError),
    /// The form parses; its `runs` does not fit it.
    Runs(RunsProblem),
}

/// A `runs` pattern that does not fit its form, named by mission file, ecosystem and form.
#[derive(Debug, thiserror::Error)]
#[error("{origin}: ecosystem `{ecosystem}`, command `{form}`: `runs` pattern `{runs}` {problem}")]
pub struct RunsError {
    pub origin: String,
    pub ecosystem: String,
    pub form: String,
    pub runs: String,
    #[source]
    pub(crate) problem: RunsProblem,
}

/// Why a `runs` pattern does not fit its form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunsProblem {
    #[error("does not parse: {0}")]
    Parse(#[source] PatternError),
    #[error("starts with `{runs}`; it must run the form's program `{form}`")]
    Program { runs: String, form: String },
    #[error(
        "uses `{0}`, which the form does not bind; `runs` may only use the form's placeholders"
    )]
    Unbound(String),
    #[error(
        "lacks `{0}`, which the form binds; `runs` must use every placeholder of the form, so that it updates exactly what the plan declared"
    )]
    Dropped(String),
}

/// An entry of an ecosystem's `commands` in `allowlist.json`: a pattern, or `{"form", "runs"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CommandFile {
    Form(String),
    Runs(RunsFile),
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunsFile {
    form: String,
    runs: String,
}

impl CommandFile {
    pub(super) fn form(&self) -> &str {
        match self {
            CommandFile::Form(form) | CommandFile::Runs(RunsFile { form, .. }) => form,
        }
    }

    pub(super) fn runs(&self) -> Option<&str> {
        match self {
            CommandFile::Form(_) => None,
            CommandFile::Runs(entry) => Some(&entry.runs),
        }
    }
}

/// A string or an object, with serde's own messages for a malformed object (`unknown field`,
/// `missing field`) rather than an untagged enum's "did not match any variant".
impl<'de> Deserialize<'de> for CommandFile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CommandFileVisitor;
        impl<'de> Visitor<'de> for CommandFileVisitor {
            type Value = CommandFile;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(r#"a command pattern, or {"form": pattern, "runs": pattern}"#)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<CommandFile, E> {
                Ok(CommandFile::Form(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<CommandFile, A::Error> {
                RunsFile::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(CommandFile::Runs)
            }
        }
        deserializer.deserialize_any(CommandFileVisitor)
    }
}

#[cfg(test)]
mod tests;
