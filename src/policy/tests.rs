use super::*;
use std::time::Duration;

const ORIGIN: &str = ".quartermaster.toml at main (1a2b3c4d)";

fn refusal(text: &str) -> String {
    parse(text, ORIGIN).unwrap_err().to_string()
}

#[test]
fn with_no_file_the_defaults_hold() {
    let policy = from_tree(None, "main", "1a2b3c4d5e6f").unwrap();
    assert_eq!(policy.release_age.minimum, Duration::from_secs(3 * 86_400));
    assert!(policy.advisories.block && policy.deprecated.block);
    assert!(policy.release_notes.enabled);
    assert_eq!(
        policy.release_age.unknown_publish_time,
        UnknownPublishTime::Refuse
    );
    assert_eq!(policy.automerge, Automerge::default());
    insta::assert_snapshot!(policy.summary(), @"policy from the defaults (no .quartermaster.toml at main (1a2b3c4d)): minimum release age 3 days; known advisories refused; deprecated and yanked versions refused");
}

#[test]
fn every_key_parses() {
    let policy = parse(
        r#"
[release-age]
minimum = "1 week"
exclude = ["@acme/*", "lodash", "Django_Extensions"]
unknown-publish-time = "allow"

[advisories]
block = false
ignore = ["GHSA-aaaa-bbbb-cccc", "GHSA-aaaa-bbbb-cccc"]

[deprecated]
block = false

[release-notes]
enabled = false

[automerge]
update-types = ["patch", "minor"]
reviewers = ["octocat", "hubot"]
assignees = ["octocat"]
team-reviewers = ["acme/platform", "group/sub/team"]
"#,
        ORIGIN,
    )
    .unwrap();
    let age = &policy.release_age;
    assert_eq!(age.minimum, Duration::from_secs(7 * 86_400));
    assert!(age.exclude.matches("@acme/widgets", false));
    assert!(age.exclude.matches("lodash", false));
    assert!(
        !age.exclude.matches("lodash-es", false),
        "a plain name is that package only"
    );
    assert!(
        age.exclude.matches("django-extensions", true),
        "PyPI compares names normalised"
    );
    assert!(!age.exclude.matches("django-extensions", false));
    assert_eq!(age.unknown_publish_time, UnknownPublishTime::Allow);
    assert!(!policy.advisories.block);
    assert_eq!(policy.advisories.ignore, vec!["GHSA-aaaa-bbbb-cccc"]);
    assert!(!policy.deprecated.block && !policy.release_notes.enabled);
    let automerge = &policy.automerge;
    assert_eq!(
        automerge.update_types,
        vec![UpdateType::Patch, UpdateType::Minor]
    );
    assert!(automerge.allows(&[UpdateType::Patch]));
    assert!(!automerge.allows(&[UpdateType::Patch, UpdateType::Major]));
    assert!(!automerge.allows(&[]));
    assert_eq!(automerge.reviewers, vec!["octocat", "hubot"]);
    assert_eq!(automerge.assignees, vec!["octocat"]);
    assert_eq!(
        automerge.team_reviewers,
        vec!["acme/platform", "group/sub/team"]
    );
    insta::assert_snapshot!(policy.summary(), @"policy from .quartermaster.toml at main (1a2b3c4d): minimum release age 7 days; exempt: @acme/*, lodash, Django_Extensions; unknown publish times allowed; advisories reported, not refused; deprecated and yanked versions allowed");
}

#[test]
fn zero_turns_the_age_gate_off_and_tables_may_be_partial() {
    for text in [
        "[release-age]\nminimum = \"0\"\n",
        "[release-age]\nminimum = 0\n",
    ] {
        let policy = parse(text, ORIGIN).unwrap();
        assert!(policy.release_age.minimum.is_zero(), "{text}");
        assert!(policy.advisories.block, "other tables keep their defaults");
    }
    let policy = parse("[advisories]\nignore = []\n", ORIGIN).unwrap();
    assert!(
        policy.advisories.block,
        "a table without `block` keeps the default"
    );
    assert_eq!(describe_age(Duration::from_secs(36 * 3600)), "36 hours");
    assert_eq!(describe_age(Duration::from_secs(86_400)), "1 day");
}

