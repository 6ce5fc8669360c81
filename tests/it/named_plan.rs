//! Reading, claiming and writing back docker-agent named plans, and every refusal on the way.

use quartermaster::hint::{Hint, with_hint};
use quartermaster::named_plan::{
    LOCK_FILE, MAX_CONTENT_BYTES, MAX_FILE_BYTES, PlanName, PlanStatus, PlanStore, StoreError,
    parse_reference, plan_json, plans_dir_for, result_content,
};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

const READY_PLAN: &str = r#"{
  "name": "weekly",
  "title": "Weekly",
  "content": "{\"repo_context\": {}}",
  "author": "planner",
  "status": "ready",
  "revision": 3,
  "updatedAt": "2026-07-01T00:00:00Z"
}"#;

fn name(text: &str) -> PlanName {
    PlanName::parse(text).unwrap()
}

fn store_with(file: &str, bytes: &str) -> (tempfile::TempDir, PlanStore) {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join(file), bytes).unwrap();
    let store = PlanStore::new(dir.path());
    (dir, store)
}

fn read(dir: &Path, file: &str) -> String {
    fs::read_to_string(dir.join(file)).unwrap()
}

#[test]
fn a_claim_moves_ready_to_in_progress_by_quartermaster() {
    let (dir, store) = store_with("weekly.json", READY_PLAN);
    let claim = store.claim(&name("weekly"), Some(3), "ready").unwrap();
    assert_eq!(claim.revision(), 4);
    let plan = store.read(&name("weekly")).unwrap();
    assert_eq!(
        (plan.status(), plan.author(), plan.revision()),
        ("in-progress", "quartermaster", 4)
    );
    assert_eq!(plan.content(), "{\"repo_context\": {}}");
    assert_eq!(plan.title(), "Weekly");
    let finished = store.finish(&claim, PlanStatus::Failed).unwrap();
    assert_eq!((finished.status(), finished.revision()), ("failed", 5));
    assert_eq!(finished.content(), "{\"repo_context\": {}}");
    assert!(!read(dir.path(), "weekly.json").ends_with('\n'));
}

#[test]
fn a_stale_revision_is_a_conflict_and_writes_nothing() {
    let (dir, store) = store_with("weekly.json", READY_PLAN);
    let err = store.claim(&name("weekly"), Some(2), "ready").unwrap_err();
    assert_eq!(
        with_hint(&err),
        "plan `weekly` changed: expected revision 2, found 3; nothing was written\nhint: another writer got there first: read the plan again, then retry with its current revision"
    );
    assert!(matches!(
        err,
        StoreError::Conflict {
            expected: 2,
            current: 3,
            ..
        }
    ));
    assert_eq!(read(dir.path(), "weekly.json"), READY_PLAN);
}

