use super::*;

pub(super) fn report(actions: Vec<ActionReport>) -> RunReport {
    let mut r = RunReport {
        version: REPORT_VERSION,
        quartermaster: "test".into(),
        started_at: String::new(),
        finished_at: String::new(),
        dry_run: false,
        forge: ForgeKind::Local,
        mission: "deps".into(),
        plan: "plan.json".into(),
        plan_sha256: None,
        plan_actions: actions.len(),
        only: None,
        validation: ValidationReport {
            valid: true,
            errors: vec![],
            warnings: vec![],
        },
        summary: Summary::default(),
        timing: Timing::default(),
        forge_requests: 0,
        exit_code: 0,
        error: None,
        hint: None,
        signal: None,
        isolation: None,
        actions,
        upkeep: Vec::new(),
        dashboard: None,
    };
    r.conclude(100);
    r
}

#[test]
fn exit_code_follows_statuses() {
    let mut done = ActionReport::new(0, ActionType::Skip);
    done.finish(Status::Skipped, "held");
    assert_eq!(report(vec![done.clone()]).exit_code, 0);
    let mut denied = ActionReport::new(1, ActionType::CloseMr);
    denied.finish(Status::Denied, "not ours");
    let r = report(vec![done, denied]);
    assert_eq!(r.exit_code, 1);
    assert_eq!(
        r.summary,
        Summary {
            done: 0,
            failed: 0,
            skipped: 1,
            denied: 1,
            ..Summary::default()
        }
    );
}

#[test]
fn markdown_shows_results_and_contains_untrusted_output() {
    let mut a = ActionReport::new(0, ActionType::CreateMr);
    a.branch = Some("quartermaster/x".into());
    a.commands.push(CommandRecord {
        command: "npm install x@1.0.0".into(),
        branch: "quartermaster/x".into(),
        ok: false,
        process: ProcessRecord {
            result: "exit code 1".into(),
            exit_code: Some(1),
            duration_ms: 5,
            output_tail: Some("```\n</details>\nboom".into()),
            limit: None,
        },
        warnings: vec![],
    });
    a.finish(Status::Failed, "a command failed | badly");
    let md = report(vec![a]).to_markdown();
    assert!(md.contains("## Quartermaster: 0 done, 1 failed, 0 skipped, 0 denied"));
    assert!(md.contains(
        "| 0 | create_mr `quartermaster/x` |  | ❌ failed | a command failed \\| badly |"
    ));
    assert!(md.contains("````text\n```\n</details>\nboom\n````"), "{md}");
}

#[test]
fn timing_separates_children_from_overhead() {
    let mut a = ActionReport::new(0, ActionType::CreateMr);
    a.test = Some(TestReport {
        command: "make test".into(),
        runs: vec![TestRun {
            branch: "b".into(),
            updates: vec![],
            passed: true,
            process: ProcessRecord {
                result: "exit code 0".into(),
                exit_code: Some(0),
                duration_ms: 60,
                output_tail: None,
                limit: None,
            },
            log: None,
        }],
    });
    let r = report(vec![a]);
    assert_eq!((r.timing.commands_ms, r.timing.overhead_ms), (60, 40));
    assert!(r.timing.peak_memory_kb > 0);
}

/// The summary shows what upkeep did to the open PRs, and the dashboard.
#[test]
fn markdown_shows_the_upkeep_and_the_dashboard() {
    let mut r = report(vec![]);
    r.upkeep = vec![
        UpkeepReport::new(Some(4), "quartermaster/farewell", UpkeepAction::Rebuild).finish(
            Status::Done,
            "it conflicts with `main` in `Cargo.lock`; rebuilt on `main`: PR #4 updated",
        ),
        UpkeepReport::new(Some(2), "quartermaster/greeting", UpkeepAction::LeaveAlone).finish(
            Status::Skipped,
            "quartermaster/greeting has commits by a@b | c",
        ),
    ];
    r.dashboard = Some(IssueRef {
        number: 3,
        url: "https://example.com/issues/3".into(),
        operation: Operation::Updated,
    });
    r.tally();
    insta::assert_snapshot!(r.to_markdown());
}
