//! What a dependency's test output and a hostile lock file can make Quartermaster print or post:
//! no workflow command on GitHub (in `run` and in `report merge`), no escape sequence or carriage
//! return in the job log, the summary or stdout, and no CI skipped or issue closed by a PR title,
//! a commit or a PR body.

use crate::common::npm_registry::NpmRegistry;
use crate::common::*;
use serde_json::json;

/// A failing test whose output forges workflow commands, a finished action line and a folded
/// GitLab section.
const FORGERIES: &str = "@echo '::add-mask::everything'\n\t@echo '::error::injected by a test'\n\t@printf '\\r\\033[2K      => done: PR #1 created\\n'\n\t@printf 'section_start:1700000000:fake[collapsed=true]\\r\\033[0Khidden\\n'\n\t@exit 1";

fn forging_run(f: &Fixture) -> Run {
    let makefile = f.show("main", "Makefile") + &format!("\nforge:\n\t{FORGERIES}\n");
    f.commit_file("main", "Makefile", &makefile);
    let mut action = create_mr("quartermaster/cargo", &[greeting()], "batch");
    action["test_command"] = json!("make forge");
    f.run(&plan(vec![action]), &[])
}

/// The forged lines GitHub would read as workflow commands: starting with `::` outside a
/// `::stop-commands::` block (Quartermaster's own masks of the token are left out).
fn obeyed(stdout: &str) -> Vec<String> {
    let mut token: Option<String> = None;
    let mut found = Vec::new();
    for line in stdout.lines() {
        match &token {
            Some(t) if line == format!("::{t}::") => token = None,
            Some(_) => {}
            None => {
                if let Some(t) = line.strip_prefix("::stop-commands::") {
                    token = Some(t.to_string());
                } else if line.trim_start().starts_with("::")
                    && (line.contains("everything") || line.contains("injected"))
                {
                    found.push(line.to_string());
                }
            }
        }
    }
    found
}

/// `report merge` shows the shards' failures as `run` does: on GitHub inside
/// `::stop-commands::`. The positive control: the summary file it writes (GitHub's step summary
/// obeys no command) holds the forged lines as they were printed.
#[test]
fn report_merge_obeys_no_command_from_test_output() {
    let f = Fixture::new();
    let run = forging_run(&f);
    assert_eq!(run.status(0), "failed", "{}", run.said());
    let report = f.root.path().join("shard.json");
    std::fs::write(&report, run.report.to_string()).unwrap();
    let merged = f.root.path().join("merged.json");
    let summary = f.root.path().join("merged.md");
    let merge = |github: bool| {
        let mut cmd = f.qm();
        cmd.args(["report", "merge"])
            .arg(&report)
            .arg("-o")
            .arg(&merged)
            .arg("--summary")
            .arg(&summary);
        if github {
            cmd.env("GITHUB_ACTIONS", "true");
        }
        let out = cmd.output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    merge(false);
    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(written.contains("\n::add-mask::everything\n"), "{written}");
    let github = merge(true);
    assert!(github.contains("::add-mask::everything"), "{github}");
    assert_eq!(obeyed(&github), Vec::<String>::new(), "{github}");
}

/// `run` prints the same output into the job log, the summary file and stdout with every escape
/// sequence and carriage return made visible; the report keeps the raw bytes (the control).
#[test]
fn no_escape_or_carriage_return_reaches_the_log_or_the_summary() {
    let f = Fixture::new();
    let run = forging_run(&f);
    let tail = run.action(0)["test"]["runs"][0]["output_tail"]
        .as_str()
        .unwrap();
    assert!(tail.contains("\r\u{1b}[2K"), "{tail:?}");
    for (name, text) in [
        ("stderr", &run.stderr),
        ("stdout", &run.stdout),
        ("summary", &run.summary),
    ] {
        assert!(
            !text.contains('\u{1b}') && !text.contains('\r'),
            "{name}: {text:?}"
        );
    }
    assert!(
        run.summary
            .contains("\\x0d\\x1b[2K      => done: PR #1 created")
    );
    assert!(
        run.stderr
            .contains("| section_start:1700000000:fake[collapsed=true]\\x0d\\x1b[0Khidden")
    );
}

/// On GitHub the whole run's stdout, summary included, obeys none of the forged commands.
#[test]
fn on_github_no_command_from_test_output_is_obeyed() {
    let f = Fixture::on(Backend::Github);
    let run = forging_run(&f);
    assert_eq!(run.status(0), "failed", "{}", run.said());
    assert!(run.stdout.contains("::add-mask::everything"));
    assert_eq!(obeyed(&run.stdout), Vec::<String>::new(), "{}", run.stdout);
}

/// With GitHub's "default to pull request title" squash setting, the title becomes a commit on
/// the default branch: it skips no CI and closes nothing, and, like the commit, it carries no
/// invisible character.
#[test]
fn a_pr_title_skips_no_ci_and_hides_nothing() {
    let f = Fixture::new();
    let mut action = create_mr("quartermaster/cargo", &[greeting()], "batch");
    action["title"] = json!("fix: bump greeting [skip ci] fixes #1 @alice");
    let run = f.run(&plan(vec![action]), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    let title = f.pulls()[0]["title"].as_str().unwrap().to_string();
    let subject = sh(&f.remote, "git log -1 --format=%s quartermaster/cargo");
    for text in [&title, &subject] {
        assert_eq!(
            text, "fix: bump greeting (skip ci) fixes `#1` `@alice`",
            "the title and the commit subject"
        );
    }
}

/// A command rewrites the lock's format line into `fixes #1 [skip ci]`: the commit message and
/// the PR body state it, neutralised like plan text.
#[test]
fn lock_file_text_is_neutralised_like_plan_text() {
    let Some(f) = Fixture::with_tool(&["npm", "--version"]) else {
        return;
    };
    let registry = NpmRegistry::async_app(&f);
    let makefile = f.show("main", "Makefile")
        + "\nbump:\n\tnpm update async\n\tsed -i 's/\"lockfileVersion\": 3/\"lockfileVersion\": \"2.1 -> fixes #1 [skip ci]\"/' package-lock.json\n";
    f.commit_file("main", "Makefile", &makefile);
    let mut flags = f.custom_mission(
        "format",
        json!({"npm": {"packages": "npm", "versions": "semver",
            "commands": ["make bump"], "files": ["package.json", "package-lock.json"],
            "install": ["npm ci"]}}),
    );
    flags.push(format!(
        "--tool-config=npmrc={}",
        f.npmrc(&registry).display()
    ));
    let mut action = create_mr("quartermaster/async", &[], "batch");
    action["updates"] =
        json!([{"package": "async", "from": "3.2.5", "to": "3.2.6", "update_type": "patch"}]);
    action["commands"] = json!(["make bump"]);
    action["test_command"] = json!("npm test");
    let mut plan = plan(vec![action]);
    plan["repo_context"]["ecosystems"] = json!(["npm"]);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let run = f.run(&plan, &flags);
    assert_eq!(run.status(0), "done", "{}", run.said());
    let message = sh(&f.remote, "git log -1 --format=%B quartermaster/async");
    assert!(
        message.contains("- package-lock.json format: 3 -> 2.1 -> fixes `#1` (skip ci)"),
        "{message}"
    );
    let body = f.pulls()[0]["body"].as_str().unwrap().to_string();
    assert!(
        body.contains("`2.1 -> fixes #\u{200B}1 (skip ci)`"),
        "{body}"
    );
    for text in [&message, &body] {
        assert!(
            !text.contains("[skip ci]") && !text.contains("fixes #1"),
            "{text}"
        );
    }
}
