//! An ecosystem's frozen install: the commands that build a unit's test environment from the
//! committed files alone, after the commit and before the tests (`npm ci`, `uv sync --frozen`).
//!
//! An entry of an ecosystem's `install` is a command, or `{"when": CONDITION, "runs": COMMAND}`,
//! run only where the condition holds (yarn berry and yarn classic freeze their lock with
//! different flags). A command is literal words, the program first by its bare name, and two
//! placeholders Quartermaster fills, each a whole word: `<env>`, the unit's own environment
//! directory (a Python virtualenv), and `<requirements>`, `-r FILE` for every requirements file
//! of the working directory.

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use std::fmt;
use std::path::Path;

/// Where an install command runs only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Condition {
    /// The committed yarn.lock is berry's (it has a `__metadata` entry).
    YarnBerry,
    /// The committed yarn.lock is yarn 1's.
    YarnClassic,
    /// Some requirements file pins with `--hash`.
    RequirementsHashed,
    /// No requirements file pins with `--hash`.
    RequirementsUnhashed,
}

impl Condition {
    /// The condition as the mission writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Condition::YarnBerry => "yarn-berry",
            Condition::YarnClassic => "yarn-classic",
            Condition::RequirementsHashed => "requirements-hashed",
            Condition::RequirementsUnhashed => "requirements-unhashed",
        }
    }

    fn holds(self, place: &InstallPlace<'_>) -> bool {
        match self {
            Condition::YarnBerry => place.yarn_berry,
            Condition::YarnClassic => !place.yarn_berry,
            Condition::RequirementsHashed => place.hashed,
            Condition::RequirementsUnhashed => !place.hashed,
        }
    }
}

/// What a unit's install commands are filled from and decided by, read from the committed files.
#[derive(Debug, Clone, Copy)]
pub struct InstallPlace<'a> {
    /// The unit's own environment directory.
    pub env: &'a Path,
    /// The requirements files of the working directory, relative to it.
    pub requirements: &'a [String],
    /// Whether one of them pins with `--hash`.
    pub hashed: bool,
    /// Whether the yarn.lock is berry's.
    pub(crate) yarn_berry: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Word {
    Lit(String),
    Env,
    Requirements,
}

/// One command of an ecosystem's frozen install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallCommand {
    pub when: Option<Condition>,
    words: Vec<Word>,
    source: String,
}

impl InstallCommand {
    /// The command as the mission writes it.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether it runs at `place`.
    pub fn applies(&self, place: &InstallPlace<'_>) -> bool {
        self.when.is_none_or(|c| c.holds(place))
    }

    /// The argv, its placeholders filled from `place`.
    pub fn argv(&self, place: &InstallPlace<'_>) -> Vec<String> {
        let mut argv = Vec::with_capacity(self.words.len());
        for word in &self.words {
            match word {
                Word::Lit(text) => argv.push(text.clone()),
                Word::Env => argv.push(place.env.display().to_string()),
                Word::Requirements => {
                    for file in place.requirements {
                        argv.push("-r".into());
                        argv.push(file.clone());
                    }
                }
            }
        }
        argv
    }

    /// Parses and checks an entry of an ecosystem's `install`.
    pub(super) fn compile(entry: &InstallFile) -> Result<Self, InstallError> {
        let (when, source) = match entry {
            InstallFile::Always(source) => (None, source),
            InstallFile::When { when, runs } => (Some(*when), runs),
        };
        let mut words = Vec::new();
        for (i, word) in source.split_whitespace().enumerate() {
            let parsed = match word {
                "<env>" => Word::Env,
                "<requirements>" => Word::Requirements,
                w if w.contains(['<', '>']) => {
                    return Err(InstallError::Placeholder(w.to_string()));
                }
                w => Word::Lit(w.to_string()),
            };
            if i == 0 && !matches!(&parsed, Word::Lit(p) if is_program(p)) {
                return Err(InstallError::NotAProgram(word.to_string()));
            }
            words.push(parsed);
        }
        if words.is_empty() {
            return Err(InstallError::Empty);
        }
        Ok(Self {
            when,
            words,
            source: source.split_whitespace().collect::<Vec<_>>().join(" "),
        })
    }
}

