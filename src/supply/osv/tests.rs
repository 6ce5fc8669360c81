use super::*;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn query(version: &str) -> Query {
    Query {
        ecosystem: Ecosystem::Npm,
        name: "lib".into(),
        version: version.into(),
    }
}

#[tokio::test]
async fn advisories_come_from_querybatch_then_the_full_records() {
    let server = MockServer::start().await;
    // A service that lists the advisory for every version asked: the record decides.
    Mock::given(method("POST"))
        .and(path("/v1/querybatch"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": [
            {"vulns": [{"id": "GHSA-1111-2222-3333", "modified": "2026-01-01T00:00:00Z"}]},
            {"vulns": [{"id": "GHSA-1111-2222-3333", "modified": "2026-01-01T00:00:00Z"}]}
        ]})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/vulns/GHSA-1111-2222-3333"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "GHSA-1111-2222-3333", "aliases": ["CVE-2026-1"], "summary": "Bad things",
            "database_specific": {"severity": "MODERATE"},
            "affected": [{"package": {"ecosystem": "npm", "name": "lib"},
                "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "1.0.1"}]}]}]
        })))
        .expect(1)
        .mount(&server)
        .await;
    let osv = Osv::new(&server.uri());
    let http = Http::new().unwrap();
    let found = osv
        .affecting(&http, &[query("1.0.0"), query("1.0.1")])
        .await
        .unwrap();
    let old = &found[&query("1.0.0")];
    assert_eq!(old.len(), 1);
    assert_eq!(old[0].severity.as_deref(), Some("moderate"));
    assert_eq!(old[0].aliases, vec!["CVE-2026-1"]);
    assert!(old[0].named_in(&["cve-2026-1".to_string()]));
    assert!(
        found[&query("1.0.1")].is_empty(),
        "the record says 1.0.1 is fixed"
    );
    let asked = &server.received_requests().await.unwrap()[0];
    let body: Value = serde_json::from_slice(&asked.body).unwrap();
    assert_eq!(
        body["queries"][0],
        json!({"package": {"ecosystem": "npm", "name": "lib"}, "version": "1.0.0"})
    );
}

#[tokio::test]
async fn an_unreachable_service_is_an_error() {
    let osv = Osv::new("http://127.0.0.1:9");
    let http = Http::new().unwrap();
    let err = osv
        .affecting(&http, &[query("1.0.0")])
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("OSV (http://127.0.0.1:9): 127.0.0.1 could not be reached"),
        "{err}"
    );
}
