use super::*;
use crate::engine::record::RecordedUpdate;
use crate::plan::UpdateType;

fn record(updates: &[(&str, &str)]) -> Record {
    Record {
        mission: "deps".into(),
        branch: "quartermaster/x".into(),
        title: "Bump".into(),
        ecosystems: vec!["cargo".into()],
        working_dir: None,
        updates: updates
            .iter()
            .map(|(package, to)| RecordedUpdate {
                package: package.to_string(),
                ecosystem: None,
                from: "1.0.0".into(),
                to: to.to_string(),
                update_type: UpdateType::Minor,
            })
            .collect(),
        commands: vec![],
        test: "cargo test".into(),
        labels: vec![],
        api_commit: None,
    }
}

fn landed(pr: u64, package: &str, to: &str) -> Landed {
    Landed {
        pr,
        package: package.into(),
        to: to.into(),
    }
}

/// A newer PR supersedes an older one when it covers every package, one of them further.
#[test]
fn a_pr_is_superseded_only_when_every_package_moved_as_far_one_further() {
    let newer = [
        landed(7, "farewell", "2.2.0"),
        landed(8, "greeting", "1.0.1"),
    ];
    assert_eq!(
        superseding(&record(&[("farewell", "2.1.0")]), &newer),
        Some(vec![(7, "farewell".into(), "2.2.0".into())])
    );
    assert_eq!(
        superseding(&record(&[("farewell", "2.2.0")]), &newer),
        None,
        "the same version is not newer"
    );
    assert_eq!(
        superseding(&record(&[("farewell", "2.3.0")]), &newer),
        None,
        "an older version does not supersede"
    );
    assert_eq!(
        superseding(
            &record(&[("farewell", "2.1.0"), ("serde", "1.0.1")]),
            &newer
        ),
        None,
        "serde would be lost"
    );
    let both = superseding(
        &record(&[("farewell", "2.1.0"), ("greeting", "1.0.1")]),
        &newer,
    );
    assert_eq!(
        both,
        Some(vec![
            (7, "farewell".into(), "2.2.0".into()),
            (8, "greeting".into(), "1.0.1".into())
        ])
    );
}

/// The plan names a PR by number, by its branch, or by one of its split branches.
#[test]
fn upkeep_leaves_the_prs_the_plan_names() {
    let plan: Plan = serde_json::from_value(serde_json::json!({
        "repo_context": {"platform": "github", "ecosystems": ["cargo"], "default_branch": "main"},
        "actions": [
            {"type": "create_mr", "branch": "quartermaster/cargo", "title": "t", "description": "d",
             "updates": [], "commands": [], "test_command": "cargo test", "labels": [],
             "fallback_strategy": "individual", "confidence": 1},
            {"type": "close_mr", "mr_id": 9, "confidence": 1}
        ]
    }))
    .unwrap();
    let named = Named::of(&plan, &[]);
    let pr = |number: u64, head: &str| PullRequest {
        number,
        url: String::new(),
        state: crate::forge::State::Open,
        head: head.into(),
        base: "main".into(),
        title: String::new(),
        body: String::new(),
        labels: vec![],
        draft: false,
        from_fork: false,
        created_at: None,
        auto_merge: false,
        reviewers: vec![],
        team_reviewers: vec![],
        assignees: vec![],
    };
    assert!(named.names(&pr(1, "quartermaster/cargo")));
    assert!(named.names(&pr(2, "quartermaster/cargo--greeting")));
    assert!(named.names(&pr(9, "quartermaster/other")));
    assert!(!named.names(&pr(3, "quartermaster/cargo-2")));
    assert!(!named.names(&pr(4, "quartermaster/other")));
}
