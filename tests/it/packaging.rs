//! The GitHub Actions' and the GitLab component's metadata agree with the binary and with each
//! other: every input reaches Quartermaster as the `QM_*` variable of the same name, the container
//! action, the runner action and the component take the same inputs, and the documentation
//! names each variable.

use insta::assert_snapshot;
use yaml_rust2::{Yaml, YamlLoader};

fn load(path: &str) -> Yaml {
    let text = std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    YamlLoader::load_from_str(&text).unwrap().remove(0)
}

fn keys(y: &Yaml) -> Vec<String> {
    y.as_hash()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_action_runs_the_prebuilt_image_with_run() {
    let action = load("action.yml");
    let runs = &action["runs"];
    assert_eq!(runs["using"].as_str(), Some("docker"));
    // The image of this very release, so that the action's inputs and the binary agree.
    let image = runs["image"].as_str().unwrap();
    assert!(image.starts_with("docker://ghcr.io/"), "{image}");
    assert!(
        image.ends_with(&format!("/quartermaster:{}", env!("CARGO_PKG_VERSION"))),
        "{image}"
    );
    assert_eq!(runs["args"][0].as_str(), Some("run"));
}

#[test]
fn the_component_defaults_to_the_image_of_its_release() {
    let docs = component();
    let image = docs[0]["spec"]["inputs"]["image"]["default"]
        .as_str()
        .unwrap();
    assert_eq!(
        image,
        format!("ghcr.io/org/quartermaster:{}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn every_input_is_described_and_mapped_to_its_variable() {
    let action = load("action.yml");
    let env = &action["runs"]["env"];
    for input in keys(&action["inputs"]) {
        let spec = &action["inputs"][input.as_str()];
        assert!(
            spec["description"].as_str().is_some_and(|d| d.len() > 10),
            "{input} lacks a description"
        );
        let variable = format!("QM_{}", input.to_uppercase().replace('-', "_"));
        assert_eq!(
            env[variable.as_str()].as_str(),
            Some(format!("${{{{ inputs.{input} }}}}").as_str()),
            "{input} is not passed as {variable}"
        );
    }
    assert_eq!(
        action["inputs"]["token"]["default"].as_str(),
        Some("${{ github.token }}")
    );
    assert_eq!(action["inputs"]["plan"]["required"].as_bool(), Some(true));
}

#[test]
fn the_readme_documents_every_variable_the_action_sets() {
    let readme = crate::docs::documentation();
    let action = load("action.yml");
    for variable in keys(&action["runs"]["env"]) {
        assert!(
            readme.contains(&format!("`{variable}`")),
            "README lacks {variable}"
        );
    }
}

fn component() -> Vec<Yaml> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/templates/quartermaster/template.yml"
    ))
    .unwrap();
    YamlLoader::load_from_str(&text).unwrap()
}

#[test]
fn the_component_is_a_spec_header_and_one_job() {
    let docs = component();
    assert_eq!(docs.len(), 2, "a `spec:` header document, then the job");
    assert_eq!(keys(&docs[0]), vec!["spec"]);
    let inputs = &docs[0]["spec"]["inputs"];
    for name in keys(inputs) {
        let input = &inputs[name.as_str()];
        assert!(
            input["description"].as_str().is_some_and(|d| d.len() > 10),
            "{name} lacks a description"
        );
        if let Some(kind) = input["type"].as_str() {
            assert!(
                ["string", "boolean", "number", "array"].contains(&kind),
                "{name}: {kind}"
            );
        }
    }
    assert!(inputs["plan"]["default"].is_badvalue(), "plan is required");
    assert_eq!(
        keys(&docs[1]),
        vec!["$[[ inputs.job-name ]]"],
        "one job, no global keywords"
    );
}

