//! A stateful fake of the GitLab REST API (v4) for tests: wiremock serving the example payloads of
//! GitLab's own documentation (`tests/fixtures/gitlab-api-examples.json`) patched with its own
//! numbers, branches, labels and bodies. MRs and issues are numbered separately, as on GitLab. MR
//! commits come from the real git repository the branches are pushed to.

use super::fake_forge::{
    Api, Common, FakeForge, Page, Seed, bodies, deref_common, header, owned, query, uri,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use wiremock::{Request, ResponseTemplate};

pub(crate) const PROJECT_ID: u64 = 42;
/// The project fork MRs come from.
const FORK_PROJECT_ID: u64 = 4242;
pub(crate) const PROJECT_PATH: &str = "group/project";

#[derive(Debug, Clone)]
pub(crate) struct Mr {
    pub iid: u64,
    pub state: &'static str,
    pub title: String,
    pub description: String,
    pub source: String,
    pub target: String,
    pub labels: Vec<String>,
    /// Opened from a fork: its source project is another one.
    pub fork: bool,
    pub auto_merge: bool,
    pub reviewers: Vec<String>,
    pub assignees: Vec<String>,
    pub created_at: String,
}

pub(crate) use super::fake_forge::{Fault, Issue};

/// API commits (and `tamper`) go through the commits API.
pub(crate) struct State {
    pub common: Common,
    pub mrs: BTreeMap<u64, Mr>,
    /// Notes by ("mr" | "issue", iid).
    pub notes: BTreeMap<(&'static str, u64), Vec<(u64, String)>>,
    next_note: u64,
}

deref_common!(State);

pub(crate) type FakeGitlab = FakeForge<State>;

/// One request as the fake saw it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Seen {
    pub method: String,
    pub uri: String,
    /// The form-encoded body, decoded.
    pub form: BTreeMap<String, String>,
    pub private_token: String,
}

impl FakeGitlab {
    pub(crate) async fn start(token: &str, git_dir: PathBuf) -> Self {
        FakeForge::serve(State {
            common: Common::new(token, git_dir, "gitlab-api-examples.json"),
            mrs: BTreeMap::new(),
            notes: BTreeMap::new(),
            next_note: 500,
        })
        .await
    }

    pub(crate) async fn requests(&self) -> Vec<Seen> {
        self.received_as(|r| Seen {
            method: r.method.to_string(),
            uri: uri(r),
            form: form_urlencoded::parse(&r.body).into_owned().collect(),
            private_token: header(r, "private-token"),
        })
        .await
    }
}

pub(super) fn error(status: u16, message: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({ "message": message }))
}

impl Api for State {
    fn refuse(&self, request: &Request) -> Option<ResponseTemplate> {
        (header(request, "private-token") != self.token).then(|| error(401, "401 Unauthorized"))
    }

    fn faults(&mut self) -> &mut Vec<Fault> {
        &mut self.faults
    }

    fn answer(&mut self, request: &Request) -> ResponseTemplate {
        let pairs: Vec<(String, String)> =
            form_urlencoded::parse(&request.body).into_owned().collect();
        let form: BTreeMap<String, String> = pairs.iter().cloned().collect();
        let method = request.method.as_str();
        self.route(method, request.url.path(), &query(request), (&form, &pairs))
    }
}

pub(super) fn list(text: Option<&String>) -> Vec<String> {
    text.map(|t| {
        t.split(',')
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect()
    })
    .unwrap_or_default()
}

impl State {
    pub(super) fn mr_json(&self, m: &Mr, list_item: bool) -> Value {
        let mut v = self.templates[if list_item {
            "merge_request_list_item"
        } else {
            "merge_request"
        }]
        .clone();
        v["iid"] = json!(m.iid);
        v["id"] = json!(1000 + m.iid);
        v["project_id"] = json!(PROJECT_ID);
        v["target_project_id"] = json!(PROJECT_ID);
        v["source_project_id"] = json!(if m.fork { FORK_PROJECT_ID } else { PROJECT_ID });
        v["title"] = json!(m.title);
        v["description"] = json!(m.description);
        v["state"] = json!(m.state);
        v["source_branch"] = json!(m.source);
        v["target_branch"] = json!(m.target);
        v["labels"] = json!(m.labels);
        v["draft"] = json!(m.title.starts_with("Draft: "));
        v["work_in_progress"] = v["draft"].clone();
        v["web_url"] = json!(format!(
            "https://gitlab.example.com/{PROJECT_PATH}/-/merge_requests/{}",
            m.iid
        ));
        super::gitlab_api::people_json(self, m, &mut v);
        v
    }

