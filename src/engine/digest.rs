//! Free re-runs: what built a branch, hashed and recorded in its PR's hidden build marker, so
//! that a later run of the same plan on the same base knows the branch already holds exactly this
//! build and runs no command and no test.

use super::unit::BranchUnit;
use crate::mission::TestCommand;
use sha2::{Digest, Sha256};

/// How a build marker starts; plan text cannot hold one (`<!--` is escaped in it).
const MARKER: &str = "<!-- quartermaster:build:";

/// Everything that decides a branch's content and its PR's text.
pub(crate) struct BuildInputs<'a> {
    pub unit: &'a BranchUnit<'a>,
    pub test: &'a TestCommand,
    pub working_dir: Option<&'a str>,
    pub mission: &'a str,
    pub description: Option<&'a str>,
    pub labels: &'a [String],
    /// A unit built under `warn` is built anew under `fail`, and so checked.
    pub toolchain_policy: crate::toolchain::ToolchainPolicy,
    /// A unit built under another repository policy is built anew, and so screened by this one.
    pub policy: &'a crate::policy::Policy,
    /// The frozen install of the unit's ecosystems, as the mission writes it: the tests ran on
    /// what it built.
    pub install: Vec<&'a str>,
}

impl BuildInputs<'_> {
    /// The build's digest: Quartermaster's version, the mission, the updates, the argv of every
    /// command and of the test, the working directory, the title, description and labels, how a
    /// split unit came to be split off, the toolchain policy, the repository policy and the frozen
    /// install.
    pub(super) fn digest(&self) -> String {
        let commands: Vec<(&str, &[String])> = self
            .unit
            .commands
            .iter()
            .map(|c| (c.ecosystem.as_str(), c.argv.as_slice()))
            .collect();
        // What the policy asks, not where it was read (the base commit is recorded apart).
        let mut policy = serde_json::to_value(self.policy).unwrap_or_default();
        if let Some(map) = policy.as_object_mut() {
            map.remove("source");
        }
        let canonical = serde_json::json!({
            "quartermaster": env!("CARGO_PKG_VERSION"),
            "mission": self.mission,
            "branch": self.unit.branch,
            "title": self.unit.title,
            "split": self.unit.split.as_ref().map(|s| (&s.batch, &s.batch_failed)),
            "updates": self.unit.updates,
            "commands": commands,
            "test": self.test.argv,
            "working_dir": self.working_dir,
            "description": self.description,
            "labels": self.labels,
            "toolchain_policy": format!("{:?}", self.toolchain_policy),
            "policy": policy,
            "install": self.install,
        });
        let hash = Sha256::digest(canonical.to_string().as_bytes());
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256:{hex}")
    }
}

/// The hidden marker recording `digest` built on `base`.
pub(super) fn marker(digest: &str, base: git2::Oid) -> String {
    format!("{MARKER}{digest}:{base} -->")
}

/// `body` with its build marker, if any, replaced by `marker`.
pub(super) fn mark(body: &str, marker: &str) -> String {
    let mut lines: Vec<&str> = body.lines().filter(|l| !l.starts_with(MARKER)).collect();
    lines.push(marker);
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_holds_one_build_marker() {
        let base = git2::Oid::from_str("0123456789abcdef0123456789abcdef01234567").unwrap();
        let first = marker("sha256:ab", base);
        assert_eq!(
            first,
            "<!-- quartermaster:build:sha256:ab:0123456789abcdef0123456789abcdef01234567 -->"
        );
        let body = mark("Bumps.\n<!-- quartermaster:pr:1 -->", &first);
        assert_eq!(
            body,
            format!("Bumps.\n<!-- quartermaster:pr:1 -->\n{first}")
        );
        let second = marker("sha256:cd", base);
        let body = mark(&body, &second);
        assert!(body.contains(&second) && !body.contains(&first), "{body}");
    }
}
