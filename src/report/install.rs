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
    pub(crate) fn installs_of(&self, branch: &str) -> Vec<&InstallRecord> {
        self.installs
            .iter()
            .filter(|i| i.branch == branch)
            .collect()
    }

    /// The resolver warnings of `branch`'s build: its update commands' and its frozen install's,
    /// in the order they ran.
    pub(crate) fn warnings_of(&self, branch: &str) -> Vec<Warned> {
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

#[cfg(test)]
mod tests {
    use super::super::RunReport;
    use serde_json::json;

    #[test]
    fn the_summary_shows_resolver_warnings_and_a_failed_install() {
        let action = json!({
            "index": 0, "type": "create_mr", "status": "failed",
            "reason": "the frozen install `npm ci` failed: exit code 1; the committed lock files do not install as they are; no PR",
            "branch": "quartermaster/ts", "pull_requests": [], "issues": [], "comments": [], "updates": [],
            "commands": [{"command": "npm install typescript@6.1.0", "branch": "quartermaster/ts", "ok": true,
                          "result": "exit code 0", "exit_code": 0, "duration_ms": 900,
                          "warnings": ["npm warn ERESOLVE overriding peer dependency\nnpm warn While resolving: app@1.0.0"]}],
            "installs": [{"branch": "quartermaster/ts", "ecosystem": "npm", "command": "npm ci", "ok": false,
                          "result": "exit code 1", "exit_code": 1, "duration_ms": 700,
                          "output_tail": "npm error code ERESOLVE\nnpm error ERESOLVE could not resolve"}],
            "duration_ms": 2000
        });
        let mut report: RunReport = serde_json::from_value(json!({
            "version": 1, "quartermaster": "test", "started_at": "", "finished_at": "",
            "dry_run": false, "forge": "local", "mission": "deps", "plan": "plan.json",
            "validation": {"valid": true, "errors": [], "warnings": []},
            "summary": {"done": 0, "failed": 0, "skipped": 0, "denied": 0},
            "timing": {"total_ms": 0, "commands_ms": 0, "overhead_ms": 0, "peak_memory_kb": 0},
            "forge_requests": 0, "exit_code": 0, "actions": [action]
        }))
        .unwrap();
        report.tally();
        assert_eq!(
            report.timing.commands_ms, 1600,
            "installs count as the commands' time"
        );
        insta::assert_snapshot!("summary_with_install_and_warnings", report.to_markdown());
    }
}
