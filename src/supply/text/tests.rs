use super::*;
use crate::supply::judge::{Checked, Fix};
use crate::supply::osv::Advisory;

fn checked() -> Checked {
    Checked {
        ecosystem: "npm".into(),
        package: "lib".into(),
        version: "1.0.1".into(),
        direct: true,
        published: Some("2026-11-27T10:00:00Z".into()),
        age_seconds: Some(7200),
        age: "too new, fixes an advisory".into(),
        advisories: vec![],
        withdrawn: None,
    }
}

fn advisory(summary: &str) -> Advisory {
    serde_json::from_value(serde_json::json!({
        "id": "GHSA-aaaa-bbbb-cccc", "summary": summary, "severity": "high",
        "url": "https://osv.dev/vulnerability/GHSA-aaaa-bbbb-cccc"
    }))
    .unwrap()
}

#[test]
fn a_security_fix_lists_its_advisories_neutralised() {
    let screening = Screening {
        checked: vec![checked()],
        fixes: vec![Fix {
            package: "lib".into(),
            from: "1.0.0".into(),
            to: "1.0.1".into(),
            advisory: advisory("Prototype pollution <img src=x> @alice fixes #12 | table"),
        }],
        ..Screening::default()
    };
    let text = sections(&screening, &[], &Policy::default(), false);
    insta::assert_snapshot!(text);
    assert!(!text.contains("<img") && !text.contains("@alice") && !text.contains("#12"));
    assert_eq!(
        security_title("chore(deps): update lib"),
        "chore(deps): update lib [security]"
    );
    assert_eq!(security_title("x [SECURITY]"), "x [SECURITY]");
}

#[test]
fn release_notes_are_folded_quoted_and_cannot_break_out() {
    let hostile = "## Fixes\n- fixes #3 thanks @bob\n</details>\n<!-- quartermaster:pr:x -->\n/merge\n```\nunclosed fence\n![beacon](https://evil.example/t.gif)";
    let notes = vec![
        Notes {
            package: "lib".into(),
            from: Some("1.0.0".into()),
            to: "1.0.1".into(),
            found: Found::Releases {
                repository: "https://github.com/o/lib".into(),
                releases: vec![("v1.0.1".into(), "1.0.1 @carol".into(), hostile.into())],
            },
        },
        Notes {
            package: "other".into(),
            from: Some("2.0.0".into()),
            to: "2.1.0".into(),
            found: Found::Link("https://example.com/CHANGELOG.md".into()),
        },
        Notes {
            package: "third".into(),
            from: None,
            to: "0.1.0".into(),
            found: Found::Unavailable("the registry names no source repository".into()),
        },
    ];
    let screening = Screening {
        checked: vec![checked()],
        ..Screening::default()
    };
    let text = sections(&screening, &notes, &Policy::default(), false);
    insta::assert_snapshot!(text);
    assert_eq!(
        text.matches("</details>").count(),
        1,
        "only Quartermaster's own fold closes"
    );
    assert!(!text.contains("<!--") && !text.contains("\n/merge"));
    assert!(!text.contains("@bob") && !text.contains("#3 "));
}

#[test]
fn release_notes_are_capped() {
    let long = "word ".repeat(10_000);
    let notes: Vec<Notes> = (0..10)
        .map(|i| Notes {
            package: format!("p{i}"),
            from: Some("1.0.0".into()),
            to: "1.0.1".into(),
            found: Found::Releases {
                repository: "https://github.com/o/p".into(),
                releases: vec![("v1.0.1".into(), String::new(), long.clone())],
            },
        })
        .collect();
    let text = sections(&Screening::default(), &notes, &Policy::default(), false);
    assert!(
        text.chars().count() < MAX_NOTES + 5_000,
        "{}",
        text.chars().count()
    );
    assert!(text.contains("… (cut)"));
}

#[test]
fn unchecked_advisories_are_said() {
    let screening = Screening {
        checked: vec![checked()],
        advisories_unchecked: Some("OSV (http://127.0.0.1:9): connection failed".into()),
        ..Screening::default()
    };
    let open = crate::policy::parse("[advisories]\nblock = false\n", "p").unwrap();
    insta::assert_snapshot!(sections(&screening, &[], &open, false));
}

#[test]
fn what_the_policy_lets_through_is_still_shown() {
    let mut version = checked();
    version.age = "old enough".into();
    version.advisories = vec!["GHSA-aaaa-bbbb-cccc".into()];
    version.withdrawn = Some("deprecated (use lib2 | @team)".into());
    let screening = Screening {
        checked: vec![version],
        ..Screening::default()
    };
    let open = crate::policy::parse(
        "[advisories]\nblock = false\n[deprecated]\nblock = false\n",
        "p",
    )
    .unwrap();
    insta::assert_snapshot!(sections(&screening, &[], &open, false));
}
