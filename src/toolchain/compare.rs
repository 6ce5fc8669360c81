//! Comparing a declared version with the one found, by the rule of the file that declared it.

use super::{DeclaredVersion, Rule, ToolchainVerdict};
use std::str::FromStr;

/// The verdict, and why a declaration could not be checked.
pub(crate) fn compare(
    declared: &DeclaredVersion,
    found: Option<&str>,
) -> (ToolchainVerdict, Option<String>) {
    let unchecked = |why: &str| (ToolchainVerdict::Unchecked, Some(why.to_string()));
    let Some(test) = matcher(declared) else {
        return match declared.rule {
            Rule::Range => unchecked("not a semver range Quartermaster can read"),
            Rule::Specifier => unchecked("not a PEP 440 specifier"),
            _ => unchecked("names no version number (an alias or a channel)"),
        };
    };
    let Some(found) = found else {
        return (ToolchainVerdict::Mismatch, None);
    };
    match components(found) {
        Some(found) if test(&found) => (ToolchainVerdict::Match, None),
        Some(_) => (ToolchainVerdict::Mismatch, None),
        None => unchecked("the version found has no version number"),
    }
}

type Matcher = Box<dyn Fn(&[u64]) -> bool>;

/// A test of the version found, or `None` when the declaration names nothing comparable.
fn matcher(declared: &DeclaredVersion) -> Option<Matcher> {
    let value = declared.value.trim();
    match declared.rule {
        Rule::Range => {
            let alternatives = npm_range(value)?;
            Some(Box::new(move |found| {
                let v = semver::Version::new(part(found, 0), part(found, 1), part(found, 2));
                alternatives.iter().any(|r| r.matches(&v))
            }))
        }
        Rule::Specifier => {
            let specifiers = pep440_rs::VersionSpecifiers::from_str(value).ok()?;
            Some(Box::new(move |found| {
                let v = pep440_rs::Version::new(found.iter().copied());
                specifiers.contains(&v)
            }))
        }
        rule => {
            let want = components(value)?;
            Some(Box::new(move |found| match rule {
                Rule::Minimum => padded(found, want.len()) >= padded(&want, found.len()),
                Rule::Exact => padded(found, want.len()) == padded(&want, found.len()),
                Rule::Major => found.first() == want.first(),
                _ => found.starts_with(&want),
            }))
        }
    }
}

fn part(v: &[u64], i: usize) -> u64 {
    v.get(i).copied().unwrap_or(0)
}

/// `v` with zeros up to `len` components, so that 1.21 and 1.21.0 compare equal.
fn padded(v: &[u64], len: usize) -> Vec<u64> {
    let mut out = v.to_vec();
    out.resize(len.max(v.len()), 0);
    out
}

/// The numeric components a version begins with: `v20.11.1` → 20, 11, 1; `1.21rc1` → 1, 21;
/// `lts/*` → none.
pub(crate) fn components(version: &str) -> Option<Vec<u64>> {
    let v = version.trim();
    let v = v.strip_prefix(['v', 'V']).unwrap_or(v);
    let numeric: String = v
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let parts: Vec<u64> = numeric.split('.').map_while(|p| p.parse().ok()).collect();
    (!parts.is_empty()).then_some(parts)
}

/// An npm range (`^18 || >=20.1 <21`, `18.x`, `1.2 - 2.3`) as alternatives the semver crate
/// reads: its own syntax separates comparators with commas and reads a bare version as `^`,
/// where npm reads it as exact.
fn npm_range(range: &str) -> Option<Vec<semver::VersionReq>> {
    range
        .split("||")
        .map(|alternative| {
            let alternative = alternative.trim();
            let text = match alternative.split_once(" - ") {
                Some((low, high)) => format!(">={}, <={}", bare(low), bare(high)),
                None => comparators(alternative).join(", "),
            };
            if text.is_empty() {
                return Some(semver::VersionReq::STAR);
            }
            semver::VersionReq::parse(&text).ok()
        })
        .collect()
}

/// The comparators of one alternative, an operator separated from its version joined to it.
fn comparators(alternative: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut operator = String::new();
    for token in alternative.split_whitespace() {
        if token.chars().all(|c| "<>=~^".contains(c)) {
            operator.push_str(token);
            continue;
        }
        let split = token
            .find(|c: char| !"<>=~^".contains(c))
            .unwrap_or(token.len());
        let (op, version) = token.split_at(split);
        let op = format!("{operator}{op}");
        operator.clear();
        let version = bare(version);
        let wildcard = version == "*" || version.eq_ignore_ascii_case("x");
        out.push(match op.as_str() {
            "" if wildcard => "*".to_string(),
            "" => format!("={version}"),
            _ => format!("{op}{version}"),
        });
    }
    out
}

fn bare(version: &str) -> &str {
    let v = version.trim();
    v.strip_prefix(['v', 'V']).unwrap_or(v)
}

