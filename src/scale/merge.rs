//! `quartermaster report merge A.json B.json ... -o all.json`: shard reports back into one.
//!
//! The merged report is the report of the plan as if run at once, apart from timings: the
//! actions in plan order, the summary and exit code recomputed by [`RunReport::tally`], the
//! validation kept (every shard validated the same plan). Reports of different plans, of
//! different settings, or that ran one action twice are refused: their sum would describe no run.
//! A merge that lacks some of the plan's actions (a shard job died before writing its report)
//! keeps `only` on the indices it has, and its exit code is at least 1.
//!
//! Timings: `started_at` is the earliest start and `finished_at` the latest end, so their
//! difference is the wall time; `total_ms` is the sum of the shards' totals (the work done), and
//! `overhead_ms` what of it was not commands and tests; `peak_memory_kb` is the largest shard's.

use crate::report::{IsolationReport, RunReport, Timing, ValidationReport};
use crate::sandbox::Level;
use std::collections::BTreeMap;
use std::path::Path;

/// Why reports cannot be merged.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MergeError {
    #[error("nothing to merge")]
    NoReports,
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not a Quartermaster report: {source}")]
    Parse {
        path: String,
        source: serde_json::Error,
    },
    #[error("{path} does not say which plan it ran (no `plan_sha256`)")]
    NoPlanDigest { path: String },
    #[error("{path} is a report of another plan than {first}: plan sha256 {theirs}, not {ours}")]
    DifferentPlan {
        first: String,
        path: String,
        ours: String,
        theirs: String,
    },
    #[error("`{field}` differs: {theirs} in {path}, {ours} in {first}")]
    Inconsistent {
        first: String,
        path: String,
        field: &'static str,
        ours: String,
        theirs: String,
    },
    #[error("{path} and {other} both ran action {index}")]
    Overlap {
        other: String,
        path: String,
        index: usize,
    },
    #[error("{path}: action {index} is outside {why}")]
    OutOfShard {
        path: String,
        index: usize,
        why: String,
    },
    #[error("{path}: `{field}` is not an RFC 3339 time: {value:?}")]
    Time {
        path: String,
        field: &'static str,
        value: String,
    },
}

impl crate::hint::Hint for MergeError {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some(match self {
            MergeError::NoReports => {
                "name the shard reports: report merge A.json B.json -o all.json"
            }
            MergeError::Read { .. } | MergeError::Parse { .. } | MergeError::Time { .. } => {
                "pass the JSON reports that `quartermaster run --report` wrote"
            }
            MergeError::NoPlanDigest { .. } => {
                "it comes from a Quartermaster that cannot shard: run every shard with the same, newer version"
            }
            MergeError::DifferentPlan { .. } => {
                "merge the shards of one plan only; each shard runs the same plan file"
            }
            MergeError::Inconsistent { .. } => {
                "shards of one run share it: run every shard with the same version, mission, forge and settings"
            }
            MergeError::Overlap { .. } | MergeError::OutOfShard { .. } => {
                "give each shard's report once, from shards that `quartermaster shards` cut from this plan"
            }
        }.into())
    }
}

/// Reads one report.
pub(crate) fn read(path: &Path) -> Result<RunReport, MergeError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| MergeError::Read {
        path: name.clone(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|source| MergeError::Parse { path: name, source })
}