#[test]
fn inputs_reach_the_binary_through_variables_only() {
    let docs = component();
    let job = &docs[1]["$[[ inputs.job-name ]]"];
    let script: Vec<&str> = job["script"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(script, vec!["exec quartermaster run"]);
    assert_eq!(job["resource_group"].as_str(), Some("quartermaster"));
    let variables = &job["variables"];
    for name in keys(&docs[0]["spec"]["inputs"]) {
        match name.as_str() {
            "stage" | "job-name" | "image" => {}
            "token-variable" => assert_eq!(
                variables["QM_TOKEN"].as_str(),
                Some("${$[[ inputs.token-variable ]]}"),
                "the token comes from the named variable"
            ),
            other => {
                let variable = format!("QM_{}", other.to_uppercase().replace('-', "_"));
                assert_eq!(
                    variables[variable.as_str()].as_str(),
                    Some(format!("$[[ inputs.{other} ]]").as_str()),
                    "{other} is not passed as {variable}"
                );
            }
        }
    }
    assert_eq!(variables["QM_FORGE"].as_str(), Some("gitlab"));
    let artifacts = &job["artifacts"];
    assert_eq!(artifacts["when"].as_str(), Some("always"));
    assert!(artifacts["expose_as"].as_str().is_some());
    let paths: Vec<&str> = artifacts["paths"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        vec![
            variables["QM_REPORT"].as_str().unwrap(),
            variables["QM_SUMMARY"].as_str().unwrap()
        ]
    );
}

/// `runner/action.yml`, the composite action that runs the release's binary on the runner, takes
/// exactly the container action's inputs (same descriptions and defaults), hands them to the
/// binary as the same variables, and gives the same outputs.
#[test]
fn the_runner_action_mirrors_the_container_action() {
    let container = load("action.yml");
    let runner = load("runner/action.yml");
    assert_eq!(runner["runs"]["using"].as_str(), Some("composite"));
    assert_eq!(keys(&runner["inputs"]), keys(&container["inputs"]));
    for input in keys(&container["inputs"]) {
        assert_eq!(
            runner["inputs"][input.as_str()],
            container["inputs"][input.as_str()],
            "input {input} differs"
        );
    }
    assert_eq!(keys(&runner["outputs"]), keys(&container["outputs"]));
    for output in keys(&container["outputs"]) {
        let spec = &runner["outputs"][output.as_str()];
        assert_eq!(
            spec["description"],
            container["outputs"][output.as_str()]["description"]
        );
        assert_eq!(
            spec["value"].as_str(),
            Some(format!("${{{{ steps.run.outputs.{output} }}}}").as_str()),
            "output {output} is not the run step's"
        );
    }
    let steps = runner["runs"]["steps"].as_vec().unwrap();
    let run = steps
        .iter()
        .find(|s| s["id"].as_str() == Some("run"))
        .unwrap();
    assert_eq!(run["run"].as_str(), Some("exec \"$QUARTERMASTER\" run"));
    let mut env = run["env"].as_hash().unwrap().clone();
    assert_eq!(
        env.remove(&Yaml::String("QUARTERMASTER".into()))
            .and_then(|v| v.as_str().map(str::to_string)),
        Some("${{ steps.download.outputs.path }}".to_string())
    );
    assert_eq!(
        &env,
        container["runs"]["env"].as_hash().unwrap(),
        "the run step's variables differ from action.yml's"
    );
}

/// The composite action downloads the binary of its own release, as action.yml runs the image of
/// its own release, and checks it against the checksum published beside it.
#[test]
fn the_runner_action_downloads_the_binary_of_its_release() {
    let runner = load("runner/action.yml");
    let download = &runner["runs"]["steps"][0];
    assert_eq!(download["id"].as_str(), Some("download"));
    assert_eq!(
        download["env"]["VERSION"].as_str(),
        Some(env!("CARGO_PKG_VERSION"))
    );
    let script = download["run"].as_str().unwrap();
    assert!(
        script.contains("sha256sum --check --quiet \"$ASSET.sha256\""),
        "{script}"
    );
    let asset = download["env"]["ASSET"].as_str().unwrap();
    let image_workflow = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/.github/workflows/image.yml"
    ))
    .unwrap();
    assert!(
        image_workflow.contains(&format!("sha256sum {asset} \\\n")),
        "the image workflow does not publish {asset} with its checksum"
    );
}

/// The GitLab component takes the action's inputs, but for what differs between the forges: the
/// token comes from a named CI/CD variable, the report's path is fixed (an artifact), and the job's
/// stage, name and image are the component's own.
#[test]
fn the_component_takes_the_actions_inputs() {
    let action: Vec<String> = keys(&load("action.yml")["inputs"]);
    let component: Vec<String> = keys(&component()[0]["spec"]["inputs"]);
    let only_action: Vec<&str> = action
        .iter()
        .filter(|i| !component.contains(i))
        .map(String::as_str)
        .collect();
    let only_component: Vec<&str> = component
        .iter()
        .filter(|i| !action.contains(i))
        .map(String::as_str)
        .collect();
    assert_eq!(only_action, vec!["token", "report"]);
    assert_eq!(
        only_component,
        vec!["token-variable", "stage", "job-name", "image"]
    );
}

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn text(path: &str) -> String {
    std::fs::read_to_string(format!("{ROOT}/{path}")).unwrap()
}

