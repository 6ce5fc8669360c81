//! What the HTTP fakes of GitHub and GitLab share: one wiremock server answering every request
//! from the fake's state, the requests it saw, faults queued to answer in its place, the example
//! payloads each fake patches, and the commits between two branches of the real repository.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// An issue, as both fakes keep it (GitLab's `iid` and `description` are its number and body).
#[derive(Debug, Clone)]
pub(crate) struct Issue {
    pub number: u64,
    pub state: &'static str,
    pub title: String,
    pub body: String,
    pub labels: Vec<String>,
}

impl Issue {
    /// An issue a human opened, in the forge's word for open.
    pub(crate) fn by_a_human(number: u64, state: &'static str, labels: &[&str]) -> Self {
        Self {
            number,
            state,
            title: "A human's issue".into(),
            body: String::new(),
            labels: owned(labels),
        }
    }
}

/// What humans opened, seeded into a fake.
pub(crate) trait Seed {
    /// A PR (an MR on GitLab) a human opened from `head`, with `labels`; its number.
    fn seed_pull(&mut self, head: &str, labels: &[&str]) -> u64;
    /// Says PR `number` comes from a fork.
    fn mark_fork(&mut self, number: u64);

    /// A PR from a fork whose branch has the same name as one of ours.
    fn seed_fork_pull(&mut self, head: &str, labels: &[&str]) -> u64 {
        let number = self.seed_pull(head, labels);
        self.mark_fork(number);
        number
    }
}

/// A fault queued on a fake: the next `times` requests that match answer with it.
#[derive(Debug, Clone)]
pub(crate) struct Fault {
    pub method: &'static str,
    /// The request path must end with this.
    pub path_suffix: String,
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Value,
    pub times: usize,
    /// Apply the request, then answer with the fault (the forge did the work, the answer was lost).
    pub after_effect: bool,
}

impl Fault {
    /// Answers one request of `method` on a path ending with `path_suffix`, before it takes effect.
    pub(crate) fn new(method: &'static str, path_suffix: &str, status: u16, body: Value) -> Self {
        Self {
            method,
            path_suffix: path_suffix.into(),
            status,
            headers: vec![],
            body,
            times: 1,
            after_effect: false,
        }
    }
}

/// A fake forge's state: how it checks the token, where its faults wait, and how it answers.
pub(crate) trait Api: Send + 'static {
    /// The answer to a request whose token is not the fake's, or `None` to go on.
    fn refuse(&self, request: &Request) -> Option<ResponseTemplate>;
    fn faults(&mut self) -> &mut Vec<Fault>;
    fn answer(&mut self, request: &Request) -> ResponseTemplate;
}

/// A running fake forge and its state, which tests may read and change between runs.
pub(crate) struct FakeForge<S> {
    pub server: MockServer,
    pub state: Arc<Mutex<S>>,
}

impl<S: Api> FakeForge<S> {
    pub(crate) async fn serve(state: S) -> Self {
        let state = Arc::new(Mutex::new(state));
        let server = MockServer::start().await;
        mount(&server, &state).await;
        Self { server, state }
    }

    pub(crate) fn uri(&self) -> String {
        self.server.uri()
    }

    /// The requests seen since the start or the last [`Self::forget_requests`].
    pub(crate) async fn received(&self) -> Vec<Request> {
        self.server.received_requests().await.unwrap_or_default()
    }

    pub(crate) async fn forget_requests(&self) {
        self.server.reset().await;
        mount(&self.server, &self.state).await;
    }

    pub(crate) fn fault(&self, fault: Fault) {
        self.state.lock().unwrap().faults().push(fault);
    }
}

async fn mount<S: Api>(server: &MockServer, state: &Arc<Mutex<S>>) {
    Mock::given(wiremock::matchers::any())
        .respond_with(Handler(state.clone()))
        .mount(server)
        .await;
}

struct Handler<S>(Arc<Mutex<S>>);

impl<S: Api> Respond for Handler<S> {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let mut st = self.0.lock().unwrap();
        if let Some(refused) = st.refuse(request) {
            return refused;
        }
        let method = request.method.as_str();
        let path = request.url.path();
        if let Some(f) = take_fault(st.faults(), method, path, false) {
            return f;
        }
        let response = st.answer(request);
        take_fault(st.faults(), method, path, true).unwrap_or(response)
    }
}

fn take_fault(
    faults: &mut [Fault],
    method: &str,
    path: &str,
    after: bool,
) -> Option<ResponseTemplate> {
    let f = faults.iter_mut().find(|f| {
        f.method == method
            && path.ends_with(&f.path_suffix)
            && f.after_effect == after
            && f.times > 0
    })?;
    f.times -= 1;
    let mut t = ResponseTemplate::new(f.status).set_body_json(f.body.clone());
    for (k, v) in &f.headers {
        t = t.insert_header(*k, v.as_str());
    }
    Some(t)
}

/// A fixture file of example payloads, by name under `tests/fixtures/`.
pub(crate) fn templates(file: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(file);
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// A request's path and query, as the fakes record it.
pub(crate) fn uri(r: &Request) -> String {
    match r.url.query() {
        Some(q) => format!("{}?{q}", r.url.path()),
        None => r.url.path().to_string(),
    }
}

/// A request header's value, empty when absent.
pub(crate) fn header(r: &Request, name: &str) -> String {
    r.headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

pub(crate) fn query(r: &Request) -> BTreeMap<String, String> {
    r.url.query_pairs().into_owned().collect()
}

/// The commits of `base..head` in the bare repository, newest first: id, author name and email,
/// committer name and email.
pub(crate) fn commits(git_dir: &Path, base: &str, head: &str) -> Vec<[String; 5]> {
    let out = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args([
            "log",
            "--format=%H%x00%an%x00%ae%x00%cn%x00%ce",
            &format!("{base}..{head}"),
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| {
            let f: Vec<String> = line.split('\0').map(String::from).collect();
            [0, 1, 2, 3, 4].map(|i| f[i].clone())
        })
        .collect()
}

/// One page of a paginated listing, from the `page` and `per_page` query parameters.
pub(crate) struct Page {
    pub number: usize,
    pub per_page: usize,
}

impl Page {
    pub(crate) fn of(query: &BTreeMap<String, String>, default_per_page: usize) -> Self {
        let number = |key: &str, default| {
            query
                .get(key)
                .and_then(|p| p.parse().ok())
                .unwrap_or(default)
        };
        Self {
            number: number("page", 1),
            per_page: number("per_page", default_per_page),
        }
    }

    pub(crate) fn slice<'a, T>(&self, all: &'a [T]) -> impl Iterator<Item = &'a T> {
        all.iter()
            .skip((self.number - 1) * self.per_page)
            .take(self.per_page)
    }

    pub(crate) fn has_next(&self, total: usize) -> bool {
        self.number * self.per_page < total
    }
}

/// Labels as the fakes keep them.
pub(crate) fn owned(labels: &[&str]) -> Vec<String> {
    labels.iter().map(|l| l.to_string()).collect()
}
