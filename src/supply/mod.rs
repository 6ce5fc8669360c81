//! Supply-chain gates: the repository's policy applied to every version a unit's lock files newly
//! resolve, direct and transitive, with facts from the registries the unit's configuration points
//! at (publish time, deprecation, yanks) and from OSV (known advisories); plus the release notes a
//! reviewer reads. Lookups run in Quartermaster, not in the sandbox, bounded in time, size and
//! number ([`client`]).
//!
//! - [`candidates`]: what a unit newly resolves;
//! - [`lookup`]: what its registry says of a version;
//! - [`osv`]: which advisories affect a version;
//! - [`judge`]: the policy's verdicts and refusals (pure);
//! - [`notes`] and [`text`]: release notes and the PR's security and notes sections;
//! - [`registries`] and [`carry`]: the operator's registry configuration, found, carried into
//!   units and asked.

pub(crate) mod candidates;
pub(crate) mod carry;
pub(crate) mod check;
pub(crate) mod client;
pub(crate) mod judge;
pub(crate) mod lookup;
pub(crate) mod notes;
pub(crate) mod osv;
pub(crate) mod registries;
pub(crate) mod text;

pub(crate) use candidates::{Candidate, newly_resolved};
pub use judge::{Checked, Fix, PackageRefusal, Screening};

use crate::policy::Policy;
pub use client::ClientError;
use client::Http;
use judge::Gathered;
use notes::{Found, NotesApis, Wanted};
use osv::{Osv, Query};
use registries::Registries;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::SystemTime;

/// The host of a URL as written (`https://user@host:8080/x` → `host:8080`).
pub(crate) fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority.rsplit('@').next().unwrap_or_default()
}

/// Release notes of one direct update.
#[derive(Debug, Clone)]
pub struct Notes {
    pub package: String,
    pub from: Option<String>,
    pub to: String,
    pub found: Found,
}

/// Everything a run's gates need: the policy, where to ask, and what was already answered.
pub struct Screener {
    pub policy: Arc<Policy>,
    pub registries: Registries,
    pub osv: Osv,
    pub notes: NotesApis,
    http: Http,
    cache: lookup::Cache,
    /// The runtime the lookups run on (the engine's workers wait for them).
    runtime: tokio::runtime::Handle,
}

impl std::fmt::Debug for Screener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screener")
            .field("policy", &self.policy.source)
            .field("osv", &self.osv.base())
            .finish_non_exhaustive()
    }
}

impl Screener {
    pub fn new(
        policy: Arc<Policy>,
        registries: Registries,
        osv_url: &str,
        notes: NotesApis,
        runtime: tokio::runtime::Handle,
    ) -> Result<Self, ClientError> {
        Ok(Self {
            policy,
            registries,
            osv: Osv::new(osv_url),
            notes,
            http: Http::new()?,
            cache: lookup::Cache::default(),
            runtime,
        })
    }

    /// Screens a unit's newly resolved versions; blocks the calling thread (a worker, not one of
    /// the runtime's) until the lookups are done.
    pub(crate) fn screen(self: &Arc<Self>, candidates: Vec<Candidate>) -> (Screening, Vec<Notes>) {
        let me = self.clone();
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.runtime.spawn(async move {
            let screening = me.screen_async(&candidates).await;
            let _ = tx.send(screening);
        });
        rx.recv().unwrap_or_else(|_| {
            let mut failed = Screening::default();
            failed.refusals.push(PackageRefusal {
                code: crate::finding::Code::PolicyAdvisoriesUnavailable,
                package: String::new(),
                version: String::new(),
                message: "the lookups stopped before they finished".into(),
            });
            (failed, Vec::new())
        })
    }

    async fn screen_async(self: &Arc<Self>, candidates: &[Candidate]) -> (Screening, Vec<Notes>) {
        let gathered = self.gather(candidates).await;
        let screening = judge::judge(&self.policy, SystemTime::now(), candidates, &gathered);
        let notes = if screening.refusals.is_empty() && self.policy.release_notes.enabled {
            self.release_notes(candidates, &gathered).await
        } else {
            Vec::new()
        };
        (screening, notes)
    }

    /// Asks the registries (where the policy needs their answer) and OSV, at once.
    pub(crate) async fn gather(self: &Arc<Self>, candidates: &[Candidate]) -> Gathered {
        let policy = &self.policy;
        let mut tasks = tokio::task::JoinSet::new();
        for (i, c) in candidates.iter().enumerate() {
            let ages = !policy.release_age.minimum.is_zero()
                && !policy.release_age.exclude.matches(&c.name, c.is_python());
            let notes = c.direct && policy.release_notes.enabled;
            if !(ages || policy.deprecated.block || notes) {
                continue;
            }
            let (me, c) = (self.clone(), c.clone());
            tasks.spawn(async move {
                let endpoint = me.registries.endpoint(c.ecosystem, &c.name, &c.source);
                let facts =
                    lookup::facts(&me.http, &me.cache, &endpoint, &c.name, &c.version).await;
                (i, facts)
            });
        }
        let queries: Vec<Query> = candidates
            .iter()
            .flat_map(|c| {
                std::iter::once(c.version.clone())
                    .chain(c.replaces.iter().cloned())
                    .map(|version| Query {
                        ecosystem: c.ecosystem,
                        name: c.name.clone(),
                        version,
                    })
            })
            .collect();
        let advisories = if queries.is_empty() {
            Ok(Default::default())
        } else {
            self.osv.affecting(&self.http, &queries).await
        };
        let mut facts = HashMap::new();
        while let Some(done) = tasks.join_next().await {
            if let Ok((i, result)) = done {
                facts.insert(i, result);
            }
        }
        Gathered { facts, advisories }
    }

    /// The release notes of each direct update.
    async fn release_notes(&self, candidates: &[Candidate], gathered: &Gathered) -> Vec<Notes> {
        let mut out = Vec::new();
        for (i, c) in candidates.iter().enumerate().filter(|(_, c)| c.direct) {
            let from = c.replaces.last().cloned();
            let found = match gathered.facts.get(&i) {
                Some(Ok(facts)) => {
                    let endpoint = self.registries.endpoint(c.ecosystem, &c.name, &c.source);
                    match lookup::links(&self.http, &self.cache, &endpoint, &c.name, facts).await {
                        Ok((repository, changelog)) => {
                            let wanted = Wanted {
                                ecosystem: c.ecosystem,
                                name: &c.name,
                                from: from.as_deref(),
                                to: &c.version,
                                repository: repository.as_deref(),
                                changelog: changelog.as_deref(),
                            };
                            notes::find(&self.http, &self.notes, &wanted).await
                        }
                        Err(why) => {
                            Found::Unavailable(format!("the registry could not be asked: {why}"))
                        }
                    }
                }
                Some(Err(why)) => {
                    Found::Unavailable(format!("the registry could not be asked: {why}"))
                }
                None => Found::Unavailable("the registry was not asked".into()),
            };
            out.push(Notes {
                package: c.name.clone(),
                from,
                to: c.version.clone(),
                found,
            });
        }
        out
    }
}
