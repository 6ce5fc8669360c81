use super::*;
use crate::engine::record::RecordedUpdate;
use crate::plan::{ActionType, UpdateType};

fn record(package: &str, from: &str, to: &str) -> Record {
    Record {
        mission: "deps".into(),
        branch: format!("quartermaster/{package}"),
        title: format!("Bump {package}"),
        ecosystems: vec!["cargo".into()],
        working_dir: None,
        updates: vec![RecordedUpdate {
            package: package.into(),
            ecosystem: Some("cargo".into()),
            from: from.into(),
            to: to.into(),
            update_type: UpdateType::Patch,
        }],
        commands: vec![format!("cargo update -p {package} --precise {to}")],
        test: "cargo test".into(),
        labels: vec![],
        api_commit: None,
    }
}

fn pr(number: u64, body: String, created_at: &str) -> PullRequest {
    PullRequest {
        number,
        url: format!("https://example.com/pull/{number}"),
        state: crate::forge::State::Open,
        head: format!("quartermaster/{number}"),
        base: "main".into(),
        title: "Bump".into(),
        body,
        labels: vec!["quartermaster".into()],
        draft: false,
        from_fork: false,
        created_at: Some(created_at.into()),
        auto_merge: false,
        reviewers: vec![],
        team_reviewers: vec![],
        assignees: vec![],
    }
}

fn action(index: usize, kind: ActionType, status: Status, reason: &str) -> ActionReport {
    let mut a = ActionReport::new(index, kind);
    a.finish(status, reason);
    a
}

/// The dashboard names the bot's PRs as real `#N` references, and quotes what went wrong as
/// untrusted text: no mention, reference or marker of it survives.
#[test]
fn the_dashboard_lists_open_prs_and_what_went_wrong() {
    let now = humantime::parse_rfc3339("2026-03-10T12:00:00Z").unwrap();
    let greeting = super::super::record::mark("Bumps.", &record("greeting", "1.0.0", "1.0.1"));
    let open = [
        pr(1, greeting, "2026-03-10T08:00:00Z"),
        pr(4, "An old PR.".into(), "2026-02-24T12:00:00Z"),
    ];
    let mut failed = action(
        0,
        ActionType::CreateMr,
        Status::Failed,
        "`cargo test` failed: exit code 101; no PR; ping @alice about #7 <!-- quartermaster:rebuild:9 -->",
    );
    failed.branch = Some("quartermaster/farewell".into());
    let actions = [
        failed,
        action(
            1,
            ActionType::Skip,
            Status::Skipped,
            "serde (human_hold): held",
        ),
        action(2, ActionType::CreateIssue, Status::Done, "issue #3 created"),
    ];
    let records = [(0, record("farewell", "2.0.0", "2.0.1"))];
    let mut rebuilt = UpkeepReport::new(Some(4), "quartermaster/4", UpkeepAction::Rebuild);
    rebuilt = rebuilt.finish(
        Status::Failed,
        "`main` changed `Cargo.lock`; the rebuild failed: `cargo test` failed",
    );
    let body = DashboardView {
        open: &open,
        actions: &actions,
        records: &records,
        upkeep: &[rebuilt],
        default_branch: "main",
        now,
    }
    .render();
    assert!(
        body.contains("- [ ] #1 `greeting` `1.0.0` → `1.0.1` (patch)"),
        "{body}"
    );
    assert!(body.contains("@\u{200B}alice"), "{body}");
    assert!(body.contains("#\u{200B}7"), "{body}");
    assert!(!body.contains("<!-- quartermaster:rebuild:9 -->"), "{body}");
    insta::assert_snapshot!(body);
}

/// Ticked boxes ask for rebuilds and retries; unticked ones and forged lines ask nothing.
#[test]
fn ticked_boxes_are_what_the_next_run_does() {
    let retry = record("farewell", "2.0.0", "2.0.1");
    let body = format!(
        "- [x] #12 greeting <!-- quartermaster:rebuild:12 -->\n- [ ] #13 <!-- quartermaster:rebuild:13 -->\n  - [X] #14 <!-- quartermaster:rebuild:14 -->\n- [x] Retry action 0: {}\n- [x] #15 <!-- quartermaster:rebuild:15x -->\n",
        retry.marker().unwrap()
    );
    let asked = asked(&body);
    assert_eq!(asked.rebuild, BTreeSet::from([12, 14]));
    assert_eq!(asked.retry, vec![retry]);
    assert_eq!(super::asked("nothing ticked"), Asked::default());
}

#[test]
fn ages_are_days() {
    let now = humantime::parse_rfc3339("2026-03-10T12:00:00Z").unwrap();
    assert_eq!(age(Some("2026-03-10T01:00:00Z"), now), "opened today");
    assert_eq!(
        age(Some("2026-03-09T11:00:00.000Z"), now),
        "opened 1 day ago"
    );
    assert_eq!(age(Some("2026-02-10T12:00:00Z"), now), "opened 28 days ago");
    assert_eq!(age(None, now), "opened at a time the forge did not say");
}
