//! Whether an OSV record covers a version: its `affected[]` entry for the package lists the
//! version, or one of its `SEMVER`/`ECOSYSTEM` ranges holds it (events sorted by version;
//! `introduced` opens, `fixed` and `last_affected` close), with the ecosystem's own ordering.

use super::{Query, ecosystem_name};
use crate::changes::Ecosystem;
use serde_json::Value;
use std::cmp::Ordering;
use std::str::FromStr;

/// `Some(affected)` when the record says; `None` when it has nothing this can evaluate for the
/// package (only git ranges, or versions that do not parse).
pub(super) fn affects(record: &Value, query: &Query, version: &str) -> Option<bool> {
    let mut evaluated = false;
    for entry in record["affected"].as_array().into_iter().flatten() {
        let package = &entry["package"];
        let same_ecosystem = package["ecosystem"]
            .as_str()
            .is_some_and(|e| e.split(':').next() == Some(ecosystem_name(query.ecosystem)));
        let same_name = package["name"]
            .as_str()
            .is_some_and(|n| same_name(query.ecosystem, n, &query.name));
        if !same_ecosystem || !same_name {
            continue;
        }
        if let Some(versions) = entry["versions"].as_array() {
            evaluated = true;
            let listed = versions
                .iter()
                .filter_map(Value::as_str)
                .any(|v| compare(query.ecosystem, v, version) == Some(Ordering::Equal));
            if listed {
                return Some(true);
            }
        }
        for range in entry["ranges"].as_array().into_iter().flatten() {
            if let Some(hit) = in_range(range, query.ecosystem, version) {
                evaluated = true;
                if hit {
                    return Some(true);
                }
            }
        }
    }
    evaluated.then_some(false)
}

fn same_name(ecosystem: Ecosystem, a: &str, b: &str) -> bool {
    ecosystem.normalize_name(a) == ecosystem.normalize_name(b)
}

/// One range's verdict; `None` for git ranges or versions that do not parse.
fn in_range(range: &Value, ecosystem: Ecosystem, version: &str) -> Option<bool> {
    if !matches!(range["type"].as_str(), Some("SEMVER" | "ECOSYSTEM")) {
        return None;
    }
    let mut events: Vec<(&str, &str)> = Vec::new();
    for event in range["events"].as_array()? {
        let (kind, at) = event.as_object()?.iter().next()?;
        events.push((kind.as_str(), at.as_str()?));
    }
    let order = |at: &str| {
        if at == "0" {
            Some(Ordering::Less)
        } else {
            compare(ecosystem, at, version)
        }
    };
    // Every event must be comparable, or the range cannot be judged.
    let mut sorted = Vec::with_capacity(events.len());
    for (kind, at) in events {
        order(at)?;
        sorted.push((kind, at));
    }
    sorted.sort_by(|a, b| {
        if a.1 == "0" {
            return Ordering::Less;
        }
        if b.1 == "0" {
            return Ordering::Greater;
        }
        compare(ecosystem, a.1, b.1).unwrap_or(Ordering::Equal)
    });
    let mut affected = false;
    for (kind, at) in sorted {
        let here = order(at)?;
        match kind {
            "introduced" if here != Ordering::Greater => affected = true,
            "fixed" | "limit" if here != Ordering::Greater => affected = false,
            "last_affected" if here == Ordering::Less => affected = false,
            _ => {}
        }
    }
    Some(affected)
}

/// Orders two versions as the ecosystem does; `None` when either does not parse.
pub(crate) fn compare(ecosystem: Ecosystem, a: &str, b: &str) -> Option<Ordering> {
    match ecosystem {
        Ecosystem::Pip | Ecosystem::Poetry | Ecosystem::Uv => {
            let a = pep440_rs::Version::from_str(a).ok()?;
            let b = pep440_rs::Version::from_str(b).ok()?;
            Some(a.cmp(&b))
        }
        Ecosystem::Bundle => Some(gem_compare(a, b)),
        _ => {
            let parse = |v: &str| semver::Version::parse(v.trim_start_matches(['v', '='])).ok();
            Some(parse(a)?.cmp(&parse(b)?))
        }
    }
}

