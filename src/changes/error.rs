//! Why a snapshot could not be taken. Every variant names the file (relative to the repository
//! root, never an absolute path) so that a report can say what to fix.

use std::io;

/// The longest parser message kept: lock files are written by hostile code, and a parser that
/// quotes its input must not carry a whole file into a report.
const MESSAGE_LIMIT: usize = 300;

#[derive(Debug, thiserror::Error)]
pub enum ChangesError {
    #[error("unknown ecosystem `{0}`")]
    UnknownEcosystem(String),
    #[error("{0} is not a lock file or manifest Quartermaster reads")]
    UnknownFile(String),
    #[error("the working directory {0} is not inside the repository")]
    OutsideRoot(String),
    #[error("cannot read {file}: {source}")]
    Read { file: String, source: io::Error },
    #[error("{file} is larger than {limit} bytes; refusing to parse it")]
    TooLarge { file: String, limit: u64 },
    #[error(
        "{file} is a symbolic link, or lies behind one; lock files and manifests must be regular files"
    )]
    Symlink { file: String },
    #[error("{file} is {kind}; lock files and manifests must be regular files")]
    NotRegular { file: String, kind: &'static str },
    /// A parser budget exceeded: nesting, values, or a YAML alias.
    #[error("{file} {what}; refusing to parse it")]
    OverLimit { file: String, what: String },
    #[error("cannot parse {file}{}: {message}", line_suffix(*.line))]
    Parse {
        file: String,
        line: Option<usize>,
        message: String,
    },
    #[error(
        "{ecosystem}: no {expected} in {dir} or a parent directory up to the repository root; commit the lock file so that changes can be verified"
    )]
    MissingLock {
        ecosystem: &'static str,
        expected: &'static str,
        dir: String,
    },
    #[error(
        "{ecosystem}: no {expected} in {dir} or a parent directory up to the repository root, but {found} is there: this is a {other} project; write the plan's commands for {other} and declare `{other}` in repo_context.ecosystems"
    )]
    OtherEcosystem {
        ecosystem: &'static str,
        expected: &'static str,
        dir: String,
        /// The other ecosystem's lock file, relative to the repository root.
        found: String,
        other: &'static str,
    },
    #[error("{ecosystem}: no {expected} in {dir}")]
    MissingManifest {
        ecosystem: &'static str,
        expected: &'static str,
        dir: String,
    },
    #[error(
        "{file} is bun's binary lock file, which cannot be verified; commit the text lock file bun.lock instead (bun 1.2 writes it by default, older versions with `bun install --save-text-lockfile`) and delete bun.lockb"
    )]
    BunLockb { file: String },
}

/// Why a manifest's dependency table could not be read; [`ChangesError::Parse`] names the file
/// and the table.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TableError {
    #[error("expected a table of dependencies, found {0}")]
    NotATable(serde_json::Value),
    #[error("expected a table of dependencies")]
    NotATableOfSpecs,
    #[error("`{text}`: {source}")]
    Requirement {
        text: String,
        #[source]
        source: RequirementError,
    },
}

/// Why a PEP 508 requirement could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RequirementError {
    /// `pep508_rs` panicked on it.
    #[error("not a requirement the parser can read")]
    Unparsable,
    #[error("{}", .0.message)]
    Invalid(#[source] Box<pep508_rs::Pep508Error<pep508_rs::VerbatimUrl>>),
}

fn line_suffix(line: Option<usize>) -> String {
    line.map(|l| format!(" at line {l}")).unwrap_or_default()
}

impl ChangesError {
    /// The finding code of the failure: a file beyond a cap or a budget is `change.over_limit`,
    /// anything else that keeps it from being read is `change.unreadable`.
    pub fn code(&self) -> crate::finding::Code {
        match self {
            ChangesError::TooLarge { .. } | ChangesError::OverLimit { .. } => {
                crate::finding::Code::ChangeOverLimit
            }
            _ => crate::finding::Code::ChangeUnreadable,
        }
    }

    /// A parse error, its message cut to a bounded length.
    pub(crate) fn parse(file: &str, line: Option<usize>, message: impl ToString) -> Self {
        let mut message = message.to_string().replace('\n', " ");
        if message.len() > MESSAGE_LIMIT {
            let mut end = MESSAGE_LIMIT;
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            message.truncate(end);
            message.push('…');
        }
        ChangesError::Parse {
            file: file.to_string(),
            line,
            message,
        }
    }
}

/// The 1-based line of byte `offset` in `text`.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}