/// The step of `job` in a workflow whose `id` is `id`.
fn step<'y>(workflow: &'y Yaml, job: &str, id: &str) -> &'y Yaml {
    workflow["jobs"][job]["steps"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|s| s["id"].as_str() == Some(id))
        .unwrap_or_else(|| panic!("no step {id} in job {job}"))
}

/// Runs `.ci/release ARGS` in `dir`; what it printed, or the failure with what it said.
fn release(dir: &std::path::Path, args: &[&str]) -> Result<String, String> {
    let out = std::process::Command::new("bash")
        .arg(format!("{ROOT}/.ci/release"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        Ok(said)
    } else {
        Err(said + &String::from_utf8_lossy(&out.stderr))
    }
}

/// A copy of the files a release writes or reads, in a new directory.
fn release_files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for file in [
        "Cargo.toml",
        "CHANGELOG.md",
        "action.yml",
        "runner/action.yml",
        "templates/quartermaster/template.yml",
    ] {
        let to = dir.path().join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(format!("{ROOT}/{file}"), to).unwrap();
    }
    dir
}

/// The release workflow's release commit names the very image the image workflow's push step
/// pushed: both ask `.ci/release` with the same owner and tag, and what `stamp` writes into a copy
/// of the files is the first image `images` lists. Nothing else in the files changes.
#[test]
fn a_release_names_the_image_its_workflow_pushed() {
    let push = step(&load(".github/workflows/image.yml"), "image", "push").clone();
    let stamp = step(&load(".github/workflows/release.yml"), "release", "stamp").clone();
    for (name, expression) in [
        ("TAG", "${{ github.ref_name }}"),
        ("OWNER", "${{ github.repository_owner }}"),
    ] {
        assert_eq!(push["env"][name].as_str(), Some(expression), "push {name}");
        assert_eq!(
            stamp["env"][name].as_str(),
            Some(expression),
            "stamp {name}"
        );
    }
    let pushes = push["run"].as_str().unwrap();
    assert!(pushes.contains(".ci/release images \"$OWNER\" \"$TAG\" > \"$RUNNER_TEMP/images\""));
    assert!(pushes.contains("docker push --quiet \"$image\"\ndone < \"$RUNNER_TEMP/images\""));
    let stamps = stamp["run"].as_str().unwrap();
    assert!(stamps.starts_with(".ci/release stamp \"$OWNER\" \"$REPOSITORY\" \"$TAG\"\n"));
    assert_eq!(
        stamp["env"]["REPOSITORY"].as_str(),
        Some("${{ github.repository }}")
    );

    let dir = release_files();
    let images = release(dir.path(), &["images", "Octo-Org", "v1.2.3"]).unwrap();
    assert_snapshot!(images, @r"
    full ghcr.io/octo-org/quartermaster:1.2.3
    full ghcr.io/octo-org/quartermaster:v1
    runtime ghcr.io/octo-org/quartermaster:1.2.3-runtime
    runtime ghcr.io/octo-org/quartermaster:v1-runtime
    ");
    let pushed = images
        .lines()
        .next()
        .unwrap()
        .strip_prefix("full ")
        .unwrap();
    let before = |file: &str| load(file);
    let after = |file: &str| {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        YamlLoader::load_from_str(&text).unwrap()
    };
    release(
        dir.path(),
        &["stamp", "Octo-Org", "Octo-Org/quartermaster", "v1.2.3"],
    )
    .unwrap();

    let mut action = after("action.yml").remove(0);
    assert_eq!(
        action["runs"]["image"].as_str(),
        Some(format!("docker://{pushed}").as_str())
    );
    action["runs"]["image"] = before("action.yml")["runs"]["image"].clone();
    assert_eq!(action, before("action.yml"), "only the image changes");

    let mut component = after("templates/quartermaster/template.yml");
    let image = &mut component[0]["spec"]["inputs"]["image"]["default"];
    assert_eq!(image.as_str(), Some(pushed));
    *image = self::component()[0]["spec"]["inputs"]["image"]["default"].clone();
    assert_eq!(component, self::component(), "only the image changes");

    let mut runner = after("runner/action.yml").remove(0);
    let download = &mut runner["runs"]["steps"][0]["env"];
    assert_eq!(download["VERSION"].as_str(), Some("1.2.3"));
    assert_eq!(
        download["RELEASES"].as_str(),
        Some("${{ github.server_url }}/Octo-Org/quartermaster/releases/download")
    );
    let original = &before("runner/action.yml")["runs"]["steps"][0]["env"];
    download["VERSION"] = original["VERSION"].clone();
    download["RELEASES"] = original["RELEASES"].clone();
    assert_eq!(
        runner,
        before("runner/action.yml"),
        "only the download changes"
    );
}

/// `verify` is what the GitLab release pipeline checks: it holds on the release commit, and not
/// on files that name another release.
#[test]
fn verify_tells_a_release_commit_from_any_other() {
    let dir = release_files();
    let cargo = dir.path().join("Cargo.toml");
    let manifest = std::fs::read_to_string(&cargo).unwrap().replacen(
        &format!("version = \"{}\"", env!("CARGO_PKG_VERSION")),
        "version = \"1.2.3\"",
        1,
    );
    std::fs::write(&cargo, manifest).unwrap();
    let refused = release(dir.path(), &["verify", "1.2.3"]).unwrap_err();
    assert!(
        refused.contains("action.yml does not run the image of 1.2.3"),
        "{refused}"
    );
    release(
        dir.path(),
        &["stamp", "octo", "octo/quartermaster", "v1.2.3"],
    )
    .unwrap();
    release(dir.path(), &["verify", "1.2.3"]).unwrap();
    let refused = release(dir.path(), &["verify", "1.2.4"]).unwrap_err();
    assert!(
        refused.contains("Cargo.toml says version 1.2.3, not 1.2.4"),
        "{refused}"
    );
    // The files of this commit name this version (with the placeholder owner until a release).
    release(
        std::path::Path::new(ROOT),
        &["verify", env!("CARGO_PKG_VERSION")],
    )
    .unwrap();
}

/// A tag publishes only with Cargo.toml's version and a changelog section, which becomes the
/// release's notes.
#[test]
fn a_release_needs_its_version_and_its_changelog_section() {
    let dir = release_files();
    let version = env!("CARGO_PKG_VERSION");
    let refused = release(dir.path(), &["check", &format!("v{version}")]).unwrap_err();
    assert!(
        refused.contains(&format!("CHANGELOG.md has no section `## [{version}]`")),
        "{refused}"
    );
    let refused = release(dir.path(), &["check", "v9.9.9"]).unwrap_err();
    assert!(refused.contains(&format!(
        "Cargo.toml says version {version}, the tag v9.9.9"
    )));
    let refused = release(dir.path(), &["check", version]).unwrap_err();
    assert!(
        refused.contains(&format!("the tag `{version}` is not vX.Y.Z")),
        "{refused}"
    );

    let changelog = dir.path().join("CHANGELOG.md");
    let text = std::fs::read_to_string(&changelog).unwrap().replacen(
        "## [Unreleased]",
        &format!("## [Unreleased]\n\n## [{version}] - 2026-11-27"),
        1,
    );
    std::fs::write(&changelog, text).unwrap();
    release(dir.path(), &["check", &format!("v{version}")]).unwrap();
    let notes = release(dir.path(), &["notes", version]).unwrap();
    assert!(
        notes.starts_with("The first release. What exists:\n"),
        "{notes}"
    );
    assert!(!notes.contains("## ["), "{notes}");
}

/// The project keeps its own lock file current with its own action: a weekly workflow runs the
/// latest release's action on a committed lock-maintenance plan, which validates.
#[test]
fn the_project_runs_its_own_action_on_its_lock_file_weekly() {
    let workflow = load(".github/workflows/lock-maintenance.yml");
    assert!(workflow["on"]["schedule"][0]["cron"].as_str().is_some());
    let steps = workflow["jobs"]["lock-maintenance"]["steps"]
        .as_vec()
        .unwrap();
    let major = format!("v{}", env!("CARGO_PKG_VERSION_MAJOR"));
    let release = steps
        .iter()
        .find(|s| s["with"]["path"].as_str() == Some(".quartermaster-release"))
        .unwrap();
    assert_eq!(release["with"]["ref"].as_str(), Some(major.as_str()));
    let run = steps
        .iter()
        .find(|s| s["uses"].as_str() == Some("./.quartermaster-release"))
        .unwrap();
    let plan = run["with"]["plan"].as_str().unwrap();
    assert_eq!(plan, ".github/quartermaster/lock-maintenance.json");

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quartermaster"))
        .args(["validate", "--format", "json", &format!("{ROOT}/{plan}")])
        .output()
        .unwrap();
    let verdict: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdict["valid"], true, "{verdict}");
    assert_eq!(verdict["warnings"], serde_json::json!([]), "{verdict}");
    let plan: serde_json::Value = serde_json::from_str(&text(plan)).unwrap();
    let action = &plan["actions"][0];
    assert_eq!(plan["actions"].as_array().unwrap().len(), 1);
    assert_eq!(action["commands"], serde_json::json!(["cargo update"]));
    assert_eq!(action["updates"][0]["package"], "Cargo.lock");
    assert_eq!(action["updates"][0]["update_type"], "lock_file_maintenance");
}
