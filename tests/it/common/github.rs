//! A stateful fake of the GitHub REST API for tests: wiremock serving GitHub's documented example
//! payloads (`tests/fixtures/github-openapi-examples.json`, from `@octokit/openapi`) patched with
//! its own numbers, branches, labels and bodies. PR commits come from the real git repository the
//! branches are pushed to. Faults can be queued: answered before the request takes effect, or
//! after (GitHub did the work, the answer was lost).

use super::fake_forge::{Api, Common, FakeForge, Page, deref_common, header, query, uri};
use super::github_api::strings;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use wiremock::{Request, ResponseTemplate};

pub(crate) const OWNER: &str = "octo";
pub(crate) const REPO: &str = "hello";
/// Who owns the fork fork PRs come from, and its repository id.
const FORK_OWNER: &str = "forker";
const FORK_ID: u64 = 987_654;

fn head_owner(p: &Pull) -> &'static str {
    if p.fork { FORK_OWNER } else { OWNER }
}

#[derive(Debug, Clone)]
pub(crate) struct Pull {
    pub number: u64,
    pub state: &'static str,
    pub merged: bool,
    pub title: String,
    pub body: String,
    pub head: String,
    pub base: String,
    pub labels: Vec<String>,
    pub draft: bool,
    /// Opened from a fork: its head lives in another repository.
    pub fork: bool,
    pub auto_merge: bool,
    pub reviewers: Vec<String>,
    pub teams: Vec<String>,
    pub assignees: Vec<String>,
    pub created_at: String,
}

pub(crate) use super::fake_forge::{Fault, Issue};

/// API commits (and `tamper`) go through the Git database endpoints.
pub(crate) struct State {
    pub common: Common,
    pub next: u64,
    pub pulls: BTreeMap<u64, Pull>,
    pub comments: BTreeMap<u64, Vec<(u64, String)>>,
    pub(super) next_comment: u64,
}

deref_common!(State);

pub(crate) type FakeGithub = FakeForge<State>;

/// One request as the fake saw it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Seen {
    pub method: String,
    /// Path and query.
    pub uri: String,
    pub body: Value,
    pub authorization: String,
}

impl FakeGithub {
    pub(crate) async fn start(token: &str, git_dir: PathBuf) -> Self {
        FakeForge::serve(State {
            common: Common::new(token, git_dir, "github-openapi-examples.json"),
            next: 1,
            pulls: BTreeMap::new(),
            comments: BTreeMap::new(),
            next_comment: 1000,
        })
        .await
    }

    pub(crate) async fn requests(&self) -> Vec<Seen> {
        self.received_as(|r| Seen {
            method: r.method.to_string(),
            uri: uri(r),
            body: serde_json::from_slice(&r.body).unwrap_or(Value::Null),
            authorization: header(r, "authorization"),
        })
        .await
    }
}

pub(super) fn error(status: u16, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({
        "message": message,
        "documentation_url": "https://docs.github.com/rest",
        "status": status.to_string()
    }))
}

/// A request to the repository's API, as the routes take it.
#[derive(Clone, Copy)]
struct Call<'a> {
    method: &'a str,
    /// The path below `/repos/{owner}/{repo}`, by segment.
    parts: &'a [&'a str],
    /// The number in the second segment, if any.
    number: Option<u64>,
    query: &'a BTreeMap<String, String>,
    body: &'a Value,
}

impl<'a> Call<'a> {
    fn fields(
        self,
    ) -> (
        &'a str,
        &'a [&'a str],
        Option<u64>,
        &'a BTreeMap<String, String>,
        &'a Value,
    ) {
        (self.method, self.parts, self.number, self.query, self.body)
    }
}

impl Api for State {
    fn refuse(&self, request: &Request) -> Option<ResponseTemplate> {
        (header(request, "authorization") != format!("Bearer {}", self.token))
            .then(|| error(401, "Bad credentials"))
    }

    fn faults(&mut self) -> &mut Vec<Fault> {
        &mut self.faults
    }

    fn answer(&mut self, request: &Request) -> ResponseTemplate {
        let path = request.url.path();
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        if path.ends_with("/graphql") {
            return self.graphql(&body);
        }
        let base = format!("{}://{}", request.url.scheme(), request.url.authority());
        self.route(request.method.as_str(), path, &query(request), &body, &base)
    }
}

