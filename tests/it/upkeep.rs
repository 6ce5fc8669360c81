//! Weeks of a weekly job, on every forge: the bot's open PRs are looked after between plans
//! (closed once their updates reached `main`, rebuilt when `main` moved under them, superseded by
//! newer ones, left alone once a human committed to them), and the dependency dashboard follows.

use crate::common::*;
use crate::on_every_forge;
use serde_json::{Value, json};

on_every_forge!(four_weeks_of_upkeep);

/// farewell releases that keep `bye()` as the app's test wants it.
fn publish_harmless_farewells(f: &Fixture) {
    for version in ["2.0.2", "2.1.0", "2.2.0"] {
        f.publish(
            "farewell",
            version,
            r#"pub fn bye(name: &str) -> String { format!("Goodbye, {name}.") }"#,
        );
    }
}

fn farewell_to(from: &str, to: &str) -> Value {
    json!({"package": "farewell", "from": from, "to": to, "update_type": "minor"})
}

fn skip() -> Value {
    json!({"type": "skip", "package": "serde", "reason": "held by @alice until #7 lands",
           "reason_type": "human_hold", "confidence": 1.0})
}

fn pull(f: &Fixture, number: u64) -> Value {
    f.pulls()
        .into_iter()
        .find(|p| p["number"] == number)
        .unwrap_or_else(|| panic!("no PR #{number}"))
}