/// RubyGems' `Gem::Version` order: segments split at dots and at letter/digit boundaries;
/// numbers compare as numbers, a letter segment (a pre-release) sorts before a number, missing
/// segments count as 0.
fn gem_compare(a: &str, b: &str) -> Ordering {
    let (a, b) = (gem_segments(a), gem_segments(b));
    for i in 0..a.len().max(b.len()) {
        let zero = Segment::Number(0);
        let (x, y) = (a.get(i).unwrap_or(&zero), b.get(i).unwrap_or(&zero));
        let order = match (x, y) {
            (Segment::Number(x), Segment::Number(y)) => x.cmp(y),
            (Segment::Text(x), Segment::Text(y)) => x.cmp(y),
            (Segment::Text(_), Segment::Number(_)) => Ordering::Less,
            (Segment::Number(_), Segment::Text(_)) => Ordering::Greater,
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}

#[derive(Debug, PartialEq, Eq)]
enum Segment {
    Number(u64),
    Text(String),
}

fn gem_segments(version: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    for part in version.trim().split(['.', '-']) {
        let mut current = String::new();
        for c in part.chars() {
            if !current.is_empty()
                && current.chars().all(|d| d.is_ascii_digit()) != c.is_ascii_digit()
            {
                out.push(segment(&current));
                current.clear();
            }
            current.push(c);
        }
        if !current.is_empty() {
            out.push(segment(&current));
        }
    }
    while matches!(out.last(), Some(Segment::Number(0))) && out.len() > 1 {
        out.pop();
    }
    out
}

fn segment(text: &str) -> Segment {
    text.parse()
        .map(Segment::Number)
        .unwrap_or_else(|_| Segment::Text(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn q(ecosystem: Ecosystem, name: &str) -> Query {
        Query {
            ecosystem,
            name: name.into(),
            version: String::new(),
        }
    }

    #[test]
    fn ranges_open_at_introduced_and_close_at_fixed() {
        let record = json!({"affected": [{"package": {"ecosystem": "npm", "name": "lodash"},
            "ranges": [{"type": "SEMVER", "events": [{"fixed": "4.17.21"}, {"introduced": "0"}]}]}]});
        let lodash = q(Ecosystem::Npm, "lodash");
        assert_eq!(affects(&record, &lodash, "4.17.20"), Some(true));
        assert_eq!(affects(&record, &lodash, "4.17.21"), Some(false));
        assert_eq!(affects(&record, &lodash, "5.0.0"), Some(false));
        assert_eq!(affects(&record, &q(Ecosystem::Npm, "other"), "4.0.0"), None);
        let last = json!({"affected": [{"package": {"ecosystem": "PyPI", "name": "Jinja2"},
            "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "2.0"}, {"last_affected": "3.1.2"}]}]}]});
        let jinja = q(Ecosystem::Uv, "jinja2");
        assert_eq!(affects(&last, &jinja, "3.1.2"), Some(true));
        assert_eq!(affects(&last, &jinja, "3.1.3"), Some(false));
        assert_eq!(affects(&last, &jinja, "1.9"), Some(false));
    }

    #[test]
    fn listed_versions_count_and_git_ranges_are_not_judged() {
        let record = json!({"affected": [{"package": {"ecosystem": "crates.io", "name": "x"},
            "versions": ["1.0.0"], "ranges": [{"type": "GIT", "events": [{"introduced": "abc"}]}]}]});
        assert_eq!(
            affects(&record, &q(Ecosystem::Cargo, "x"), "1.0.0"),
            Some(true)
        );
        assert_eq!(
            affects(&record, &q(Ecosystem::Cargo, "x"), "1.0.1"),
            Some(false)
        );
        let git = json!({"affected": [{"package": {"ecosystem": "Go", "name": "m"},
            "ranges": [{"type": "GIT", "events": [{"introduced": "abc"}]}]}]});
        assert_eq!(affects(&git, &q(Ecosystem::Go, "m"), "1.0.0"), None);
    }

    #[test]
    fn each_ecosystem_orders_its_versions() {
        assert_eq!(
            compare(Ecosystem::Go, "v1.2.10", "1.2.9"),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare(Ecosystem::Uv, "2.0rc1", "2.0"),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare(Ecosystem::Bundle, "1.0.0.pre", "1.0.0"),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare(Ecosystem::Bundle, "1.10", "1.9.9"),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare(Ecosystem::Bundle, "1.0", "1.0.0"),
            Some(Ordering::Equal)
        );
        assert_eq!(compare(Ecosystem::Npm, "not", "1.0.0"), None);
    }
}
