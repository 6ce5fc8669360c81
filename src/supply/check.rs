//! One candidate update checked ahead of a plan (the MCP `check_update` tool): the same lookups
//! and the same verdicts the gates apply when the plan runs, so an agent can propose only what
//! will pass.

use super::judge::{self, age_text};
use super::osv::Query;
use super::{Candidate, Screener};
use crate::changes::{Ecosystem, Source};
use crate::policy::describe_age;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::SystemTime;

/// What the gates would say of moving `package` from `current` to `version`.
pub struct Ask<'a> {
    pub ecosystem: Ecosystem,
    pub package: &'a str,
    pub version: &'a str,
    pub current: Option<&'a str>,
}

impl Screener {
    /// The facts and verdicts for `ask`, as JSON for the agent.
    pub async fn check(self: &Arc<Self>, ask: &Ask<'_>) -> Value {
        let name = ask.ecosystem.normalize_name(ask.package);
        let candidate = Candidate {
            ecosystem: ask.ecosystem,
            name: name.clone(),
            version: ask.version.to_string(),
            source: Source::DefaultRegistry,
            direct: true,
            replaces: ask.current.map(String::from).into_iter().collect(),
        };
        let candidates = [candidate];
        let gathered = self.gather(&candidates).await;
        let screening = judge::judge(&self.policy, SystemTime::now(), &candidates, &gathered);
        let checked = screening.checked.first();
        let advisories_of = |version: &str| -> Value {
            let query = Query {
                ecosystem: ask.ecosystem,
                name: name.clone(),
                version: version.to_string(),
            };
            match &gathered.advisories {
                Ok(found) => json!(found.get(&query).cloned().unwrap_or_default()),
                Err(why) => json!({"unavailable": why.to_string()}),
            }
        };
        let facts = gathered.facts.get(&0);
        json!({
            "ecosystem": ask.ecosystem.as_str(),
            "package": name,
            "version": ask.version,
            "current": ask.current,
            "registry_facts": match facts {
                Some(Ok(_)) => Value::Null,
                Some(Err(why)) => json!(format!("the registry could not be asked: {why}")),
                None => json!("not asked: the policy needs no registry facts for it"),
            },
            "published": checked.and_then(|c| c.published.clone()),
            "age": checked.and_then(|c| c.age_seconds).map(|s| age_text(std::time::Duration::from_secs(s))),
            "minimum_release_age": describe_age(self.policy.release_age.minimum),
            "age_verdict": checked.map(|c| c.age.clone()),
            "deprecated_or_yanked": checked.and_then(|c| c.withdrawn.clone()),
            "advisories": {
                "candidate": advisories_of(ask.version),
                "current": ask.current.map(advisories_of),
            },
            "fixes": screening.fixes,
            "would_pass": screening.refusals.is_empty(),
            "refusals": screening.refusals,
            "note": "only this version is checked here; when the plan runs, every version the update newly resolves (transitive ones too) is checked the same way",
        })
    }
}