#[test]
fn finishing_after_someone_else_wrote_is_a_conflict() {
    let (_dir, store) = store_with("weekly.json", READY_PLAN);
    let claim = store.claim(&name("weekly"), None, "ready").unwrap();
    store.submit(&name("weekly"), "{}", None, Some(4)).unwrap();
    let err = store.finish(&claim, PlanStatus::Done).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Conflict {
                expected: 4,
                current: 5,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_wrong_status_is_refused_and_writes_nothing() {
    let draft = READY_PLAN.replace("\"ready\"", "\"draft\"");
    let (dir, store) = store_with("weekly.json", &draft);
    let err = store.claim(&name("weekly"), None, "ready").unwrap_err();
    assert_eq!(
        err.to_string(),
        "plan `weekly` has status `draft` at revision 3, not `ready`; nothing ran"
    );
    assert!(err.hint().unwrap().contains("--claim-status"), "{err:?}");
    assert_eq!(read(dir.path(), "weekly.json"), draft);
    let approved = store.claim(&name("weekly"), None, "draft").unwrap();
    assert_eq!(approved.revision(), 4);
}

#[test]
fn a_plan_without_status_names_that() {
    let bare = r#"{"name": "weekly", "content": "x", "revision": 1, "updatedAt": ""}"#;
    let (_dir, store) = store_with("weekly.json", bare);
    let err = store.claim(&name("weekly"), None, "ready").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("plan `weekly` has status (none) at revision 1"),
        "{err}"
    );
}

#[test]
fn a_missing_plan_says_where_it_looked() {
    let dir = tempfile::tempdir().unwrap();
    let store = PlanStore::new(dir.path());
    let err = store.claim(&name("weekly"), None, "ready").unwrap_err();
    assert_eq!(
        with_hint(&err),
        format!(
            "no plan `weekly` in {}\nhint: the agent has not written it, or the plans directory is not the one docker-agent used (--plans-dir, QM_PLANS_DIR)",
            dir.path().display()
        )
    );
    assert!(matches!(
        store.read(&name("weekly")),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn corrupt_files_are_named_and_left_untouched() {
    let cases = [
        ("{\"name\": ", "EOF while parsing"),
        ("[1, 2]", "it holds an array, not a plan object"),
        ("{\"revision\": \"3\"}", "`revision` must be an integer"),
        ("{\"revision\": 1.5}", "`revision` must be an integer"),
        ("{\"status\": 7}", "`status` must be a string"),
        ("\u{feff}{}", "expected value"),
    ];
    for (bytes, reason) in cases {
        let (dir, store) = store_with("weekly.json", bytes);
        let err = store.claim(&name("weekly"), None, "ready").unwrap_err();
        let text = err.to_string();
        let path = dir.path().join("weekly.json");
        assert!(
            text.starts_with(&format!("plan file {} is corrupt: ", path.display())),
            "{text}"
        );
        assert!(text.contains(reason), "{text}");
        assert!(text.ends_with("; it was left untouched"), "{text}");
        assert_eq!(read(dir.path(), "weekly.json"), bytes);
    }
}

#[test]
fn only_regular_files_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = PlanStore::new(dir.path());
    fs::write(dir.path().join("target.json"), READY_PLAN).unwrap();
    std::os::unix::fs::symlink(dir.path().join("target.json"), dir.path().join("link.json"))
        .unwrap();
    fs::create_dir(dir.path().join("folder.json")).unwrap();
    let fifo = dir.path().join("pipe.json");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let expect = [
        (
            "link",
            "it is a symbolic link, and only a regular file is read as a plan",
        ),
        ("folder", "it is a directory, not a plan file"),
        (
            "pipe",
            "it is not a regular file (a device or a named pipe?)",
        ),
    ];
    for (plan, reason) in expect {
        let err = store.read(&name(plan)).unwrap_err();
        assert!(err.to_string().contains(reason), "{err}");
    }
}

#[test]
fn names_follow_docker_agents_rule() {
    for bad in [
        "", "Weekly", "-x", "_x", "a/b", "..", "a.json", ".plans", "é",
    ] {
        let err = PlanName::parse(bad).unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("`{bad}` is not a valid plan name")),
            "{err}"
        );
    }
    for good in ["a", "0", "deps-weekly", "x_1-2"] {
        assert_eq!(name(good).as_str(), good);
    }
    assert_eq!(name("weekly").result().as_str(), "weekly-result");
}

#[test]
fn unknown_fields_are_kept_in_place() {
    let extra = r#"{
  "name": "weekly",
  "x-owner": {"team": "infra", "tags": [1, 2.5, "<a>"]},
  "content": "x",
  "status": "ready",
  "x-note": null,
  "revision": 1,
  "updatedAt": "2026-07-01T00:00:00Z",
  "x-last": true
}"#;
    let (dir, store) = store_with("weekly.json", extra);
    store.claim(&name("weekly"), Some(1), "ready").unwrap();
    let written: serde_json::Value =
        serde_json::from_str(&read(dir.path(), "weekly.json")).unwrap();
    let keys: Vec<&str> = written
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "name",
            "x-owner",
            "content",
            "author",
            "status",
            "x-note",
            "revision",
            "updatedAt",
            "x-last"
        ]
    );
    assert_eq!(
        written["x-owner"],
        serde_json::json!({"team": "infra", "tags": [1, 2.5, "<a>"]})
    );
    assert_eq!(
        (&written["x-note"], &written["x-last"]),
        (&serde_json::Value::Null, &serde_json::json!(true))
    );
    let plan = store.read(&name("weekly")).unwrap();
    assert_eq!(plan.extra("x-last"), Some(&serde_json::json!(true)));
}

