use super::*;

fn forge(dir: &Path) -> LocalForge {
    LocalForge::open(
        dir,
        RemoteSpec {
            url: RemoteUrl::new("/nowhere"),
            username: None,
            token: None,
        },
    )
    .unwrap()
}

fn new_pr(head: &str) -> NewPullRequest {
    NewPullRequest {
        head: head.into(),
        base: "main".into(),
        title: "t".into(),
        body: "b".into(),
        labels: vec!["quartermaster".into(), "quartermaster".into()],
        draft: false,
    }
}

#[tokio::test]
async fn numbers_are_shared_between_pulls_and_issues() {
    let dir = tempfile::tempdir().unwrap();
    let f = forge(dir.path());
    let pr = f
        .create_pull_request(&new_pr("quartermaster/a"))
        .await
        .unwrap();
    let issue = f
        .create_issue(&NewIssue {
            title: "i".into(),
            body: "b".into(),
            labels: vec!["quartermaster".into()],
        })
        .await
        .unwrap();
    assert_eq!((pr.number, issue.number), (1, 2));
    assert_eq!(pr.labels, vec!["quartermaster"]);
    assert!(pr.url.ends_with("/pulls/1.json"));
    assert!(dir.path().join("issues/2.json").is_file());
    assert_eq!(f.pull_request(2).await.unwrap(), None);
}

#[tokio::test]
async fn records_survive_reopening_and_track_state() {
    let dir = tempfile::tempdir().unwrap();
    let f = forge(dir.path());
    f.create_pull_request(&new_pr("quartermaster/a"))
        .await
        .unwrap();
    let f = forge(dir.path());
    let found = f
        .find_pull_request("quartermaster/a")
        .await
        .unwrap()
        .unwrap();
    let edit = PullRequestEdit {
        title: Some("new".into()),
        body: None,
        add_labels: vec!["deps".into()],
    };
    let updated = f.update_pull_request(found.number, &edit).await.unwrap();
    assert_eq!(updated.title, "new");
    assert_eq!(updated.labels, vec!["quartermaster", "deps"]);
    f.create_comment(Target::PullRequest(1), "hello")
        .await
        .unwrap();
    assert_eq!(
        f.comments(Target::PullRequest(1)).await.unwrap()[0].body,
        "hello"
    );
    f.close_pull_request(1).await.unwrap();
    let closed = f
        .find_pull_request("quartermaster/a")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(closed.state, State::Closed);
    f.create_pull_request(&new_pr("quartermaster/a"))
        .await
        .unwrap();
    let reopened = f
        .find_pull_request("quartermaster/a")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((reopened.number, reopened.state), (2, State::Open));
    assert_eq!(f.find_pull_request("quartermaster/b").await.unwrap(), None);
    assert!(matches!(
        f.create_comment(Target::Issue(9), "x").await,
        Err(ForgeError::NotFound(_))
    ));
}

#[tokio::test]
async fn concurrent_creates_get_distinct_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let path = path.clone();
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                rt.block_on(
                    forge(&path).create_pull_request(&new_pr(&format!("quartermaster/{i}"))),
                )
                .unwrap()
                .number
            })
        })
        .collect();
    let mut numbers: Vec<u64> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    numbers.sort();
    assert_eq!(numbers, (1..=8).collect::<Vec<_>>());
}
