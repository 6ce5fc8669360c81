use super::*;
use crate::hint::Hint;

#[test]
fn repositories_are_host_owner_name() {
    for ok in [
        "github.com/octo/widgets",
        "ghe.local:8443/a/b",
        "gl.example/g/s/p.x",
    ] {
        assert_eq!(ok.parse::<Repository>().unwrap().as_str(), ok);
    }
    for bad in [
        "octo/widgets",
        "github.com/octo/",
        "h/../x",
        "h/a b/c",
        "h:/a/b",
        "/a/b",
    ] {
        let e = bad.parse::<Repository>().unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("`{bad}` is not a repository as HOST/OWNER/NAME")
        );
        assert_eq!(
            e.hint().unwrap(),
            "for example github.com/octo/widgets or gitlab.com/group/subgroup/project"
        );
    }
}

fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    }
}

#[test]
fn repository_comes_from_ci_variables() {
    let github = Repository::from_ci(env(&[
        ("GITHUB_REPOSITORY", "Octo/Widgets"),
        ("GITHUB_SERVER_URL", "https://ghe.local:8443/"),
    ]));
    assert_eq!(github.unwrap().as_str(), "ghe.local:8443/Octo/Widgets");
    let public = Repository::from_ci(env(&[("GITHUB_REPOSITORY", "o/n")]));
    assert_eq!(public.unwrap().as_str(), "github.com/o/n");
    let gitlab = Repository::from_ci(env(&[
        ("CI_SERVER_HOST", "gitlab.local"),
        ("CI_PROJECT_PATH", "group/sub/project"),
    ]));
    assert_eq!(gitlab.unwrap().as_str(), "gitlab.local/group/sub/project");
    let bad = Repository::from_ci(env(&[
        ("GITHUB_REPOSITORY", "o/n"),
        ("GITHUB_SERVER_URL", "not a url"),
    ]));
    assert_eq!(
        bad.unwrap_err().to_string(),
        "`not a url/o/n` is not a repository as HOST/OWNER/NAME"
    );
    let none = Repository::from_ci(env(&[("CI_PROJECT_PATH", "")])).unwrap_err();
    assert_eq!(
        none.to_string(),
        "no repository to prefix the lock keys with"
    );
    assert!(
        none.hint()
            .unwrap()
            .starts_with("pass --repo HOST/OWNER/NAME")
    );
}

#[test]
fn empty_queue_or_executor_is_refused() {
    let repo: Repository = "h/o/n".parse().unwrap();
    let e = ExportOptions::new(repo.clone(), Some(" ".into()), None).unwrap_err();
    assert_eq!(e.to_string(), "--queue is empty");
    assert_eq!(
        e.hint().unwrap(),
        "name a pangolin queue, or leave the flag out"
    );
    let e = ExportOptions::new(repo.clone(), None, Some(String::new())).unwrap_err();
    assert_eq!(e.to_string(), "--executor is empty");
    let o = ExportOptions::new(repo, None, None).unwrap();
    assert_eq!(
        (o.queue.as_str(), o.executor.as_str()),
        ("default", "quartermaster")
    );
}

#[test]
fn run_ids_differ_by_repository_and_plan_only() {
    let a = run_id("github.com/a-b/c", "00");
    assert!(a.starts_with("qm-github.com-a-b-c-"), "{a}");
    assert_ne!(a, run_id("github.com/a/b-c", "00"));
    assert_ne!(a, run_id("github.com/a-b/c", "01"));
    assert_eq!(a, run_id("github.com/a-b/c", "00"));
    assert!(
        a.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || ".-".contains(c))
    );
}
