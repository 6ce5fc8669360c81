//! The repository's policy: `.quartermaster.toml`, read from the tip of the remote's default
//! branch (the commit units start from), or from `--policy FILE`. The agent proposes; the policy
//! disposes: nothing in a plan, and nothing a command writes, can relax it.
//!
//! ```toml
//! [release-age]
//! minimum = "3 days"              # "0" turns the gate off
//! exclude = ["@acme/*", "lodash"] # package-name globs exempt from the age gate
//! unknown-publish-time = "refuse" # or "allow"
//!
//! [advisories]
//! block = true                    # refuse versions with known advisories; fail closed
//! ignore = ["GHSA-xxxx-xxxx-xxxx"]
//!
//! [deprecated]
//! block = true                    # refuse deprecated or yanked versions
//!
//! [release-notes]
//! enabled = true
//!
//! [automerge]
//! update-types = ["patch"]
//! reviewers = ["octocat"]
//! assignees = ["octocat"]
//! team-reviewers = ["acme/platform"]
//! ```
//!
//! Unknown keys and bad values are refused when Quartermaster starts, naming the key and what is
//! allowed ([`PolicyError`]).

mod load;
mod parse;

pub(crate) use load::{POLICY_FILE, from_file, from_tree};
pub use parse::parse;

use crate::plan::UpdateType;
use globset::GlobSet;
use serde::Serialize;
use std::time::Duration;

/// The release age every newly resolved version must have, when there is no policy file.
pub(crate) const DEFAULT_MINIMUM_AGE: Duration = Duration::from_secs(3 * 24 * 3600);

/// The policy in force, and where it came from.
#[derive(Debug, Clone, Serialize)]
pub struct Policy {
    /// Where the policy was read: `.quartermaster.toml at main (1a2b3c4d)`, a file, or the
    /// defaults.
    pub source: String,
    pub release_age: ReleaseAge,
    pub advisories: Advisories,
    pub deprecated: Deprecated,
    pub(crate) release_notes: ReleaseNotes,
    /// Parsed and validated here; what a forge does with it is the engine's business.
    pub automerge: Automerge,
}

/// `[release-age]`.
#[derive(Debug, Clone, Serialize)]
pub struct ReleaseAge {
    /// How long ago a newly resolved version must have been published; zero turns the gate off.
    #[serde(serialize_with = "serialize_age")]
    pub minimum: Duration,
    /// Package names exempt from the age gate (advisories and deprecations still apply).
    pub(crate) exclude: NamePatterns,
    /// What a version whose publish time cannot be learned does.
    pub(crate) unknown_publish_time: UnknownPublishTime,
}

/// `release-age.unknown-publish-time`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum UnknownPublishTime {
    /// The unit is refused (`policy.release_age_unknown`).
    Refuse,
    /// The version passes the age gate; the report says its age is unknown.
    Allow,
}

/// `[advisories]`.
#[derive(Debug, Clone, Serialize)]
pub struct Advisories {
    /// Refuse a newly resolved version with a known advisory, and refuse every unit when the
    /// advisory database cannot be reached.
    pub block: bool,
    /// Advisory ids (or aliases) the repository has accepted; never a reason to refuse.
    pub ignore: Vec<String>,
}

/// `[deprecated]`.
#[derive(Debug, Clone, Serialize)]
pub struct Deprecated {
    /// Refuse a newly resolved version its registry marks deprecated or yanked.
    pub block: bool,
}

/// `[release-notes]`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ReleaseNotes {
    /// Put each direct update's release notes in its PR.
    pub(crate) enabled: bool,
}

/// `[automerge]`: which PRs may merge themselves once their checks pass, and who reviews them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Automerge {
    /// Update types whose PRs may be merged automatically; empty (the default) merges none.
    pub update_types: Vec<UpdateType>,
    /// Forge user names asked to review each PR.
    pub reviewers: Vec<String>,
    /// Forge user names each PR is assigned to.
    pub assignees: Vec<String>,
    /// Teams asked to review each PR (`org/team` on GitHub, a group path on GitLab).
    pub team_reviewers: Vec<String>,
}

impl Automerge {
    /// Whether a PR whose updates are all of these types may be merged automatically.
    pub fn allows(&self, types: &[UpdateType]) -> bool {
        !types.is_empty() && types.iter().all(|t| self.update_types.contains(t))
    }
}