fn comments(pr: &Value) -> Vec<String> {
    pr["comments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["body"].as_str().unwrap().to_string())
        .collect()
}

/// The one open dashboard: it names every open bot PR as `#N`, and no other.
fn dashboard(f: &Fixture, open: &[u64], closed: &[u64]) -> String {
    let dashboards: Vec<Value> = f
        .issues()
        .into_iter()
        .filter(|i| {
            i["title"]
                .as_str()
                .unwrap()
                .contains("Dependency dashboard")
        })
        .collect();
    assert_eq!(dashboards.len(), 1, "{dashboards:#?}");
    let d = &dashboards[0];
    assert_eq!(d["state"], "open");
    assert!(
        d["labels"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "quartermaster")
    );
    let body = d["body"].as_str().unwrap().to_string();
    for n in open {
        assert!(
            body.contains(&format!("- [ ] #{n} ")),
            "#{n} missing: {body}"
        );
    }
    for n in closed {
        assert!(!body.contains(&format!("#{n} ")), "#{n} listed: {body}");
    }
    body
}

fn upkeep_of(run: &Run, number: u64) -> Value {
    run.report["upkeep"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["pull_request"] == number)
        .cloned()
        .unwrap_or_else(|| panic!("no upkeep of #{number}: {}", run.said()))
}

fn four_weeks_of_upkeep(backend: Backend) {
    let f = Fixture::on(backend);
    publish_harmless_farewells(&f);
    let (patch, minor) = week1(&f);
    // Between: a human brings greeting to 1.0.1 on main, and farewell to 2.0.2, under the PR.
    let lock = human_updates_main(&f, &[("greeting", "1.0.1"), ("farewell", "2.0.2")]);
    assert!(
        lock.contains("name = \"farewell\"\nversion = \"2.0.2\""),
        "{lock}"
    );
    week2(&f, patch, minor);
    let newest = week3(&f, minor);
    dashboard(&f, &[newest], &[patch, minor]);
    week4(&f, newest);
    let body = dashboard(&f, &[newest], &[patch, minor]);
    assert!(
        body.contains("someone else committed to it: left alone"),
        "{body}"
    );
}

/// The upkeep of PR `number` in `run`, which must have done `action` with `status`.
fn upkept(run: &Run, number: u64, action: &str, status: &str) -> Value {
    let u = upkeep_of(run, number);
    assert_eq!(
        (u["action"].as_str(), u["status"].as_str()),
        (Some(action), Some(status)),
        "{u}"
    );
    u
}

/// Week 1: two PRs, one patch and one minor, and the dashboard. The repository's policy asks
/// auto-merge for patch updates: the patch PR gets it, the minor one does not. Committing it also
/// gives `main` more than one commit of history, as every real repository has: week 2's rebuild
/// fetches the PR's branch deeper, and its push walks that history over HTTP.
fn week1(f: &Fixture) -> (u64, u64) {
    f.commit_file(
        "main",
        ".quartermaster.toml",
        "[automerge]\nupdate-types = [\"patch\"]\n",
    );
    let mut farewell = create_mr(
        "quartermaster/farewell",
        &[farewell_to("2.0.0", "2.1.0")],
        "batch",
    );
    farewell["commands"] = json!(["cargo update -p farewell --precise 2.1.0"]);
    let greeting = create_mr("quartermaster/greeting", &[greeting()], "batch");
    let week1 = f.run(&plan(vec![greeting, farewell, skip()]), &[]);
    assert_eq!(week1.code, 0, "{}", week1.said());
    let (patch, minor) = (pr_number(&week1, 0), pr_number(&week1, 1));
    let asked = |i: usize| {
        let pr = &week1.report["actions"][i]["pull_requests"][0];
        pr["auto_merge"].as_bool().unwrap_or(false)
    };
    assert_eq!((asked(0), asked(1)), (true, false), "{}", week1.said());
    if f.backend == Backend::Local {
        assert_eq!(pull(f, patch)["auto_merge"], true);
        assert!(pull(f, minor).get("auto_merge").is_none());
    }
    assert_eq!(week1.report["upkeep"], json!([]));
    let body = dashboard(f, &[patch, minor], &[]);
    let listed = "`farewell` `2.0.0` → `2.1.0` (minor); tests passed: `cargo test`; opened today";
    assert!(body.contains(listed), "{body}");
    let quoted = "**skipped**: serde (human_hold): held by @\u{200B}alice until #\u{200B}7 lands";
    assert!(body.contains(quoted), "{body}");
    (patch, minor)
}

/// Week 2, a plan with only a skip: the patch PR is closed, the minor one rebuilt on main.
fn week2(f: &Fixture, patch: u64, minor: u64) {
    let week2 = f.run(&plan(vec![skip()]), &[]);
    assert_eq!(week2.code, 0, "{}", week2.said());
    upkept(&week2, patch, "close", "done");
    let said = comments(&pull(f, patch));
    assert!(
        said.iter().any(|c| c.contains("reached `main`")),
        "{said:?}"
    );
    if f.backend == Backend::Local {
        insta::assert_snapshot!("closed_once_its_updates_reached_main", said.join("\n---\n"));
    }
    assert_eq!(pull(f, patch)["state"], "closed");
    assert!(!f.branches().contains_key("quartermaster/greeting"));
    let rebuilt = upkept(&week2, minor, "rebuild", "done");
    let why = rebuilt["reason"].as_str().unwrap();
    assert!(
        why.starts_with("it conflicts with `main` in `Cargo.lock`"),
        "{why}"
    );
    assert_eq!(rebuilt["test"]["runs"][0]["passed"], true, "{rebuilt}");
    let main = f.branches()["main"].clone();
    assert_eq!(sh(&f.remote, "git rev-parse quartermaster/farewell^"), main);
    let lock = f.show("quartermaster/farewell", "Cargo.lock");
    assert!(
        lock.contains("name = \"farewell\"\nversion = \"2.1.0\"")
            && lock.contains("name = \"greeting\"\nversion = \"1.0.1\""),
        "{lock}"
    );
    let body = pull(f, minor)["body"].as_str().unwrap().to_string();
    let refreshed = body.starts_with("Patch releases.") && body.contains("`2.0.2` → `2.1.0`");
    assert!(refreshed, "{body}");
    let body = dashboard(f, &[minor], &[patch]);
    let listed = body.contains("`2.0.2` → `2.1.0`") && body.contains("rebuilt by the latest run");
    assert!(listed, "{body}");
}

/// Week 3: a newer farewell PR supersedes the old one; the new PR's number.
fn week3(f: &Fixture, minor: u64) -> u64 {
    let mut newer = create_mr(
        "quartermaster/farewell-2.2",
        &[farewell_to("2.0.2", "2.2.0")],
        "batch",
    );
    newer["commands"] = json!(["cargo update -p farewell --precise 2.2.0"]);
    let week3 = f.run(&plan(vec![newer]), &[]);
    assert_eq!(week3.code, 0, "{}", week3.said());
    let newest = pr_number(&week3, 0);
    let superseded = upkept(&week3, minor, "supersede", "done");
    assert_eq!(superseded["superseded_by"], newest, "{superseded}");
    let said = comments(&pull(f, minor));
    let named = format!("Superseded by #{newest}");
    assert!(said.iter().any(|c| c.contains(&named)), "{said:?}");
    if f.backend == Backend::Local {
        insta::assert_snapshot!("closed_as_superseded", said.join("\n---\n"));
    }
    assert_eq!(pull(f, minor)["state"], "closed");
    assert!(!f.branches().contains_key("quartermaster/farewell"));
    newest
}

/// Week 4: a human commits to the newest PR's branch, and main moves under it: left alone.
fn week4(f: &Fixture, newest: u64) {
    f.human_commit("quartermaster/farewell-2.2", "HUMAN.md");
    let manifest = f.show("main", "Cargo.toml") + "# a comment\n";
    f.commit_file("main", "Cargo.toml", &manifest);
    let tip = f.branches()["quartermaster/farewell-2.2"].clone();
    let week4 = f.run(&plan(vec![skip()]), &[]);
    assert_eq!(week4.code, 0, "{}", week4.said());
    let left = upkept(&week4, newest, "leave_alone", "skipped");
    let why = left["reason"].as_str().unwrap();
    assert!(why.contains("human@example.com"), "{why}");
    assert_eq!(f.branches()["quartermaster/farewell-2.2"], tip);
    assert_eq!(pull(f, newest)["state"], "open");
}

/// The number of the PR the action opened.
fn pr_number(run: &Run, action: usize) -> u64 {
    run.action(action)["pull_requests"][0]["number"]
        .as_u64()
        .unwrap_or_else(|| panic!("action {action} opened no PR: {}", run.said()))
}

/// A human updates packages on `main` (clone, `cargo update`, push); the new Cargo.lock.
fn human_updates_main(f: &Fixture, packages: &[(&str, &str)]) -> String {
    let work = f.clone_main("human-main");
    for (package, version) in packages {
        succeed(
            std::process::Command::new("cargo")
                .args(["update", "--quiet", "-p", package, "--precise", version])
                .current_dir(&work)
                .env("CARGO_HOME", &f.cargo_home),
        );
    }
    sh(
        &work,
        "git commit -qam 'bump by hand' && git push -q origin main",
    );
    std::fs::read_to_string(work.join("Cargo.lock")).unwrap()
}

/// A PR body is text anyone with write access can edit: a record forged to run another command
/// is refused by the mission before anything runs, and the branch stays as it was. The control:
/// the record as Quartermaster wrote it rebuilds the PR.
#[test]
fn a_forged_build_record_runs_nothing() {
    use base64::Engine as _;
    let f = Fixture::new();
    publish_harmless_farewells(&f);
    let mut farewell = create_mr(
        "quartermaster/farewell",
        &[farewell_to("2.0.0", "2.1.0")],
        "batch",
    );
    farewell["commands"] = json!(["cargo update -p farewell --precise 2.1.0"]);
    let week1 = f.run(&plan(vec![farewell]), &[]);
    assert_eq!(week1.code, 0, "{}", week1.said());
    let number = pr_number(&week1, 0);
    human_updates_main(&f, &[("greeting", "1.0.1")]);
    let record_path = f.forge.join(format!("pulls/{number}.json"));
    let original = std::fs::read_to_string(&record_path).unwrap();
    let marker = "<!-- quartermaster:record:";
    let start = original.find(marker).unwrap() + marker.len();
    let end = start + original[start..].find(" -->").unwrap();
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut record: Value =
        serde_json::from_slice(&engine.decode(&original[start..end]).unwrap()).unwrap();
    record["commands"] = json!(["cargo install cargo-pwn"]);
    let forged = engine.encode(serde_json::to_vec(&record).unwrap());
    std::fs::write(
        &record_path,
        format!("{}{forged}{}", &original[..start], &original[end..]),
    )
    .unwrap();
    let tip = f.branches()["quartermaster/farewell"].clone();

    let week2 = f.run(&plan(vec![skip()]), &[]);
    assert_eq!(week2.code, 1, "{}", week2.said());
    let refused = upkeep_of(&week2, number);
    assert_eq!(refused["status"], "denied", "{refused}");
    assert!(
        refused["commands"].is_null() && refused["test"].is_null(),
        "nothing ran: {refused}"
    );
    assert_eq!(f.branches()["quartermaster/farewell"], tip);
    insta::assert_snapshot!(refused["reason"].as_str().unwrap());

    std::fs::write(&record_path, original).unwrap();
    let week3 = f.run(&plan(vec![skip()]), &[]);
    assert_eq!(week3.code, 0, "{}", week3.said());
    let rebuilt = upkeep_of(&week3, number);
    assert_eq!(
        (rebuilt["action"].as_str(), rebuilt["status"].as_str()),
        (Some("rebuild"), Some("done")),
        "{rebuilt}"
    );
    assert_ne!(f.branches()["quartermaster/farewell"], tip);
}

/// Ticked boxes on the dashboard: an update that failed its tests is retried from the build
/// recorded beside it once a human changed the test; a PR is rebuilt although it is up to date,
/// and a rebuild that fails says why on the PR and leaves it as it was.
#[test]
fn the_dashboards_boxes_ask_for_a_rebuild_and_a_retry() {
    let f = Fixture::new();
    let week1 = f.run(
        &plan(vec![
            create_mr("quartermaster/greeting", &[greeting()], "batch"),
            create_mr("quartermaster/farewell", &[farewell()], "batch"),
        ]),
        &[],
    );
    assert_eq!(week1.code, 1, "{}", week1.said());
    let number = pr_number(&week1, 0);
    let body = dashboard(&f, &[number], &[]);
    let retry = "- [ ] Retry action 1, create_mr on `quartermaster/farewell`: **failed**: `cargo test` failed: exit code 101; no PR <!-- quartermaster:record:";
    assert!(body.contains(retry), "{body}");
    // The app now expects farewell 2.0.1's words (which greeting's PR does not have).
    let lib = f.show("main", "src/lib.rs");
    f.commit_file(
        "main",
        "src/lib.rs",
        &lib.replace("Goodbye, Ada.", "Bye Ada"),
    );
    tick(&f, &["- [ ] Retry", &format!("- [ ] #{number} ")]);
    let tip = f.branches()["quartermaster/greeting"].clone();

    let week2 = f.run(&plan(vec![skip()]), &[]);
    assert_eq!(week2.code, 1, "{}", week2.said());
    let failed = upkept(&week2, number, "rebuild", "failed");
    assert_eq!(failed["test"]["runs"][0]["passed"], false);
    assert_eq!(
        f.branches()["quartermaster/greeting"],
        tip,
        "left as it was"
    );
    let said = comments(&pull(&f, number));
    // The marker's key holds the tip of `main`, which differs from run to run.
    let markers = regex::Regex::new("quartermaster:comment:[0-9a-f]+").unwrap();
    let said = said.join("\n---\n");
    insta::assert_snapshot!(
        "a_rebuild_that_failed",
        markers.replace_all(&said, "quartermaster:comment:<key>")
    );
    let opened = retried(&week2);
    let lock = f.show("quartermaster/farewell", "Cargo.lock");
    assert!(
        lock.contains("name = \"farewell\"\nversion = \"2.0.1\""),
        "{lock}"
    );
    let body = dashboard(&f, &[number, opened], &[]);
    assert!(
        !body.contains("- [x]") && body.contains("could not rebuild it"),
        "{body}"
    );

    // Both words pass now: the same box rebuilds the PR.
    let lib = f.show("main", "src/lib.rs").replace(
        "assert_eq!(super::message(\"Ada\"), \"Hello, Ada! Bye Ada\");",
        "let m = super::message(\"Ada\");\n        assert!(m == \"Hello, Ada! Bye Ada\" || m == \"Hello, Ada! Goodbye, Ada.\");",
    );
    f.commit_file("main", "src/lib.rs", &lib);
    tick(&f, &[&format!("- [ ] #{number} ")]);
    let week3 = f.run(&plan(vec![skip()]), &[]);
    assert_eq!(week3.code, 0, "{}", week3.said());
    let rebuilt = upkept(&week3, number, "rebuild", "done");
    let why = rebuilt["reason"].as_str().unwrap();
    let asked = "the dependency dashboard asked for a rebuild; rebuilt on `main`";
    assert!(why.starts_with(asked), "{why}");
    assert_ne!(f.branches()["quartermaster/greeting"], tip);
}

/// Ticks the dashboard's boxes that start as `boxes` (the local forge's record).
fn tick(f: &Fixture, boxes: &[&str]) {
    let path = f.forge.join(format!("issues/{}.json", dashboard_number(f)));
    let mut record = std::fs::read_to_string(&path).unwrap();
    for b in boxes {
        assert!(record.contains(b), "{b}: {record}");
        record = record.replace(b, &b.replace("- [ ]", "- [x]"));
    }
    std::fs::write(&path, record).unwrap();
}

/// The PR a retry the dashboard asked for opened.
fn retried(run: &Run) -> u64 {
    let retry = run.report["upkeep"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["action"] == "retry")
        .cloned()
        .unwrap_or_else(|| panic!("no retry: {}", run.said()));
    assert_eq!(retry["status"], "done", "{retry}");
    retry["pull_request"].as_u64().unwrap()
}

/// Week 1 opens the greeting PR; then a human updates greeting on `main`. The PR's number.
fn greeting_pr_then_main_has_it(f: &Fixture) -> u64 {
    let week1 = f.run(
        &plan(vec![create_mr(
            "quartermaster/greeting",
            &[greeting()],
            "batch",
        )]),
        &[],
    );
    assert_eq!(week1.code, 0, "{}", week1.said());
    let number = pr_number(&week1, 0);
    human_updates_main(f, &[("greeting", "1.0.1")]);
    number
}

fn dashboard_number(f: &Fixture) -> u64 {
    f.issues()
        .into_iter()
        .find(|i| {
            i["title"]
                .as_str()
                .unwrap()
                .contains("Dependency dashboard")
        })
        .and_then(|i| i["number"].as_u64())
        .unwrap()
}

/// Upkeep obeys `--dry-run` (it says what it would do, and does nothing) and `--only` (only the
/// shard holding the plan's first action looks after every PR and the dashboard).
#[test]
fn upkeep_obeys_dry_run_and_only() {
    let f = Fixture::new();
    let number = greeting_pr_then_main_has_it(&f);
    let before = (f.pulls(), f.issues(), f.branches());
    let two_skips = plan(vec![skip(), skip()]);

    let dry = f.run(&two_skips, &["--dry-run"]);
    assert_eq!(dry.code, 0, "{}", dry.said());
    let would = upkept(&dry, number, "close", "skipped");
    let said = would["reason"].as_str().unwrap();
    assert!(
        said.starts_with(&format!("dry run: would close PR #{number}")),
        "{said}"
    );
    assert!(dry.report["dashboard"].is_null());
    let other_shard = f.run(&two_skips, &["--only", "1"]);
    assert_eq!(other_shard.code, 0, "{}", other_shard.said());
    assert_eq!(other_shard.report["upkeep"], json!([]));
    assert_eq!((f.pulls(), f.issues(), f.branches()), before);

    let first_shard = f.run(&two_skips, &["--only", "0"]);
    assert_eq!(first_shard.code, 0, "{}", first_shard.said());
    upkept(&first_shard, number, "close", "done");
    assert_eq!(pull(&f, number)["state"], "closed");
}

/// A fork's PR on a branch named like Quartermaster's, with the bot label and a build record
/// saying its update reached `main`, is not Quartermaster's: upkeep never closes or rebuilds it.
/// The control: the same record on Quartermaster's own PR closes it.
#[test]
fn a_forks_pr_with_a_record_is_never_looked_after() {
    let f = Fixture::on(Backend::Github);
    let ours = greeting_pr_then_main_has_it(&f);
    let body = pull(&f, ours)["body"].as_str().unwrap().to_string();
    let fork = f.seed_fork_pull("quartermaster/greeting-fork", &["quartermaster"]);
    f.github()
        .state
        .lock()
        .unwrap()
        .pulls
        .get_mut(&fork)
        .unwrap()
        .body = body;

    let week2 = f.run(&plan(vec![skip()]), &[]);
    assert_eq!(week2.code, 0, "{}", week2.said());
    let looked_after: Vec<&Value> = week2.report["upkeep"].as_array().unwrap().iter().collect();
    assert!(
        looked_after.iter().all(|u| u["pull_request"] != fork),
        "{looked_after:?}"
    );
    assert_eq!(pull(&f, fork)["state"], "open");
    assert!(comments(&pull(&f, fork)).is_empty());
    upkept(&week2, ours, "close", "done");
}
