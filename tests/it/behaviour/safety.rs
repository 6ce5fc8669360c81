//! What a run refuses and what it leaves: invalid plans and configuration stop it before anything
//! runs, the checkout and the temporary directory are left as they were, the token reaches no
//! child, and a cancelled run kills its command.

use crate::common;

use crate::on_every_forge;
use common::*;
use serde_json::{Value, json};
use std::time::Duration;

on_every_forge!(
    the_checkout_is_left_exactly_as_it_was,
    the_token_never_reaches_children_config_reports_or_logs,
);

#[test]
fn an_invalid_plan_runs_nothing_and_says_why() {
    let f = Fixture::new();
    let mut bad = create_mr("quartermaster/cargo", &[greeting()], "batch");
    bad["commands"] = json!(["cargo update -p greeting --precise 1.0.1 --config x=y"]);
    let run = f.run(&plan(vec![bad]), &[]);
    assert_eq!(run.code, 2, "{}", run.said());
    assert!(
        run.stderr
            .contains("error[command.option_injection] /actions/0/commands/0"),
        "{}",
        run.said()
    );
    assert_eq!(run.report["validation"]["valid"], false);
    assert_eq!(
        run.report["validation"]["errors"][0]["code"],
        "command.option_injection"
    );
    assert_eq!(run.report["actions"], json!([]));
    assert!(run.summary.contains("The plan is invalid; nothing ran."));
    assert_eq!(f.branches().len(), 1);
}

#[test]
fn configuration_errors_exit_2_before_anything_runs() {
    let f = Fixture::new();
    let plan_path = f.write_plan(&one_pr());
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--min-confidence", "7"],
            "error: min-confidence must be between 0 and 1, not 7\n",
        ),
        (
            vec!["--remote", "upstream"],
            "has no remote `upstream`; pass --remote NAME\n",
        ),
        (
            vec!["--mission", "nope"],
            "error: mission: unknown mission `nope`; available: deps, docs-drift\n",
        ),
        (
            vec!["--extra-env", "GITHUB_TOKEN"],
            "error: extra-env: `GITHUB_TOKEN` holds forge credentials and is never passed to agent commands\n",
        ),
    ];
    for (args, message) in cases {
        let out = f
            .qm()
            .arg("run")
            .arg("--plan")
            .arg(&plan_path)
            .arg("--checkout")
            .arg(&f.checkout)
            .args(["--forge", "local"])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.ends_with(message), "{args:?}: {stderr}");
    }
    assert_eq!(f.branches().len(), 1);
}

/// Everything about the checkout a user could notice: branch, HEAD, index, status, files, config.
fn checkout_state(f: &Fixture) -> Vec<String> {
    vec![
        sh(&f.checkout, "git symbolic-ref HEAD"),
        sh(&f.checkout, "git rev-parse HEAD"),
        sh(&f.checkout, "git status --porcelain --ignored"),
        sh(&f.checkout, "git ls-files -s | sha256sum"),
        sh(
            &f.checkout,
            "find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum",
        ),
        sh(&f.checkout, "git for-each-ref"),
        sh(&f.checkout, "cat .git/config"),
    ]
}

fn the_checkout_is_left_exactly_as_it_was(backend: Backend) {
    let f = Fixture::build(backend, "--depth 1", TOKEN);
    std::fs::write(f.checkout.join("local-notes.txt"), "uncommitted work\n").unwrap();
    let before = checkout_state(&f);
    let shallow = std::fs::read(f.checkout.join(".git/shallow")).unwrap();
    let run = f.run(
        &plan(vec![
            create_mr(
                "quartermaster/cargo",
                &[greeting(), farewell()],
                "individual_on_failure",
            ),
            create_mr("quartermaster/other", &[greeting()], "batch"),
        ]),
        &[],
    );
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(checkout_state(&f), before);
    assert_eq!(
        std::fs::read(f.checkout.join(".git/shallow")).unwrap(),
        shallow
    );
    sh(
        &f.checkout,
        "git log --oneline >/dev/null && git fsck --no-progress",
    );
}

const CANARY: &str = "qm_canary_5f1d9c0e7b2a";
/// `x-access-token:<canary>`, as a basic auth header carries it.
const CANARY_BASIC: &str = "eC1hY2Nlc3MtdG9rZW46cW1fY2FuYXJ5XzVmMWQ5YzBlN2IyYQ==";