/// Package-name globs (`@acme/*`, `lodash`); a plain name matches that package.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(transparent)]
pub(crate) struct NamePatterns {
    patterns: Vec<String>,
    #[serde(skip)]
    exact: GlobSet,
    /// The same globs PEP 503-normalised, for Python names.
    #[serde(skip)]
    python: GlobSet,
}

impl NamePatterns {
    /// Whether `name` matches a pattern; `python` names match case- and separator-insensitively,
    /// as PyPI compares them.
    pub(crate) fn matches(&self, name: &str, python: bool) -> bool {
        if python {
            self.python.is_match(normalize_python(name))
        } else {
            self.exact.is_match(name)
        }
    }

    pub(crate) fn patterns(&self) -> &[String] {
        &self.patterns
    }
}

/// PEP 503: lower case, runs of `-`, `_` and `.` as one `-`.
fn normalize_python(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            source: "the defaults (no .quartermaster.toml on the default branch)".into(),
            release_age: ReleaseAge {
                minimum: DEFAULT_MINIMUM_AGE,
                exclude: NamePatterns::default(),
                unknown_publish_time: UnknownPublishTime::Refuse,
            },
            advisories: Advisories {
                block: true,
                ignore: Vec::new(),
            },
            deprecated: Deprecated { block: true },
            release_notes: ReleaseNotes { enabled: true },
            automerge: Automerge::default(),
        }
    }
}

impl Policy {
    /// What the policy asks, in one line for the start-up log.
    pub fn summary(&self) -> String {
        let age = &self.release_age;
        let mut parts = vec![if age.minimum.is_zero() {
            "no minimum release age".to_string()
        } else {
            format!("minimum release age {}", describe_age(age.minimum))
        }];
        if !age.exclude.patterns().is_empty() {
            parts.push(format!("exempt: {}", age.exclude.patterns().join(", ")));
        }
        if age.unknown_publish_time == UnknownPublishTime::Allow {
            parts.push("unknown publish times allowed".into());
        }
        parts.push(if self.advisories.block {
            "known advisories refused".into()
        } else {
            "advisories reported, not refused".into()
        });
        parts.push(if self.deprecated.block {
            "deprecated and yanked versions refused".into()
        } else {
            "deprecated and yanked versions allowed".into()
        });
        format!("policy from {}: {}", self.source, parts.join("; "))
    }
}

/// `3 days`, `36 hours`, `90 minutes`, `0`.
pub(crate) fn describe_age(age: Duration) -> String {
    let secs = age.as_secs();
    let plural = |n: u64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    match secs {
        0 => "0".to_string(),
        s if s % 86_400 == 0 => plural(s / 86_400, "day"),
        s if s % 3600 == 0 => plural(s / 3600, "hour"),
        s if s % 60 == 0 => plural(s / 60, "minute"),
        s => plural(s, "second"),
    }
}

fn serialize_age<S: serde::Serializer>(age: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&describe_age(*age))
}

/// A policy file Quartermaster refuses to run with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// The file is not TOML.
    #[error("{origin}: not valid TOML: {message}")]
    Syntax { origin: String, message: String },
    /// A key the policy does not know (often a typo): refused rather than ignored, so that a
    /// misspelt setting never silently falls back to a default.
    #[error("{origin}: unknown key `{key}`{suggestion}; allowed here: {allowed}")]
    UnknownKey {
        origin: String,
        key: String,
        suggestion: String,
        allowed: String,
    },
    /// A value of the wrong type or outside what the key accepts.
    #[error("{origin}: `{key}` {problem}")]
    BadValue {
        origin: String,
        key: String,
        problem: String,
    },
    /// The file could not be read.
    #[error("{origin}: {message}")]
    Unreadable { origin: String, message: String },
}

impl crate::hint::Hint for PolicyError {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some(match self {
            PolicyError::Unreadable { .. } => {
                "the policy must be a regular file of at most 64 KiB; fix it on the default branch, or point --policy at another file"
            }
            _ => {
                "fix .quartermaster.toml on the default branch (or the --policy file); Quartermaster's docs/policy.md lists every key, its values and its default"
            }
        }.into())
    }
}

#[cfg(test)]
mod tests;
