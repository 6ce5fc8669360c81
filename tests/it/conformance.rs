//! The `Forge` conformance suite: one behavioural contract, run in-process against the local forge
//! and against the GitHub and GitLab adapters talking to HTTP fakes of their APIs.

use crate::common::{TOKEN, github, gitlab, sh};
use quartermaster::forge::github::{GithubForge, GithubSettings};
use quartermaster::forge::gitlab::{GitlabForge, GitlabSettings};
use quartermaster::forge::http::Policy;
use quartermaster::forge::local::LocalForge;
use quartermaster::forge::{
    Forge, ForgeKind, NewIssue, NewPullRequest, PullRequestEdit, State, Target,
};
use quartermaster::git::{RemoteSpec, RemoteUrl};
use secrecy::SecretString;
use std::path::Path;
use std::time::Duration;

fn quick() -> Policy {
    Policy {
        attempts: 2,
        backoff: Duration::from_millis(1),
        max_wait: Duration::from_secs(1),
        write_interval: Duration::ZERO,
        ..Policy::default()
    }
}

/// A bare repository with `main` and `quartermaster/human`, one commit ahead by a human.
fn repository(root: &Path) -> std::path::PathBuf {
    sh(
        root,
        "git init -q -b main seed && cd seed && echo a > a && git add a && git commit -qm a \
         && git checkout -qb quartermaster/human && echo b > b && git add b && git commit -qm b \
         && cd .. && git clone -q --bare seed remote.git",
    );
    root.join("remote.git")
}

fn new_pr(head: &str) -> NewPullRequest {
    NewPullRequest {
        head: head.into(),
        base: "main".into(),
        title: "chore(deps): bump".into(),
        body: "Bumps.\n<!-- quartermaster:pr:1 -->".into(),
        labels: vec!["quartermaster".into(), "dependencies".into()],
        draft: false,
    }
}

/// Create, find, read and update a PR; labels are only added; closing keeps it findable.
async fn pull_requests(forge: &dyn Forge) {
    assert_eq!(
        forge.find_pull_request("quartermaster/x").await.unwrap(),
        None
    );
    let pr = forge
        .create_pull_request(&new_pr("quartermaster/x"))
        .await
        .unwrap();
    assert_eq!(
        (pr.state, pr.head.as_str(), pr.base.as_str()),
        (State::Open, "quartermaster/x", "main")
    );
    assert!(
        pr.labels.contains(&"quartermaster".to_string()),
        "{:?}",
        pr.labels
    );
    assert!(!pr.from_fork);
    let found = forge
        .find_pull_request("quartermaster/x")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.number, pr.number);
    assert_eq!(
        forge.pull_request(pr.number).await.unwrap().unwrap().title,
        pr.title
    );
    assert_eq!(forge.pull_request(9_999).await.unwrap(), None);
    let edit = PullRequestEdit {
        title: Some("chore(deps): bump more".into()),
        body: Some("New body".into()),
        add_labels: vec!["security".into()],
    };
    let updated = forge.update_pull_request(pr.number, &edit).await.unwrap();
    assert_eq!(updated.title, "chore(deps): bump more");
    assert_eq!(updated.body, "New body");
    for label in ["quartermaster", "dependencies", "security"] {
        assert!(
            updated.labels.contains(&label.to_string()),
            "{label}: {:?}",
            updated.labels
        );
    }
    let closed = forge.close_pull_request(pr.number).await.unwrap();
    assert_eq!(closed.state, State::Closed);
    let found = forge
        .find_pull_request("quartermaster/x")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((found.number, found.state), (pr.number, State::Closed));
}

/// Comments carry their marker verbatim, so that a second run finds them.
async fn comments(forge: &dyn Forge) {
    let pr = forge
        .create_pull_request(&new_pr("quartermaster/c"))
        .await
        .unwrap();
    let target = Target::PullRequest(pr.number);
    assert!(forge.comments(target).await.unwrap().is_empty());
    let body = "Superseded.\n\n<!-- quartermaster:comment:0123456789abcdef -->";
    let posted = forge.create_comment(target, body).await.unwrap();
    assert!(!posted.url.is_empty());
    let all = forge.comments(target).await.unwrap();
    assert_eq!(all.len(), 1);
    assert!(
        all[0]
            .body
            .contains("<!-- quartermaster:comment:0123456789abcdef -->")
    );
}

