//! Test commands that run code of the plan's own, branch names, and paths.

use super::{Case, case, set};
use serde_json::json;

pub(super) const CASES: &[Case] = &[
    // --- test command abuse ----------------------------------------------------------------------
    case(
        "python-c",
        |p| set(p, "/actions/0/test_command", json!("python -c 'import os'")),
        &[("/actions/0/test_command", "test_command.inline_code")],
    ),
    case(
        "node-e",
        |p| set(p, "/actions/1/test_command", json!("node -e 'require(1)'")),
        &[("/actions/1/test_command", "test_command.inline_code")],
    ),
    case(
        "ruby-e",
        |p| set(p, "/actions/0/test_command", json!("ruby -e 'system(1)'")),
        &[("/actions/0/test_command", "test_command.inline_code")],
    ),
    case(
        "bash-c-context",
        |p| {
            set(
                p,
                "/repo_context/test_command",
                json!("bash -c 'make test'"),
            )
        },
        &[("/repo_context/test_command", "test_command.inline_code")],
    ),
    case(
        "npx",
        |p| set(p, "/actions/1/test_command", json!("npx left-pad")),
        &[("/actions/1/test_command", "test_command.package_executor")],
    ),
    case(
        "npm-exec-test",
        |p| set(p, "/actions/1/test_command", json!("npm exec -- jest")),
        &[("/actions/1/test_command", "test_command.package_executor")],
    ),
    case(
        "go-run-test",
        |p| set(p, "/actions/0/test_command", json!("go run ./cmd/selftest")),
        &[("/actions/0/test_command", "test_command.package_executor")],
    ),
    case(
        "pip-install-test",
        |p| set(p, "/actions/0/test_command", json!("pip install pytest")),
        &[("/actions/0/test_command", "test_command.install")],
    ),
    case(
        "npm-ci-test",
        |p| set(p, "/actions/1/test_command", json!("npm ci")),
        &[("/actions/1/test_command", "test_command.install")],
    ),
    case(
        "go-test-exec",
        |p| {
            set(
                p,
                "/actions/0/test_command",
                json!("go test -exec=/tmp/evil ./..."),
            )
        },
        &[("/actions/0/test_command", "test_command.option_not_allowed")],
    ),
    case(
        "cargo-test-config",
        |p| {
            set(
                p,
                "/actions/2/test_command",
                json!("cargo test --config target.x.runner=sh"),
            )
        },
        &[("/actions/2/test_command", "test_command.option_not_allowed")],
    ),
    case(
        "maven-javaagent",
        |p| {
            set(
                p,
                "/actions/0/test_command",
                json!("mvn -DargLine=-javaagent:/tmp/x.jar test"),
            )
        },
        &[("/actions/0/test_command", "test_command.option_not_allowed")],
    ),
    case(
        "gradle-init-script",
        |p| {
            set(
                p,
                "/actions/0/test_command",
                json!("gradle --init-script /tmp/x test"),
            )
        },
        &[("/actions/0/test_command", "test_command.option_not_allowed")],
    ),
    case(
        "pytest-plugin",
        |p| set(p, "/actions/0/test_command", json!("pytest -p evil_plugin")),
        &[("/actions/0/test_command", "test_command.option_not_allowed")],
    ),
    case(
        "maven-goal-behind-a-property",
        |p| set(p, "/actions/0/test_command", json!("mvn -Dtest deploy")),
        &[("/actions/0/test_command", "test_command.invalid_argument")],
    ),
    case(
        "coverage-report-outside-the-workspace",
        |p| {
            set(
                p,
                "/actions/0/test_command",
                json!("pytest --cov-report xml:/github/workspace/.git/config"),
            )
        },
        &[("/actions/0/test_command", "test_command.invalid_argument")],
    ),
    case(
        "cargo-target-spec-outside",
        |p| {
            set(
                p,
                "/actions/2/test_command",
                json!("cargo test --target ../../tmp/x.json"),
            )
        },
        &[("/actions/2/test_command", "test_command.invalid_argument")],
    ),
    case(
        "dotnet-response-file",
        |p| {
            set(
                p,
                "/actions/0/test_command",
                json!("dotnet test -c @/tmp/evil.rsp"),
            )
        },
        &[("/actions/0/test_command", "test_command.invalid_argument")],
    ),
    case(
        "pytest-warning-filter-imports-a-module",
        |p| {
            set(
                p,
                "/actions/0/test_command",
                json!("pytest -W error::antigravity.X"),
            )
        },
        &[("/actions/0/test_command", "test_command.option_not_allowed")],
    ),
    case(
        "npm-tarball",
        |p| set(p, "/actions/1/commands/0", json!("npm update evil.tar")),
        &[("/actions/1/commands/0", "command.package_spec")],
    ),
    case(
        "make-variable",
        |p| {
            set(
                p,
                "/actions/0/test_command",
                json!("make test SHELL=/tmp/evil"),
            )
        },
        &[("/actions/0/test_command", "test_command.invalid_argument")],
    ),
    case(
        "test-path-escape",
        |p| {
            set(
                p,
                "/actions/0/test_command",
                json!("go test ../../outside/..."),
            )
        },
        &[("/actions/0/test_command", "test_command.invalid_argument")],
    ),
    case(
        "maven-plugin-goal",
        |p| {
            set(
                p,
                "/actions/0/test_command",
                json!("mvn com.evil:plugin:1.0:run"),
            )
        },
        &[("/actions/0/test_command", "test_command.invalid_argument")],
    ),
    case(
        "not-a-runner",
        |p| {
            set(
                p,
                "/actions/0/test_command",
                json!("curl http://evil.example"),
            )
        },
        &[("/actions/0/test_command", "test_command.runner_not_allowed")],
    ),
    case(
        "go-generate",
        |p| set(p, "/actions/0/test_command", json!("go generate ./...")),
        &[("/actions/0/test_command", "test_command.not_allowlisted")],
    ),
    // --- branch names ------------------------------------------------------------------------------
    case(
        "branch-outside-prefix",
        |p| set(p, "/actions/0/branch", json!("main")),
        &[("/actions/0/branch", "branch.prefix")],
    ),
    case(
        "branch-prefix-only",
        |p| set(p, "/actions/0/branch", json!("quartermaster/")),
        &[("/actions/0/branch", "branch.prefix")],
    ),
    case(
        "branch-dotdot",
        |p| set(p, "/actions/0/branch", json!("quartermaster/a..b")),
        &[("/actions/0/branch", "branch.invalid_ref")],
    ),
    case(
        "branch-space",
        |p| set(p, "/actions/0/branch", json!("quartermaster/a b")),
        &[("/actions/0/branch", "branch.invalid_ref")],
    ),
    case(
        "branch-lock",
        |p| set(p, "/actions/0/branch", json!("quartermaster/x.lock")),
        &[("/actions/0/branch", "branch.invalid_ref")],
    ),
    case(
        "branch-tilde",
        |p| set(p, "/actions/0/branch", json!("quartermaster/x~1")),
        &[("/actions/0/branch", "branch.invalid_ref")],
    ),
    case(
        "branch-duplicate",
        |p| set(p, "/actions/1/branch", json!("quartermaster/go-patch")),
        &[("/actions/1/branch", "branch.duplicate")],
    ),
    case(
        "branch-nested",
        |p| set(p, "/actions/1/branch", json!("quartermaster/go-patch/npm")),
        &[("/actions/1/branch", "branch.conflict")],
    ),
    case(
        "branch-is-another-actions-split",
        |p| {
            set(
                p,
                "/actions/1/branch",
                json!("quartermaster/go-patch--github.com-gorilla-mux"),
            )
        },
        &[("/actions/1/branch", "branch.duplicate")],
    ),
    case(
        "branch-under-another-actions-split",
        |p| {
            set(
                p,
                "/actions/1/branch",
                json!("quartermaster/go-patch--github.com-gorilla-mux/npm"),
            )
        },
        &[("/actions/1/branch", "branch.conflict")],
    ),
    case(
        "branch-too-long",
        |p| {
            set(
                p,
                "/actions/0/branch",
                json!(format!("quartermaster/{}", "a".repeat(200))),
            )
        },
        &[("/actions/0/branch", "limit.too_long")],
    ),
    case(
        "default-branch",
        |p| set(p, "/repo_context/default_branch", json!("main..x")),
        &[("/repo_context/default_branch", "default_branch.invalid_ref")],
    ),
    // --- paths ---------------------------------------------------------------------------------------
    case(
        "workdir-parent",
        |p| set(p, "/actions/0/working_dir", json!("../outside")),
        &[("/actions/0/working_dir", "path.parent")],
    ),
    case(
        "workdir-inner-parent",
        |p| set(p, "/actions/0/working_dir", json!("providers/../../x")),
        &[("/actions/0/working_dir", "path.parent")],
    ),
    case(
        "workdir-absolute",
        |p| set(p, "/actions/0/working_dir", json!("/etc")),
        &[("/actions/0/working_dir", "path.absolute")],
    ),
    case(
        "workdir-windows",
        |p| set(p, "/actions/0/working_dir", json!("C:\\Windows")),
        &[("/actions/0/working_dir", "path.absolute")],
    ),
    case(
        "workdir-git",
        |p| set(p, "/actions/0/working_dir", json!("sub/.git/hooks")),
        &[("/actions/0/working_dir", "path.git_dir")],
    ),
    case(
        "workdir-dot",
        |p| set(p, "/actions/0/working_dir", json!("providers/./s3")),
        &[("/actions/0/working_dir", "path.not_normalized")],
    ),
    case(
        "workdir-backslash",
        |p| set(p, "/actions/0/working_dir", json!("providers\\s3")),
        &[("/actions/0/working_dir", "path.not_normalized")],
    ),
    case(
        "workdir-nul",
        |p| set(p, "/actions/0/working_dir", json!("a\u{0}b")),
        &[("/actions/0/working_dir", "path.invalid_char")],
    ),
    case(
        "lock-file-escape",
        |p| set(p, "/repo_context/lock_files/0", json!("../../etc/passwd")),
        &[("/repo_context/lock_files/0", "path.parent")],
    ),
];
