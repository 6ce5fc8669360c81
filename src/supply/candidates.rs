//! The versions a unit's lock files newly resolve, direct and transitive: every locked copy
//! whose version the base did not lock under that name, from a registry (local paths and git
//! checkouts have no publish time; the new-source rule watches where they come from).

use crate::changes::{Diff, Ecosystem, Source};
use std::collections::BTreeSet;

/// One newly resolved version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub ecosystem: Ecosystem,
    pub name: String,
    pub version: String,
    pub source: Source,
    /// Whether the working directory's manifest resolves to it.
    pub direct: bool,
    /// The versions of the name the base locked: what it replaces.
    pub replaces: Vec<String>,
}

impl Candidate {
    /// Whether its names compare as PyPI's do.
    pub(crate) fn is_python(&self) -> bool {
        matches!(
            self.ecosystem,
            Ecosystem::Pip | Ecosystem::Poetry | Ecosystem::Uv
        )
    }
}

/// Every version `diff` newly resolves from a registry, in lock order.
pub(crate) fn newly_resolved(diff: &Diff) -> Vec<Candidate> {
    let mut out = Vec::new();
    for eco in &diff.ecosystems {
        let mut seen = BTreeSet::new();
        for copy in &eco.new_copies {
            if matches!(copy.source, Source::Path(_) | Source::Git(_)) {
                continue;
            }
            let Some((before, after)) = eco.states(&copy.name) else {
                continue;
            };
            let replaces: Vec<String> = before.versions().into_iter().map(String::from).collect();
            if replaces.contains(&copy.version)
                || !seen.insert((copy.name.clone(), copy.version.clone()))
            {
                continue;
            }
            let direct = after
                .copies
                .iter()
                .any(|c| c.direct && c.version == copy.version);
            out.push(Candidate {
                ecosystem: eco.ecosystem,
                name: copy.name.clone(),
                version: copy.version.clone(),
                source: copy.source.clone(),
                direct,
                replaces,
            });
        }
    }
    out
}
