//! What a fixture's forge holds and was asked, whichever forge it is.

use super::fake_forge::Seed;
use super::*;

impl Fixture {
    pub(crate) fn gitlab(&self) -> &gitlab::FakeGitlab {
        self.harness
            .as_ref()
            .and_then(|h| h.gitlab.as_ref())
            .expect("a GitLab fixture")
    }

    /// Requests the GitLab fake received.
    pub(crate) fn gitlab_requests(&self) -> Vec<gitlab::Seen> {
        let h = self.harness.as_ref().unwrap();
        h.runtime.block_on(self.gitlab().requests())
    }

    pub(crate) fn forget_gitlab_requests(&self) {
        let h = self.harness.as_ref().unwrap();
        h.runtime.block_on(self.gitlab().forget_requests());
    }

    pub(crate) fn github(&self) -> &github::FakeGithub {
        self.harness
            .as_ref()
            .and_then(|h| h.github.as_ref())
            .expect("a GitHub fixture")
    }

    /// Requests the GitHub fake received.
    pub(crate) fn github_requests(&self) -> Vec<github::Seen> {
        let h = self.harness.as_ref().unwrap();
        h.runtime.block_on(self.github().requests())
    }

    pub(crate) fn forget_github_requests(&self) {
        let h = self.harness.as_ref().unwrap();
        h.runtime.block_on(self.github().forget_requests());
    }

    /// The identity Quartermaster commits as by default on this forge.
    pub(crate) fn bot(&self) -> &'static str {
        match self.backend {
            Backend::Local | Backend::Gitlab => "Quartermaster <quartermaster@noreply.invalid>",
            Backend::Github => {
                "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>"
            }
        }
    }

    /// A PR a human opened.
    pub(crate) fn seed_pull(&self, head: &str, labels: &[&str]) -> u64 {
        match self.backend {
            Backend::Local => {
                let forge = self.local_forge();
                block(
                    forge.create_pull_request(&quartermaster::forge::NewPullRequest {
                        head: head.into(),
                        base: "main".into(),
                        title: format!("PR on {head}"),
                        body: String::new(),
                        labels: labels.iter().map(|l| l.to_string()).collect(),
                        draft: false,
                    }),
                )
                .unwrap()
                .number
            }
            Backend::Github => self.github().state.lock().unwrap().seed_pull(head, labels),
            Backend::Gitlab => self.gitlab().state.lock().unwrap().seed_pull(head, labels),
        }
    }

    /// A PR from a fork, on a branch named like one of Quartermaster's (GitHub and GitLab only).
    pub(crate) fn seed_fork_pull(&self, head: &str, labels: &[&str]) -> u64 {
        match self.backend {
            Backend::Local => panic!("the local forge has no forks"),
            Backend::Github => self
                .github()
                .state
                .lock()
                .unwrap()
                .seed_fork_pull(head, labels),
            Backend::Gitlab => self
                .gitlab()
                .state
                .lock()
                .unwrap()
                .seed_fork_pull(head, labels),
        }
    }

    /// An issue a human opened.
    pub(crate) fn seed_issue(&self, labels: &[&str]) -> u64 {
        match self.backend {
            Backend::Local => {
                let forge = self.local_forge();
                block(forge.create_issue(&quartermaster::forge::NewIssue {
                    title: "A human's issue".into(),
                    body: String::new(),
                    labels: labels.iter().map(|l| l.to_string()).collect(),
                }))
                .unwrap()
                .number
            }
            Backend::Github => self.github().state.lock().unwrap().seed_issue(labels),
            Backend::Gitlab => self.gitlab().state.lock().unwrap().seed_issue(labels),
        }
    }

    pub(super) fn local_forge(&self) -> quartermaster::forge::local::LocalForge {
        quartermaster::forge::local::LocalForge::open(
            &self.forge,
            quartermaster::git::RemoteSpec {
                url: quartermaster::git::RemoteUrl::new(self.remote.display().to_string()),
                username: None,
                token: None,
            },
        )
        .unwrap()
    }

    fn records(&self, kind: &str) -> Vec<Value> {
        match self.backend {
            Backend::Github => {
                let state = self.github().state.lock().unwrap();
                return if kind == "pulls" {
                    state.pulls()
                } else {
                    state.issues()
                };
            }
            Backend::Gitlab => {
                let state = self.gitlab().state.lock().unwrap();
                return if kind == "pulls" {
                    state.pulls()
                } else {
                    state.issues()
                };
            }
            Backend::Local => {}
        }
        let mut out: Vec<(u64, Value)> = std::fs::read_dir(self.forge.join(kind))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| {
                        let v: Value =
                            serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap();
                        (v["number"].as_u64().unwrap(), v)
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.sort_by_key(|(n, _)| *n);
        out.into_iter().map(|(_, v)| v).collect()
    }

    pub(crate) fn pulls(&self) -> Vec<Value> {
        self.records("pulls")
    }

    pub(crate) fn issues(&self) -> Vec<Value> {
        self.records("issues")
    }
}

/// Faults and requests of the forge's fake, whichever of the two it is.
impl Fixture {
    /// Queues a fault on the fake.
    pub(crate) fn fault(&self, fault: fake_forge::Fault) {
        match self.backend {
            Backend::Github => self.github().fault(fault),
            Backend::Gitlab => self.gitlab().fault(fault),
            Backend::Local => panic!("the local forge has no API to fault"),
        }
    }

    /// The fake's requests as (method, path and query).
    pub(crate) fn calls(&self) -> Vec<(String, String)> {
        match self.backend {
            Backend::Github => self
                .github_requests()
                .into_iter()
                .map(|r| (r.method, r.uri))
                .collect(),
            Backend::Gitlab => self
                .gitlab_requests()
                .into_iter()
                .map(|r| (r.method, r.uri))
                .collect(),
            Backend::Local => panic!("the local forge has no API"),
        }
    }
}