#[cfg(test)]
mod tests {
    use super::super::Tool;
    use super::*;

    fn verdict(rule: Rule, value: &str, found: &str) -> ToolchainVerdict {
        let declared = DeclaredVersion {
            tool: Tool::Node,
            file: "f".into(),
            value: value.into(),
            rule,
        };
        compare(&declared, Some(found)).0
    }

    #[test]
    fn minimum_exact_prefix_and_major() {
        use ToolchainVerdict::*;
        assert_eq!(verdict(Rule::Minimum, "1.21", "1.21.0"), Match);
        assert_eq!(verdict(Rule::Minimum, "1.21", "1.22.3"), Match);
        assert_eq!(verdict(Rule::Minimum, "1.99", "1.19.8"), Mismatch);
        assert_eq!(verdict(Rule::Exact, "1.22.3", "1.22.3"), Match);
        assert_eq!(verdict(Rule::Exact, "1.22.3", "1.22.5"), Mismatch);
        assert_eq!(verdict(Rule::Exact, "9.15.0", "9.15"), Match);
        assert_eq!(verdict(Rule::Prefix, "20", "20.11.1"), Match);
        assert_eq!(verdict(Rule::Prefix, "v20.11.1", "20.11.1"), Match);
        assert_eq!(verdict(Rule::Prefix, "v20.11.1", "20.11.0"), Mismatch);
        assert_eq!(verdict(Rule::Prefix, "1.78", "1.78.2"), Match);
        assert_eq!(verdict(Rule::Prefix, "1.78", "1.7.8"), Mismatch);
        assert_eq!(verdict(Rule::Major, "2.4.22", "2.5.1"), Match);
        assert_eq!(verdict(Rule::Major, "2.4.22", "1.17.2"), Mismatch);
    }

    #[test]
    fn npm_ranges_read_as_npm_reads_them() {
        use ToolchainVerdict::*;
        assert_eq!(verdict(Rule::Range, ">=18", "20.11.1"), Match);
        assert_eq!(verdict(Rule::Range, "^18 || ^20", "20.11.1"), Match);
        assert_eq!(verdict(Rule::Range, "^18 || ^22", "20.11.1"), Mismatch);
        assert_eq!(verdict(Rule::Range, ">= 18 < 20", "20.0.0"), Mismatch);
        assert_eq!(verdict(Rule::Range, ">=18.0.0 <21", "20.11.1"), Match);
        assert_eq!(verdict(Rule::Range, "20.x", "20.11.1"), Match);
        assert_eq!(verdict(Rule::Range, "18", "20.11.1"), Mismatch);
        assert_eq!(verdict(Rule::Range, "10.2.4", "10.2.5"), Mismatch);
        assert_eq!(verdict(Rule::Range, "10.2.4", "10.2.4"), Match);
        assert_eq!(verdict(Rule::Range, "18 - 20", "20.9.0"), Match);
        assert_eq!(verdict(Rule::Range, "*", "1.0.0"), Match);
        assert_eq!(verdict(Rule::Range, "~9.1", "9.2.0"), Mismatch);
        assert_eq!(verdict(Rule::Range, "not a range", "1.0.0"), Unchecked);
    }

    #[test]
    fn specifiers_and_what_cannot_be_checked() {
        use ToolchainVerdict::*;
        assert_eq!(verdict(Rule::Specifier, ">=3.9,<3.13", "3.11.2"), Match);
        assert_eq!(verdict(Rule::Specifier, ">=3.12", "3.11.2"), Mismatch);
        assert_eq!(verdict(Rule::Specifier, "~=3.11.0", "3.11.2"), Match);
        assert_eq!(verdict(Rule::Specifier, "3.x", "3.11.2"), Unchecked);
        assert_eq!(verdict(Rule::Prefix, "lts/*", "20.11.1"), Unchecked);
        assert_eq!(verdict(Rule::Prefix, "stable", "1.95.0"), Unchecked);
        let declared = DeclaredVersion {
            tool: Tool::Go,
            file: "go.mod".into(),
            value: "1.21".into(),
            rule: Rule::Minimum,
        };
        assert_eq!(compare(&declared, None), (Mismatch, None));
        assert_eq!(
            compare(
                &DeclaredVersion {
                    value: "lts/iron".into(),
                    ..declared
                },
                None
            ),
            (
                Unchecked,
                Some("names no version number (an alias or a channel)".into())
            )
        );
    }

    #[test]
    fn components_are_the_leading_numbers() {
        assert_eq!(components("v20.11.1"), Some(vec![20, 11, 1]));
        assert_eq!(components("1.21rc1"), Some(vec![1, 21]));
        assert_eq!(components("3.12\n"), Some(vec![3, 12]));
        assert_eq!(components("lts/*"), None);
    }
}