impl State {
    pub(super) fn label(&self, name: &str) -> Value {
        let mut l = self.templates["label"].clone();
        l["name"] = json!(name);
        l["url"] = json!(format!(
            "https://api.github.com/repos/{OWNER}/{REPO}/labels/{name}"
        ));
        l
    }

    pub(super) fn pull_json(&self, p: &Pull, list_item: bool) -> Value {
        let mut v = self.templates[if list_item { "pull_list_item" } else { "pull" }].clone();
        v["number"] = json!(p.number);
        v["id"] = json!(p.number * 10);
        v["state"] = json!(p.state);
        v["title"] = json!(p.title);
        v["body"] = json!(p.body);
        v["draft"] = json!(p.draft);
        v["labels"] = json!(p.labels.iter().map(|l| self.label(l)).collect::<Vec<_>>());
        v["html_url"] = json!(format!(
            "https://github.com/{OWNER}/{REPO}/pull/{}",
            p.number
        ));
        v["url"] = json!(format!(
            "https://api.github.com/repos/{OWNER}/{REPO}/pulls/{}",
            p.number
        ));
        v["head"]["ref"] = json!(p.head);
        v["head"]["label"] = json!(format!("{}:{}", head_owner(p), p.head));
        if p.fork {
            v["head"]["repo"]["id"] = json!(FORK_ID);
            v["head"]["repo"]["full_name"] = json!(format!("{FORK_OWNER}/{REPO}"));
            v["head"]["repo"]["fork"] = json!(true);
        }
        v["base"]["ref"] = json!(p.base);
        v["base"]["label"] = json!(format!("{OWNER}:{}", p.base));
        v["merged_at"] = if p.merged {
            json!("2026-01-01T00:00:00Z")
        } else {
            Value::Null
        };
        if !list_item {
            v["merged"] = json!(p.merged);
        }
        super::github_api::people_json(self, p, &mut v);
        v
    }

    pub(super) fn issue_json(&self, number: u64) -> Option<Value> {
        let mut v = self.templates["issue"].clone();
        let (state, title, body, labels, pull) =
            match (self.issues.get(&number), self.pulls.get(&number)) {
                (Some(i), _) => (
                    i.state,
                    i.title.clone(),
                    i.body.clone(),
                    i.labels.clone(),
                    false,
                ),
                (None, Some(p)) => (
                    p.state,
                    p.title.clone(),
                    p.body.clone(),
                    p.labels.clone(),
                    true,
                ),
                (None, None) => return None,
            };
        v["number"] = json!(number);
        v["id"] = json!(number * 10);
        v["state"] = json!(state);
        v["state_reason"] = Value::Null;
        v["title"] = json!(title);
        v["body"] = json!(body);
        v["labels"] = json!(labels.iter().map(|l| self.label(l)).collect::<Vec<_>>());
        v["html_url"] = json!(format!("https://github.com/{OWNER}/{REPO}/issues/{number}"));
        v["comments"] = json!(self.comments.get(&number).map_or(0, Vec::len));
        if !pull {
            v.as_object_mut().unwrap().remove("pull_request");
        }
        Some(v)
    }

    fn comment_json(&self, issue: u64, id: u64, body: &str) -> Value {
        let mut v = self.templates["comment"].clone();
        v["id"] = json!(id);
        v["body"] = json!(body);
        v["html_url"] = json!(format!(
            "https://github.com/{OWNER}/{REPO}/issues/{issue}#issuecomment-{id}"
        ));
        v["issue_url"] = json!(format!(
            "https://api.github.com/repos/{OWNER}/{REPO}/issues/{issue}"
        ));
        v
    }

    fn commits_json(&self, p: &Pull) -> Value {
        let commits: Vec<Value> = super::fake_forge::commits(&self.git_dir, &p.base, &p.head)
            .into_iter()
            .rev()
            .map(|[sha, author, author_email, committer, committer_email]| {
                let mut c = self.templates["commit"].clone();
                c["sha"] = json!(sha);
                c["commit"]["author"]["name"] = json!(author);
                c["commit"]["author"]["email"] = json!(author_email);
                c["commit"]["committer"]["name"] = json!(committer);
                c["commit"]["committer"]["email"] = json!(committer_email);
                c
            })
            .collect();
        json!(commits)
    }

    fn add_labels(&mut self, number: u64, labels: &[String]) -> Option<Vec<String>> {
        let target = match (
            self.pulls.get_mut(&number),
            self.common.issues.get_mut(&number),
        ) {
            (Some(p), _) => &mut p.labels,
            (None, Some(i)) => &mut i.labels,
            (None, None) => return None,
        };
        for l in labels {
            if !target.contains(l) {
                target.push(l.clone());
            }
        }
        Some(target.clone())
    }

