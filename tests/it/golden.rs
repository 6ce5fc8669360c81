//! Byte compatibility with docker-agent: what Quartermaster writes must be exactly what Go's
//! `json.MarshalIndent` writes for docker-agent's plan struct. The golden files come from
//! `tests/fixtures/docker-agent/gen` (a Go program; see its README).

use quartermaster::named_plan::{Change, PlanFile, PlanName, PlanStatus, PlanStore};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(Deserialize)]
struct Case {
    file: String,
    plan: Fields,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Fields {
    name: String,
    #[serde(default)]
    title: String,
    content: String,
    #[serde(default)]
    author: String,
    #[serde(default)]
    status: String,
    revision: i64,
    updated_at: String,
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/docker-agent")
}

fn golden(file: &str) -> Vec<u8> {
    std::fs::read(fixtures().join(file)).unwrap()
}

fn cases() -> Vec<Case> {
    // The manifest is Go's compact json.Marshal of the same values.
    let text = std::fs::read_to_string(fixtures().join("cases.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn at(stamp: &str) -> SystemTime {
    humantime::parse_rfc3339(stamp).unwrap()
}

/// The case's plan as Quartermaster writes it: one revision on top of a file at the revision before,
/// with every field set by the write.
fn build(fields: &Fields) -> PlanFile {
    let name = PlanName::parse(&fields.name).unwrap();
    let before = format!("{{\"revision\": {}}}", fields.revision - 1);
    let mut plan = PlanFile::parse(name, before.as_bytes(), Path::new("before")).unwrap();
    let text = |s: &str| Some(s.to_string()).filter(|s| !s.is_empty());
    let (title, author, status) = (
        text(&fields.title),
        text(&fields.author),
        text(&fields.status),
    );
    let change = Change {
        title: title.as_deref(),
        content: Some(&fields.content),
        author: author.as_deref(),
        status: status.as_deref(),
    };
    plan.apply(change, at(&fields.updated_at)).unwrap();
    plan
}

#[test]
fn every_golden_file_is_written_byte_for_byte() {
    let cases = cases();
    assert!(
        cases.len() >= 10,
        "the manifest lists {} cases",
        cases.len()
    );
    for case in &cases {
        let plan = build(&case.plan);
        let ours = String::from_utf8(plan.to_bytes()).unwrap();
        let go = String::from_utf8(golden(&case.file)).unwrap();
        assert_eq!(ours, go, "{}", case.file);
    }
}

#[test]
fn reading_a_golden_file_and_writing_it_back_changes_nothing() {
    for case in cases() {
        let bytes = golden(&case.file);
        let name = PlanName::parse(&case.plan.name).unwrap();
        let plan = PlanFile::parse(name, &bytes, Path::new(&case.file)).unwrap();
        assert_eq!(plan.revision(), case.plan.revision, "{}", case.file);
        assert_eq!(plan.content(), case.plan.content, "{}", case.file);
        assert_eq!(plan.to_bytes(), bytes, "{}", case.file);
    }
}

#[test]
fn golden_files_have_no_trailing_newline_and_escape_html() {
    assert!(!golden("minimal.json").ends_with(b"\n"));
    let html = String::from_utf8(golden("html.json")).unwrap();
    assert!(
        html.contains("\\u003cb\\u003e") && html.contains("\\u0026"),
        "{html}"
    );
    let minimal = String::from_utf8(golden("minimal.json")).unwrap();
    assert!(
        !minimal.contains("\"title\"") && !minimal.contains("\"status\""),
        "{minimal}"
    );
}

fn claim_time() -> SystemTime {
    at("2026-07-07T15:00:01Z")
}

fn finish_time() -> SystemTime {
    at("2026-07-07T15:10:00Z")
}

#[test]
fn claim_and_finish_write_what_docker_agent_would() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("claimed.json"), golden("claim-before.json")).unwrap();
    let name = PlanName::parse("claimed").unwrap();
    let store = PlanStore::new(dir.path()).with_clock(claim_time);
    let claim = store.claim(&name, Some(5), "ready").unwrap();
    assert_eq!(claim.revision(), 6);
    let on_disk = std::fs::read(dir.path().join("claimed.json")).unwrap();
    assert_eq!(
        String::from_utf8(on_disk).unwrap(),
        String::from_utf8(golden("claim-after.json")).unwrap()
    );

    let store = store.with_clock(finish_time);
    store.finish(&claim, PlanStatus::Done).unwrap();
    let on_disk = std::fs::read(dir.path().join("claimed.json")).unwrap();
    assert_eq!(
        String::from_utf8(on_disk).unwrap(),
        String::from_utf8(golden("finish-after.json")).unwrap()
    );
}

#[test]
fn the_largest_revision_is_kept_exactly() {
    let bytes = golden("large-revision.json");
    let name = PlanName::parse("large-revision").unwrap();
    let mut plan = PlanFile::parse(name, &bytes, Path::new("large-revision.json")).unwrap();
    assert_eq!(plan.revision(), 9_223_372_036_854_775_806);
    plan.apply(Change::default(), UNIX_EPOCH + Duration::from_secs(1))
        .unwrap();
    assert_eq!(plan.revision(), i64::MAX);
    let text = String::from_utf8(plan.to_bytes()).unwrap();
    assert!(
        text.contains("\"revision\": 9223372036854775807,"),
        "{text}"
    );
    assert!(
        text.contains("\"updatedAt\": \"1970-01-01T00:00:01Z\""),
        "{text}"
    );
}
