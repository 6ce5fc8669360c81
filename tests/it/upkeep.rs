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
    let mut farewell = create_mr(
        "quartermaster/farewell",
        &[farewell_to("2.0.0", "2.1.0")],
        "batch",
    );
    farewell["commands"] = json!(["cargo update -p farewell --precise 2.1.0"]);

    // Week 1: two PRs, one patch and one minor, and the dashboard.
    let week1 = f.run(
        &plan(vec![
            create_mr("quartermaster/greeting", &[greeting()], "batch"),
            farewell,
            skip(),
        ]),
        &[],
    );
    assert_eq!(week1.code, 0, "{}", week1.said());
    let (patch, minor) = (pr_number(&week1, 0), pr_number(&week1, 1));
    assert_eq!(week1.report["upkeep"], json!([]));
    let body = dashboard(&f, &[patch, minor], &[]);
    assert!(
        body.contains(
            "`farewell` `2.0.0` → `2.1.0` (minor); tests passed: `cargo test`; opened today"
        ),
        "{body}"
    );
    assert!(
        body.contains(
            "**skipped**: serde (human_hold): held by @\u{200B}alice until #\u{200B}7 lands"
        ),
        "{body}"
    );

    // Between: a human brings greeting to 1.0.1 on main, and farewell to 2.0.2, under the PR.
    let lock = human_updates_main(&f, &[("greeting", "1.0.1"), ("farewell", "2.0.2")]);
    assert!(
        lock.contains("name = \"farewell\"\nversion = \"2.0.2\""),
        "{lock}"
    );

    // Week 2, a plan with only a skip: the greeting PR is closed, the farewell PR rebuilt.
    let week2 = f.run(&plan(vec![skip()]), &[]);
    assert_eq!(week2.code, 0, "{}", week2.said());
    let closed = upkeep_of(&week2, patch);
    assert_eq!(
        (closed["action"].as_str(), closed["status"].as_str()),
        (Some("close"), Some("done")),
        "{closed}"
    );
    let said = comments(&pull(&f, patch));
    assert!(
        said.iter().any(|c| c.contains("reached `main`")),
        "{said:?}"
    );
    assert_eq!(pull(&f, patch)["state"], "closed");
    assert!(!f.branches().contains_key("quartermaster/greeting"));
    let rebuilt = upkeep_of(&week2, minor);
    assert_eq!(
        (rebuilt["action"].as_str(), rebuilt["status"].as_str()),
        (Some("rebuild"), Some("done")),
        "{rebuilt}"
    );
    assert!(
        rebuilt["reason"]
            .as_str()
            .unwrap()
            .starts_with("it conflicts with `main` in `Cargo.lock`"),
        "{rebuilt}"
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
    let rebuilt_body = pull(&f, minor)["body"].as_str().unwrap().to_string();
    assert!(
        rebuilt_body.starts_with("Patch releases.") && rebuilt_body.contains("`2.0.2` → `2.1.0`"),
        "{rebuilt_body}"
    );
    let body = dashboard(&f, &[minor], &[patch]);
    assert!(
        body.contains("`2.0.2` → `2.1.0`") && body.contains("rebuilt by the latest run"),
        "{body}"
    );

    // Week 3: a newer farewell PR supersedes the old one.
    let mut newer = create_mr(
        "quartermaster/farewell-2.2",
        &[farewell_to("2.0.2", "2.2.0")],
        "batch",
    );
    newer["commands"] = json!(["cargo update -p farewell --precise 2.2.0"]);
    let week3 = f.run(&plan(vec![newer]), &[]);
    assert_eq!(week3.code, 0, "{}", week3.said());
    let newest = pr_number(&week3, 0);
    let superseded = upkeep_of(&week3, minor);
    assert_eq!(
        (
            superseded["action"].as_str(),
            superseded["superseded_by"].as_u64()
        ),
        (Some("supersede"), Some(newest)),
        "{superseded}"
    );
    let said = comments(&pull(&f, minor));
    assert!(
        said.iter()
            .any(|c| c.contains(&format!("Superseded by #{newest}"))),
        "{said:?}"
    );
    assert_eq!(pull(&f, minor)["state"], "closed");
    assert!(!f.branches().contains_key("quartermaster/farewell"));
    dashboard(&f, &[newest], &[patch, minor]);

    // Week 4: a human commits to the newest PR's branch, and main moves under it: left alone.
    f.human_commit("quartermaster/farewell-2.2", "HUMAN.md");
    let manifest = f.show("main", "Cargo.toml") + "# a comment\n";
    f.commit_file("main", "Cargo.toml", &manifest);
    let tip = f.branches()["quartermaster/farewell-2.2"].clone();
    let week4 = f.run(&plan(vec![skip()]), &[]);
    assert_eq!(week4.code, 0, "{}", week4.said());
    let left = upkeep_of(&week4, newest);
    assert_eq!(
        (left["action"].as_str(), left["status"].as_str()),
        (Some("leave_alone"), Some("skipped")),
        "{left}"
    );
    assert!(
        left["reason"]
            .as_str()
            .unwrap()
            .contains("human@example.com"),
        "{left}"
    );
    assert_eq!(f.branches()["quartermaster/farewell-2.2"], tip);
    assert_eq!(pull(&f, newest)["state"], "open");
    let body = dashboard(&f, &[newest], &[patch, minor]);
    assert!(
        body.contains("someone else committed to it: left alone"),
        "{body}"
    );
}

/// The number of the PR the action opened.
fn pr_number(run: &Run, action: usize) -> u64 {
    run.action(action)["pull_requests"][0]["number"]
        .as_u64()
        .unwrap_or_else(|| panic!("action {action} opened no PR: {}", run.said()))
}

/// A human updates packages on `main` (clone, `cargo update`, push); the new Cargo.lock.
fn human_updates_main(f: &Fixture, packages: &[(&str, &str)]) -> String {
    let work = f.root.path().join("human-main");
    let _ = std::fs::remove_dir_all(&work);
    sh(
        f.root.path(),
        &format!(
            "git clone -q file://{} {}",
            f.remote.display(),
            work.display()
        ),
    );
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
