//! Every finding code is explained, and the explanations are usable.

use quartermaster::finding::Code;
use quartermaster::finding::explain::explain;
use std::collections::HashSet;

#[test]
fn every_code_has_its_own_explanation() {
    let mut meanings = HashSet::new();
    for &code in Code::ALL {
        let e = explain(code);
        assert_eq!(e.code, code.as_str());
        assert_eq!(Code::from_name(e.code), Some(code));
        for text in [e.meaning, e.fix] {
            assert!(text.len() > 10 && text.ends_with('.'), "{code}: {text:?}");
        }
        assert_ne!(e.meaning, e.fix, "{code}");
        assert!(
            meanings.insert(e.meaning),
            "{code} shares its meaning with another code"
        );
    }
    assert_eq!(meanings.len(), Code::ALL.len());
}

#[test]
fn warnings_say_they_are_warnings() {
    let warnings = [
        "lock_files.not_committed",
        "label.duplicate",
        "update.same_version",
        "update.duplicate_package",
        "update.unused",
    ];
    for &code in Code::ALL {
        let is_warning = warnings.contains(&code.as_str());
        assert_eq!(
            explain(code).meaning.starts_with("Warning:"),
            is_warning,
            "{code}"
        );
    }
}
