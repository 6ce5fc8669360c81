//! More of the GitLab fake: users, reviewers and assignees by id, merge when the pipeline
//! succeeds, branches, and the commits API, which writes real objects into the bare repository the
//! branches live in, the way GitLab makes (and signs) commits of its own.

use super::github_api::git;
use super::gitlab::{Mr, State, error};
use base64::Engine as _;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use wiremock::ResponseTemplate;

/// Users the fake's GitLab knows, by id.
pub(crate) const USERS: [(u64, &str); 2] = [(11, "alice"), (12, "bob")];

/// Who GitLab says made the commits of the commits API: the token's user.
pub(crate) const API_COMMITTER: (&str, &str) = ("John Smith", "john@example.com");

/// The MR's fields about people, auto-merge and time, in GitLab's shapes.
pub(crate) fn people_json(st: &State, m: &Mr, v: &mut Value) {
    v["created_at"] = json!(m.created_at);
    v["merge_when_pipeline_succeeds"] = json!(m.auto_merge);
    v["reviewers"] = json!(m.reviewers.iter().map(|u| st.user(u)).collect::<Vec<_>>());
    v["assignees"] = json!(m.assignees.iter().map(|u| st.user(u)).collect::<Vec<_>>());
}

/// Reviewers and assignees, as `reviewer_ids[]` and `assignee_ids[]` set them (replacing).
pub(crate) fn set_people(m: &mut Mr, pairs: &[(String, String)]) {
    let named = |key: &str| -> Option<Vec<String>> {
        let ids: Vec<&String> = pairs
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v)
            .collect();
        (!ids.is_empty()).then(|| {
            ids.iter()
                .filter_map(|id| USERS.iter().find(|(n, _)| n.to_string() == **id))
                .map(|(_, name)| name.to_string())
                .collect()
        })
    };
    if let Some(reviewers) = named("reviewer_ids[]") {
        m.reviewers = reviewers;
    }
    if let Some(assignees) = named("assignee_ids[]") {
        m.assignees = assignees;
    }
}

/// One action of a commits API request.
#[derive(Default)]
struct Action {
    action: String,
    path: String,
    content: Option<Vec<u8>>,
    executable: Option<bool>,
}

/// The actions of a commits API request, from its form pairs in order.
fn actions(pairs: &[(String, String)]) -> Vec<Action> {
    let mut out: Vec<Action> = Vec::new();
    for (k, v) in pairs {
        let Some(field) = k
            .strip_prefix("actions[][")
            .and_then(|f| f.strip_suffix(']'))
        else {
            continue;
        };
        if field == "action" {
            out.push(Action {
                action: v.clone(),
                ..Action::default()
            });
            continue;
        }
        let Some(a) = out.last_mut() else { continue };
        match field {
            "file_path" => a.path = v.clone(),
            "content" => a.content = base64::engine::general_purpose::STANDARD.decode(v).ok(),
            "execute_filemode" => a.executable = Some(v == "true"),
            _ => {}
        }
    }
    out
}

impl State {
    pub(super) fn user(&self, username: &str) -> Value {
        let mut u = self.templates["current_user"].clone();
        let id = USERS
            .iter()
            .find(|(_, n)| *n == username)
            .map_or(99, |(i, _)| *i);
        u["id"] = json!(id);
        u["username"] = json!(username);
        u["name"] = json!(username);
        u
    }

    /// `GET /users?username=x`: that user, or nobody.
    pub(super) fn users(&self, query: &BTreeMap<String, String>) -> ResponseTemplate {
        let wanted = query.get("username").cloned().unwrap_or_default();
        let found: Vec<Value> = USERS
            .iter()
            .filter(|(_, n)| *n == wanted)
            .map(|(_, n)| self.user(n))
            .collect();
        ResponseTemplate::new(200).set_body_json(found)
    }

    fn tip(&self, branch: &str) -> Option<String> {
        git(
            &self.git_dir,
            &[
                "rev-parse",
                "--verify",
                "-q",
                &format!("refs/heads/{branch}"),
            ],
            &[],
            b"",
        )
        .ok()
    }

    pub(super) fn route_more(
        &mut self,
        method: &str,
        parts: &[&str],
        pairs: &[(String, String)],
    ) -> ResponseTemplate {
        let form: BTreeMap<&str, &str> = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        match (method, parts) {
            ("PUT", ["merge_requests", iid, "merge"]) => {
                let Some(m) = iid
                    .parse::<u64>()
                    .ok()
                    .and_then(|n| self.mrs.get(&n))
                    .cloned()
                else {
                    return error(404, "404 Not found");
                };
                let tip = self.tip(&m.source).unwrap_or_default();
                if form.get("sha").is_some_and(|sha| *sha != tip) {
                    return error(
                        409,
                        &format!("SHA does not match HEAD of source branch: {tip}"),
                    );
                }
                let asked = ["auto_merge", "merge_when_pipeline_succeeds"]
                    .iter()
                    .any(|k| form.get(k) == Some(&"true"));
                let m = self.mrs.get_mut(&m.iid).unwrap();
                m.auto_merge |= asked;
                let m = m.clone();
                ResponseTemplate::new(200).set_body_json(self.mr_json(&m, false))
            }
            ("GET", ["repository", "branches", name]) => {
                let name = name.replace("%2F", "/").replace("%2f", "/");
                match self.tip(&name) {
                    Some(id) => {
                        let mut b = self.templates["branch"].clone();
                        b["name"] = json!(name);
                        b["commit"]["id"] = json!(id);
                        ResponseTemplate::new(200).set_body_json(b)
                    }
                    None => error(404, "404 Branch Not Found"),
                }
            }
            ("POST", ["repository", "commits"]) => self.api_commit(&form, pairs),
            _ => error(404, "404 Not found"),
        }
    }

