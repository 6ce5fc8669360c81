//! A PyPI stand-in on loopback for tests: a PEP 503 simple index of a project (and of any other
//! one published besides) over HTTP, with wheels built on the spot, so that uv, pip-compile and
//! poetry resolve with no network. Links
//! carry `#sha256=` so that locks record hashes. Beside it, PyPI's JSON API
//! (`/pypi/<name>/<version>/json`) gives each wheel's `upload_time_iso_8601` and the release's
//! `yanked` flag; or, as mirrors such as bandersnatch do, only the project's page
//! (`/pypi/<name>/json`, every release's files). Versions are published while it runs, as a
//! release appears after a lock file was written.

use super::{Fixture, sh, succeed};
use base64::Engine as _;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// (Project, version) -> its upload time and, when yanked, the reason.
type Releases = BTreeMap<(String, String), (String, Option<String>)>;

pub(crate) struct PypiIndex {
    /// `http://127.0.0.1:PORT/simple`, the index URL the tools are given.
    pub url: String,
    name: String,
    /// Wheel file name -> its bytes.
    wheels: Arc<Mutex<BTreeMap<String, Vec<u8>>>>,
    /// The paths requested, in order.
    pub requests: Arc<Mutex<Vec<String>>>,
    /// (Project, version) -> its upload time and, when yanked, the reason.
    releases: Arc<Mutex<Releases>>,
    /// Whether the JSON API serves only project pages, no page per release.
    project_pages_only: Arc<AtomicBool>,
    server: Arc<tiny_http::Server>,
}

impl PypiIndex {
    /// Serves `lib` 1.0.0, adds an app locking it with `files` and `lock` (see
    /// [`Fixture::add_python_app`]), then releases 1.0.1.
    pub(crate) fn lib_app(f: &Fixture, files: &[(&str, &str)], lock: &[&str]) -> Self {
        let index = Self::start("lib");
        index.publish("1.0.0");
        f.add_python_app(&index, files, lock);
        index.publish("1.0.1");
        index
    }

    /// Serves the project `name` (a lower-case name without `-`, `_` or `.`) with no release yet.
    pub(crate) fn start(name: &str) -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}/simple", server.server_addr().to_ip().unwrap());
        let wheels = Arc::new(Mutex::new(BTreeMap::new()));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let releases: Arc<Mutex<Releases>> = Arc::default();
        let (srv, served, seen) = (server.clone(), wheels.clone(), requests.clone());
        let dated = releases.clone();
        let project_pages_only: Arc<AtomicBool> = Arc::default();
        let pages_only = project_pages_only.clone();
        std::thread::spawn(move || {
            for request in srv.incoming_requests() {
                seen.lock().unwrap().push(request.url().to_string());
                let pages_only = pages_only.load(Ordering::SeqCst);
                let releases = dated.lock().unwrap();
                let response = match json_api(&releases, request.url(), pages_only) {
                    Some(response) => response,
                    None => answer(&served.lock().unwrap(), request.url()),
                };
                let _ = request.respond(response);
            }
        });
        Self {
            url,
            name: name.to_string(),
            wheels,
            requests,
            releases,
            project_pages_only,
            server,
        }
    }

    /// Serves the JSON API as bandersnatch mirrors do: the project's page, no page per release.
    pub(crate) fn serve_project_pages_only(&self) {
        self.project_pages_only.store(true, Ordering::SeqCst);
    }

    /// Publishes `version`, long ago: a pure-Python wheel whose module `NAME` has
    /// `VERSION = "<version>"`.
    pub(crate) fn publish(&self, version: &str) {
        self.publish_at(version, super::LONG_AGO);
    }

    /// Publishes `version`, uploaded at `time` (RFC 3339).
    pub(crate) fn publish_at(&self, version: &str, time: &str) {
        self.publish_project_at(&self.name, version, &[], time);
    }

    /// Publishes `version` of the project `name` (served besides the first; the same kind of
    /// name), long ago, which requires `requires` (PEP 508 requirements).
    pub(crate) fn publish_project(&self, name: &str, version: &str, requires: &[&str]) {
        self.publish_project_at(name, version, requires, super::LONG_AGO);
    }

    /// [`PypiIndex::publish_project`], uploaded at `time` (RFC 3339).
    pub(crate) fn publish_project_at(
        &self,
        name: &str,
        version: &str,
        requires: &[&str],
        time: &str,
    ) {
        let file = format!("{name}-{version}-py3-none-any.whl");
        let bytes = wheel(name, version, requires);
        self.wheels.lock().unwrap().insert(file, bytes);
        let key = (name.to_string(), version.to_string());
        self.releases
            .lock()
            .unwrap()
            .insert(key, (time.to_string(), None));
    }

    /// Yanks `version` with `reason` (PEP 592): the JSON API says so.
    pub(crate) fn yank(&self, version: &str, reason: &str) {
        let mut releases = self.releases.lock().unwrap();
        let key = (self.name.clone(), version.to_string());
        releases.get_mut(&key).unwrap().1 = Some(reason.to_string());
    }

    /// Whether a tool downloaded the wheel of `version`.
    pub(crate) fn fetched(&self, version: &str) -> bool {
        let file = format!("/files/{}-{version}-py3-none-any.whl", self.name);
        self.requests.lock().unwrap().contains(&file)
    }
}

