use super::*;
use crate::finding::Code;
use crate::mission::{Mission, MissionError, load};

use crate::mission::tests::upd;

/// The deps mission's match of `command` in ecosystem `eco`, declaring `package` to `to`.
fn matched(eco: &str, command: &str, package: &str, to: &str) -> crate::mission::CommandMatch {
    load("deps", None)
        .unwrap()
        .check_update_command(command, &[eco.to_string()], &[upd(package, to)])
        .unwrap_or_else(|r| panic!("{command}: {}", r.message))
}

fn mission_with_bundle_command(entry: &str) -> Result<Mission, MissionError> {
    let text = format!(
        r#"{{"description":"x","action_types":["create_mr"],"ecosystems":{{"bundle":{{"packages":"rubygems","versions":"rubygems","commands":[{entry}],"files":["Gemfile.lock"]}}}}}}"#
    );
    Mission::from_json("custom", &text, "custom/allowlist.json")
}

#[test]
fn bundle_update_runs_as_bundle_lock_update() {
    let m = matched("bundle", "bundle update rack", "rack", "3.1.0");
    assert_eq!(m.argv, vec!["bundle", "lock", "--update", "rack"]);
    assert_eq!(m.text, "bundle update rack");
    assert_eq!(m.pattern, "bundle update <pkg>");
    assert_eq!(m.package.as_deref(), Some("rack"));
    assert_eq!(m.ecosystem, "bundle");
}

#[test]
fn bundle_lock_update_written_directly_is_accepted_and_runs_as_written() {
    let m = matched("bundle", "bundle lock --update rack", "rack", "3.1.0");
    assert_eq!(m.argv, vec!["bundle", "lock", "--update", "rack"]);
    assert_eq!(m.text, "bundle lock --update rack");
    assert_eq!(m.pattern, "bundle lock --update <pkg>");
    assert_eq!(m.package.as_deref(), Some("rack"));
}

#[test]
fn poetry_update_and_add_run_with_lock() {
    let m = matched("poetry", "poetry update requests", "requests", "2.32.0");
    assert_eq!(m.argv, vec!["poetry", "update", "--lock", "requests"]);
    assert_eq!(m.text, "poetry update requests");
    let m = matched("poetry", "poetry add requests@2.32.0", "requests", "2.32.0");
    assert_eq!(m.argv, vec!["poetry", "add", "--lock", "requests@2.32.0"]);
    assert_eq!(m.text, "poetry add requests@2.32.0");
    assert_eq!(m.pattern, "poetry add <pkg>@<ver>");
}

#[test]
fn forms_without_runs_execute_exactly_as_written() {
    for (eco, command, package, to) in [
        ("npm", "npm install lodash@4.17.21", "lodash", "4.17.21"),
        ("npm", "npm update lodash", "lodash", "4.17.21"),
        ("yarn", "yarn add lodash@4.17.21", "lodash", "4.17.21"),
        ("pip", "pip install -U requests", "requests", "2.32.0"),
        (
            "cargo",
            "cargo update -p serde --precise 1.0.201",
            "serde",
            "1.0.201",
        ),
        (
            "go",
            "go get github.com/a/b@v1.2.3",
            "github.com/a/b",
            "v1.2.3",
        ),
        ("go", "go mod tidy", "github.com/a/b", "v1.2.3"),
    ] {
        let m = matched(eco, command, package, to);
        let words: Vec<&str> = command.split(' ').collect();
        assert_eq!(m.argv, words, "{command}");
        assert_eq!(m.text, command);
    }
}

