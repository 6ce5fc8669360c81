//! The MCP server and the repository's policy: `describe_mission` reports the policy committed on
//! the checkout's default branch, and `check_update` gives an agent the facts and verdicts the
//! run's gates will apply, from the same registry and advisory database.

use crate::common::*;
use crate::mcp_stdio::Server;
use serde_json::json;

/// A server on the fixture's checkout, asking its local cargo registry and OSV stand-in.
fn start(f: &Fixture) -> Server {
    let cargo = format!("cargo={}", f.cargo_home.join("config.toml").display());
    let checkout = f.checkout.display().to_string();
    Server::start_with(
        &["--checkout", &checkout],
        &[("QM_OSV_URL", &f.osv.url), ("QM_TOOL_CONFIG", &cargo)],
    )
}

#[test]
fn check_update_gives_the_gates_facts_and_verdicts() {
    let f = Fixture::new();
    let fresh = Crate {
        pubtime: Some(hours_ago(2)),
        ..Crate::default()
    };
    f.publish_crate(
        "greeting",
        "1.0.2",
        "pub fn greet(n: &str) -> String { n.into() }",
        &fresh,
    );
    let id = "GHSA-7rjr-3q55-vv33";
    f.osv.add(osv::advisory(
        id,
        "crates.io",
        "greeting",
        &["1.0.0", "1.0.1"],
        "1.0.2",
    ));
    let mut server = start(&f);
    let ask = |to: &str| json!({"ecosystem": "cargo", "package": "greeting", "version": to, "current": "1.0.0"});
    let fix = server.call_json("check_update", ask("1.0.2"));
    assert_eq!(fix["would_pass"], true, "{fix}");
    assert_eq!(fix["age_verdict"], "too new, fixes an advisory", "{fix}");
    assert_eq!(fix["minimum_release_age"], "3 days");
    assert_eq!(fix["advisories"]["current"][0]["id"], id, "{fix}");
    assert_eq!(fix["advisories"]["candidate"], json!([]));
    assert_eq!(fix["fixes"][0]["advisory"]["id"], id);
    let vulnerable = server.call_json("check_update", ask("1.0.1"));
    assert_eq!(vulnerable["would_pass"], false, "{vulnerable}");
    assert_eq!(vulnerable["age_verdict"], "old enough");
    assert_eq!(vulnerable["refusals"][0]["code"], "policy.vulnerable");
    let (text, is_error) = server.call(
        "check_update",
        json!({"ecosystem": "maven", "package": "x", "version": "1"}),
    );
    assert!(is_error);
    assert!(
        text.starts_with("`maven` is not an ecosystem; use one of: go, npm"),
        "{text}"
    );
    server.finish();
}

#[test]
fn describe_mission_reports_the_committed_policy() {
    let f = Fixture::new();
    let mut server = start(&f);
    let policy = &server.call_json("describe_mission", json!({}))["policy"];
    assert_eq!(
        policy["in_force"]["release_age"]["minimum"], "3 days",
        "{policy}"
    );
    assert_eq!(policy["in_force"]["advisories"]["block"], true);
    let source = policy["source"].as_str().unwrap();
    assert!(
        source.starts_with("the defaults (no .quartermaster.toml at main ("),
        "{source}"
    );
    server.finish();
    crate::supply_chain::commit_policy(
        &f,
        "[release-age]\nminimum = \"1 week\"\n[automerge]\nupdate-types = [\"patch\"]\n",
    );
    std::fs::write(
        f.checkout.join(".quartermaster.toml"),
        "[release-age]\nminimum = \"0\"\n",
    )
    .unwrap();
    let mut server = start(&f);
    let policy = &server.call_json("describe_mission", json!({}))["policy"];
    assert_eq!(
        policy["in_force"]["release_age"]["minimum"], "7 days",
        "the committed one: {policy}"
    );
    assert_eq!(
        policy["in_force"]["automerge"]["update_types"],
        json!(["patch"])
    );
    assert!(
        policy["source"]
            .as_str()
            .unwrap()
            .starts_with(".quartermaster.toml at main (")
    );
    server.finish();
}
