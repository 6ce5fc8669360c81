//! The local forge: PRs, issues, comments and labels as JSON records in a directory.
//!
//! It is what `quartermaster run` uses on a machine with no forge account, and what dry runs and
//! the engine's tests run against. Layout:
//!
//! ```text
//! <dir>/state.json          next numbers
//! <dir>/pulls/<n>.json      one pull request, with its comments
//! <dir>/issues/<n>.json     one issue, with its comments
//! <dir>/remote.git          the forge's copy of the repository, where branches go ([`own`])
//! ```
//!
//! Numbers are shared between PRs and issues, as on GitHub. Every write goes to a temporary file
//! that is renamed into place, under an exclusive lock on `<dir>/.lock`, so a reader never sees a
//! half-written record and two runs cannot hand out the same number.

use super::{
    Comment, Forge, ForgeError, ForgeKind, Issue, NewIssue, NewPullRequest, PullRequest,
    PullRequestEdit, Result, State, Target,
};
use crate::git::{RemoteSpec, RemoteUrl};
use async_trait::async_trait;
use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct LocalForge {
    dir: PathBuf,
    remote: RemoteSpec,
}

/// The local forge of a checkout: its records, and where branches go.
pub struct LocalSettings {
    pub checkout: PathBuf,
    /// The checkout's remote branches are pushed to (`origin`); `None`: the forge's own bare
    /// repository in its directory, which the checkout's branches are copied into.
    pub remote: Option<String>,
    /// Where the records live; `<checkout>/.git/quartermaster-forge` when `None`.
    pub dir: Option<PathBuf>,
    /// Sent when the remote asks for credentials.
    pub token: Option<SecretString>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    PullRequest,
    Issue,
}

impl Kind {
    fn folder(self) -> &'static str {
        match self {
            Kind::PullRequest => "pulls",
            Kind::Issue => "issues",
        }
    }
}

