//! The runner forms that work on top of the unit's environment (`uv run`, `poetry run`, `npx`),
//! and their refusals of abuse.

use crate::finding::Code;
use crate::mission::{Mission, load};

fn deps() -> Mission {
    load("deps", None).unwrap()
}

#[test]
fn environment_runners_are_allowed_and_run_their_frozen_form() {
    let m = deps();
    let argv = |command: &str| m.check_test_command(command).unwrap().argv.join(" ");
    assert_eq!(argv("npx jest --ci"), "npx --no -- jest --ci");
    assert_eq!(argv("npx vitest run"), "npx --no -- vitest run");
    assert_eq!(argv("npx mocha"), "npx --no -- mocha");
    assert_eq!(argv("uv run pytest -q"), "uv run --no-sync pytest -q");
    assert_eq!(
        argv("uv run python -m unittest discover -s tests"),
        "uv run --no-sync python -m unittest discover -s tests"
    );
    assert_eq!(argv("poetry run pytest -x"), "poetry run pytest -x");
    assert_eq!(
        argv("poetry run python -m pytest -k slow"),
        "poetry run python -m pytest -k slow"
    );
    assert_eq!(argv("pnpm test"), "pnpm test");
    assert_eq!(argv("bundle exec rspec"), "bundle exec rspec");
}

#[test]
fn path_arguments_follow_the_words_runs_adds() {
    let m = deps();
    let test = m.check_test_command("uv run pytest tests/unit").unwrap();
    assert_eq!(test.paths.len(), 1);
    assert_eq!(test.argv[test.paths[0].word], "tests/unit");
    let test = m.check_test_command("npx jest test/app.test.js").unwrap();
    assert_eq!(test.argv[test.paths[0].word], "test/app.test.js");
    let discover = m
        .check_test_command("poetry run python -m unittest discover -s tests")
        .unwrap();
    assert_eq!(discover.argv[discover.paths[0].word], "tests");
    let refused = m
        .check_test_command("uv run python -m unittest discover tests")
        .unwrap_err();
    assert_eq!(refused.code, Code::TestUnittestName);
    let refused = m
        .check_test_command("uv run pytest node_modules/x")
        .unwrap_err();
    assert_eq!(refused.code, Code::TestDependencyDir);
}

#[test]
fn environment_runners_refuse_what_escapes_the_lock() {
    let m = deps();
    let cases = [
        ("npx some-pkg-not-installed", Code::TestPackageExecutor),
        ("npx --yes jest", Code::TestPackageExecutor),
        ("npx -p evil jest", Code::TestPackageExecutor),
        ("npx jest --config evil.js", Code::TestOptionNotAllowed),
        ("uv run --with evil pytest", Code::TestPackageExecutor),
        ("uv run --with=evil pytest", Code::TestPackageExecutor),
        ("uv run --isolated pytest", Code::TestPackageExecutor),
        (
            "uv run --python /tmp/evil pytest",
            Code::TestPackageExecutor,
        ),
        ("uv run --frozen pytest", Code::TestOptionNotAllowed),
        ("uv run python -c 'import os'", Code::TestInlineCode),
        ("uv run bash -c 'make'", Code::TestInlineCode),
        ("uv run pip install evil", Code::TestInstall),
        ("uv run python -m pip install evil", Code::TestInstall),
        ("uv run pytest -p evil_plugin", Code::TestOptionNotAllowed),
        ("uv run evil-script", Code::TestNotAllowlisted),
        ("uv tool run pytest", Code::TestPackageExecutor),
        ("poetry run python -c x", Code::TestInlineCode),
        ("poetry run pip install evil", Code::TestInstall),
        (
            "poetry run --directory /tmp pytest",
            Code::TestOptionNotAllowed,
        ),
        ("poetry add evil", Code::TestInstall),
    ];
    let mut messages = Vec::new();
    for (bad, code) in cases {
        let r = m.check_test_command(bad).unwrap_err();
        assert_eq!(r.code, code, "{bad}: {}", r.message);
        messages.push(format!("{bad}\n  [{}] {}", r.code, r.message));
    }
    insta::assert_snapshot!("environment_runner_refusals", messages.join("\n"));
}
