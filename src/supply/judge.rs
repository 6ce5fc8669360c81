//! The policy applied to what the registries and the advisory database said of a unit's newly
//! resolved versions: pure, so that every verdict and message is tested without a network.

use super::candidates::Candidate;
use super::lookup::{Facts, LookupError};
use super::osv::{Advisory, OsvError, Query};
use crate::finding::{Code, clip};
use crate::policy::{Policy, UnknownPublishTime, describe_age};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// What was learned for a unit's candidates.
pub(crate) struct Gathered {
    /// Per candidate index: the registry's facts, or why there are none. Absent: not asked.
    pub facts: HashMap<usize, Result<Facts, LookupError>>,
    /// The advisories affecting each version asked about, or why OSV could not say.
    pub advisories: Result<BTreeMap<Query, Vec<Arc<Advisory>>>, OsvError>,
}

/// The verdict on one candidate, as the report records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Checked {
    pub ecosystem: String,
    pub package: String,
    pub version: String,
    pub direct: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    /// Seconds between the publication and the check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_seconds: Option<u64>,
    /// `old enough`, `exempt`, `no minimum`, `too new`, `too new, fixes an advisory`,
    /// `unknown age`, `unknown age, allowed`.
    pub age: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub advisories: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) withdrawn: Option<String>,
}

/// A refusal: the code, the package and version, and the message naming them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageRefusal {
    pub code: Code,
    pub package: String,
    pub version: String,
    pub message: String,
}

/// Advisories an update fixes: the old version was affected, the new one is not.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fix {
    pub package: String,
    pub from: String,
    pub to: String,
    pub advisory: Advisory,
}

/// Everything the gates decided for one unit.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Screening {
    pub checked: Vec<Checked>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refusals: Vec<PackageRefusal>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<Fix>,
    /// Why advisories were not checked, when the policy let the unit go on without them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) advisories_unchecked: Option<String>,
}

impl Screening {
    /// Whether the update fixes a known advisory (its PR is a security update).
    pub(crate) fn is_security_fix(&self) -> bool {
        !self.fixes.is_empty()
    }
}