/// Why an entry of an ecosystem's `install` was refused.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("`{0}` is not a placeholder an install command takes (`<env>`, `<requirements>`)")]
    Placeholder(String),
    #[error("`{0}` is not a bare program name")]
    NotAProgram(String),
    #[error("empty command")]
    Empty,
}

fn is_program(word: &str) -> bool {
    let mut chars = word.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
}

/// An entry of an ecosystem's `install` in `allowlist.json`: a command, or `{"when", "runs"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InstallFile {
    Always(String),
    When { when: Condition, runs: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WhenFile {
    when: Condition,
    runs: String,
}

/// A string or an object, with serde's own messages for a malformed object.
impl<'de> Deserialize<'de> for InstallFile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct InstallFileVisitor;
        impl<'de> Visitor<'de> for InstallFileVisitor {
            type Value = InstallFile;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(r#"an install command, or {"when": condition, "runs": command}"#)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<InstallFile, E> {
                Ok(InstallFile::Always(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<InstallFile, A::Error> {
                let entry = WhenFile::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(InstallFile::When {
                    when: entry.when,
                    runs: entry.runs,
                })
            }
        }
        deserializer.deserialize_any(InstallFileVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile(json: &str) -> Result<InstallCommand, Box<dyn std::error::Error>> {
        let entry: InstallFile = serde_json::from_str(json)?;
        Ok(InstallCommand::compile(&entry)?)
    }

    fn place<'a>(requirements: &'a [String], hashed: bool, berry: bool) -> InstallPlace<'a> {
        InstallPlace {
            env: Path::new("/unit/home/venv"),
            requirements,
            hashed,
            yarn_berry: berry,
        }
    }

    #[test]
    fn placeholders_are_filled_from_the_committed_files() {
        let files = [
            "requirements.txt".to_string(),
            "requirements-dev.txt".into(),
        ];
        let venv = compile(r#""python3 -m venv <env>""#).unwrap();
        assert_eq!(
            venv.argv(&place(&files, false, false)),
            ["python3", "-m", "venv", "/unit/home/venv"]
        );
        let pip =
            compile(r#"{"when": "requirements-hashed", "runs": "pip install --require-hashes <requirements>"}"#)
                .unwrap();
        assert!(!pip.applies(&place(&files, false, false)));
        assert!(pip.applies(&place(&files, true, false)));
        assert_eq!(
            pip.argv(&place(&files, true, false)),
            [
                "pip",
                "install",
                "--require-hashes",
                "-r",
                "requirements.txt",
                "-r",
                "requirements-dev.txt"
            ]
        );
        let classic =
            compile(r#"{"when": "yarn-classic", "runs": "yarn install --frozen-lockfile"}"#)
                .unwrap();
        assert!(classic.applies(&place(&[], false, false)));
        assert!(!classic.applies(&place(&[], false, true)));
        assert_eq!(classic.source(), "yarn install --frozen-lockfile");
    }

    #[test]
    fn malformed_commands_are_refused() {
        insta::assert_snapshot!(
            "install_command_refusals",
            [
                compile(r#""npm ci <pkg>""#),
                compile(r#""/usr/bin/npm ci""#),
                compile(r#""  ""#),
                compile(r#"{"when": "always", "runs": "npm ci"}"#),
                compile(r#"{"when": "yarn-berry"}"#),
                compile(r#"{"when": "yarn-berry", "runs": "yarn install", "env": "x"}"#),
            ]
            .into_iter()
            .map(|r| r.unwrap_err().to_string())
            .collect::<Vec<_>>()
            .join("\n")
        );
    }
}
