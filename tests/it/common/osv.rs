//! An OSV stand-in on loopback for tests: `POST /v1/querybatch` answers each query with the ids
//! of the records whose `affected[]` entry names the package and lists the version (as OSV's
//! records enumerate affected versions), and `GET /v1/vulns/{id}` serves the record whole. Every
//! fixture starts one with no record, so that runs check advisories for real and find none.

use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

pub(crate) struct OsvStandIn {
    /// `http://127.0.0.1:PORT`, what `QM_OSV_URL` is given.
    pub url: String,
    records: Arc<Mutex<Vec<Value>>>,
    /// The request lines (`POST /v1/querybatch`) and bodies received, in order.
    pub requests: Arc<Mutex<Vec<(String, String)>>>,
    server: Arc<tiny_http::Server>,
}

impl OsvStandIn {
    pub(crate) fn start() -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}", server.server_addr().to_ip().unwrap());
        let records: Arc<Mutex<Vec<Value>>> = Arc::default();
        let requests: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
        let (srv, served, seen) = (server.clone(), records.clone(), requests.clone());
        std::thread::spawn(move || {
            for mut request in srv.incoming_requests() {
                let mut body = String::new();
                let _ = request.as_reader().read_to_string(&mut body);
                let line = format!("{} {}", request.method(), request.url());
                seen.lock().unwrap().push((line.clone(), body.clone()));
                let response = answer(&served.lock().unwrap(), &line, &body);
                let _ = request.respond(response);
            }
        });
        Self {
            url,
            records,
            requests,
            server,
        }
    }

    /// Publishes an advisory record (OSV's schema).
    pub(crate) fn add(&self, record: Value) {
        self.records.lock().unwrap().push(record);
    }

    /// [`Self::queried`], sorted.
    pub(crate) fn queried_sorted(&self) -> Vec<(String, String, String)> {
        let mut queried = self.queried();
        queried.sort();
        queried
    }

    /// The (ecosystem, name, version) of every query received.
    pub(crate) fn queried(&self) -> Vec<(String, String, String)> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|(line, _)| line == "POST /v1/querybatch")
            .flat_map(|(_, body)| {
                let body: Value = serde_json::from_str(body).unwrap_or_default();
                body["queries"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|q| {
                        let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
                        (
                            s(&q["package"]["ecosystem"]),
                            s(&q["package"]["name"]),
                            s(&q["version"]),
                        )
                    })
            })
            .collect()
    }
}

impl Drop for OsvStandIn {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

fn answer(
    records: &[Value],
    line: &str,
    body: &str,
) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let json = |value: Value| {
        let kind = tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap();
        tiny_http::Response::from_data(value.to_string().into_bytes()).with_header(kind)
    };
    if line == "POST /v1/querybatch" {
        let body: Value = serde_json::from_str(body).unwrap_or_default();
        let results: Vec<Value> = body["queries"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|q| {
                let vulns: Vec<Value> = records
                    .iter()
                    .filter(|r| affects(r, q))
                    .map(|r| json!({"id": r["id"], "modified": r["modified"]}))
                    .collect();
                if vulns.is_empty() {
                    json!({})
                } else {
                    json!({"vulns": vulns})
                }
            })
            .collect();
        return json(json!({"results": results}));
    }
    if let Some(id) = line.strip_prefix("GET /v1/vulns/")
        && let Some(record) = records.iter().find(|r| r["id"] == id)
    {
        return json(record.clone());
    }
    tiny_http::Response::from_data(b"{\"code\":5,\"message\":\"Not Found\"}".to_vec())
        .with_status_code(404)
}

fn affects(record: &Value, query: &Value) -> bool {
    record["affected"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|a| {
            a["package"]["ecosystem"] == query["package"]["ecosystem"]
                && a["package"]["name"] == query["package"]["name"]
                && a["versions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|v| *v == query["version"])
        })
}

/// An advisory record as OSV serves GitHub's: `package` in `ecosystem`, the versions it affects
/// (listed, and as a range closed by `fixed`).
pub(crate) fn advisory(
    id: &str,
    ecosystem: &str,
    package: &str,
    affected: &[&str],
    fixed: &str,
) -> Value {
    json!({
        "schema_version": "1.6.0",
        "id": id,
        "modified": "2026-11-01T00:00:00Z",
        "published": "2026-10-01T00:00:00Z",
        "aliases": [format!("CVE-2026-{}", id.len() * 1000 + 17)],
        "summary": format!("Remote code execution in {package}"),
        "details": "A crafted input runs code.",
        "affected": [{
            "package": {"ecosystem": ecosystem, "name": package},
            "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": fixed}]}],
            "versions": affected,
        }],
        "database_specific": {"severity": "HIGH"},
    })
}

/// What the gates ask the advisory database about when greeting moves from 1.0.0 to 1.0.1,
/// sorted.
pub(crate) fn greeting_queries() -> Vec<(String, String, String)> {
    [
        ("crates.io", "greeting", "1.0.0"),
        ("crates.io", "greeting", "1.0.1"),
    ]
    .map(|(e, n, v)| (e.to_string(), n.to_string(), v.to_string()))
    .to_vec()
}
