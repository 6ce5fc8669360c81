//! Known advisories, from OSV (osv.dev's API or a mirror of it): one `POST /v1/querybatch` names
//! every version asked about, then each advisory it lists comes whole from `GET /v1/vulns/{id}`.
//! Whether a version is affected is decided from the record itself (`affected[].versions` and its
//! `SEMVER`/`ECOSYSTEM` ranges), so a version the service lists but the record does not cover is
//! not refused, and one the record covers is; a record with only git ranges falls back to the
//! service's listing.

mod affected;

use super::client::{FetchError, Http};
use super::lookup::Memo;
use crate::changes::Ecosystem;
pub(crate) use affected::compare;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// The public OSV service.
pub(crate) const DEFAULT_URL: &str = "https://api.osv.dev";
/// Queries per batch, OSV's limit.
const BATCH: usize = 1000;
const MAX_BATCH_ANSWER: usize = 32 * 1024 * 1024;
const MAX_RECORD: usize = 4 * 1024 * 1024;

/// OSV's name of an ecosystem's registry.
pub(crate) fn ecosystem_name(ecosystem: Ecosystem) -> &'static str {
    match ecosystem {
        Ecosystem::Npm | Ecosystem::Yarn | Ecosystem::Pnpm | Ecosystem::Bun => "npm",
        Ecosystem::Pip | Ecosystem::Poetry | Ecosystem::Uv => "PyPI",
        Ecosystem::Cargo => "crates.io",
        Ecosystem::Bundle => "RubyGems",
        Ecosystem::Go => "Go",
    }
}

/// Why the advisory service could not say which advisories affect the versions asked about.
/// Clone, because a failure is kept for the run like a record.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum OsvError {
    #[error("OSV ({base}): {source}")]
    Unreachable {
        base: String,
        #[source]
        source: FetchError,
    },
    #[error("OSV ({base}) answered HTTP {status} to querybatch")]
    BatchStatus { base: String, status: u16 },
    #[error("OSV ({base}) sent an answer that is not JSON: {source}")]
    BatchJson {
        base: String,
        #[source]
        source: Arc<serde_json::Error>,
    },
    #[error("OSV ({base}) answered querybatch without one result per query")]
    BatchShape { base: String },
    #[error("OSV ({base}) answered HTTP {status} for {id}")]
    RecordStatus {
        base: String,
        status: u16,
        id: String,
    },
    #[error("OSV's record of {id} is not JSON: {source}")]
    RecordJson {
        id: String,
        #[source]
        source: Arc<serde_json::Error>,
    },
}

/// A version asked about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Query {
    pub ecosystem: Ecosystem,
    pub name: String,
    pub version: String,
}

impl Query {
    /// The version as OSV writes it (Go versions without their `v`).
    fn osv_version(&self) -> &str {
        match self.ecosystem {
            Ecosystem::Go => self.version.trim_start_matches('v'),
            _ => &self.version,
        }
    }
}

/// One advisory, as a PR and the report state it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Advisory {
    pub id: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    pub summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    pub url: String,
    #[serde(skip)]
    record: Value,
}

impl Advisory {
    /// Whether `ids` names this advisory or one of its aliases.
    pub(crate) fn named_in(&self, ids: &[String]) -> bool {
        ids.iter().any(|i| {
            i.eq_ignore_ascii_case(&self.id)
                || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(i))
        })
    }
}

/// The advisory service of a run, and the records it already sent.
pub struct Osv {
    base: String,
    records: Memo<Advisory, OsvError>,
}

