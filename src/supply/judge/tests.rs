use super::*;
use crate::changes::{Ecosystem, Source};
use crate::supply::client::FetchError;
use crate::supply::lookup::{Withdrawn, parse_time};
use serde_json::json;

fn now() -> SystemTime {
    parse_time("2026-11-27T12:00:00Z").unwrap()
}

fn candidate(name: &str, version: &str, replaces: &[&str]) -> Candidate {
    Candidate {
        ecosystem: Ecosystem::Npm,
        name: name.into(),
        version: version.into(),
        source: Source::DefaultRegistry,
        direct: true,
        replaces: replaces.iter().map(|v| v.to_string()).collect(),
    }
}

fn published(at: &str) -> Result<Facts, LookupError> {
    Ok(Facts {
        published: parse_time(at),
        ..Facts::default()
    })
}

fn advisory(id: &str) -> Arc<Advisory> {
    Arc::new(
        serde_json::from_value(json!({
            "id": id, "summary": format!("{id} summary"), "severity": "high",
            "url": format!("https://osv.dev/vulnerability/{id}")
        }))
        .unwrap(),
    )
}

fn gathered(
    facts: Vec<Result<Facts, LookupError>>,
    advisories: Vec<(&str, Vec<Arc<Advisory>>)>,
) -> Gathered {
    let found = advisories
        .into_iter()
        .map(|(version, list)| {
            (
                Query {
                    ecosystem: Ecosystem::Npm,
                    name: "lib".into(),
                    version: version.into(),
                },
                list,
            )
        })
        .collect();
    Gathered {
        facts: facts.into_iter().enumerate().collect(),
        advisories: Ok(found),
    }
}