    fn issue_json(&self, i: &Issue, list_item: bool) -> Value {
        let mut v = self.templates[if list_item {
            "issue_list_item"
        } else {
            "issue"
        }]
        .clone();
        v["iid"] = json!(i.number);
        v["id"] = json!(2000 + i.number);
        v["project_id"] = json!(PROJECT_ID);
        v["title"] = json!(i.title);
        v["description"] = json!(i.body);
        v["state"] = json!(i.state);
        v["labels"] = json!(i.labels);
        v["web_url"] = json!(format!(
            "https://gitlab.example.com/{PROJECT_PATH}/-/issues/{}",
            i.number
        ));
        v
    }

    fn note_json(&self, kind: &'static str, iid: u64, id: u64, body: &str) -> Value {
        let mut v = self.templates[if kind == "mr" {
            "mr_note"
        } else {
            "issue_note"
        }]
        .clone();
        v["id"] = json!(id);
        v["body"] = json!(body);
        v["system"] = json!(false);
        v["noteable_iid"] = json!(iid);
        v
    }

    fn commits_json(&self, m: &Mr) -> Value {
        let commits: Vec<Value> = super::fake_forge::commits(&self.git_dir, &m.target, &m.source)
            .into_iter()
            .map(|[id, author, author_email, committer, committer_email]| {
                let mut c = self.templates["mr_commit"].clone();
                c["short_id"] = json!(&id[..8]);
                c["id"] = json!(id);
                c["author_name"] = json!(author);
                c["author_email"] = json!(author_email);
                c["committer_name"] = json!(committer);
                c["committer_email"] = json!(committer_email);
                c
            })
            .collect();
        json!(commits)
    }

