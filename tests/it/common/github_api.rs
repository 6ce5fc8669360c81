//! More of the GitHub fake: reviewers and assignees, auto-merge and ref updates through GraphQL,
//! and the Git database endpoints (blobs, trees, commits), which write real objects into the bare
//! repository the branches live in, the way GitHub makes (and signs) commits of its own.

use super::fake_forge::{Seed, bodies, owned};
use super::github::{Issue, OWNER, Pull, REPO, State, error};
use base64::Engine as _;
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use wiremock::ResponseTemplate;

/// Users who may review and be assigned in the fake's repository.
pub(crate) const COLLABORATORS: [&str; 2] = ["alice", "bob"];

/// The identity GitHub gives the commits it makes for a workflow's token, and their committer.
pub(crate) const API_AUTHOR: (&str, &str) = (
    "github-actions[bot]",
    "41898282+github-actions[bot]@users.noreply.github.com",
);
pub(crate) const API_COMMITTER: (&str, &str) = ("GitHub", "noreply@github.com");

pub(crate) fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// The PR's fields about people, auto-merge and time, in GitHub's shapes.
pub(crate) fn people_json(st: &State, p: &Pull, v: &mut Value) {
    v["node_id"] = json!(format!("PR_{}", p.number));
    v["created_at"] = json!(p.created_at);
    v["auto_merge"] = if p.auto_merge {
        json!({"enabled_by": st.user("octocat"), "merge_method": "merge",
               "commit_title": null, "commit_message": null})
    } else {
        Value::Null
    };
    v["requested_reviewers"] = json!(p.reviewers.iter().map(|u| st.user(u)).collect::<Vec<_>>());
    v["assignees"] = json!(p.assignees.iter().map(|u| st.user(u)).collect::<Vec<_>>());
    v["requested_teams"] = json!(p.teams.iter().map(|t| team(t)).collect::<Vec<_>>());
}

fn team(slug: &str) -> Value {
    json!({"id": 1, "node_id": "T_1", "name": slug, "slug": slug, "description": null,
           "privacy": "closed", "permission": "push",
           "url": format!("https://api.github.com/teams/{slug}"),
           "html_url": format!("https://github.com/orgs/{OWNER}/teams/{slug}"),
           "members_url": format!("https://api.github.com/teams/{slug}/members{{/member}}"),
           "repositories_url": format!("https://api.github.com/teams/{slug}/repos")})
}