#[test]
fn syntax_errors_are_refused() {
    insta::assert_snapshot!(refusal("[release-age\nminimum = 1"));
}

#[test]
fn unknown_tables_are_refused_with_a_suggestion() {
    insta::assert_snapshot!(refusal("[relase-age]\nminimum = \"1 day\"\n"));
}

#[test]
fn unknown_keys_are_refused_with_a_suggestion() {
    insta::assert_snapshot!(refusal("[release-age]\nminimun = \"1 day\"\n"));
    insta::assert_snapshot!(refusal("[advisories]\nblock = true\nsevere = true\n"));
}

#[test]
fn a_table_must_be_a_table() {
    insta::assert_snapshot!(refusal("advisories = true\n"));
}

#[test]
fn the_minimum_must_be_a_duration() {
    insta::assert_snapshot!(refusal("[release-age]\nminimum = \"3\"\n"));
    insta::assert_snapshot!(refusal("[release-age]\nminimum = \"three days\"\n"));
    insta::assert_snapshot!(refusal("[release-age]\nminimum = 3\n"));
    insta::assert_snapshot!(refusal("[release-age]\nminimum = \"400 days\"\n"));
}

#[test]
fn exclusions_must_be_names_or_globs() {
    insta::assert_snapshot!(refusal("[release-age]\nexclude = \"lodash\"\n"));
    insta::assert_snapshot!(refusal("[release-age]\nexclude = [\"lodash\", 3]\n"));
    insta::assert_snapshot!(refusal("[release-age]\nexclude = [\"@acme/{a\"]\n"));
    insta::assert_snapshot!(refusal("[release-age]\nexclude = [\"two words\"]\n"));
}

#[test]
fn unknown_publish_time_is_refuse_or_allow() {
    insta::assert_snapshot!(refusal(
        "[release-age]\nunknown-publish-time = \"ignore\"\n"
    ));
}

#[test]
fn switches_are_booleans() {
    insta::assert_snapshot!(refusal("[advisories]\nblock = \"yes\"\n"));
    insta::assert_snapshot!(refusal("[deprecated]\nblock = 1\n"));
    insta::assert_snapshot!(refusal("[release-notes]\nenabled = \"no\"\n"));
}

#[test]
fn ignored_advisories_are_ids() {
    insta::assert_snapshot!(refusal("[advisories]\nignore = [\"see the issue\"]\n"));
}

#[test]
fn automerge_values_are_checked() {
    insta::assert_snapshot!(refusal("[automerge]\nupdate-types = [\"patches\"]\n"));
    insta::assert_snapshot!(refusal("[automerge]\nreviewers = [\"@octocat\"]\n"));
    insta::assert_snapshot!(refusal("[automerge]\nassignees = [\"octo cat\"]\n"));
    insta::assert_snapshot!(refusal(
        "[automerge]\nteam-reviewers = [\"acme//platform\"]\n"
    ));
    insta::assert_snapshot!(refusal("[automerge]\nmerge = true\n"));
}

#[test]
fn only_regular_files_of_reasonable_size_are_read() {
    let link = from_tree(Some(Err("a symbolic link")), "main", "1a2b3c4d5e").unwrap_err();
    insta::assert_snapshot!(link.to_string());
    let big = vec![b'#'; 70 * 1024];
    let large = from_tree(Some(Ok(big)), "main", "1a2b3c4d5e").unwrap_err();
    insta::assert_snapshot!(large.to_string());
    let binary = from_tree(Some(Ok(vec![0xff, 0xfe])), "main", "1a2b3c4d5e").unwrap_err();
    insta::assert_snapshot!(binary.to_string());
}

#[test]
fn a_policy_file_given_by_the_operator_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("policy.toml");
    std::fs::write(&path, "[release-age]\nminimum = \"12h\"\n").unwrap();
    let policy = from_file(&path).unwrap();
    assert_eq!(policy.release_age.minimum, Duration::from_secs(12 * 3600));
    assert_eq!(policy.source, path.display().to_string());
    let missing = from_file(&dir.path().join("nope.toml")).unwrap_err();
    assert!(
        matches!(missing, PolicyError::Unreadable { .. }),
        "{missing}"
    );
    assert!(from_file(dir.path()).is_err(), "a directory is no policy");
}