    fn route(
        &mut self,
        method: &str,
        path: &str,
        query: &BTreeMap<String, String>,
        body: &Value,
        base: &str,
    ) -> ResponseTemplate {
        // GitHub Enterprise Server serves the API under /api/v3.
        let path = path.strip_prefix("/api/v3").unwrap_or(path);
        let prefix = format!("/repos/{OWNER}/{REPO}");
        let Some(rest) = path.strip_prefix(&prefix) else {
            return error(404, "Not Found");
        };
        let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
        let number = parts.get(1).and_then(|n| n.parse::<u64>().ok());
        let call = Call {
            method,
            parts: &parts,
            number,
            query,
            body,
        };
        match (method, parts.as_slice()) {
            (_, ["pulls", ..]) => self.route_pulls(call),
            (_, ["issues", _, "comments"]) => {
                let next = format!("{base}{path}");
                self.route_comments(method, number, query, body, &next)
            }
            (_, ["issues", ..]) => self.route_issues(call),
            _ => self.route_git_and_people(method, &parts, body),
        }
    }

    /// `GET /pulls`: filtered by head and state, oldest first when asked, one page.
    fn list_pulls(&self, query: &BTreeMap<String, String>) -> ResponseTemplate {
        let head = query.get("head").cloned().unwrap_or_default();
        let state = query.get("state").map(String::as_str).unwrap_or("open");
        let ascending = query.get("direction").is_some_and(|d| d == "asc");
        let mut pulls: Vec<&Pull> = self.pulls.values().collect();
        if !ascending {
            pulls.reverse();
        }
        let mut list: Vec<Value> = pulls
            .into_iter()
            .filter(|p| head.is_empty() || format!("{}:{}", head_owner(p), p.head) == head)
            .filter(|p| state == "all" || p.state == state)
            .map(|p| self.pull_json(p, true))
            .collect();
        let per_page = query
            .get("per_page")
            .and_then(|p| p.parse().ok())
            .unwrap_or(30);
        list.truncate(per_page);
        ResponseTemplate::new(200).set_body_json(list)
    }

    /// `POST /pulls`: refused when the branch already has an open PR of this repository.
    fn create_pull(&mut self, body: &Value) -> ResponseTemplate {
        let head = body["head"].as_str().unwrap_or_default().to_string();
        if head.is_empty() || body["base"].as_str().is_none() {
            return error(422, "Validation Failed");
        }
        if self
            .pulls
            .values()
            .any(|p| p.head == head && !p.fork && p.state == "open")
        {
            return ResponseTemplate::new(422).set_body_json(json!({
                "message": "Validation Failed",
                "errors": [{"resource": "PullRequest", "code": "custom", "message": format!("A pull request already exists for {OWNER}:{head}.")}],
                "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
                "status": "422"
            }));
        }
        let number = self.next;
        self.next += 1;
        let mut p = Pull::new(
            number,
            &head,
            body["title"].as_str().unwrap_or_default().into(),
            body["body"].as_str().unwrap_or_default().into(),
        );
        p.base = body["base"].as_str().unwrap_or_default().into();
        p.draft = body["draft"].as_bool().unwrap_or(false);
        let v = self.pull_json(&p, false);
        self.pulls.insert(number, p);
        ResponseTemplate::new(201).set_body_json(v)
    }

    fn route_pulls(&mut self, call: Call) -> ResponseTemplate {
        let (method, parts, number, query, body) = call.fields();
        match (method, parts) {
            ("GET", ["pulls"]) => self.list_pulls(query),
            ("POST", ["pulls"]) => self.create_pull(body),
            ("GET", ["pulls", _]) => match number.and_then(|n| self.pulls.get(&n)) {
                Some(p) => ResponseTemplate::new(200).set_body_json(self.pull_json(p, false)),
                None => error(404, "Not Found"),
            },
            ("PATCH", ["pulls", _]) => {
                let Some(p) = number.and_then(|n| self.pulls.get_mut(&n)) else {
                    return error(404, "Not Found");
                };
                if let Some(t) = body["title"].as_str() {
                    p.title = t.into();
                }
                if let Some(b) = body["body"].as_str() {
                    p.body = b.into();
                }
                if body["state"] == "closed" {
                    p.state = "closed";
                }
                let p = p.clone();
                ResponseTemplate::new(200).set_body_json(self.pull_json(&p, false))
            }
            ("GET", ["pulls", _, "commits"]) => match number.and_then(|n| self.pulls.get(&n)) {
                Some(p) => ResponseTemplate::new(200).set_body_json(self.commits_json(p)),
                None => error(404, "Not Found"),
            },
            _ => self.route_git_and_people(method, parts, body),
        }
    }

