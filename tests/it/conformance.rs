//! The `Forge` conformance suite: one behavioural contract, run in-process against the local forge
//! and against the GitHub and GitLab adapters talking to HTTP fakes of their APIs.

use crate::common::fake_forge::Seed;
use crate::common::{TOKEN, github, gitlab, sh};
use quartermaster::forge::github::{GithubForge, GithubSettings};
use quartermaster::forge::gitlab::{GitlabForge, GitlabSettings};
use quartermaster::forge::http::RequestPolicy;
use quartermaster::forge::local::LocalForge;
use quartermaster::forge::{
    ApiCommit, FileChange, Forge, ForgeKind, NewIssue, NewPullRequest, People, PullRequestEdit,
    State, Target,
};
use quartermaster::git::{Identity, RemoteSpec, RemoteUrl};
use secrecy::SecretString;
use std::path::Path;
use std::time::Duration;

fn quick() -> RequestPolicy {
    RequestPolicy {
        attempts: 2,
        backoff: Duration::from_millis(1),
        max_wait: Duration::from_secs(1),
        write_interval: Duration::ZERO,
        ..RequestPolicy::default()
    }
}

/// A bare repository with `main`, `quartermaster/human` one commit ahead by a human, and
/// `quartermaster/auto` one commit ahead.
fn repository(root: &Path) -> std::path::PathBuf {
    sh(
        root,
        "git init -q -b main seed && cd seed && echo a > a && git add a && git commit -qm a \
         && git checkout -qb quartermaster/human && echo b > b && git add b && git commit -qm b \
         && git checkout -q main && git checkout -qb quartermaster/auto && echo c > c \
         && git add c && git commit -qm c && cd .. && git clone -q --bare seed remote.git",
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

/// The bot's open PRs, oldest first; auto-merge requested for a head, reviewers and assignees.
async fn after_opening(forge: &dyn Forge, remote: &Path) {
    let other = NewPullRequest {
        labels: vec!["dependencies".into()],
        ..new_pr("quartermaster/theirs")
    };
    let theirs = forge.create_pull_request(&other).await.unwrap();
    let ours = forge
        .create_pull_request(&new_pr("quartermaster/auto"))
        .await
        .unwrap();
    let open = forge.open_pull_requests("quartermaster").await.unwrap();
    let numbers: Vec<u64> = open.iter().map(|p| p.number).collect();
    assert!(numbers.contains(&ours.number), "{numbers:?}");
    assert!(!numbers.contains(&theirs.number), "{numbers:?}");
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
    assert!(
        open.iter()
            .all(|p| p.state == State::Open && p.created_at.is_some())
    );
    let head = git2::Oid::from_str(&sh(remote, "git rev-parse quartermaster/auto")).unwrap();
    let main = git2::Oid::from_str(&sh(remote, "git rev-parse main")).unwrap();
    if forge.kind() != ForgeKind::Local {
        let stale = forge.request_auto_merge(ours.number, main).await;
        assert!(stale.is_err(), "auto-merge of another head: {stale:?}");
    }
    forge.request_auto_merge(ours.number, head).await.unwrap();
    let people = People {
        reviewers: vec!["alice".into()],
        team_reviewers: vec!["core".into()],
        assignees: vec!["bob".into()],
    };
    let notes = forge.request_review(ours.number, &people).await.unwrap();
    let pr = forge.pull_request(ours.number).await.unwrap().unwrap();
    assert!(pr.auto_merge);
    assert_eq!(
        (pr.reviewers, pr.assignees),
        (vec!["alice".to_string()], vec!["bob".to_string()])
    );
    match forge.kind() {
        ForgeKind::Gitlab => assert_eq!(
            notes,
            ["team reviewers (core) are GitHub's; GitLab has none"]
        ),
        _ => assert_eq!(
            (notes, pr.team_reviewers),
            (vec![], vec!["core".to_string()])
        ),
    }
    let stranger = People {
        reviewers: vec!["mallory".into()],
        ..People::default()
    };
    let notes = forge.request_review(ours.number, &stranger).await.unwrap();
    assert_eq!(
        notes.is_empty(),
        forge.kind() == ForgeKind::Local,
        "{notes:?}"
    );
}

/// A commit the forge makes from the verified files: the same tree, on the base, under the lease.
async fn signed_commits(forge: &dyn Forge, remote: &Path) {
    let root = remote.parent().unwrap();
    let expected = sh(
        root,
        "git clone -q -b main remote.git verified && cd verified && printf 'a2\\n' > a && mkdir deps \
         && printf 'x\\n' > deps/new.lock && printf '#!/bin/sh\\n' > run.sh && chmod +x run.sh \
         && git add -A && git write-tree",
    );
    let oid = |s: &str| git2::Oid::from_str(&sh(remote, &format!("git rev-parse {s}"))).unwrap();
    let file = |path: &str, mode: u32, content: &str, in_base: bool| FileChange {
        path: path.into(),
        in_base,
        mode,
        content: Some(content.as_bytes().to_vec()),
    };
    let mut commit = ApiCommit {
        branch: "quartermaster/signed".into(),
        base: oid("main"),
        base_tree: oid("main^{tree}"),
        tree: git2::Oid::from_str(&expected).unwrap(),
        expected: None,
        message: "chore(deps): bump\n\nGenerated by Quartermaster.\n".into(),
        files: vec![
            file("a", 0o100644, "a2\n", true),
            file("deps/new.lock", 0o100644, "x\n", false),
            file("run.sh", 0o100755, "#!/bin/sh\n", false),
        ],
        author: Identity::parse("Quartermaster <quartermaster@noreply.invalid>").unwrap(),
    };
    if forge.kind() == ForgeKind::Local {
        let refused = forge.create_commit(&commit).await.unwrap_err().to_string();
        assert!(
            refused.contains("cannot create commits through an API"),
            "{refused}"
        );
        return;
    }
    let made = forge.create_commit(&commit).await.unwrap();
    assert_eq!(made, oid("quartermaster/signed"));
    assert_eq!(oid("quartermaster/signed^{tree}").to_string(), expected);
    assert_eq!(oid("quartermaster/signed^"), commit.base);
    let committer = sh(remote, "git log -1 --format=%ce quartermaster/signed");
    assert_ne!(
        committer, "quartermaster@noreply.invalid",
        "the forge made it"
    );
    // The lease: a branch that exists, or is elsewhere than expected, is not moved.
    assert!(forge.create_commit(&commit).await.is_err());
    commit.expected = Some(commit.base);
    assert!(forge.create_commit(&commit).await.is_err());
    assert_eq!(oid("quartermaster/signed"), made);
    commit.expected = Some(made);
    commit.message = "again".into();
    let again = forge.create_commit(&commit).await.unwrap();
    assert_eq!(oid("quartermaster/signed"), again);
}

async fn contract(forge: &dyn Forge, remote: &Path) {
    pull_requests(forge).await;
    comments(forge).await;
    issues(forge).await;
    ownership(forge).await;
    after_opening(forge, remote).await;
    signed_commits(forge, remote).await;
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
    contract(&forge, &remote).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_github_adapter_keeps_the_contract() {
    let root = tempfile::tempdir().unwrap();
    let remote = repository(root.path());
    let fake = github::FakeGithub::start(TOKEN, remote.clone()).await;
    let forge = GithubForge::new(GithubSettings {
        api_url: fake.uri(),
        server_url: fake.uri(),
        repository: format!("{}/{}", github::OWNER, github::REPO),
        token: SecretString::from(TOKEN),
        policy: quick(),
    })
    .unwrap();
    contract(&forge, &remote).await;
    let fork = fake
        .state
        .lock()
        .unwrap()
        .seed_fork_pull(FORK_BRANCH, &["quartermaster"]);
    a_fork_pr_is_not_the_branchs(&forge, fork).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gitlab_adapter_keeps_the_contract() {
    let root = tempfile::tempdir().unwrap();
    let remote = repository(root.path());
    let fake = gitlab::FakeGitlab::start(TOKEN, remote.clone()).await;
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
    contract(&forge, &remote).await;
    let fork = fake
        .state
        .lock()
        .unwrap()
        .seed_fork_pull(FORK_BRANCH, &["quartermaster"]);
    a_fork_pr_is_not_the_branchs(&forge, fork).await;
}

/// The branch a fork's PR comes from, named like Quartermaster's.
const FORK_BRANCH: &str = "quartermaster/y";

/// The fork's PR `fork` says it is one, and is never found as the PR of Quartermaster's branch.
async fn a_fork_pr_is_not_the_branchs(forge: &impl Forge, fork: u64) {
    assert!(forge.pull_request(fork).await.unwrap().unwrap().from_fork);
    assert_eq!(forge.find_pull_request(FORK_BRANCH).await.unwrap(), None);
}