#[test]
fn the_plan_cannot_write_the_runs_form_or_add_options_to_it() {
    let deps = load("deps", None).unwrap();
    for (eco, command, code) in [
        (
            "poetry",
            "poetry update --lock requests",
            Code::CommandOptionInjection,
        ),
        (
            "bundle",
            "bundle update --conservative rack",
            Code::CommandOptionInjection,
        ),
        (
            "bundle",
            "bundle lock --update rack --print",
            Code::CommandOptionInjection,
        ),
        (
            "bundle",
            "bundle update rails",
            Code::CommandUndeclaredPackage,
        ),
        (
            "bundle",
            "bundle lock --update",
            Code::CommandNeedsLockMaintenance,
        ),
    ] {
        let r = deps
            .check_update_command(command, &[eco.to_string()], &[upd("rack", "3.1.0")])
            .unwrap_err();
        assert_eq!(r.code, code, "{command}: {}", r.message);
    }
}

#[test]
fn runs_with_a_placeholder_its_form_lacks_is_refused_at_load() {
    let err = mission_with_bundle_command(
        r#"{"form": "bundle update <pkg>", "runs": "bundle lock --update <pkg>:<ver>"}"#,
    )
    .unwrap_err();
    let MissionError::Runs(runs) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(runs.ecosystem, "bundle");
    assert_eq!(runs.form, "bundle update <pkg>");
    assert_eq!(runs.problem, RunsProblem::Unbound("<ver>".into()));
    assert_eq!(
        err.to_string(),
        "custom/allowlist.json: ecosystem `bundle`, command `bundle update <pkg>`: `runs` pattern `bundle lock --update <pkg>:<ver>` uses `<ver>`, which the form does not bind; `runs` may only use the form's placeholders"
    );
}

#[test]
fn runs_must_keep_the_forms_program_and_placeholders_and_parse() {
    for (entry, expected) in [
        (
            r#"{"form": "bundle update <pkg>", "runs": "bundle lock --update"}"#,
            "`runs` pattern `bundle lock --update` lacks `<pkg>`, which the form binds",
        ),
        (
            r#"{"form": "bundle update <pkg>", "runs": "gem update <pkg>"}"#,
            "`runs` pattern `gem update <pkg>` starts with `gem`; it must run the form's program `bundle`",
        ),
        (
            r#"{"form": "bundle update <pkg>", "runs": "bundle lock --update <thing>"}"#,
            "`runs` pattern `bundle lock --update <thing>` does not parse: unknown placeholder `<thing>`",
        ),
    ] {
        let err = mission_with_bundle_command(entry).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "custom/allowlist.json: ecosystem `bundle`, command `bundle update <pkg>`: "
            ),
            "{err}"
        );
        assert!(err.contains(expected), "{err}");
    }
}

#[test]
fn command_entries_are_a_pattern_or_a_form_with_runs() {
    let err = mission_with_bundle_command(r#"{"form": "bundle update <pkg>", "run": "x"}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown field `run`"), "{err}");
    let err = mission_with_bundle_command(r#"{"form": "bundle update <pkg>"}"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing field `runs`"), "{err}");
    let err = mission_with_bundle_command("3").unwrap_err().to_string();
    assert!(
        err.contains(r#"expected a command pattern, or {"form": pattern, "runs": pattern}"#),
        "{err}"
    );
    let err = mission_with_bundle_command(r#"{"form": "bundle <ver>", "runs": "bundle <ver>"}"#)
        .unwrap_err();
    assert!(
        matches!(&err, MissionError::Form { .. } if err.to_string().contains("ecosystem `bundle`, pattern `bundle <ver>`: `<ver>` needs a `<pkg>`")),
        "{err}"
    );
    let m = mission_with_bundle_command(
        r#""bundle lock --update <pkg>", {"form": "bundle update <pkg>", "runs": "bundle lock --update <pkg>"}"#,
    )
    .unwrap();
    let commands = &m.ecosystems["bundle"].commands;
    assert_eq!(commands[0].runs, None);
    assert_eq!(
        commands[0].executed().source(),
        "bundle lock --update <pkg>"
    );
    assert_eq!(commands[1].source(), "bundle update <pkg>");
    assert_eq!(
        commands[1].executed().source(),
        "bundle lock --update <pkg>"
    );
    let programs: Vec<&str> = m.update_programs().into_iter().collect();
    assert_eq!(programs, vec!["bundle"]);
}