/// Issues are found by exact title, label and marker, and their bodies can be replaced; a
/// human's issue with the same title and label is not Quartermaster's.
async fn issues(forge: &dyn Forge) {
    const MARKER: &str = "<!-- quartermaster:issue:0123456789abcdef -->";
    let human = NewIssue {
        title: "Major update for pgx".into(),
        body: "I track this myself.".into(),
        labels: vec!["quartermaster".into()],
    };
    let find =
        |title: &'static str, label: &'static str| forge.find_open_issue(title, label, MARKER);
    forge.create_issue(&human).await.unwrap();
    assert_eq!(
        find("Major update for pgx", "quartermaster").await.unwrap(),
        None
    );
    let new = NewIssue {
        body: format!("Migration guide.\n{MARKER}"),
        ..human
    };
    let issue = forge.create_issue(&new).await.unwrap();
    let found = find("Major update for pgx", "quartermaster")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.number, issue.number);
    assert_eq!(
        find("Major update for pgx", "other-label").await.unwrap(),
        None
    );
    assert_eq!(find("Major update", "quartermaster").await.unwrap(), None);
    let read = forge.issue(issue.number).await.unwrap().unwrap();
    assert_eq!(
        (read.state, read.labels.clone()),
        (State::Open, vec!["quartermaster".to_string()])
    );
    let updated = forge
        .update_issue_body(issue.number, "Still outdated.")
        .await
        .unwrap();
    assert_eq!(updated.body, "Still outdated.");
    forge
        .create_comment(Target::Issue(issue.number), "Ping.")
        .await
        .unwrap();
    assert_eq!(
        forge
            .comments(Target::Issue(issue.number))
            .await
            .unwrap()
            .len(),
        1
    );
}

/// Who made a PR's commits: a forge that can tell names the human; one that cannot says so.
async fn ownership(forge: &dyn Forge) {
    let pr = forge
        .create_pull_request(&new_pr("quartermaster/human"))
        .await
        .unwrap();
    match forge.commit_authors(&pr).await.unwrap() {
        Some(authors) => assert!(
            authors.contains(&"human@example.com".to_string()),
            "{authors:?}"
        ),
        None => assert_eq!(
            forge.kind(),
            ForgeKind::Local,
            "only the local forge defers to git"
        ),
    }
}

async fn contract(forge: &dyn Forge) {
    pull_requests(forge).await;
    comments(forge).await;
    issues(forge).await;
    ownership(forge).await;
}

#[tokio::test]
async fn the_local_forge_keeps_the_contract() {
    let root = tempfile::tempdir().unwrap();
    let remote = repository(root.path());
    let spec = RemoteSpec {
        url: RemoteUrl::new(remote.display().to_string()),
        username: None,
        token: None,
    };
    let forge = LocalForge::open(&root.path().join("forge"), spec).unwrap();
    contract(&forge).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_github_adapter_keeps_the_contract() {
    let root = tempfile::tempdir().unwrap();
    let fake = github::FakeGithub::start(TOKEN, repository(root.path())).await;
    let forge = GithubForge::new(GithubSettings {
        api_url: fake.uri(),
        server_url: fake.uri(),
        repository: format!("{}/{}", github::OWNER, github::REPO),
        token: SecretString::from(TOKEN),
        policy: quick(),
    })
    .unwrap();
    contract(&forge).await;
    let fork = fake
        .state
        .lock()
        .unwrap()
        .seed_fork_pull("quartermaster/y", &["quartermaster"]);
    assert!(forge.pull_request(fork).await.unwrap().unwrap().from_fork);
    assert_eq!(
        forge.find_pull_request("quartermaster/y").await.unwrap(),
        None
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gitlab_adapter_keeps_the_contract() {
    let root = tempfile::tempdir().unwrap();
    let fake = gitlab::FakeGitlab::start(TOKEN, repository(root.path())).await;
    let forge = GitlabForge::connect(GitlabSettings {
        api_url: format!("{}/api/v4", fake.uri()),
        server_url: fake.uri(),
        project: gitlab::PROJECT_ID.to_string(),
        project_path: gitlab::PROJECT_PATH.into(),
        token: SecretString::from(TOKEN),
        policy: quick(),
    })
    .await
    .unwrap();
    contract(&forge).await;
    let fork = fake
        .state
        .lock()
        .unwrap()
        .seed_fork_pull("quartermaster/y", &["quartermaster"]);
    assert!(forge.pull_request(fork).await.unwrap().unwrap().from_fork);
    assert_eq!(
        forge.find_pull_request("quartermaster/y").await.unwrap(),
        None
    );
}
