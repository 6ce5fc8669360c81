//! A fleet: one workflow working on many repositories. The `repository` input points a run at a
//! repository other than the CI job's own (GitHub and GitLab fakes), and the GitLab example's
//! generator turns a list of projects into a child pipeline, refusing what is not a project path.

use crate::common::{Backend, Fixture, assert_succeeded, github, gitlab, one_pr};
use std::process::Command;

#[test]
fn a_github_fleet_job_works_on_the_repository_it_names() {
    let f = Fixture::on(Backend::Github);
    let repository = format!("{}/{}", github::OWNER, github::REPO);
    let run = f.run_with(
        &one_pr(),
        &[],
        &[
            ("GITHUB_REPOSITORY", "octo/fleet"),
            ("QM_REPOSITORY", &repository),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(f.pulls().len(), 1);
    let uris: Vec<String> = f.github_requests().into_iter().map(|r| r.uri).collect();
    assert!(
        uris.iter()
            .all(|u| u.starts_with(&format!("/repos/{repository}/"))),
        "{uris:#?}"
    );
    assert!(f.branches().contains_key("quartermaster/cargo"));
}

#[test]
fn a_gitlab_fleet_job_works_on_the_project_it_names() {
    let f = Fixture::on(Backend::Gitlab);
    let run = f.run_with(
        &one_pr(),
        &[],
        &[
            ("CI_PROJECT_ID", "7"),
            ("CI_PROJECT_PATH", "fleet/runner"),
            ("QM_REPOSITORY", gitlab::PROJECT_PATH),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(f.pulls().len(), 1);
    let encoded = gitlab::PROJECT_PATH.replace('/', "%2F");
    let projects: Vec<String> = f
        .gitlab_requests()
        .into_iter()
        .map(|r| r.uri)
        .filter(|u| u.starts_with("/api/v4/projects/"))
        .collect();
    assert!(!projects.is_empty());
    assert!(
        projects
            .iter()
            .all(|u| u.starts_with(&format!("/api/v4/projects/{encoded}"))),
        "{projects:#?}"
    );
    assert!(f.branches().contains_key("quartermaster/cargo"));
}

#[test]
fn a_repository_the_forge_cannot_name_stops_the_run_with_its_report() {
    let f = Fixture::on(Backend::Github);
    let run = f.run_with(&one_pr(), &[], &[("QM_REPOSITORY", "octo")]);
    assert_eq!(run.code, 2, "{}", run.said());
    assert_eq!(
        run.report["error"],
        "--repository `octo` is not an owner/name"
    );
    assert_eq!(
        run.report["hint"],
        "name the repository as the forge shows it, for example octo/widgets"
    );
    assert!(
        f.github_requests().is_empty(),
        "nothing was asked of GitHub"
    );
}

fn generate(list: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fleet.txt");
    std::fs::write(&file, list).unwrap();
    Command::new("sh")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/fleet/gitlab-fleet-pipeline.sh"
        ))
        .arg(&file)
        .output()
        .unwrap()
}

#[test]
fn the_gitlab_fleet_generator_writes_two_jobs_per_project() {
    let out = generate("tools/widgets\n# retired: tools/old\n  tools/sub/gadgets  \n\n");
    assert_succeeded(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    let doc = &yaml_rust2::YamlLoader::load_from_str(&text).unwrap()[0];
    for project in ["tools/widgets", "tools/sub/gadgets"] {
        let plan = &doc[format!("plan {project}").as_str()];
        let run = &doc[format!("run {project}").as_str()];
        assert_eq!(plan["variables"]["FLEET_PROJECT"].as_str(), Some(project));
        assert_eq!(run["variables"]["FLEET_PROJECT"].as_str(), Some(project));
        assert_eq!(run["extends"].as_str(), Some(".fleet-run"));
    }
    assert!(
        doc["plan tools/old"].is_badvalue(),
        "comments name no project"
    );
    let run = &doc[".fleet-run"];
    assert_eq!(
        run["variables"]["QM_REPOSITORY"].as_str(),
        Some("$FLEET_PROJECT")
    );
    assert_eq!(
        run["variables"]["QM_TOKEN"].as_str(),
        Some("$QUARTERMASTER_GROUP_TOKEN")
    );
}

#[test]
fn the_gitlab_fleet_generator_refuses_what_is_not_a_project() {
    for (list, expected) in [
        (
            "tools/widgets\nwidgets\n",
            "gitlab-fleet-pipeline.sh: `widgets` is not a project path (group/project)\n",
        ),
        (
            "tools/$(id)\n",
            "gitlab-fleet-pipeline.sh: `tools/$(id)` is not a project path (group/project)\n",
        ),
        ("# nothing yet\n", "names no project\n"),
    ] {
        let out = generate(list);
        assert_eq!(out.status.code(), Some(2), "{list}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.ends_with(expected), "{list}: {stderr}");
    }
}