/// One record on disk.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Item {
    kind: Kind,
    number: u64,
    state: State,
    title: String,
    body: String,
    labels: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    head: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    base: Option<String>,
    #[serde(default)]
    draft: bool,
    #[serde(default)]
    comments: Vec<StoredComment>,
    #[serde(default, skip_serializing_if = "is_false")]
    auto_merge: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    reviewers: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    team_reviewers: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    assignees: Vec<String>,
    created_at: String,
    updated_at: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredComment {
    id: u64,
    body: String,
    created_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Counters {
    next_number: u64,
    next_comment_id: u64,
}

fn is_false(b: &bool) -> bool {
    !b
}

fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

fn local(context: &str, e: impl std::fmt::Display) -> ForgeError {
    ForgeError::Local(format!("local forge: {context}: {e}"))
}

impl LocalForge {
    /// The local forge of a checkout, pushing to its own repository (see [`own`]), or to the
    /// checkout's remote that `settings` names.
    pub(crate) fn open_checkout(settings: LocalSettings) -> Result<Self> {
        let checkout = settings.checkout.display();
        let repo = git2::Repository::open(&settings.checkout).map_err(|e| {
            ForgeError::Local(format!(
                "checkout {checkout} is not a git repository: {}",
                e.message()
            ))
        })?;
        let dir = settings
            .dir
            .unwrap_or_else(|| repo.path().join("quartermaster-forge"));
        let url = match &settings.remote {
            Some(name) => {
                let remote = repo.find_remote(name).map_err(|_| {
                    ForgeError::Local(format!(
                        "checkout {checkout} has no remote `{name}`; pass --remote NAME"
                    ))
                })?;
                let url = remote
                    .url()
                    .map_err(|_| ForgeError::Local(format!("remote `{name}` has no usable URL")))?;
                checkout_relative(&settings.checkout, url)
            }
            None => {
                std::fs::create_dir_all(&dir)
                    .map_err(|e| local(&format!("creating {}", dir.display()), e))?;
                own::sync(&repo, &dir)?.display().to_string()
            }
        };
        let spec = RemoteSpec {
            url: RemoteUrl::new(url),
            username: None,
            token: settings.token,
        };
        Self::open(&dir, spec)
    }

    /// Opens (creating if needed) the forge directory `dir`; branches live at `remote`.
    pub fn open(dir: &Path, remote: RemoteSpec) -> Result<Self> {
        for folder in ["pulls", "issues"] {
            std::fs::create_dir_all(dir.join(folder))
                .map_err(|e| local(&format!("creating {}", dir.display()), e))?;
        }
        let dir = dir
            .canonicalize()
            .map_err(|e| local(&format!("resolving {}", dir.display()), e))?;
        Ok(Self { dir, remote })
    }

    /// The directory the records live in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn lock(&self) -> Result<File> {
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join(".lock"))
            .map_err(|e| local("opening the lock", e))?;
        file.lock().map_err(|e| local("taking the lock", e))?;
        Ok(file)
    }

    fn path(&self, kind: Kind, number: u64) -> PathBuf {
        self.dir.join(kind.folder()).join(format!("{number}.json"))
    }

    fn url(&self, kind: Kind, number: u64) -> String {
        format!("file://{}", self.path(kind, number).display())
    }

    /// Writes `value` as JSON to `path` atomically: temporary file in the same directory, then
    /// rename, so readers see the old record or the new one, never a partial one.
    fn write<T: Serialize>(&self, path: &Path, value: &T) -> Result<()> {
        let parent = path.parent().unwrap_or(&self.dir);
        let mut tmp = tempfile::NamedTempFile::new_in(parent).map_err(|e| local("writing", e))?;
        serde_json::to_writer_pretty(&mut tmp, value).map_err(|e| local("writing", e))?;
        tmp.write_all(b"\n").map_err(|e| local("writing", e))?;
        tmp.as_file().sync_all().map_err(|e| local("writing", e))?;
        tmp.persist(path).map_err(|e| local("writing", e.error))?;
        Ok(())
    }

    fn read(&self, kind: Kind, number: u64) -> Result<Option<Item>> {
        match std::fs::read(self.path(kind, number)) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| local(&format!("reading {} {number}", kind.folder()), e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(local("reading", e)),
        }
    }

    fn all(&self, kind: Kind) -> Result<Vec<Item>> {
        let mut items = Vec::new();
        let entries =
            std::fs::read_dir(self.dir.join(kind.folder())).map_err(|e| local("listing", e))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(number) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(|n| n.parse::<u64>().ok())
            else {
                continue;
            };
            if let Some(item) = self.read(kind, number)? {
                items.push(item);
            }
        }
        items.sort_by_key(|i| i.number);
        Ok(items)
    }

    fn counters(&self) -> Result<Counters> {
        match std::fs::read(self.dir.join("state.json")) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| local("reading state.json", e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Counters {
                next_number: 1,
                next_comment_id: 1,
            }),
            Err(e) => Err(local("reading state.json", e)),
        }
    }

    /// Takes the next number (under the lock held by the caller).
    fn take_number(&self, comment: bool) -> Result<u64> {
        let mut counters = self.counters()?;
        let taken = if comment {
            let n = counters.next_comment_id;
            counters.next_comment_id += 1;
            n
        } else {
            let n = counters.next_number;
            counters.next_number += 1;
            n
        };
        self.write(&self.dir.join("state.json"), &counters)?;
        Ok(taken)
    }

    /// Reads, changes and writes one record under the lock.
    fn modify(
        &self,
        kind: Kind,
        number: u64,
        change: impl FnOnce(&mut Item) -> Result<()>,
    ) -> Result<Item> {
        let _lock = self.lock()?;
        let mut item = self
            .read(kind, number)?
            .ok_or_else(|| ForgeError::NotFound(format!("{} #{number}", kind_word(kind))))?;
        change(&mut item)?;
        item.updated_at = now();
        self.write(&self.path(kind, number), &item)?;
        Ok(item)
    }

    fn pull_request_of(&self, item: Item) -> PullRequest {
        PullRequest {
            number: item.number,
            url: self.url(Kind::PullRequest, item.number),
            state: item.state,
            head: item.head.unwrap_or_default(),
            base: item.base.unwrap_or_default(),
            title: item.title,
            body: item.body,
            labels: item.labels,
            draft: item.draft,
            from_fork: false,
            created_at: Some(item.created_at),
            auto_merge: item.auto_merge,
            reviewers: item.reviewers,
            team_reviewers: item.team_reviewers,
            assignees: item.assignees,
        }
    }

    fn issue_of(&self, item: Item) -> Issue {
        Issue {
            number: item.number,
            url: self.url(Kind::Issue, item.number),
            state: item.state,
            title: item.title,
            body: item.body,
            labels: item.labels,
        }
    }

    fn target(target: Target) -> (Kind, u64) {
        match target {
            Target::PullRequest(n) => (Kind::PullRequest, n),
            Target::Issue(n) => (Kind::Issue, n),
        }
    }
}