#[test]
fn the_file_name_wins_over_the_stored_name() {
    let (dir, store) = store_with(
        "weekly.json",
        &READY_PLAN.replace("\"weekly\"", "\"other\""),
    );
    assert_eq!(
        store.read(&name("weekly")).unwrap().name().as_str(),
        "weekly"
    );
    store.claim(&name("weekly"), None, "ready").unwrap();
    assert!(read(dir.path(), "weekly.json").starts_with("{\n  \"name\": \"weekly\","));
}

#[test]
fn files_are_private_to_their_owner() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("data/plans");
    let store = PlanStore::new(&dir);
    store
        .submit(&name("weekly"), "{}", Some("planner"), None)
        .unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&root.path().join("data")), 0o700);
    assert_eq!(mode(&dir.join("weekly.json")), 0o600);
    assert_eq!(mode(&dir.join(LOCK_FILE)), 0o600);
    let entries: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        entries.len(),
        2,
        "no temporary file is left behind: {entries:?}"
    );
}

#[test]
fn submit_creates_replaces_and_respects_a_run_in_progress() {
    let dir = tempfile::tempdir().unwrap();
    let store = PlanStore::new(dir.path());
    let first = store
        .submit(&name("weekly"), "{\"a\": 1}", Some("planner"), None)
        .unwrap();
    assert_eq!(
        (first.revision(), first.status(), first.author()),
        (1, "ready", "planner")
    );
    let second = store
        .submit(&name("weekly"), "{\"a\": 2}", None, Some(1))
        .unwrap();
    assert_eq!((second.revision(), second.author()), (2, "planner"));
    let stale = store
        .submit(&name("weekly"), "{}", None, Some(1))
        .unwrap_err();
    assert!(matches!(
        stale,
        StoreError::Conflict {
            expected: 1,
            current: 2,
            ..
        }
    ));
    store.claim(&name("weekly"), Some(2), "ready").unwrap();
    let busy = store.submit(&name("weekly"), "{}", None, None).unwrap_err();
    assert_eq!(
        with_hint(&busy),
        "plan `weekly` is being run by Quartermaster (status `in-progress`, revision 3)\nhint: submit again once the run has finished, or pass last_known_revision to replace the plan deliberately"
    );
    assert_eq!(
        store
            .submit(&name("weekly"), "{}", None, Some(3))
            .unwrap()
            .revision(),
        4
    );
}

#[test]
fn oversized_content_and_exhausted_revisions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = PlanStore::new(dir.path());
    let big = "x".repeat((10 << 20) + 1);
    let err = store.submit(&name("big"), &big, None, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "plan `big` would be 10485761 bytes of content; at most 10485760 are stored"
    );
    assert!(!dir.path().join("big.json").exists());
    let max = format!(
        "{{\"content\": \"x\", \"status\": \"ready\", \"revision\": {}}}",
        i64::MAX
    );
    fs::write(dir.path().join("max.json"), &max).unwrap();
    let err = store.claim(&name("max"), None, "ready").unwrap_err();
    assert_eq!(
        err.to_string(),
        "plan `max` is at revision 9223372036854775807, the largest docker-agent can store; nothing was written"
    );
    assert_eq!(read(dir.path(), "max.json"), max);
}

