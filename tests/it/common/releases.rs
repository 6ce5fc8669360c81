//! A stand-in of GitHub's and GitLab's release APIs on loopback for tests, where release notes
//! are read (`--release-notes-github-api`, `--release-notes-gitlab-api`): a repository's
//! releases when a test adds some, else a 404, as for a repository the API does not know.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

pub(crate) struct ReleasesStandIn {
    /// `http://127.0.0.1:PORT`; GitHub's API at the root, GitLab's under `/api/v4`.
    pub url: String,
    /// `owner/repo` → releases, newest first, as GitHub lists them.
    releases: Arc<Mutex<BTreeMap<String, Vec<Value>>>>,
    /// The paths requested, in order.
    pub requests: Arc<Mutex<Vec<String>>>,
    server: Arc<tiny_http::Server>,
}

impl ReleasesStandIn {
    pub(crate) fn start() -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}", server.server_addr().to_ip().unwrap());
        let releases: Arc<Mutex<BTreeMap<String, Vec<Value>>>> = Arc::default();
        let requests: Arc<Mutex<Vec<String>>> = Arc::default();
        let (srv, served, seen) = (server.clone(), releases.clone(), requests.clone());
        std::thread::spawn(move || {
            for request in srv.incoming_requests() {
                seen.lock().unwrap().push(request.url().to_string());
                let path = request
                    .url()
                    .split('?')
                    .next()
                    .unwrap_or_default()
                    .to_string();
                let repo = path
                    .strip_prefix("/repos/")
                    .and_then(|p| p.strip_suffix("/releases"));
                let response = match repo.and_then(|r| served.lock().unwrap().get(r).cloned()) {
                    Some(list) => {
                        let kind =
                            tiny_http::Header::from_bytes("Content-Type", "application/json")
                                .unwrap();
                        tiny_http::Response::from_data(Value::from(list).to_string().into_bytes())
                            .with_header(kind)
                    }
                    None => tiny_http::Response::from_data(b"{\"message\":\"Not Found\"}".to_vec())
                        .with_status_code(404),
                };
                let _ = request.respond(response);
            }
        });
        Self {
            url,
            releases,
            requests,
            server,
        }
    }

    /// A release of `repo` (`owner/name`) with its notes, as GitHub serves it.
    pub(crate) fn release(&self, repo: &str, tag: &str, body: &str) {
        let release = json!({
            "tag_name": tag, "name": tag, "body": body, "draft": false, "prerelease": false,
            "html_url": format!("https://github.com/{repo}/releases/tag/{tag}"),
        });
        self.releases
            .lock()
            .unwrap()
            .entry(repo.to_string())
            .or_default()
            .insert(0, release);
    }
}

impl Drop for ReleasesStandIn {
    fn drop(&mut self) {
        self.server.unblock();
    }
}
