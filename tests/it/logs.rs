//! What ran is kept: each unit's log, beside the report, holds the whole output of its commands
//! and tests, passing ones included, and the report names it.

use crate::common::*;

#[test]
fn the_output_of_passing_tests_is_kept_beside_the_report() {
    let f = Fixture::new();
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let test = &run.action(0)["test"]["runs"][0];
    assert_eq!(test["passed"], true);
    assert!(
        test["output_tail"].is_null(),
        "a passing run keeps no tail in the report"
    );
    let log = test["log"].as_str().unwrap();
    let expected = f.root.path().join("report-logs/quartermaster__cargo.log");
    assert_eq!(std::path::Path::new(log), expected);
    let text = std::fs::read_to_string(log).unwrap();
    assert!(
        text.starts_with("$ cargo update -p greeting --precise 1.0.1  (exit code 0, "),
        "{text}"
    );
    assert!(text.contains("\n$ cargo test  (exit code 0, "), "{text}");
    assert!(
        text.contains("test tests::greets_and_says_goodbye ... ok"),
        "{text}"
    );

    // The next run writes its own logs.
    std::fs::write(f.root.path().join("report-logs/stale.log"), "old").unwrap();
    let again = f.run(
        &plan(vec![create_mr(
            "quartermaster/other",
            &[greeting()],
            "batch",
        )]),
        &[],
    );
    assert_eq!(again.code, 0, "{}", again.said());
    let mut left: Vec<String> = std::fs::read_dir(f.root.path().join("report-logs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    // With warm caches (as root), the warm-up's commands have their log too.
    let warm = again.report["isolation"]["caches"]["mode"] == "warm";
    let expected: &[&str] = if warm {
        &["quartermaster__other.log", "warm-up.log"]
    } else {
        &["quartermaster__other.log"]
    };
    assert_eq!(left, expected);
    if warm {
        let text = std::fs::read_to_string(f.root.path().join("report-logs/warm-up.log")).unwrap();
        assert!(
            text.contains("$ cargo test --no-run --locked  (exit code 0, "),
            "{text}"
        );
    }
}
