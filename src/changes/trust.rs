//! Where a lock file may newly resolve from: the origins its base used, each ecosystem's public
//! registry, the registry the unit's configuration names, and the hosts the operator allows. A
//! URL tools could read as another host than Quartermaster does is never admitted.

use super::diff::EcosystemDiff;
use super::rules::{ChangeFinding, Code, finding};
use super::source::{Origin, default_host, is_public, registry_host};
use super::{Ecosystem, Source};
use std::collections::{BTreeMap, HashSet};

/// Longest part of a lock file's source quoted in a message.
const MAX_SHOWN_SOURCE: usize = 200;

/// Where a lock may newly resolve from, besides the origins its base already used: each
/// ecosystem's public registry, the registry the unit's configuration resolves to, and the hosts
/// the operator allows.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    /// Registry or git hosts the operator allows (`--registry-host`), as hosts or URLs.
    pub(crate) hosts: Vec<String>,
    /// Per ecosystem, the registry host the unit's configuration names; entries a lock records
    /// without a URL come from it (from the tools' default registry when there is none).
    pub configured: BTreeMap<Ecosystem, String>,
}

impl Trust {
    /// Operator-allowed hosts only, as given (`host[:port]` or a URL).
    #[cfg(test)]
    pub(crate) fn hosts(hosts: &[String]) -> Trust {
        Trust {
            hosts: hosts.to_vec(),
            ..Trust::default()
        }
    }

    /// The registry entries without a URL come from.
    fn default_origin(&self, ecosystem: Ecosystem) -> Origin {
        self.configured
            .get(&ecosystem)
            .map(String::as_str)
            .or(default_host(ecosystem))
            .map_or(Origin::Default, |h| Origin::Registry(h.to_string()))
    }

    fn resolve(&self, ecosystem: Ecosystem, origin: Origin) -> Origin {
        match origin {
            Origin::Default => self.default_origin(ecosystem),
            other => other,
        }
    }

    /// The operator's hosts, as hosts.
    fn allowed(&self) -> HashSet<String> {
        self.hosts
            .iter()
            .filter_map(|h| {
                if h.contains("://") {
                    registry_host(h).ok()
                } else {
                    Some(h.to_lowercase())
                }
            })
            .collect()
    }

    /// Every copy the commands brought in must come from where the base's did, or from a
    /// registry that is trusted anyway; a URL that tools could read as another host than
    /// Quartermaster does never is.
    pub(super) fn check(&self, eco: &EcosystemDiff, findings: &mut Vec<ChangeFinding>) {
        let (trust, allowed) = (self, self.allowed());
        let e = eco.ecosystem;
        let lock = eco.lock_file.as_deref().unwrap_or("the lock file");
        let base: HashSet<Origin> = eco
            .base_origins
            .iter()
            .map(|o| trust.resolve(e, o.clone()))
            .collect();
        for copy in &eco.new_copies {
            let origin = trust.resolve(e, copy.source.origin());
            let shown: String = match &copy.source {
                Source::Path(path) => path.chars().take(MAX_SHOWN_SOURCE).collect(),
                other => other.to_string().chars().take(MAX_SHOWN_SOURCE).collect(),
            };
            let message = match &origin {
                Origin::Invalid(why) => format!(
                    "`{}` {} resolves from `{shown}` in {lock}, which is not a URL every tool reads as the same host ({why}): the unit is denied; such a URL is never published",
                    copy.name, copy.version
                ),
                _ if base.contains(&origin)
                    || origin == trust.default_origin(e)
                    || is_public(e, &copy.source)
                    || origin.host().is_some_and(|h| allowed.contains(h)) =>
                {
                    continue;
                }
                Origin::Path(_) => format!(
                    "`{}` {} now resolves from the path `{shown}` in {lock}, which the base lock file did not use: the unit is denied; a lock entry may only come from a directory the base already resolved from",
                    copy.name, copy.version
                ),
                _ => format!(
                    "`{}` {} now resolves from {origin} ({shown}) in {lock}, which the base lock file did not use and the configuration does not allow: the unit is denied; allow that host only if it is trusted",
                    copy.name, copy.version
                ),
            };
            findings.push(finding(
                Code::ChangeNewSource,
                Some(e),
                Some(&copy.name),
                message,
            ));
        }
    }
}