/// A remote URL as written in the checkout's config: a relative path is relative to the checkout,
/// not to where Quartermaster runs.
fn checkout_relative(checkout: &Path, url: &str) -> String {
    let relative = !url.contains("://") && !url.contains(':') && !Path::new(url).is_absolute();
    if relative {
        checkout.join(url).display().to_string()
    } else {
        url.to_string()
    }
}

fn kind_word(kind: Kind) -> &'static str {
    match kind {
        Kind::PullRequest => "pull request",
        Kind::Issue => "issue",
    }
}

/// Adds each of `more` to `names` once (labels, reviewers, assignees).
fn add_labels(names: &mut Vec<String>, more: &[String]) {
    for name in more {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
}

#[async_trait]
impl Forge for LocalForge {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Local
    }

    fn remote(&self) -> &RemoteSpec {
        &self.remote
    }

    async fn find_pull_request(&self, branch: &str) -> Result<Option<PullRequest>> {
        let pulls = self.all(Kind::PullRequest)?;
        Ok(super::choose_pull_request(
            pulls.into_iter().map(|i| self.pull_request_of(i)),
            branch,
        ))
    }

    async fn pull_request(&self, number: u64) -> Result<Option<PullRequest>> {
        Ok(self
            .read(Kind::PullRequest, number)?
            .map(|i| self.pull_request_of(i)))
    }

    async fn create_pull_request(&self, new: &NewPullRequest) -> Result<PullRequest> {
        let _lock = self.lock()?;
        let number = self.take_number(false)?;
        let mut labels = Vec::new();
        add_labels(&mut labels, &new.labels);
        let item = Item {
            kind: Kind::PullRequest,
            number,
            state: State::Open,
            title: new.title.clone(),
            body: new.body.clone(),
            labels,
            head: Some(new.head.clone()),
            base: Some(new.base.clone()),
            draft: new.draft,
            comments: Vec::new(),
            auto_merge: false,
            reviewers: Vec::new(),
            team_reviewers: Vec::new(),
            assignees: Vec::new(),
            created_at: now(),
            updated_at: now(),
        };
        self.write(&self.path(Kind::PullRequest, number), &item)?;
        Ok(self.pull_request_of(item))
    }

    async fn update_pull_request(
        &self,
        number: u64,
        edit: &PullRequestEdit,
    ) -> Result<PullRequest> {
        let item = self.modify(Kind::PullRequest, number, |item| {
            if let Some(title) = &edit.title {
                item.title = title.clone();
            }
            if let Some(body) = &edit.body {
                item.body = body.clone();
            }
            add_labels(&mut item.labels, &edit.add_labels);
            Ok(())
        })?;
        Ok(self.pull_request_of(item))
    }

    async fn close_pull_request(&self, number: u64) -> Result<PullRequest> {
        let item = self.modify(Kind::PullRequest, number, |item| {
            item.state = State::Closed;
            Ok(())
        })?;
        Ok(self.pull_request_of(item))
    }

    async fn open_pull_requests(&self, label: &str) -> Result<Vec<PullRequest>> {
        Ok(self
            .all(Kind::PullRequest)?
            .into_iter()
            .filter(|i| i.state == State::Open && i.labels.iter().any(|l| l == label))
            .map(|i| self.pull_request_of(i))
            .collect())
    }

    /// The local forge has no checks to wait for: the request is recorded (`"auto_merge": true`)
    /// for whoever merges.
    async fn request_auto_merge(&self, number: u64, _head: git2::Oid) -> Result<()> {
        self.modify(Kind::PullRequest, number, |item| {
            item.auto_merge = true;
            Ok(())
        })?;
        Ok(())
    }

    async fn request_review(&self, number: u64, people: &super::People) -> Result<Vec<String>> {
        self.modify(Kind::PullRequest, number, |item| {
            add_labels(&mut item.reviewers, &people.reviewers);
            add_labels(&mut item.team_reviewers, &people.team_reviewers);
            add_labels(&mut item.assignees, &people.assignees);
            Ok(())
        })?;
        Ok(Vec::new())
    }

    async fn find_open_issue(
        &self,
        title: &str,
        label: &str,
        marker: &str,
    ) -> Result<Option<Issue>> {
        Ok(self
            .all(Kind::Issue)?
            .into_iter()
            .find(|i| {
                i.state == State::Open
                    && i.title == title
                    && i.labels.iter().any(|l| l == label)
                    && i.body.contains(marker)
            })
            .map(|i| self.issue_of(i)))
    }

    async fn issue(&self, number: u64) -> Result<Option<Issue>> {
        Ok(self.read(Kind::Issue, number)?.map(|i| self.issue_of(i)))
    }

    async fn create_issue(&self, new: &NewIssue) -> Result<Issue> {
        let _lock = self.lock()?;
        let number = self.take_number(false)?;
        let mut labels = Vec::new();
        add_labels(&mut labels, &new.labels);
        let item = Item {
            kind: Kind::Issue,
            number,
            state: State::Open,
            title: new.title.clone(),
            body: new.body.clone(),
            labels,
            head: None,
            base: None,
            draft: false,
            comments: Vec::new(),
            auto_merge: false,
            reviewers: Vec::new(),
            team_reviewers: Vec::new(),
            assignees: Vec::new(),
            created_at: now(),
            updated_at: now(),
        };
        self.write(&self.path(Kind::Issue, number), &item)?;
        Ok(self.issue_of(item))
    }

    async fn update_issue_body(&self, number: u64, body: &str) -> Result<Issue> {
        let item = self.modify(Kind::Issue, number, |item| {
            item.body = body.to_string();
            Ok(())
        })?;
        Ok(self.issue_of(item))
    }

    async fn comments(&self, target: Target) -> Result<Vec<Comment>> {
        let (kind, number) = Self::target(target);
        let item = self
            .read(kind, number)?
            .ok_or_else(|| ForgeError::NotFound(format!("{} #{number}", kind_word(kind))))?;
        let url = self.url(kind, number);
        Ok(item
            .comments
            .into_iter()
            .map(|c| Comment {
                id: c.id,
                body: c.body,
                url: format!("{url}#comment-{}", c.id),
            })
            .collect())
    }

    async fn create_comment(&self, target: Target, body: &str) -> Result<Comment> {
        let (kind, number) = Self::target(target);
        let _lock = self.lock()?;
        let mut item = self
            .read(kind, number)?
            .ok_or_else(|| ForgeError::NotFound(format!("{} #{number}", kind_word(kind))))?;
        let id = self.take_number(true)?;
        item.comments.push(StoredComment {
            id,
            body: body.to_string(),
            created_at: now(),
        });
        item.updated_at = now();
        self.write(&self.path(kind, number), &item)?;
        Ok(Comment {
            id,
            body: body.to_string(),
            url: format!("{}#comment-{id}", self.url(kind, number)),
        })
    }
}

pub(crate) mod own;

#[cfg(test)]
mod tests;