#[test]
fn files_docker_agent_could_not_load_are_neither_read_nor_written() {
    // Content of the largest size escapes to six bytes a byte; an unknown field fills the rest up
    // to just under docker-agent's file limit, so the claim's few extra bytes cross it.
    let content = "<".repeat(MAX_CONTENT_BYTES);
    let head = format!(
        "{{\"content\": \"{}\", \"status\": \"ready\", \"x\": \"",
        "\\u003c".repeat(MAX_CONTENT_BYTES)
    );
    let pad = MAX_FILE_BYTES - head.len() - 2 - 8;
    let near_limit = format!("{head}{}\"}}", "a".repeat(pad));
    let (dir, store) = store_with("big.json", &near_limit);
    assert_eq!(store.read(&name("big")).unwrap().content(), content);
    let err = store.claim(&name("big"), None, "ready").unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("plan `big` would be "), "{text}");
    assert!(
        text.ends_with(&format!(
            " bytes of JSON; at most {MAX_FILE_BYTES} are stored"
        )),
        "{text}"
    );
    fs::write(
        dir.path().join("big.json"),
        format!("{near_limit}{}", " ".repeat(9)),
    )
    .unwrap();
    let err = store.read(&name("big")).unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("it is larger than {MAX_FILE_BYTES} bytes")),
        "{err}"
    );
}

#[test]
fn a_held_lock_times_out_with_a_clear_error() {
    let (dir, store) = store_with("weekly.json", READY_PLAN);
    let holder = fs::File::create(dir.path().join(LOCK_FILE)).unwrap();
    holder.lock().unwrap();
    let store = store.with_lock_timeout(Duration::from_millis(50));
    let err = store.claim(&name("weekly"), None, "ready").unwrap_err();
    assert_eq!(
        with_hint(&err),
        format!(
            "another process has held the plans lock {} for more than 50ms\nhint: try again, or look for a stuck process",
            dir.path().join(LOCK_FILE).display()
        )
    );
    drop(holder);
    assert!(store.claim(&name("weekly"), None, "ready").is_ok());
}

#[test]
fn results_are_created_then_updated_and_carry_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let store = PlanStore::new(dir.path());
    let report = "{\"exit_code\": 1, \"tail\": \"```\"}";
    let content = result_content("## Quartermaster\n\n1 failed\n", report);
    let first = store
        .write_result(&name("weekly").result(), PlanStatus::Failed, &content)
        .unwrap();
    assert_eq!(
        (first.revision(), first.status(), first.author()),
        (1, "failed", "quartermaster")
    );
    assert_eq!(plan_json(first.content()), format!("{report}\n"));
    let second = store
        .write_result(&name("weekly").result(), PlanStatus::Done, "ok")
        .unwrap();
    assert_eq!(
        (second.revision(), second.status(), second.title()),
        (2, "done", "Quartermaster run result")
    );
    assert!(dir.path().join("weekly-result.json").exists());
}

#[test]
fn the_default_directory_is_docker_agents() {
    let os = |s: &str| Some(std::ffi::OsString::from(s));
    assert_eq!(
        plans_dir_for(os("/home/u"), os("/var/tmp")),
        Path::new("/home/u/.cagent/plans")
    );
    assert_eq!(
        plans_dir_for(os("/home/u/../v/"), None),
        Path::new("/home/v/.cagent/plans")
    );
    assert_eq!(
        plans_dir_for(os(""), os("/var/tmp")),
        Path::new("/var/tmp/.cagent/plans")
    );
    assert_eq!(plans_dir_for(None, None), Path::new("/tmp/.cagent/plans"));
}

#[test]
fn references_outcomes_and_plan_content() {
    assert_eq!(
        parse_reference("docker-agent:weekly").unwrap().unwrap(),
        name("weekly")
    );
    assert!(parse_reference("docker-agent:Weekly").unwrap().is_err());
    assert!(parse_reference("plan.json").is_none());
    assert_eq!(PlanStatus::from_run(true, 0), PlanStatus::Done);
    assert_eq!(PlanStatus::from_run(true, 1), PlanStatus::Failed);
    assert_eq!(PlanStatus::from_run(true, 2), PlanStatus::Failed);
    assert_eq!(PlanStatus::from_run(false, 2), PlanStatus::Invalid);
    let prose = "Here is the plan:\n\n```json\n{\"actions\": []}\n```\n";
    assert_eq!(plan_json(prose), "{\"actions\": []}\n");
}