fn messages(s: &Screening) -> String {
    s.refusals
        .iter()
        .map(|r| format!("[{}] {}", r.code, r.message))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_version_younger_than_the_minimum_is_refused_with_its_age() {
    let policy = Policy::default();
    let s = judge(
        &policy,
        now(),
        &[candidate("lib", "1.0.1", &["1.0.0"])],
        &gathered(vec![published("2026-11-26T09:30:00Z")], vec![]),
    );
    assert_eq!(s.checked[0].age, "too new");
    insta::assert_snapshot!(messages(&s));
}

#[test]
fn an_old_enough_version_passes() {
    let s = judge(
        &Policy::default(),
        now(),
        &[candidate("lib", "1.0.1", &["1.0.0"])],
        &gathered(vec![published("2026-11-20T00:00:00Z")], vec![]),
    );
    assert!(s.refusals.is_empty(), "{}", messages(&s));
    assert_eq!(s.checked[0].age, "old enough");
    assert_eq!(s.checked[0].age_seconds, Some(7 * 86_400 + 12 * 3600));
}

#[test]
fn minimum_zero_and_exclusions_skip_the_age_gate_only() {
    let zero = crate::policy::parse("[release-age]\nminimum = \"0\"\n", "p").unwrap();
    let fresh = || gathered(vec![published("2026-11-27T11:00:00Z")], vec![]);
    let s = judge(&zero, now(), &[candidate("lib", "1.0.1", &[])], &fresh());
    assert!(s.refusals.is_empty());
    assert_eq!(s.checked[0].age, "no minimum");
    let excluded = crate::policy::parse("[release-age]\nexclude = [\"li*\"]\n", "p").unwrap();
    let s = judge(
        &excluded,
        now(),
        &[candidate("lib", "1.0.1", &[])],
        &fresh(),
    );
    assert!(s.refusals.is_empty());
    assert_eq!(s.checked[0].age, "exempt");
    let deprecated = gathered(
        vec![Ok(Facts {
            withdrawn: Some(Withdrawn {
                how: "deprecated",
                message: None,
            }),
            ..Facts::default()
        })],
        vec![],
    );
    let s = judge(
        &excluded,
        now(),
        &[candidate("lib", "1.0.1", &[])],
        &deprecated,
    );
    assert_eq!(
        s.refusals[0].code,
        Code::PolicyDeprecated,
        "exclusions are for age only"
    );
}

#[test]
fn an_unknown_publish_time_is_refused_unless_allowed() {
    let unavailable = LookupError::Fetch {
        what: "the packument of lib".into(),
        source: FetchError::Status {
            host: "registry.example".into(),
            status: 503,
        },
    };
    let why = gathered(vec![Err(unavailable)], vec![]);
    let s = judge(
        &Policy::default(),
        now(),
        &[candidate("lib", "1.0.1", &[])],
        &why,
    );
    insta::assert_snapshot!(messages(&s));
    let allow =
        crate::policy::parse("[release-age]\nunknown-publish-time = \"allow\"\n", "p").unwrap();
    let s = judge(&allow, now(), &[candidate("lib", "1.0.1", &[])], &why);
    assert!(s.refusals.is_empty());
    assert_eq!(s.checked[0].age, "unknown age, allowed");
}

#[test]
fn a_vulnerable_version_is_refused_naming_the_advisory() {
    let g = gathered(
        vec![published("2026-01-01T00:00:00Z")],
        vec![("1.0.1", vec![advisory("GHSA-aaaa-bbbb-cccc")])],
    );
    let s = judge(
        &Policy::default(),
        now(),
        &[candidate("lib", "1.0.1", &["1.0.0"])],
        &g,
    );
    insta::assert_snapshot!(messages(&s));
    let ignored =
        crate::policy::parse("[advisories]\nignore = [\"GHSA-aaaa-bbbb-cccc\"]\n", "p").unwrap();
    assert!(
        judge(
            &ignored,
            now(),
            &[candidate("lib", "1.0.1", &["1.0.0"])],
            &g
        )
        .refusals
        .is_empty()
    );
}

#[test]
fn a_deprecated_version_is_refused_with_the_registry_message() {
    let g = gathered(
        vec![Ok(Facts {
            published: parse_time("2026-01-01T00:00:00Z"),
            withdrawn: Some(Withdrawn {
                how: "deprecated",
                message: Some("critical bug, use 1.0.2\nthanks".into()),
            }),
            ..Facts::default()
        })],
        vec![],
    );
    let s = judge(
        &Policy::default(),
        now(),
        &[candidate("lib", "1.0.1", &["1.0.0"])],
        &g,
    );
    insta::assert_snapshot!(messages(&s));
}

#[test]
fn a_fresh_security_fix_passes_and_lists_what_it_fixes() {
    let g = gathered(
        vec![published("2026-11-27T10:00:00Z")],
        vec![("1.0.0", vec![advisory("GHSA-fix")]), ("1.0.1", vec![])],
    );
    let s = judge(
        &Policy::default(),
        now(),
        &[candidate("lib", "1.0.1", &["1.0.0"])],
        &g,
    );
    assert!(s.refusals.is_empty(), "{}", messages(&s));
    assert_eq!(s.checked[0].age, "too new, fixes an advisory");
    assert!(s.is_security_fix());
    assert_eq!(s.fixes[0].advisory.id, "GHSA-fix");
    assert_eq!(
        (s.fixes[0].from.as_str(), s.fixes[0].to.as_str()),
        ("1.0.0", "1.0.1")
    );
}

#[test]
fn advisories_that_cannot_be_checked_fail_closed_unless_allowed() {
    let mut g = gathered(vec![published("2026-01-01T00:00:00Z")], vec![]);
    g.advisories = Err(OsvError::Unreachable {
        base: "http://127.0.0.1:9".into(),
        source: FetchError::Unreachable {
            host: "127.0.0.1:9".into(),
            why: "connection failed".into(),
        },
    });
    let s = judge(
        &Policy::default(),
        now(),
        &[candidate("lib", "1.0.1", &[])],
        &g,
    );
    insta::assert_snapshot!(messages(&s));
    let open = crate::policy::parse("[advisories]\nblock = false\n", "p").unwrap();
    let s = judge(&open, now(), &[candidate("lib", "1.0.1", &[])], &g);
    assert!(s.refusals.is_empty());
    assert!(s.advisories_unchecked.is_some());
}

#[test]
fn ages_read_in_two_units() {
    assert_eq!(
        age_text(Duration::from_secs(2 * 86_400 + 4 * 3600 + 5)),
        "2 days 4 hours"
    );
    assert_eq!(age_text(Duration::from_secs(35 * 60)), "35 minutes");
    assert_eq!(age_text(Duration::from_secs(86_400 + 30)), "1 day");
    assert_eq!(age_text(Duration::ZERO), "0 seconds");
}
