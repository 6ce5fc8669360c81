use super::*;
use crate::plan::ActionType;
use crate::plan::UpdateType;
use crate::report::{Operation, ProcessRecord, TestReport, TestRun};

fn command(package: Option<&str>) -> CommandMatch {
    CommandMatch {
        text: format!("bump {}", package.unwrap_or("-")),
        argv: vec!["bump".into()],
        ecosystem: "npm".into(),
        package: package.map(String::from),
        refreshes_lock: false,
        pattern: "bump".into(),
    }
}

fn create_mr(packages: &[&str], strategy: FallbackStrategy) -> CreateMr {
    CreateMr {
        branch: "quartermaster/deps".into(),
        title: "Bump".into(),
        description: String::new(),
        updates: packages
            .iter()
            .map(|p| Update {
                package: p.to_string(),
                from: "1".into(),
                to: "2".into(),
                update_type: UpdateType::Minor,
            })
            .collect(),
        commands: vec![],
        test_command: "npm test".into(),
        labels: vec![],
        fallback_strategy: strategy,
        confidence: 1.0,
        working_dir: None,
    }
}

fn landed(number: u64) -> UnitOutcome {
    UnitOutcome::Landed(PullRequestRef {
        number,
        url: String::new(),
        branch: String::new(),
        operation: Operation::Created,
        reused: None,
        auto_merge: false,
        notes: Vec::new(),
    })
}

#[test]
fn splits_keep_the_commands_of_their_package_and_the_shared_ones() {
    let a = create_mr(&["@x/a", "b"], FallbackStrategy::Individual);
    let commands = [command(Some("@x/a")), command(Some("b")), command(None)];
    let units = split(&a, &commands, None);
    let names: Vec<&str> = units.iter().map(|u| u.branch.as_str()).collect();
    assert_eq!(names, ["quartermaster/deps--x-a", "quartermaster/deps--b"]);
    let texts: Vec<&str> = units[1].commands.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts, ["bump b", "bump -"]);
    assert_eq!(
        units[0].title_from(&changes::Verdict::default()),
        "Update @x/a to 2"
    );
    assert_eq!(batch(&a, &commands).commands.len(), 3);
}

#[test]
fn a_split_batch_is_explained_by_its_splits() {
    let a = create_mr(&["a", "b"], FallbackStrategy::IndividualOnFailure);
    let commands = [command(Some("a")), command(Some("b"))];
    let mut results = vec![(batch(&a, &commands), UnitOutcome::TestsFailed("red".into()))];
    let mut splits = split(&a, &commands, Some("red".into())).into_iter();
    results.push((splits.next().unwrap(), landed(7)));
    results.push((
        splits.next().unwrap(),
        UnitOutcome::TestsFailed("`npm test` failed".into()),
    ));
    let (status, reason) = conclude(&results, FallbackStrategy::IndividualOnFailure);
    assert_eq!(status, Status::Partial);
    assert_eq!(
        reason,
        "the batch failed its tests, so each update was tried alone; quartermaster/deps--a: PR #7 created; quartermaster/deps--b: `npm test` failed; no PR"
    );
}

#[test]
fn statuses_rank_failure_over_refusal_over_success_over_skip_and_some_landed_is_partial() {
    let a = create_mr(&["a"], FallbackStrategy::Batch);
    let unit = || batch(&a, &[]);
    let one = |o| conclude(&[(unit(), o)], FallbackStrategy::Batch);
    assert_eq!(
        one(UnitOutcome::NoChanges),
        (Status::Skipped, "no changes".into())
    );
    assert_eq!(one(landed(3)).0, Status::Done);
    assert_eq!(
        one(UnitOutcome::Refused(Stop::denied("no"))).0,
        Status::Denied
    );
    let results = [
        (unit(), UnitOutcome::Refused(Stop::denied("human edits"))),
        (unit(), landed(4)),
    ];
    assert_eq!(
        conclude(&results, FallbackStrategy::Individual).0,
        Status::Partial
    );
    let results = [
        (unit(), UnitOutcome::Refused(Stop::denied("human edits"))),
        (unit(), UnitOutcome::TestsFailed("red".into())),
    ];
    assert_eq!(
        conclude(&results, FallbackStrategy::Individual).0,
        Status::Failed
    );
}