    /// `POST /repository/commits`: the actions applied to `start_sha`'s tree, committed with the
    /// given author by the token's user, and the branch set (replaced only with `force`).
    fn api_commit(
        &mut self,
        form: &BTreeMap<&str, &str>,
        pairs: &[(String, String)],
    ) -> ResponseTemplate {
        let branch = form.get("branch").copied().unwrap_or_default();
        let start = form.get("start_sha").copied().unwrap_or_default();
        if self.tip(branch).is_some() && form.get("force") != Some(&"true") {
            return error(400, &format!("A branch called '{branch}' already exists."));
        }
        let tree = match self.apply(start, &actions(pairs)) {
            Ok(tree) => tree,
            Err(e) => return error(400, &e),
        };
        let author = (
            form.get("author_name").copied().unwrap_or(API_COMMITTER.0),
            form.get("author_email").copied().unwrap_or(API_COMMITTER.1),
        );
        let env = [
            ("GIT_AUTHOR_NAME", author.0.to_string()),
            ("GIT_AUTHOR_EMAIL", author.1.to_string()),
            ("GIT_COMMITTER_NAME", API_COMMITTER.0.to_string()),
            ("GIT_COMMITTER_EMAIL", API_COMMITTER.1.to_string()),
        ];
        let message = form.get("commit_message").copied().unwrap_or_default();
        let made = git(
            &self.git_dir,
            &["commit-tree", &tree, "-p", start],
            &env,
            message.as_bytes(),
        )
        .and_then(|id| {
            git(
                &self.git_dir,
                &["update-ref", &format!("refs/heads/{branch}"), &id],
                &[],
                b"",
            )
            .map(|_| id)
        });
        let id = match made {
            Ok(id) => id,
            Err(e) => return error(400, &e),
        };
        self.api_commits.push(id.clone());
        ResponseTemplate::new(201).set_body_json(json!({
            "id": id, "short_id": &id[..8], "title": message.lines().next().unwrap_or_default(),
            "message": message, "parent_ids": [start],
            "author_name": author.0, "author_email": author.1,
            "committer_name": API_COMMITTER.0, "committer_email": API_COMMITTER.1,
            "created_at": super::github_api::now(), "status": null, "project_id": super::gitlab::PROJECT_ID,
            "web_url": format!("https://gitlab.example.com/{}/-/commit/{id}", super::gitlab::PROJECT_PATH),
        }))
    }

    /// `start`'s tree with the actions applied; the new tree's id.
    fn apply(&self, start: &str, actions: &[Action]) -> Result<String, String> {
        let index = tempfile::NamedTempFile::new().unwrap();
        let env = [("GIT_INDEX_FILE", index.path().display().to_string())];
        let dir = &self.git_dir;
        git(dir, &["read-tree", start], &env, b"")?;
        for a in actions {
            match a.action.as_str() {
                "create" | "update" => {
                    let mut content = a.content.clone().unwrap_or_default();
                    if self.tamper {
                        content.extend_from_slice(b"# tampered\n");
                    }
                    let blob = git(dir, &["hash-object", "-w", "--stdin"], &[], &content)?;
                    let info = format!("100644,{blob},{}", a.path);
                    git(
                        dir,
                        &["update-index", "--add", "--cacheinfo", &info],
                        &env,
                        b"",
                    )?;
                }
                "delete" => {
                    git(dir, &["update-index", "--force-remove", &a.path], &env, b"")?;
                }
                "chmod" => {
                    let staged = git(dir, &["ls-files", "-s", "--", &a.path], &env, b"")?;
                    let blob = staged.split_whitespace().nth(1).ok_or("no such file")?;
                    let mode = if a.executable == Some(true) {
                        "100755"
                    } else {
                        "100644"
                    };
                    let info = format!("{mode},{blob},{}", a.path);
                    git(dir, &["update-index", "--cacheinfo", &info], &env, b"")?;
                }
                other => return Err(format!("unknown action {other}")),
            }
        }
        git(dir, &["write-tree"], &env, b"")
    }
}

impl Mr {
    pub(super) fn new(
        iid: u64,
        title: String,
        description: String,
        source: String,
        target: String,
    ) -> Self {
        Mr {
            iid,
            state: "opened",
            title,
            description,
            source,
            target,
            labels: Vec::new(),
            fork: false,
            auto_merge: false,
            reviewers: Vec::new(),
            assignees: Vec::new(),
            created_at: super::github_api::now(),
        }
    }
}