impl Drop for PypiIndex {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

/// The sha256 of `bytes`, hex.
fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A wheel (a zip) with the module, METADATA, WHEEL and the RECORD of them all.
fn wheel(name: &str, version: &str, requires: &[&str]) -> Vec<u8> {
    let info = format!("{name}-{version}.dist-info");
    let requires: String = requires
        .iter()
        .map(|r| format!("Requires-Dist: {r}\n"))
        .collect();
    let files = [
        (
            format!("{name}/__init__.py"),
            format!("VERSION = \"{version}\"\n"),
        ),
        (
            format!("{info}/METADATA"),
            format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{requires}"),
        ),
        (
            format!("{info}/WHEEL"),
            "Wheel-Version: 1.0\nGenerator: quartermaster-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
                .to_string(),
        ),
    ];
    let mut record: String = files
        .iter()
        .map(|(path, text)| {
            let digest = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(Sha256::digest(text.as_bytes()));
            format!("{path},sha256={digest},{}\n", text.len())
        })
        .collect();
    record.push_str(&format!("{info}/RECORD,,\n"));
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (path, text) in files.iter().chain([&(format!("{info}/RECORD"), record)]) {
        zip.start_file(path.as_str(), options).unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// The index at `/simple/`, each project's page at `/simple/<name>/` (links with `#sha256=`),
/// the wheels at `/files/<file>`, 404 otherwise.
fn answer(
    wheels: &BTreeMap<String, Vec<u8>>,
    url: &str,
) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let path = url.split('?').next().unwrap_or_default();
    let html = |body: String| {
        let page = format!("<!DOCTYPE html>\n<html><body>\n{body}</body></html>\n");
        let kind = tiny_http::Header::from_bytes("Content-Type", "text/html").unwrap();
        tiny_http::Response::from_data(page.into_bytes()).with_header(kind)
    };
    // Project names hold no `-`: a wheel's file name starts with its project's and a `-`.
    let project = |file: &str| file.split('-').next().unwrap_or_default().to_string();
    if matches!(path, "/simple" | "/simple/") {
        let names: std::collections::BTreeSet<String> = wheels.keys().map(|f| project(f)).collect();
        let links: String = names
            .iter()
            .map(|name| format!("<a href=\"/simple/{name}/\">{name}</a>\n"))
            .collect();
        return html(links);
    }
    let page = path
        .strip_prefix("/simple/")
        .map(|rest| rest.trim_end_matches('/').to_string());
    if let Some(name) = page.filter(|n| wheels.keys().any(|f| project(f) == *n)) {
        let links: String = wheels
            .iter()
            .filter(|(file, _)| project(file) == name)
            .map(|(file, bytes)| {
                format!(
                    "<a href=\"/files/{file}#sha256={}\">{file}</a><br/>\n",
                    sha256_hex(bytes)
                )
            })
            .collect();
        return html(links);
    }
    match path.strip_prefix("/files/").and_then(|f| wheels.get(f)) {
        Some(bytes) => tiny_http::Response::from_data(bytes.clone()),
        None => tiny_http::Response::from_data(b"not found".to_vec()).with_status_code(404),
    }
}

impl Fixture {
    /// Adds to the default branch a Python app: `files` (its manifest, `app.py`), a unittest suite
    /// in `tests/` that imports the app, and the lock `lock` (a tool's argv) writes from `index`
    /// now.
    pub(crate) fn add_python_app(&self, index: &PypiIndex, files: &[(&str, &str)], lock: &[&str]) {
        let work = self.clone_main("python-app");
        std::fs::create_dir_all(work.join("tests")).unwrap();
        let suite = "import unittest\n\nimport app\n\n\nclass AppTest(unittest.TestCase):\n    def test_greets(self):\n        self.assertEqual(app.greet(\"Ada\"), \"Hello, Ada\")\n";
        let app = "def greet(name):\n    return \"Hello, \" + name\n";
        for (path, text) in [("tests/test_app.py", suite), ("app.py", app)]
            .into_iter()
            .chain(files.iter().copied())
        {
            std::fs::write(work.join(path), text).unwrap();
        }
        let ignore = std::fs::read_to_string(work.join(".gitignore")).unwrap_or_default();
        std::fs::write(work.join(".gitignore"), ignore + "__pycache__/\n").unwrap();
        succeed(&mut self.python_tool(index, &work, lock));
        sh(
            &work,
            "git add . && git commit -qm 'python app' && git push -q origin main",
        );
    }

    /// `argv` in `dir` against `index` alone: a clean environment (no operator pip configuration),
    /// caches of the fixture's own, wheels only, as the sandbox runs the tools.
    pub(crate) fn python_tool(
        &self,
        index: &PypiIndex,
        dir: &std::path::Path,
        argv: &[&str],
    ) -> std::process::Command {
        let home = self.root.path().join("python-home");
        std::fs::create_dir_all(&home).unwrap();
        let mut command = std::process::Command::new(argv[0]);
        command
            .args(&argv[1..])
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("PIP_CONFIG_FILE", "/dev/null")
            .env("PIP_INDEX_URL", &index.url)
            .env("PIP_ONLY_BINARY", ":all:")
            .env("UV_DEFAULT_INDEX", &index.url)
            .env("UV_NO_BUILD", "1")
            .env("UV_PYTHON_DOWNLOADS", "never");
        command
    }
}

/// PyPI's JSON API: one release's page, `/pypi/<name>/<version>/json`, unless `pages_only`, and
/// the project's page, `/pypi/<name>/json`, with every release; `None` for any other path.
fn json_api(
    releases: &Releases,
    url: &str,
    pages_only: bool,
) -> Option<tiny_http::Response<std::io::Cursor<Vec<u8>>>> {
    let path = url.split('?').next().unwrap_or_default();
    let rest = path.strip_prefix("/pypi/")?.strip_suffix("/json")?;
    let file = |name: &str, version: &str, time: &str, yanked: &Option<String>| {
        serde_json::json!({"filename": format!("{name}-{version}-py3-none-any.whl"),
            "packagetype": "bdist_wheel", "upload_time_iso_8601": time,
            "yanked": yanked.is_some(), "yanked_reason": yanked})
    };
    let body = match rest.split_once('/') {
        Some((name, version)) if !pages_only => {
            let key = (name.to_string(), version.to_string());
            releases.get(&key).map(|(time, yanked)| {
                serde_json::json!({
                    "info": {"name": name, "version": version, "yanked": yanked.is_some(), "yanked_reason": yanked},
                    "urls": [file(name, version, time, yanked)],
                })
            })
        }
        Some(_) => None,
        None => {
            let project: serde_json::Map<String, serde_json::Value> = releases
                .iter()
                .filter(|((name, _), _)| name == rest)
                .map(|((name, v), (time, yanked))| {
                    (v.clone(), serde_json::json!([file(name, v, time, yanked)]))
                })
                .collect();
            (!project.is_empty())
                .then(|| serde_json::json!({"info": {"name": rest}, "releases": project}))
        }
    };
    let Some(body) = body else {
        return Some(
            tiny_http::Response::from_data(b"{\"message\": \"Not Found\"}".to_vec())
                .with_status_code(404),
        );
    };
    let kind = tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap();
    Some(tiny_http::Response::from_data(body.to_string().into_bytes()).with_header(kind))
}
