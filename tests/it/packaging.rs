//! The GitHub Actions' and the GitLab component's metadata agree with the binary and with each
//! other: every input reaches Quartermaster as the `QM_*` variable of the same name, the container
//! action, the runner action and the component take the same inputs, and the README documents
//! each variable.

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
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
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
        "/templates/quartermaster.yml"
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