/// Merges reports, each named (by its path) for the messages.
pub(crate) fn merge(reports: Vec<(String, RunReport)>) -> Result<RunReport, MergeError> {
    let Some((first_name, first)) = reports.first() else {
        return Err(MergeError::NoReports);
    };
    let mut ran: BTreeMap<usize, &str> = BTreeMap::new();
    for (name, report) in &reports {
        same_run(first_name, first, name, report)?;
        for index in coverage(name, report)? {
            if let Some(other) = ran.insert(index, name) {
                return Err(MergeError::Overlap {
                    other: other.to_string(),
                    path: name.clone(),
                    index,
                });
            }
        }
    }
    let complete = ran.keys().copied().eq(0..first.plan_actions);
    let mut merged = first.clone();
    merged.only = (!complete).then(|| ran.keys().copied().collect());
    merged.started_at = bound(&reports, "started_at", |r| &r.started_at, false)?;
    merged.finished_at = bound(&reports, "finished_at", |r| &r.finished_at, true)?;
    merged.error = joined(&reports, |r| r.error.as_deref(), true);
    merged.hint = joined(&reports, |r| r.hint.as_deref(), false);
    merged.isolation = weakest(&reports);
    merged.forge_requests = reports.iter().map(|(_, r)| r.forge_requests).sum();
    merged.timing = Timing {
        total_ms: reports.iter().map(|(_, r)| r.timing.total_ms).sum(),
        peak_memory_kb: reports
            .iter()
            .map(|(_, r)| r.timing.peak_memory_kb)
            .max()
            .unwrap_or(0),
        ..Timing::default()
    };
    merged.dashboard = reports.iter().find_map(|(_, r)| r.dashboard.clone());
    merged.upkeep = reports.iter().flat_map(|(_, r)| r.upkeep.clone()).collect();
    merged.actions = reports.into_iter().flat_map(|(_, r)| r.actions).collect();
    merged.actions.sort_by_key(|a| a.index);
    merged.tally();
    if !complete {
        merged.exit_code = merged.exit_code.max(1);
    }
    Ok(merged)
}

/// A setting every shard of one run shares, as text for the message.
type Field = fn(&RunReport) -> String;