#[test]
fn the_last_unit_carrying_an_update_decides_its_fate() {
    let a = create_mr(&["a", "b"], FallbackStrategy::IndividualOnFailure);
    let commands = [command(Some("a")), command(Some("b"))];
    let mut results = vec![(batch(&a, &commands), UnitOutcome::TestsFailed("red".into()))];
    let mut splits = split(&a, &commands, Some("red".into())).into_iter();
    results.push((splits.next().unwrap(), landed(9)));
    let mut report = ActionReport::new(0, ActionType::CreateMr);
    let run = |branch: &str, passed| TestRun {
        branch: branch.into(),
        updates: vec![],
        passed,
        process: ProcessRecord {
            result: String::new(),
            exit_code: None,
            duration_ms: 0,
            output_tail: None,
            limit: None,
        },
        log: None,
    };
    report.test = Some(TestReport {
        command: "npm test".into(),
        runs: vec![
            run("quartermaster/deps", false),
            run("quartermaster/deps--a", true),
        ],
    });
    let updates = update_reports(&a.updates, &results, &report);
    assert_eq!(updates[0].pull_request, Some(9));
    assert!(updates[0].landed);
    assert_eq!(updates[0].test, TestVerdict::Passed);
    assert_eq!(updates[1].branch.as_deref(), Some("quartermaster/deps"));
    assert!(!updates[1].landed);
    assert_eq!(updates[1].test, TestVerdict::Failed);
    let none = update_reports(&a.updates, &[], &report);
    assert_eq!(
        (none[0].branch.clone(), none[0].test),
        (None, TestVerdict::NotRun)
    );
}

#[test]
fn a_split_title_keeps_the_conventional_prefix_and_states_the_lock() {
    let mut a = create_mr(
        &["anyhow", "console"],
        FallbackStrategy::IndividualOnFailure,
    );
    a.title = "chore(deps): update anyhow and console".into();
    let units = split(&a, &[], Some("the batch failed its tests".into()));
    let facts = changes::Verdict {
        updates: vec![changes::UpdateFact {
            package: "anyhow".into(),
            ecosystem: None,
            update_type: UpdateType::Patch,
            declared_from: "1".into(),
            declared_to: "2".into(),
            from: Some("1.0.99".into()),
            to: Some("1.0.100".into()),
            reached: true,
            link: None,
        }],
        ..changes::Verdict::default()
    };
    assert_eq!(
        units[0].title_from(&facts),
        "chore(deps): update anyhow from 1.0.99 to 1.0.100"
    );
    assert_eq!(
        batch(&a, &[]).title_from(&facts),
        "chore(deps): update anyhow and console"
    );
    for (title, prefix) in [
        ("fix!: x", Some("fix!: ")),
        ("build(deps-dev): x", Some("build(deps-dev): ")),
        ("Bump x: now", None),
        ("chore(a(b)): x", None),
        ("no prefix", None),
    ] {
        assert_eq!(conventional_prefix(title), prefix, "{title}");
    }
}

#[test]
fn fates_say_what_became_of_a_unit() {
    assert_eq!(fate(&landed(3)), "tests passed; PR #3");
    assert_eq!(
        fate(&UnitOutcome::TestsFailed(
            "`cargo test` failed: exit code 101".into()
        )),
        "failed its tests: `cargo test` failed: exit code 101; no PR"
    );
    assert_eq!(
        fate(&UnitOutcome::Unverified(Stop::denied("[change.x] y"))),
        "denied: [change.x] y; no PR"
    );
    assert_eq!(
        batch_failed(&UnitOutcome::CommandFailed(
            "`x` failed: exit code 1".into()
        )),
        "a command failed on the batch (`x` failed: exit code 1)"
    );
    let undeclared =
        "[change.undeclared_dependency] `regex-automata` is a direct dependency that changed";
    assert_eq!(
        batch_failed(&UnitOutcome::Unverified(Stop::denied(undeclared))),
        format!("the verification of the batch's changes refused them ({undeclared})")
    );
}