impl Osv {
    /// `base`: the service's URL, without a trailing `/`.
    pub fn new(base: &str) -> Self {
        Self {
            base: base.trim_end_matches('/').to_string(),
            records: Memo::default(),
        }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// The advisories affecting each of `queries`; an error when the service cannot answer.
    pub(crate) async fn affecting(
        &self,
        http: &Http,
        queries: &[Query],
    ) -> Result<BTreeMap<Query, Vec<Arc<Advisory>>>, OsvError> {
        let unique: Vec<&Query> = queries
            .iter()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut listed: BTreeMap<&Query, Vec<String>> = BTreeMap::new();
        for chunk in unique.chunks(BATCH) {
            let ids = self.batch(http, chunk).await?;
            listed.extend(chunk.iter().copied().zip(ids));
        }
        // Every advisory listed for a package is weighed against each of its versions asked about.
        let mut by_package: BTreeMap<(Ecosystem, &str), BTreeSet<&str>> = BTreeMap::new();
        for (q, ids) in &listed {
            let key = (q.ecosystem, q.name.as_str());
            by_package
                .entry(key)
                .or_default()
                .extend(ids.iter().map(String::as_str));
        }
        let mut records: HashMap<&str, Arc<Advisory>> = HashMap::new();
        for id in by_package.values().flatten() {
            if !records.contains_key(id) {
                records.insert(id, self.record(http, id).await?);
            }
        }
        let mut out = BTreeMap::new();
        for (q, ids) in &listed {
            let candidates = &by_package[&(q.ecosystem, q.name.as_str())];
            let hits: Vec<Arc<Advisory>> = candidates
                .iter()
                .filter_map(|id| records.get(id))
                .filter(|a| {
                    affected::affects(&a.record, q, q.osv_version())
                        .unwrap_or_else(|| ids.iter().any(|i| *i == a.id))
                })
                .cloned()
                .collect();
            out.insert((*q).clone(), hits);
        }
        Ok(out)
    }

    /// One `querybatch`: the advisory ids listed for each query, in order.
    async fn batch(&self, http: &Http, queries: &[&Query]) -> Result<Vec<Vec<String>>, OsvError> {
        let body = json!({
            "queries": queries.iter().map(|q| json!({
                "package": {"ecosystem": ecosystem_name(q.ecosystem), "name": q.name},
                "version": q.osv_version(),
            })).collect::<Vec<_>>()
        });
        let url = format!("{}/v1/querybatch", self.base);
        let base = || self.base.clone();
        let fetched = http
            .post_json(&url, &body, MAX_BATCH_ANSWER)
            .await
            .map_err(|source| self.unreachable(source))?;
        if !fetched.ok() {
            return Err(OsvError::BatchStatus {
                base: base(),
                status: fetched.status,
            });
        }
        let answer: Value =
            serde_json::from_slice(&fetched.body).map_err(|e| OsvError::BatchJson {
                base: base(),
                source: Arc::new(e),
            })?;
        let results = answer["results"]
            .as_array()
            .filter(|r| r.len() == queries.len())
            .ok_or_else(|| OsvError::BatchShape { base: base() })?;
        Ok(results
            .iter()
            .map(|r| {
                r["vulns"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v["id"].as_str())
                    .filter(|id| valid_id(id))
                    .map(String::from)
                    .collect()
            })
            .collect())
    }

    /// The full record of `id`, fetched once per run.
    async fn record(&self, http: &Http, id: &str) -> Result<Arc<Advisory>, OsvError> {
        self.records
            .get(id.to_string(), || async {
                let url = format!("{}/v1/vulns/{id}", self.base);
                let fetched = http
                    .get(&url, &[], MAX_RECORD)
                    .await
                    .map_err(|source| self.unreachable(source))?;
                if !fetched.ok() {
                    return Err(OsvError::RecordStatus {
                        base: self.base.clone(),
                        status: fetched.status,
                        id: id.to_string(),
                    });
                }
                let record: Value =
                    serde_json::from_slice(&fetched.body).map_err(|e| OsvError::RecordJson {
                        id: id.to_string(),
                        source: Arc::new(e),
                    })?;
                Ok(advisory(id, record))
            })
            .await
    }

    fn unreachable(&self, source: FetchError) -> OsvError {
        OsvError::Unreachable {
            base: self.base.clone(),
            source,
        }
    }
}

/// Advisory ids are short words (`GHSA-…`, `CVE-…`, `RUSTSEC-…`): anything else is not put in a
/// URL.
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 100
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c))
}

fn advisory(id: &str, record: Value) -> Advisory {
    let text = |v: &Value| {
        v.as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
    };
    let summary = text(&record["summary"])
        .or_else(|| {
            text(&record["details"]).map(|d| d.lines().next().unwrap_or_default().to_string())
        })
        .unwrap_or_else(|| "no summary given".into());
    let severity = text(&record["database_specific"]["severity"])
        .map(|s| s.to_lowercase())
        .or_else(|| {
            record["severity"]
                .as_array()?
                .iter()
                .find_map(|s| Some(format!("{} {}", text(&s["type"])?, text(&s["score"])?)))
        });
    let aliases = record["aliases"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a.as_str())
        .filter(|a| valid_id(a))
        .map(String::from)
        .collect();
    Advisory {
        id: id.to_string(),
        aliases,
        summary: summary.chars().take(300).collect(),
        severity: severity.map(|s| s.chars().take(80).collect()),
        url: format!("https://osv.dev/vulnerability/{id}"),
        record,
    }
}

#[cfg(test)]
mod tests;