fn the_token_never_reaches_children_config_reports_or_logs(backend: Backend) {
    let f = Fixture::build(backend, "", CANARY);
    let creds = persist_credentials(&f);
    let config_before = std::fs::read(f.checkout.join(".git/config")).unwrap();
    let submodule_before = std::fs::read(f.checkout.join(".git/modules/vendored/config")).unwrap();
    let creds_before = std::fs::read(&creds).unwrap();
    let run = f.run_with(
        &one_pr(),
        &[],
        &[
            ("QM_TOKEN", CANARY),
            ("GITHUB_TOKEN", CANARY),
            ("GITLAB_TOKEN", CANARY),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.said());
    for (place, text) in places_a_token_could_leak_to(&f, &run) {
        assert!(
            !text.contains(CANARY),
            "the token leaked into {place}: {text}"
        );
        assert!(
            !text.contains(CANARY_BASIC),
            "the encoded token leaked into {place}"
        );
    }
    assert_eq!(
        std::fs::read(&creds).unwrap(),
        creds_before,
        "credentials file restored"
    );
    assert_eq!(
        std::fs::read(f.checkout.join(".git/config")).unwrap(),
        config_before,
        "checkout config restored byte for byte"
    );
    assert_eq!(
        std::fs::read(f.checkout.join(".git/modules/vendored/config")).unwrap(),
        submodule_before,
        "submodule config restored byte for byte"
    );
    assert!(
        run.output()
            .contains("credentials persisted in the checkout are hidden while commands run")
    );
}

/// What actions/checkout persists: an auth header for the token, and a credentials file it
/// includes; the URL form is what GitLab Runner leaves. Returns the credentials file.
fn persist_credentials(f: &Fixture) -> std::path::PathBuf {
    let b64 = CANARY_BASIC;
    let creds = f.root.path().join("git-credentials.config");
    std::fs::write(
        &creds,
        format!("[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic {b64}\n"),
    )
    .unwrap();
    sh(
        &f.checkout,
        &format!(
            "git config http.https://github.com/.extraheader 'AUTHORIZATION: basic {b64}' && \
             git config includeIf.gitdir:{}/.git.path {} && \
             git config remote.mirror.url https://oauth2:{CANARY}@gitlab.example.com/g/p.git && \
             git config remote.origin.pushurl https://oauth2:{CANARY}@gitlab.example.com/g/p.git && \
             git config url.https://x-access-token:{CANARY}@github.com/.insteadOf https://github.com/ && \
             git init --quiet --bare .git/modules/vendored && \
             git --git-dir=.git/modules/vendored config http.https://github.com/.extraheader 'AUTHORIZATION: basic {b64}'",
            f.checkout.display(),
            creds.display()
        ),
    );
    creds
}

/// Everything a run writes or shows, by name.
fn places_a_token_could_leak_to(f: &Fixture, run: &Run) -> Vec<(&'static str, String)> {
    let report = std::fs::read_to_string(f.root.path().join("report.json")).unwrap();
    let read = |name: &str| std::fs::read_to_string(f.root.path().join(name)).unwrap_or_default();
    vec![
        ("the GitHub step outputs", read("github-output")),
        ("the GitHub job summary", read("step-summary.md")),
        ("the report", report),
        ("the summary", run.summary.clone()),
        // `::add-mask::` lines carry the secret to the runner, which hides it and never shows them.
        (
            "stdout",
            run.stdout
                .lines()
                .filter(|l| !l.starts_with("::add-mask::"))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        ("stderr", run.stderr.clone()),
        (
            "the forge records",
            serde_json::to_string(&f.pulls()).unwrap(),
        ),
        ("the pushed branch", sh(&f.remote, "git log -p --all")),
    ]
}

#[test]
fn working_dir_must_stay_inside_the_repository() {
    let f = Fixture::new();
    let seed = f.root.path().join("seed");
    sh(
        &seed,
        "ln -s /tmp escape && mkdir -p sub && git add escape && git commit -qm link && git push -q ../remote.git main",
    );
    let mut escape = create_mr("quartermaster/escape", &[greeting()], "batch");
    escape["working_dir"] = json!("escape");
    let mut missing = create_mr("quartermaster/missing", &[greeting()], "batch");
    missing["working_dir"] = json!("nowhere");
    let run = f.run(&plan(vec![escape, missing]), &[]);
    assert_eq!(run.status(0), "failed");
    assert_eq!(
        run.reason(0),
        "git: working_dir `escape` leads outside the repository (through a symbolic link)"
    );
    assert_eq!(
        run.reason(1),
        "git: working_dir `nowhere` does not exist in the repository"
    );
}

/// A default branch the remote lacks stops the run before any action (no issue either), and the
/// error lists the branches the remote has.
#[test]
fn a_missing_default_branch_stops_the_run_before_any_action() {
    let f = Fixture::new();
    let mut p = plan(vec![
        create_mr("quartermaster/cargo", &[greeting()], "batch"),
        json!({"type": "create_issue", "title": "t", "body": "b", "labels": [], "confidence": 0.9}),
    ]);
    p["repo_context"]["default_branch"] = Value::from("trunk");
    let run = f.run(&p, &[]);
    assert_eq!(run.code, 2, "{}", run.said());
    assert_eq!(run.report["actions"], json!([]));
    assert!(f.issues().is_empty(), "no action ran");
    let said: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("error: ") || l.starts_with("hint: "))
        .collect();
    insta::assert_snapshot!(said.join("\n"));
}

#[test]
fn no_temporary_directory_is_left_behind() {
    let f = Fixture::new();
    let run = f.run(&both_updates("individual_on_failure"), &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    let left: Vec<_> = std::fs::read_dir(f.tmp())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_cancelled_run_kills_its_command_and_restores_the_checkout() {
    let f = Fixture::new();
    sh(
        &f.checkout,
        "git config http.https://github.com/.extraheader 'AUTHORIZATION: basic eA=='",
    );
    let config_before = std::fs::read(f.checkout.join(".git/config")).unwrap();
    let mut action = create_mr("quartermaster/cargo", &[greeting()], "batch");
    action["test_command"] = json!("make hang");
    let child = f.spawn_local_run(&plan(vec![action]));
    let hung = first_process_running(
        "sleep 1213",
        Duration::from_secs(120),
        "the test never started",
    );
    // While the command runs, the credentials are hidden.
    assert_ne!(
        std::fs::read(f.checkout.join(".git/config")).unwrap(),
        config_before
    );
    sh(f.root.path(), &format!("kill -TERM {}", child.id()));
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(128 + 15));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("quartermaster: interrupted by signal 15; stopping the running command and writing the report"),
        "{stderr}"
    );
    assert!(
        !processes_running("sleep 1213").contains(&hung),
        "the test command {hung} survived"
    );
    assert_eq!(
        std::fs::read(f.checkout.join(".git/config")).unwrap(),
        config_before,
        "checkout config restored byte for byte"
    );
    assert!(!f.branches().contains_key("quartermaster/cargo"));
}

#[test]
fn packages_must_be_declared_and_scripts_must_exist() {
    let f = Fixture::new();
    f.commit_file(
        "main",
        "package.json",
        r#"{"name": "hello", "dependencies": {"left-pad": "^1.0.0"}, "scripts": {"test": "make test"}}"#,
    );
    // An npm ecosystem whose command is a Makefile target: the checks come before anything runs.
    let mission = f.custom_mission(
        "js",
        json!({"npm": {"packages": "npm", "versions": "semver",
                       "commands": ["make <pkg>"], "files": ["package.json"]}}),
    );
    let npm = |package: &str, branch: &str, test: &str| {
        let mut action = create_mr(
            branch,
            &[json!({"package": package, "from": "1.0.0", "to": "1.0.1", "update_type": "patch"})],
            "batch",
        );
        action["commands"] = json!([format!("make {package}")]);
        action["test_command"] = json!(test);
        action
    };
    // `src` holds no package.json: nothing can confirm the package.
    let mut elsewhere = npm("left-pad", "quartermaster/in-src", "npm test");
    elsewhere["working_dir"] = json!("src");
    let mut js_plan = plan(vec![
        npm("lodash", "quartermaster/lodash", "npm test"),
        npm("left-pad", "quartermaster/left-pad", "npm run lint"),
        elsewhere,
    ]);
    js_plan["repo_context"]["ecosystems"] = json!(["npm"]);
    js_plan["repo_context"]["test_command"] = json!("npm test");
    let flags: Vec<&str> = mission.iter().map(String::as_str).collect();
    let run = f.run(&js_plan, &flags);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(
        (run.status(0), run.reason(0)),
        (
            "denied",
            "`lodash` is not a dependency the project declares in the repository root: Quartermaster updates dependencies, it does not add new ones"
        )
    );
    assert_eq!(
        (run.status(1), run.reason(1)),
        (
            "denied",
            "`npm run lint`: package.json in the repository root has no script `lint`; only the project's own scripts run"
        )
    );
    assert_eq!(run.status(2), "denied");
    assert!(
        run.reason(2).starts_with(
            "cannot confirm that `left-pad` is a declared dependency: cannot read package.json in the working directory:"
        ),
        "{}",
        run.reason(2)
    );
    for i in 0..3 {
        assert!(run.action(i)["commands"].as_array().unwrap().is_empty());
    }
}
