//! When a declared version and a locked one are the same, per ecosystem.
//!
//! - go: with or without the leading `v` (`v1.2.3` = `1.2.3`); otherwise exact, so a
//!   pseudo-version or `+incompatible` must match in full.
//! - Python (pip, poetry, uv): PEP 440 equality with `pep440_rs` (`1.0` = `1.0.0`,
//!   `2.0RC1` = `2.0rc1`).
//! - npm, yarn, pnpm, bun, cargo: SemVer with the `semver` crate, a leading `v` or `=` in the
//!   declared value ignored (`v4.17.21` = `4.17.21`).
//! - bundler: RubyGems segments, trailing zero segments ignored (`1.0` = `1.0.0`).
//!
//! A value that does not parse in its grammar is compared as written.

use super::Ecosystem;
use std::cmp::Ordering;
use std::str::FromStr;

pub(crate) fn same_version(ecosystem: Ecosystem, declared: &str, locked: &str) -> bool {
    let declared = declared.trim();
    if declared == locked {
        return true;
    }
    match ecosystem {
        Ecosystem::Go => declared.trim_start_matches('v') == locked.trim_start_matches('v'),
        Ecosystem::Pip | Ecosystem::Poetry | Ecosystem::Uv => {
            match (
                pep440_rs::Version::from_str(declared),
                pep440_rs::Version::from_str(locked),
            ) {
                (Ok(a), Ok(b)) => a == b,
                _ => false,
            }
        }
        Ecosystem::Bundle => gem_segments(declared) == gem_segments(locked),
        Ecosystem::Npm | Ecosystem::Yarn | Ecosystem::Pnpm | Ecosystem::Bun | Ecosystem::Cargo => {
            let bare = declared.trim_start_matches(['v', '=']);
            match (semver::Version::parse(bare), semver::Version::parse(locked)) {
                (Ok(a), Ok(b)) => a == b,
                _ => bare == locked,
            }
        }
    }
}

/// How version `a` compares to `b` in the ecosystem's order (go and the JavaScript and cargo
/// ecosystems: SemVer, a leading `v` or `=` ignored; Python: PEP 440; bundler: RubyGems
/// segments, numeric where both are numbers); `None` when either does not parse.
pub(crate) fn compare(ecosystem: Ecosystem, a: &str, b: &str) -> Option<Ordering> {
    let (a, b) = (a.trim(), b.trim());
    match ecosystem {
        Ecosystem::Pip | Ecosystem::Poetry | Ecosystem::Uv => {
            let a = pep440_rs::Version::from_str(a).ok()?;
            let b = pep440_rs::Version::from_str(b).ok()?;
            Some(a.cmp(&b))
        }
        Ecosystem::Bundle => Some(gem_order(a, b)),
        Ecosystem::Go
        | Ecosystem::Npm
        | Ecosystem::Yarn
        | Ecosystem::Pnpm
        | Ecosystem::Bun
        | Ecosystem::Cargo => {
            let parse = |v: &str| semver::Version::parse(v.trim_start_matches(['v', '='])).ok();
            Some(parse(a)?.cmp(&parse(b)?))
        }
    }
}

/// RubyGems' order, simplified: segment by segment, numbers as numbers, trailing zeros ignored.
fn gem_order(a: &str, b: &str) -> Ordering {
    let (a, b) = (gem_segments(a), gem_segments(b));
    for i in 0..a.len().max(b.len()) {
        let order = match (a.get(i), b.get(i)) {
            (Some(x), Some(y)) => match (x.parse::<u64>(), y.parse::<u64>()) {
                (Ok(x), Ok(y)) => x.cmp(&y),
                // A prerelease segment (a letter) sorts before a release's number.
                (Ok(_), Err(_)) => Ordering::Greater,
                (Err(_), Ok(_)) => Ordering::Less,
                (Err(_), Err(_)) => x.cmp(y),
            },
            // The longer one: more release numbers make it newer (zeros change nothing); a
            // prerelease segment makes it older.
            (Some(x), None) => rest_order(x),
            (None, Some(y)) => rest_order(y).reverse(),
            (None, None) => Ordering::Equal,
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}

fn rest_order(segment: &str) -> Ordering {
    match segment.parse::<u64>() {
        Ok(0) => Ordering::Equal,
        Ok(_) => Ordering::Greater,
        Err(_) => Ordering::Less,
    }
}

fn gem_segments(version: &str) -> Vec<&str> {
    let mut segments: Vec<&str> = version.split('.').collect();
    while segments.len() > 1 && segments.last().is_some_and(|s| s.chars().all(|c| c == '0')) {
        segments.pop();
    }
    segments
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_as_each_ecosystem_orders_them() {
        let cases = [
            (Ecosystem::Cargo, "1.0.10", "1.0.9", Some(Ordering::Greater)),
            (Ecosystem::Npm, "v2.0.0", "2.0.0", Some(Ordering::Equal)),
            (Ecosystem::Npm, "2.0.0-rc.1", "2.0.0", Some(Ordering::Less)),
            (Ecosystem::Go, "v1.10.0", "v1.9.3", Some(Ordering::Greater)),
            (Ecosystem::Pip, "2.0rc1", "2.0", Some(Ordering::Less)),
            (Ecosystem::Uv, "1.0", "1.0.0", Some(Ordering::Equal)),
            (
                Ecosystem::Bundle,
                "7.1.10",
                "7.1.9",
                Some(Ordering::Greater),
            ),
            (Ecosystem::Bundle, "7.1.0", "7.1", Some(Ordering::Equal)),
            (
                Ecosystem::Bundle,
                "7.1.0.rc1",
                "7.1.0",
                Some(Ordering::Less),
            ),
            (Ecosystem::Cargo, "not a version", "1.0.0", None),
        ];
        for (ecosystem, a, b, want) in cases {
            assert_eq!(compare(ecosystem, a, b), want, "{ecosystem:?} {a} vs {b}");
        }
    }
}