/// Applies `policy` at `now` to `candidates` and what was `gathered` about them.
pub(crate) fn judge(
    policy: &Policy,
    now: SystemTime,
    candidates: &[Candidate],
    gathered: &Gathered,
) -> Screening {
    let mut out = Screening::default();
    let advisories = match &gathered.advisories {
        Ok(found) => Some(found),
        Err(why) if policy.advisories.block => {
            out.refusals.push(PackageRefusal {
                code: Code::PolicyAdvisoriesUnavailable,
                package: String::new(),
                version: String::new(),
                message: format!(
                    "known advisories could not be checked ({}), and the policy refuses what it cannot check (`advisories.block = true`); the unit is refused until the advisory database answers",
                    clip_long(&why.to_string())
                ),
            });
            None
        }
        Err(why) => {
            out.advisories_unchecked = Some(clip_long(&why.to_string()));
            None
        }
    };
    for (i, c) in candidates.iter().enumerate() {
        let affecting = |version: &str| -> Vec<Arc<Advisory>> {
            let query = Query {
                ecosystem: c.ecosystem,
                name: c.name.clone(),
                version: version.to_string(),
            };
            advisories
                .and_then(|found| found.get(&query))
                .map(|list| {
                    list.iter()
                        .filter(|a| !a.named_in(&policy.advisories.ignore))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default()
        };
        let now_affected = affecting(&c.version);
        let mut fixes = Vec::new();
        for from in &c.replaces {
            for advisory in affecting(from) {
                let fixed_here = !now_affected.iter().any(|a| a.id == advisory.id);
                if fixed_here && !fixes.iter().any(|f: &Fix| f.advisory.id == advisory.id) {
                    fixes.push(Fix {
                        package: c.name.clone(),
                        from: from.clone(),
                        to: c.version.clone(),
                        advisory: (*advisory).clone(),
                    });
                }
            }
        }
        let facts = gathered.facts.get(&i);
        let checked = verdict(
            policy,
            now,
            c,
            facts,
            &now_affected,
            !fixes.is_empty(),
            &mut out.refusals,
        );
        out.checked.push(checked);
        out.fixes.extend(fixes);
    }
    out
}

/// One candidate's verdict; its refusals go to `refusals`.
fn verdict(
    policy: &Policy,
    now: SystemTime,
    c: &Candidate,
    facts: Option<&Result<Facts, LookupError>>,
    affected: &[Arc<Advisory>],
    fixes_advisory: bool,
    refusals: &mut Vec<PackageRefusal>,
) -> Checked {
    let refuse = |refusals: &mut Vec<PackageRefusal>, code: Code, message: String| {
        refusals.push(PackageRefusal {
            code,
            package: c.name.clone(),
            version: c.version.clone(),
            message,
        });
    };
    let name = format!("`{}` {}", clip(&c.name), clip(&c.version));
    if policy.advisories.block && !affected.is_empty() {
        let ids: Vec<String> = affected.iter().map(|a| describe_advisory(a)).collect();
        refuse(
            refusals,
            Code::PolicyVulnerable,
            format!(
                "{name} has known advisories: {}; choose a version without them, or accept one in `advisories.ignore`",
                ids.join(", ")
            ),
        );
    }
    let known = facts.and_then(|f| f.as_ref().ok());
    let withdrawn = known
        .and_then(|f| f.withdrawn.as_ref())
        .map(|w| match &w.message {
            Some(m) => format!("{} ({})", w.how, short(m)),
            None => w.how.to_string(),
        });
    if policy.deprecated.block
        && let Some(how) = &withdrawn
    {
        refuse(
            refusals,
            Code::PolicyDeprecated,
            format!(
                "{name} is {how} by its registry; choose another version, or set `deprecated.block = false`"
            ),
        );
    }
    let published = known.and_then(|f| f.published);
    let age = published.map(|p| now.duration_since(p).unwrap_or(Duration::ZERO));
    let age_verdict = age_verdict(policy, c, (published, age), facts, fixes_advisory, refusals);
    Checked {
        ecosystem: c.ecosystem.as_str().to_string(),
        package: c.name.clone(),
        version: c.version.clone(),
        direct: c.direct,
        published: published.map(|p| humantime::format_rfc3339_seconds(p).to_string()),
        age_seconds: age.map(|a| a.as_secs()),
        age: age_verdict,
        advisories: affected.iter().map(|a| a.id.clone()).collect(),
        withdrawn,
    }
}

/// The release-age gate on one candidate published at `published`, `age` ago (both `None` when
/// the registry did not say); its refusal goes to `refusals`.
fn age_verdict(
    policy: &Policy,
    c: &Candidate,
    (published, age): (Option<SystemTime>, Option<Duration>),
    facts: Option<&Result<Facts, LookupError>>,
    fixes_advisory: bool,
    refusals: &mut Vec<PackageRefusal>,
) -> String {
    let minimum = policy.release_age.minimum;
    let name = format!("`{}` {}", clip(&c.name), clip(&c.version));
    let mut refuse = |code: Code, message: String| {
        refusals.push(PackageRefusal {
            code,
            package: c.name.clone(),
            version: c.version.clone(),
            message,
        });
    };
    match age {
        _ if minimum.is_zero() => "no minimum".to_string(),
        _ if policy.release_age.exclude.matches(&c.name, c.is_python()) => "exempt".to_string(),
        Some(age) if age >= minimum => "old enough".to_string(),
        Some(_) if fixes_advisory => "too new, fixes an advisory".to_string(),
        Some(age) => {
            let at = published.map(|p| humantime::format_rfc3339_seconds(p).to_string());
            refuse(
                Code::PolicyReleaseTooNew,
                format!(
                    "{name} was published {} ago ({}); the policy's minimum release age is {}: it can be taken in {}, or the package exempted with `release-age.exclude`",
                    age_text(age),
                    at.unwrap_or_default(),
                    describe_age(minimum),
                    age_text(minimum - age),
                ),
            );
            "too new".to_string()
        }
        None if policy.release_age.unknown_publish_time == UnknownPublishTime::Allow => {
            "unknown age, allowed".to_string()
        }
        None if fixes_advisory => "unknown age, fixes an advisory".to_string(),
        None => {
            let why = match facts {
                Some(Err(why)) => clip_long(&why.to_string()),
                _ => "the registry gives no publish time".to_string(),
            };
            refuse(
                Code::PolicyReleaseAgeUnknown,
                format!(
                    "the publish time of {name} could not be learned ({why}), and the policy refuses versions of unknown age; set `release-age.unknown-publish-time = \"allow\"` to let them through"
                ),
            );
            "unknown age".to_string()
        }
    }
}

/// `GHSA-… (high)`.
pub(crate) fn describe_advisory(a: &Advisory) -> String {
    match &a.severity {
        Some(s) if !s.contains(' ') => format!("{} ({s})", a.id),
        _ => a.id.clone(),
    }
}

/// An age in its two largest units: `2 days 4 hours`, `35 minutes`.
pub(crate) fn age_text(age: Duration) -> String {
    let secs = age.as_secs();
    let units = [
        (86_400, "day"),
        (3600, "hour"),
        (60, "minute"),
        (1, "second"),
    ];
    let mut parts = Vec::new();
    let mut rest = secs;
    for (size, unit) in units {
        let n = rest / size;
        if n > 0 {
            parts.push(format!("{n} {unit}{}", if n == 1 { "" } else { "s" }));
            rest -= n * size;
        }
        if parts.len() == 2 || (!parts.is_empty() && n == 0) {
            break;
        }
    }
    if parts.is_empty() {
        "0 seconds".to_string()
    } else {
        parts.join(" ")
    }
}

/// A registry's message, one line and short.
fn short(text: &str) -> String {
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    clip(line.trim())
}

/// A reason from a registry or a service, one line and bounded.
fn clip_long(text: &str) -> String {
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(300)
        .collect();
    line.trim().to_string()
}

#[cfg(test)]
mod tests;