pub(super) fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Runs git on the fake's repository; its trimmed output, or why it failed.
pub(crate) fn git(
    git_dir: &Path,
    args: &[&str],
    env: &[(&str, String)],
    input: &[u8],
) -> Result<String, String> {
    let mut cmd = Command::new("git");
    cmd.arg("--git-dir")
        .arg(git_dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

impl State {
    pub(super) fn user(&self, login: &str) -> Value {
        let mut u = self.templates["user"].clone();
        u["login"] = json!(login);
        u
    }

    /// The routes beyond PRs, issues and comments; 404 for anything else.
    pub(super) fn route_git_and_people(
        &mut self,
        method: &str,
        parts: &[&str],
        body: &Value,
    ) -> ResponseTemplate {
        let number = parts.get(1).and_then(|n| n.parse::<u64>().ok());
        match (method, parts) {
            ("POST", ["pulls", _, "requested_reviewers"]) => {
                let Some(p) = number.and_then(|n| self.pulls.get_mut(&n)) else {
                    return error(404, "Not Found");
                };
                let reviewers = strings(&body["reviewers"]);
                if reviewers
                    .iter()
                    .any(|r| !COLLABORATORS.contains(&r.as_str()))
                {
                    return ResponseTemplate::new(422).set_body_json(json!({
                        "message": format!("Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the {OWNER}/{REPO} repository."),
                        "documentation_url": "https://docs.github.com/rest/pulls/review-requests#request-reviewers-for-a-pull-request",
                        "status": "422"
                    }));
                }
                p.reviewers.extend(reviewers);
                p.teams.extend(strings(&body["team_reviewers"]));
                let p = p.clone();
                ResponseTemplate::new(201).set_body_json(self.pull_json(&p, false))
            }
            ("POST", ["issues", _, "assignees"]) => {
                let Some(p) = number.and_then(|n| self.pulls.get_mut(&n)) else {
                    return error(404, "Not Found");
                };
                // GitHub leaves out, silently, whoever cannot be assigned.
                let wanted = strings(&body["assignees"]);
                p.assignees.extend(
                    wanted
                        .into_iter()
                        .filter(|a| COLLABORATORS.contains(&a.as_str())),
                );
                let assigned = p.assignees.clone();
                let assignees: Vec<Value> = assigned.iter().map(|a| self.user(a)).collect();
                let mut v = self.issue_json(number.unwrap()).unwrap();
                v["assignees"] = json!(assignees);
                ResponseTemplate::new(201).set_body_json(v)
            }
            ("POST", ["git", "blobs"]) => self.blob(body),
            ("POST", ["git", "trees"]) => self.tree(body),
            ("POST", ["git", "commits"]) => self.commit(body),
            _ => error(404, "Not Found"),
        }
    }

    fn blob(&mut self, body: &Value) -> ResponseTemplate {
        let Ok(mut bytes) = base64::engine::general_purpose::STANDARD
            .decode(body["content"].as_str().unwrap_or_default())
        else {
            return error(422, "Validation Failed");
        };
        if self.tamper {
            bytes.extend_from_slice(b"# tampered\n");
        }
        match git(
            &self.git_dir,
            &["hash-object", "-w", "--stdin"],
            &[],
            &bytes,
        ) {
            Ok(sha) => ResponseTemplate::new(201).set_body_json(json!({
                "sha": sha,
                "url": format!("https://api.github.com/repos/{OWNER}/{REPO}/git/blobs/{sha}"),
            })),
            Err(e) => error(422, &e),
        }
    }

    /// A tree: the base tree with the entries set (a `null` sha deletes the path).
    fn tree(&mut self, body: &Value) -> ResponseTemplate {
        let index = tempfile::NamedTempFile::new().unwrap();
        let env = [("GIT_INDEX_FILE", index.path().display().to_string())];
        let base = body["base_tree"].as_str().unwrap_or_default();
        if let Err(e) = git(&self.git_dir, &["read-tree", base], &env, b"") {
            return error(422, &e);
        }
        for entry in body["tree"].as_array().cloned().unwrap_or_default() {
            let path = entry["path"].as_str().unwrap_or_default();
            let result = match entry["sha"].as_str() {
                Some(sha) => {
                    let info = format!(
                        "{},{sha},{path}",
                        entry["mode"].as_str().unwrap_or_default()
                    );
                    git(
                        &self.git_dir,
                        &["update-index", "--add", "--cacheinfo", &info],
                        &env,
                        b"",
                    )
                }
                None => git(
                    &self.git_dir,
                    &["update-index", "--force-remove", path],
                    &env,
                    b"",
                ),
            };
            if let Err(e) = result {
                return error(422, &e);
            }
        }
        match git(&self.git_dir, &["write-tree"], &env, b"") {
            Ok(sha) => ResponseTemplate::new(201).set_body_json(json!({
                "sha": sha, "truncated": false, "tree": [],
                "url": format!("https://api.github.com/repos/{OWNER}/{REPO}/git/trees/{sha}"),
            })),
            Err(e) => error(422, &e),
        }
    }

    /// A commit GitHub makes: authored by the token's identity, committed (and signed) by GitHub.
    fn commit(&mut self, body: &Value) -> ResponseTemplate {
        let tree = body["tree"].as_str().unwrap_or_default().to_string();
        let mut args = vec!["commit-tree".to_string(), tree.clone()];
        for parent in strings(&body["parents"]) {
            args.extend(["-p".to_string(), parent]);
        }
        let env = [
            ("GIT_AUTHOR_NAME", API_AUTHOR.0.to_string()),
            ("GIT_AUTHOR_EMAIL", API_AUTHOR.1.to_string()),
            ("GIT_COMMITTER_NAME", API_COMMITTER.0.to_string()),
            ("GIT_COMMITTER_EMAIL", API_COMMITTER.1.to_string()),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let message = body["message"].as_str().unwrap_or_default();
        match git(&self.git_dir, &args, &env, message.as_bytes()) {
            Ok(sha) => {
                self.api_commits.push(sha.clone());
                ResponseTemplate::new(201).set_body_json(json!({
                    "sha": sha, "node_id": format!("C_{sha}"), "message": message,
                    "tree": {"sha": tree}, "parents": body["parents"],
                    "author": {"name": API_AUTHOR.0, "email": API_AUTHOR.1, "date": now()},
                    "committer": {"name": API_COMMITTER.0, "email": API_COMMITTER.1, "date": now()},
                    "verification": {"verified": true, "reason": "valid", "signature": null,
                                     "payload": null, "verified_at": now()},
                    "url": format!("https://api.github.com/repos/{OWNER}/{REPO}/git/commits/{sha}"),
                    "html_url": format!("https://github.com/{OWNER}/{REPO}/commit/{sha}"),
                }))
            }
            Err(e) => error(422, &e),
        }
    }

    /// `POST /graphql`: the repository's id, auto-merge, and ref updates with their lease.
    pub(super) fn graphql(&mut self, body: &Value) -> ResponseTemplate {
        let query = body["query"].as_str().unwrap_or_default();
        let vars = &body["variables"];
        let answer = if query.contains("enablePullRequestAutoMerge") {
            self.auto_merge(vars)
        } else if query.contains("updateRefs") {
            self.update_refs(vars)
        } else if query.contains("repository(owner") {
            Ok(json!({"repository": {"id": "R_kgDOfake"}}))
        } else {
            Err("unknown query".to_string())
        };
        ResponseTemplate::new(200).set_body_json(match answer {
            Ok(data) => json!({ "data": data }),
            Err(message) => json!({
                "data": null,
                "errors": [{"type": "UNPROCESSABLE", "path": [], "message": message}],
            }),
        })
    }

    fn auto_merge(&mut self, vars: &Value) -> Result<Value, String> {
        let number = vars["pr"]
            .as_str()
            .and_then(|id| id.strip_prefix("PR_"))
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or("Could not resolve to a node")?;
        let head = self
            .pulls
            .get(&number)
            .ok_or("Could not resolve to a node")?
            .head
            .clone();
        let tip = git(
            &self.git_dir,
            &["rev-parse", &format!("refs/heads/{head}")],
            &[],
            b"",
        )?;
        if vars["head"].as_str() != Some(tip.as_str()) {
            return Err("Head sha didn't match expected head sha".into());
        }
        self.pulls.get_mut(&number).unwrap().auto_merge = true;
        Ok(json!({"enablePullRequestAutoMerge": {"pullRequest": {
            "number": number, "autoMergeRequest": {"enabledAt": now()}}}}))
    }

    fn update_refs(&mut self, vars: &Value) -> Result<Value, String> {
        for update in vars["updates"].as_array().cloned().unwrap_or_default() {
            let name = update["name"].as_str().unwrap_or_default();
            let after = update["afterOid"].as_str().unwrap_or_default();
            let before = update["beforeOid"].as_str().unwrap_or_default();
            git(
                &self.git_dir,
                &["update-ref", name, after, before],
                &[],
                b"",
            )
            .map_err(|e| format!("A ref update failed: {e}"))?;
        }
        Ok(json!({"updateRefs": {"clientMutationId": null}}))
    }
}

impl Pull {
    pub(super) fn new(number: u64, head: &str, title: String, body: String) -> Self {
        Pull {
            number,
            state: "open",
            merged: false,
            title,
            body,
            head: head.into(),
            base: "main".into(),
            labels: Vec::new(),
            draft: false,
            fork: false,
            auto_merge: false,
            reviewers: Vec::new(),
            teams: Vec::new(),
            assignees: Vec::new(),
            created_at: now(),
        }
    }
}

/// What the tests read of the fake GitHub, and what a human did there.
impl State {
    /// PRs in the shape the behavioural tests compare across forges.
    pub(crate) fn pulls(&self) -> Vec<Value> {
        self.pulls
            .values()
            .map(|p| {
                json!({
                    "number": p.number, "state": if p.merged { "merged" } else { p.state },
                    "title": p.title, "body": p.body, "labels": p.labels,
                    "head": p.head, "base": p.base, "draft": p.draft,
                    "comments": self.comment_bodies(p.number),
                    "auto_merge": p.auto_merge, "reviewers": p.reviewers,
                    "team_reviewers": p.teams, "assignees": p.assignees,
                })
            })
            .collect()
    }

    pub(crate) fn issues(&self) -> Vec<Value> {
        self.issue_records("open", |number| self.comment_bodies(number))
    }

    fn comment_bodies(&self, number: u64) -> Vec<Value> {
        bodies(self.comments.get(&number))
    }

    pub(crate) fn seed_issue(&mut self, labels: &[&str]) -> u64 {
        let number = self.next;
        self.next += 1;
        self.issues
            .insert(number, Issue::by_a_human(number, "open", labels));
        number
    }
}

impl Seed for State {
    fn seed_pull(&mut self, head: &str, labels: &[&str]) -> u64 {
        let number = self.next;
        self.next += 1;
        let mut p = Pull::new(number, head, format!("PR on {head}"), String::new());
        p.labels = owned(labels);
        self.pulls.insert(number, p);
        number
    }

    fn mark_fork(&mut self, number: u64) {
        self.pulls.get_mut(&number).unwrap().fork = true;
    }
}
