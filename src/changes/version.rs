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
use std::str::FromStr;

pub fn same_version(ecosystem: Ecosystem, declared: &str, locked: &str) -> bool {
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

fn gem_segments(version: &str) -> Vec<&str> {
    let mut segments: Vec<&str> = version.split('.').collect();
    while segments.len() > 1 && segments.last().is_some_and(|s| s.chars().all(|c| c == '0')) {
        segments.pop();
    }
    segments
}
