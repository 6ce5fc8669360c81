//! What the HTTP fakes of GitHub and GitLab share: one wiremock server answering every request
//! from the fake's state, the requests it saw, faults queued to answer in its place, the example
//! payloads each fake patches, and the commits between two branches of the real repository.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// What both fakes keep alike; each fake's state derefs to it, so tests read `state.token`,
/// `state.tamper` or `state.api_commits` on either forge.
pub(crate) struct Common {
    pub token: String,
    /// Files written through the API get a line appended: a forge (or a proxy) that does not
    /// store the bytes it was sent.
    pub tamper: bool,
    /// Commits made through the API, in order.
    pub api_commits: Vec<String>,
    pub issues: BTreeMap<u64, Issue>,
    pub faults: Vec<Fault>,
    /// The bare repository branches are pushed to.
    pub git_dir: PathBuf,
    /// The forge's documented example payloads, which the fake patches.
    pub templates: Value,
}

impl Common {
    pub(crate) fn new(token: &str, git_dir: PathBuf, examples: &str) -> Self {
        Common {
            token: token.to_string(),
            tamper: false,
            api_commits: Vec::new(),
            issues: BTreeMap::new(),
            faults: Vec::new(),
            git_dir,
            templates: templates(examples),
        }
    }

    /// The issues as tests compare them on either forge: the forge's `opened` state reads
    /// `open`, and each issue carries its comments' bodies.
    pub(crate) fn issue_records(
        &self,
        opened: &str,
        comments: impl Fn(u64) -> Vec<Value>,
    ) -> Vec<Value> {
        self.issues
            .values()
            .map(|i| {
                json!({
                    "number": i.number, "state": if i.state == opened { "open" } else { i.state },
                    "title": i.title, "body": i.body, "labels": i.labels,
                    "comments": comments(i.number),
                })
            })
            .collect()
    }
}

/// Comments (or notes) as tests compare them: their bodies.
pub(crate) fn bodies(comments: Option<&Vec<(u64, String)>>) -> Vec<Value> {
    comments
        .map(|c| c.iter().map(|(_, b)| json!({ "body": b })).collect())
        .unwrap_or_default()
}

/// `state.token` and the like, on either fake's state.
macro_rules! deref_common {
    ($state:ty) => {
        impl std::ops::Deref for $state {
            type Target = $crate::common::fake_forge::Common;
            fn deref(&self) -> &Self::Target {
                &self.common
            }
        }
        impl std::ops::DerefMut for $state {
            fn deref_mut(&mut self) -> &mut Self::Target {
                &mut self.common
            }
        }
    };
}
pub(crate) use deref_common;

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

    /// Every request the fake saw, as `read` records it.
    pub(crate) async fn received_as<T>(&self, read: impl Fn(&Request) -> T) -> Vec<T> {
        self.received().await.iter().map(read).collect()
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