/// Refuses a report that is not a shard of the same run as the first.
fn same_run(
    first_name: &str,
    first: &RunReport,
    name: &str,
    report: &RunReport,
) -> Result<(), MergeError> {
    let digest = |n: &str, r: &RunReport| {
        r.plan_sha256
            .clone()
            .ok_or_else(|| MergeError::NoPlanDigest {
                path: n.to_string(),
            })
    };
    let (ours, theirs) = (digest(first_name, first)?, digest(name, report)?);
    if ours != theirs {
        return Err(MergeError::DifferentPlan {
            first: first_name.to_string(),
            path: name.to_string(),
            ours,
            theirs,
        });
    }
    let fields: [(&'static str, Field); 7] = [
        ("version", |r| r.version.to_string()),
        ("quartermaster", |r| r.quartermaster.clone()),
        ("mission", |r| r.mission.clone()),
        ("forge", |r| r.forge.to_string()),
        ("dry_run", |r| r.dry_run.to_string()),
        ("plan_actions", |r| r.plan_actions.to_string()),
        ("validation", |r| validation_text(&r.validation)),
    ];
    for (field, value) in fields {
        let (ours, theirs) = (value(first), value(report));
        if ours != theirs || (field == "validation" && first.validation != report.validation) {
            return Err(MergeError::Inconsistent {
                first: first_name.to_string(),
                path: name.to_string(),
                field,
                ours,
                theirs,
            });
        }
    }
    Ok(())
}

fn validation_text(v: &ValidationReport) -> String {
    let valid = if v.valid { "valid" } else { "invalid" };
    format!(
        "{valid} with {} errors and {} warnings",
        v.errors.len(),
        v.warnings.len()
    )
}

/// The indices a report stands for, checked against the plan and against its own actions. An
/// invalid plan ran nothing, whatever `--only` said.
fn coverage(name: &str, report: &RunReport) -> Result<Vec<usize>, MergeError> {
    if !report.validation.valid {
        return Ok(Vec::new());
    }
    let count = report.plan_actions;
    let covered = report.only.clone().unwrap_or_else(|| (0..count).collect());
    let outside = |index: usize, why: String| MergeError::OutOfShard {
        path: name.to_string(),
        index,
        why,
    };
    if let Some(&index) = covered.iter().find(|&&i| i >= count) {
        return Err(outside(index, format!("the plan's {count} actions")));
    }
    if let Some(a) = report.actions.iter().find(|a| !covered.contains(&a.index)) {
        return Err(outside(
            a.index,
            "the actions the report says it ran (`only`)".into(),
        ));
    }
    Ok(covered)
}

/// The earliest (or the latest) of the reports' times, as the report holding it wrote it.
fn bound(
    reports: &[(String, RunReport)],
    field: &'static str,
    get: fn(&RunReport) -> &String,
    latest: bool,
) -> Result<String, MergeError> {
    let mut times = Vec::with_capacity(reports.len());
    for (name, report) in reports {
        let value = get(report);
        let time = humantime::parse_rfc3339(value).map_err(|_| MergeError::Time {
            path: name.clone(),
            field,
            value: value.clone(),
        })?;
        times.push((time, value));
    }
    let best = if latest {
        times.into_iter().max()
    } else {
        times.into_iter().min()
    };
    Ok(best.map(|(_, v)| v.clone()).unwrap_or_default())
}

/// The shards' texts, each once, one per line; `named` prefixes each with its report's name.
fn joined(
    reports: &[(String, RunReport)],
    get: fn(&RunReport) -> Option<&str>,
    named: bool,
) -> Option<String> {
    let mut lines: Vec<String> = Vec::new();
    for (name, report) in reports {
        let Some(text) = get(report) else { continue };
        let line = if named {
            format!("{name}: {text}")
        } else {
            text.to_string()
        };
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// The whole run is only as contained as its least contained shard: that shard's isolation, with
/// every shard's reasons for not taking a stronger one.
fn weakest(reports: &[(String, RunReport)]) -> Option<IsolationReport> {
    let strength = |level: Level| match level {
        Level::UidNamespaces => 3,
        Level::Uid => 2,
        Level::Namespaces => 1,
        Level::None => 0,
    };
    let all: Vec<&IsolationReport> = reports
        .iter()
        .filter_map(|(_, r)| r.isolation.as_ref())
        .collect();
    let level = all.iter().map(|i| i.level).min_by_key(|l| strength(*l))?;
    let mut fallbacks: Vec<String> = Vec::new();
    for reason in all.iter().flat_map(|i| &i.fallbacks) {
        if !fallbacks.contains(reason) {
            fallbacks.push(reason.clone());
        }
    }
    // Shards may run on machines of their own: a uid base or limits stand for the run only when
    // every shard had the same.
    let agreed = |values: Vec<String>| values.windows(2).all(|w| w[0] == w[1]);
    let uid_base = all
        .first()
        .and_then(|i| i.uid_base)
        .filter(|_| agreed(all.iter().map(|i| format!("{:?}", i.uid_base)).collect()));
    let limits = all
        .first()
        .and_then(|i| i.limits.clone())
        .filter(|_| agreed(all.iter().map(|i| format!("{:?}", i.limits)).collect()));
    // The caches' mode stands for the run when every shard had the same; each shard warmed the
    // whole plan's ecosystems, so any shard's warm-up tells what was warmed.
    let caches = all
        .first()
        .and_then(|i| i.caches.clone())
        .filter(|_| agreed(all.iter().map(|i| caches_mode(i)).collect()))
        .map(|mut caches| {
            caches.warm_up = all.iter().find_map(|i| i.caches.as_ref()?.warm_up.clone());
            caches
        });
    let workspaces = all
        .first()
        .and_then(|i| i.workspaces.clone())
        .filter(|_| agreed(all.iter().map(|i| format!("{:?}", i.workspaces)).collect()));
    Some(IsolationReport {
        level,
        fallbacks,
        uid_base,
        limits,
        caches,
        workspaces,
    })
}

fn caches_mode(isolation: &IsolationReport) -> String {
    format!("{:?}", isolation.caches.as_ref().map(|c| &c.mode))
}

#[cfg(test)]
mod tests;