    fn notes_page(
        &self,
        key: (&'static str, u64),
        query: &BTreeMap<String, String>,
    ) -> ResponseTemplate {
        let all = self.notes.get(&key).cloned().unwrap_or_default();
        let page = Page::of(query, 20);
        let slice: Vec<Value> = page
            .slice(&all)
            .map(|(id, b)| self.note_json(key.0, key.1, *id, b))
            .collect();
        let next = if page.has_next(all.len()) {
            (page.number + 1).to_string()
        } else {
            String::new()
        };
        ResponseTemplate::new(200)
            .set_body_json(slice)
            .insert_header("x-next-page", next.as_str())
            .insert_header("x-page", page.number.to_string().as_str())
    }

    fn add_note(&mut self, key: (&'static str, u64), body: &str) -> ResponseTemplate {
        let id = self.next_note;
        self.next_note += 1;
        self.notes
            .entry(key)
            .or_default()
            .push((id, body.to_string()));
        ResponseTemplate::new(201).set_body_json(self.note_json(key.0, key.1, id, body))
    }

    fn route(
        &mut self,
        method: &str,
        path: &str,
        query: &BTreeMap<String, String>,
        (form, pairs): (&BTreeMap<String, String>, &[(String, String)]),
    ) -> ResponseTemplate {
        if path == "/api/v4/users" && method == "GET" {
            return self.users(query);
        }
        if path == "/api/v4/user" && method == "GET" {
            return ResponseTemplate::new(200)
                .set_body_json(self.templates["current_user"].clone());
        }
        let encoded = PROJECT_PATH.replace('/', "%2F");
        let rest = path
            .strip_prefix(&format!("/api/v4/projects/{PROJECT_ID}"))
            .or_else(|| path.strip_prefix(&format!("/api/v4/projects/{encoded}")));
        let Some(rest) = rest else {
            return error(404, "404 Project Not Found");
        };
        let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
        let iid = parts.get(1).and_then(|n| n.parse::<u64>().ok());
        match (method, parts.as_slice()) {
            ("GET", []) => {
                let mut p = self.templates["project"].clone();
                p["id"] = json!(PROJECT_ID);
                p["path_with_namespace"] = json!(PROJECT_PATH);
                p["default_branch"] = json!("main");
                ResponseTemplate::new(200).set_body_json(p)
            }
            (_, ["merge_requests", ..]) => {
                self.route_mrs(method, &parts, iid, query, (form, pairs))
            }
            (_, ["issues", ..]) => self.route_issues(method, &parts, iid, query, form),
            _ => self.route_more(method, &parts, pairs),
        }
    }

    /// `POST /merge_requests`: refused when the branch already has an open MR of this project.
    fn create_mr(&mut self, form: &BTreeMap<String, String>) -> ResponseTemplate {
        let source = form.get("source_branch").cloned().unwrap_or_default();
        if let Some(open) = self
            .mrs
            .values()
            .find(|m| m.source == source && !m.fork && m.state == "opened")
        {
            return ResponseTemplate::new(409).set_body_json(json!({
                "message": [format!("Another open merge request already exists for this source branch: !{}", open.iid)]
            }));
        }
        let Some(title) = form.get("title") else {
            return error(400, "400 (Bad request) \"title\" not given");
        };
        let iid = self.mrs.keys().max().map_or(1, |m| m + 1);
        let mut m = Mr::new(
            iid,
            title.clone(),
            form.get("description").cloned().unwrap_or_default(),
            source,
            form.get("target_branch").cloned().unwrap_or_default(),
        );
        m.labels = list(form.get("labels"));
        let v = self.mr_json(&m, false);
        self.mrs.insert(iid, m);
        ResponseTemplate::new(201).set_body_json(v)
    }

    /// `PUT /merge_requests/:iid`: title, description, added labels, closing, people.
    fn edit_mr(
        &mut self,
        iid: Option<u64>,
        form: &BTreeMap<String, String>,
        pairs: &[(String, String)],
    ) -> ResponseTemplate {
        let Some(m) = iid.and_then(|n| self.mrs.get_mut(&n)) else {
            return error(404, "404 Not found");
        };
        if let Some(t) = form.get("title") {
            m.title = t.clone();
        }
        if let Some(d) = form.get("description") {
            m.description = d.clone();
        }
        for l in list(form.get("add_labels")) {
            if !m.labels.contains(&l) {
                m.labels.push(l);
            }
        }
        if form.get("state_event").map(String::as_str) == Some("close") {
            m.state = "closed";
        }
        super::gitlab_api::set_people(m, pairs);
        let m = m.clone();
        ResponseTemplate::new(200).set_body_json(self.mr_json(&m, false))
    }

    fn route_mrs(
        &mut self,
        method: &str,
        parts: &[&str],
        iid: Option<u64>,
        query: &BTreeMap<String, String>,
        (form, pairs): (&BTreeMap<String, String>, &[(String, String)]),
    ) -> ResponseTemplate {
        match (method, parts) {
            ("GET", ["merge_requests"]) => {
                let state = query.get("state").map(String::as_str).unwrap_or("all");
                let mut mrs: Vec<&Mr> = self.mrs.values().collect();
                if query.get("sort").is_none_or(|s| s != "asc") {
                    mrs.reverse();
                }
                let list: Vec<Value> = mrs
                    .into_iter()
                    .filter(|m| query.get("source_branch").is_none_or(|b| *b == m.source))
                    .filter(|m| state == "all" || m.state == state)
                    .filter(|m| {
                        list(query.get("labels"))
                            .iter()
                            .all(|l| m.labels.contains(l))
                    })
                    .map(|m| self.mr_json(m, true))
                    .collect();
                ResponseTemplate::new(200).set_body_json(list)
            }
            ("POST", ["merge_requests"]) => self.create_mr(form),
            ("GET", ["merge_requests", _]) => match iid.and_then(|n| self.mrs.get(&n)) {
                Some(m) => ResponseTemplate::new(200).set_body_json(self.mr_json(m, false)),
                None => error(404, "404 Not found"),
            },
            ("PUT", ["merge_requests", _]) => self.edit_mr(iid, form, pairs),
            ("GET", ["merge_requests", _, "commits"]) => match iid.and_then(|n| self.mrs.get(&n)) {
                Some(m) => ResponseTemplate::new(200).set_body_json(self.commits_json(m)),
                None => error(404, "404 Not found"),
            },
            ("GET", ["merge_requests", _, "notes"]) => {
                match iid.filter(|n| self.mrs.contains_key(n)) {
                    Some(n) => self.notes_page(("mr", n), query),
                    None => error(404, "404 Not found"),
                }
            }
            ("POST", ["merge_requests", _, "notes"]) => match iid
                .filter(|n| self.mrs.contains_key(n))
            {
                Some(n) => self.add_note(("mr", n), &form.get("body").cloned().unwrap_or_default()),
                None => error(404, "404 Not found"),
            },
            _ => self.route_more(method, parts, pairs),
        }
    }

    fn route_issues(
        &mut self,
        method: &str,
        parts: &[&str],
        iid: Option<u64>,
        query: &BTreeMap<String, String>,
        form: &BTreeMap<String, String>,
    ) -> ResponseTemplate {
        match (method, parts) {
            ("GET", ["issues"]) => {
                let labels = list(query.get("labels"));
                let state = query.get("state").map(String::as_str).unwrap_or("all");
                let search = query.get("search").cloned().unwrap_or_default();
                let list: Vec<Value> = self
                    .issues
                    .values()
                    .filter(|i| state == "all" || i.state == state)
                    .filter(|i| labels.iter().all(|l| i.labels.contains(l)))
                    .filter(|i| i.title.to_lowercase().contains(&search.to_lowercase()))
                    .map(|i| self.issue_json(i, true))
                    .collect();
                ResponseTemplate::new(200).set_body_json(list)
            }
            ("POST", ["issues"]) => {
                let iid = self.issues.keys().max().map_or(1, |i| i + 1);
                let i = Issue {
                    number: iid,
                    state: "opened",
                    title: form.get("title").cloned().unwrap_or_default(),
                    body: form.get("description").cloned().unwrap_or_default(),
                    labels: list(form.get("labels")),
                };
                let v = self.issue_json(&i, false);
                self.issues.insert(iid, i);
                ResponseTemplate::new(201).set_body_json(v)
            }
            ("GET", ["issues", _]) => match iid.and_then(|n| self.issues.get(&n)) {
                Some(i) => ResponseTemplate::new(200).set_body_json(self.issue_json(i, false)),
                None => error(404, "404 Not found"),
            },
            ("PUT", ["issues", _]) => {
                let Some(i) = iid.and_then(|n| self.issues.get_mut(&n)) else {
                    return error(404, "404 Not found");
                };
                if let Some(d) = form.get("description") {
                    i.body = d.clone();
                }
                let i = i.clone();
                ResponseTemplate::new(200).set_body_json(self.issue_json(&i, false))
            }
            ("GET", ["issues", _, "notes"]) => match iid.filter(|n| self.issues.contains_key(n)) {
                Some(n) => self.notes_page(("issue", n), query),
                None => error(404, "404 Not found"),
            },
            ("POST", ["issues", _, "notes"]) => match iid.filter(|n| self.issues.contains_key(n)) {
                Some(n) => {
                    self.add_note(("issue", n), &form.get("body").cloned().unwrap_or_default())
                }
                None => error(404, "404 Not found"),
            },
            _ => error(404, "404 Not found"),
        }
    }

    /// MRs in the shape the behavioural tests compare across forges.
    pub(crate) fn pulls(&self) -> Vec<Value> {
        self.mrs
            .values()
            .map(|m| {
                json!({
                    "number": m.iid, "state": if m.state == "opened" { "open" } else { m.state },
                    "title": m.title, "body": m.description, "labels": m.labels,
                    "head": m.source, "base": m.target,
                    "comments": self.bodies(("mr", m.iid)),
                    "auto_merge": m.auto_merge, "reviewers": m.reviewers,
                    "assignees": m.assignees,
                })
            })
            .collect()
    }

    pub(crate) fn issues(&self) -> Vec<Value> {
        self.issue_records("opened", |iid| self.bodies(("issue", iid)))
    }

    fn bodies(&self, key: (&'static str, u64)) -> Vec<Value> {
        bodies(self.notes.get(&key))
    }

    pub(crate) fn seed_issue(&mut self, labels: &[&str]) -> u64 {
        let iid = self.issues.keys().max().map_or(1, |i| i + 1);
        self.issues
            .insert(iid, Issue::by_a_human(iid, "opened", labels));
        iid
    }
}

impl Seed for State {
    fn seed_pull(&mut self, head: &str, labels: &[&str]) -> u64 {
        let iid = self.mrs.keys().max().map_or(1, |m| m + 1);
        let mut m = Mr::new(
            iid,
            format!("MR on {head}"),
            String::new(),
            head.into(),
            "main".into(),
        );
        m.labels = owned(labels);
        self.mrs.insert(iid, m);
        iid
    }

    fn mark_fork(&mut self, iid: u64) {
        self.mrs.get_mut(&iid).unwrap().fork = true;
    }
}