    fn route_issues(&mut self, call: Call) -> ResponseTemplate {
        let (method, parts, number, query, body) = call.fields();
        match (method, parts) {
            ("GET", ["issues"]) => {
                let labels: Vec<String> = query
                    .get("labels")
                    .map(|l| l.split(',').map(String::from).collect())
                    .unwrap_or_default();
                let state = query.get("state").map(String::as_str).unwrap_or("open");
                let numbers: Vec<u64> = self
                    .issues
                    .keys()
                    .chain(self.pulls.keys())
                    .copied()
                    .collect();
                let list: Vec<Value> = numbers
                    .into_iter()
                    .filter_map(|n| self.issue_json(n))
                    .filter(|v| state == "all" || v["state"] == state)
                    .filter(|v| {
                        labels.iter().all(|l| {
                            v["labels"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .any(|x| x["name"] == l.as_str())
                        })
                    })
                    .collect();
                ResponseTemplate::new(200).set_body_json(list)
            }
            ("POST", ["issues"]) => {
                let number = self.next;
                self.next += 1;
                self.issues.insert(
                    number,
                    Issue {
                        number,
                        state: "open",
                        title: body["title"].as_str().unwrap_or_default().into(),
                        body: body["body"].as_str().unwrap_or_default().into(),
                        labels: strings(&body["labels"]),
                    },
                );
                ResponseTemplate::new(201).set_body_json(self.issue_json(number).unwrap())
            }
            ("GET", ["issues", _]) => match number.and_then(|n| self.issue_json(n)) {
                Some(v) => ResponseTemplate::new(200).set_body_json(v),
                None => error(404, "Not Found"),
            },
            ("PATCH", ["issues", _]) => {
                let Some(i) = number.and_then(|n| self.issues.get_mut(&n)) else {
                    return error(404, "Not Found");
                };
                if let Some(b) = body["body"].as_str() {
                    i.body = b.into();
                }
                let n = i.number;
                ResponseTemplate::new(200).set_body_json(self.issue_json(n).unwrap())
            }
            ("POST", ["issues", _, "labels"]) => {
                match number.and_then(|n| self.add_labels(n, &strings(&body["labels"]))) {
                    Some(all) => ResponseTemplate::new(200)
                        .set_body_json(all.iter().map(|l| self.label(l)).collect::<Vec<_>>()),
                    None => error(404, "Not Found"),
                }
            }
            _ => self.route_git_and_people(method, parts, body),
        }
    }

    /// An issue's or PR's comments; `next` is the listing's own address, for the `link` header.
    fn route_comments(
        &mut self,
        method: &str,
        number: Option<u64>,
        query: &BTreeMap<String, String>,
        body: &Value,
        next: &str,
    ) -> ResponseTemplate {
        match method {
            "GET" => {
                let Some(n) = number.filter(|n| self.issue_json(*n).is_some()) else {
                    return error(404, "Not Found");
                };
                let all = self.comments.get(&n).cloned().unwrap_or_default();
                let page = Page::of(query, 30);
                let slice: Vec<Value> = page
                    .slice(&all)
                    .map(|(id, b)| self.comment_json(n, *id, b))
                    .collect();
                let mut t = ResponseTemplate::new(200).set_body_json(slice);
                if page.has_next(all.len()) {
                    let (per_page, after) = (page.per_page, page.number + 1);
                    let link = format!("<{next}?per_page={per_page}&page={after}>; rel=\"next\"");
                    t = t.insert_header("link", link.as_str());
                }
                t
            }
            "POST" => {
                let Some(n) = number.filter(|n| self.issue_json(*n).is_some()) else {
                    return error(404, "Not Found");
                };
                let id = self.next_comment;
                self.next_comment += 1;
                let text = body["body"].as_str().unwrap_or_default().to_string();
                self.comments.entry(n).or_default().push((id, text.clone()));
                ResponseTemplate::new(201).set_body_json(self.comment_json(n, id, &text))
            }
            _ => error(404, "Not Found"),
        }
    }
}
