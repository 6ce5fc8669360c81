//! What built each branch's test environment: the frozen install's commands as they ran, and the
//! resolver warnings the package managers printed while updating and installing.

use super::{ActionReport, ProcessRecord};
use serde::{Deserialize, Serialize};

/// One command of a branch's frozen install (`npm ci`, `uv sync --frozen`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InstallRecord {
    pub branch: String,
    pub ecosystem: String,
    /// The command as it ran, the unit's environment directory written `<env>`.
    pub command: String,
    pub ok: bool,
    #[serde(flatten)]
    pub process: ProcessRecord,
    /// What the package manager's resolver warned about (peer conflicts, dependency conflicts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A command of a branch that warned, and its warnings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warned {
    pub command: String,
    pub warnings: Vec<String>,
}

impl ActionReport {
    /// The frozen install commands that ran for `branch`, in order.
    pub fn installs_of(&self, branch: &str) -> Vec<&InstallRecord> {
        self.installs
            .iter()
            .filter(|i| i.branch == branch)
            .collect()
    }

    /// The resolver warnings of `branch`'s last build: its update commands' and its frozen
    /// install's, in the order they ran.
    pub fn warnings_of(&self, branch: &str) -> Vec<Warned> {
        let commands = self
            .commands
            .iter()
            .filter(|c| c.branch == branch)
            .map(|c| (&c.command, &c.warnings));
        let installs = self
            .installs
            .iter()
            .filter(|i| i.branch == branch)
            .map(|i| (&i.command, &i.warnings));
        commands
            .chain(installs)
            .filter(|(_, w)| !w.is_empty())
            .map(|(command, warnings)| Warned {
                command: command.clone(),
                warnings: warnings.clone(),
            })
            .collect()
    }
}
