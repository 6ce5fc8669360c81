//! The docker-agent examples stay in step with Quartermaster: the agent uses the plan toolset and
//! `quartermaster mcp`, its structured output is `quartermaster schema`, and the two jobs of each
//! workflow hand the same plans directory over. (`.ci/run` checks them with yamllint and the CI
//! schemas.)

use serde_json::{Map, Value, json};
use std::path::Path;
use yaml_rust2::{Yaml, YamlLoader};

fn load(file: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/docker-agent")
        .join(file);
    let text = std::fs::read_to_string(path).unwrap();
    let docs = YamlLoader::load_from_str(&text).unwrap();
    to_json(&docs[0])
}

fn to_json(yaml: &Yaml) -> Value {
    match yaml {
        Yaml::Real(text) => json!(text.parse::<f64>().unwrap()),
        Yaml::Integer(n) => json!(n),
        Yaml::String(s) => json!(s),
        Yaml::Boolean(b) => json!(b),
        Yaml::Array(items) => Value::Array(items.iter().map(to_json).collect()),
        Yaml::Hash(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.as_str().expect("string keys").to_string(), to_json(v)))
                .collect::<Map<_, _>>(),
        ),
        Yaml::Null => Value::Null,
        other => panic!("unexpected YAML node {other:?}"),
    }
}

#[test]
fn the_agent_uses_named_plans_quartermaster_mcp_and_the_plan_schema() {
    let agent = load("agent.yaml");
    let root = &agent["agents"]["root"];
    let toolsets = root["toolsets"].as_array().unwrap();
    assert!(toolsets.contains(&json!({"type": "plan"})), "{toolsets:?}");
    assert!(
        toolsets.contains(&json!({"type": "mcp", "command": "quartermaster", "args": ["mcp"]}))
    );
    let output = &root["structured_output"];
    assert_eq!(output["mode"], "tool");
    assert!(
        output["schema"] == quartermaster::plan::json_schema(),
        "agent.yaml's structured_output.schema is not `quartermaster schema`; regenerate it (examples/docker-agent/README.md)"
    );
    let instruction = root["instruction"].as_str().unwrap();
    for tool in [
        "read_plan",
        "describe_mission",
        "get_schema",
        "validate_plan",
        "explain_code",
        "submit_plan",
    ] {
        assert!(
            instruction.contains(tool),
            "the instruction never mentions {tool}"
        );
    }
}

#[test]
fn the_github_workflow_hands_the_plans_from_agent_to_quartermaster() {
    let flow = load("github-workflow.yml");
    let (plan, execute) = (&flow["jobs"]["plan"], &flow["jobs"]["execute"]);
    assert_eq!(execute["needs"], "plan");
    assert_eq!(plan["permissions"], json!({"contents": "read"}));
    let step = |job: &Value, uses: &str| -> Value {
        job["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with(uses)))
            .unwrap_or_else(|| panic!("no {uses} step"))
            .clone()
    };
    let run = step(execute, "org/quartermaster@");
    assert_eq!(run["with"]["plan"], "docker-agent:deps-weekly");
    let plans_dir = run["with"]["plans-dir"].as_str().unwrap();
    assert_eq!(
        step(execute, "actions/download-artifact@")["with"]["path"],
        plans_dir
    );
    assert_eq!(
        step(execute, "actions/cache/save@")["with"]["path"],
        plans_dir
    );
    assert_eq!(
        step(plan, "actions/cache/restore@")["with"]["path"],
        plans_dir
    );
    let agent = step(plan, "docker/docker-agent-action@");
    assert!(
        agent["env"]["QM_PLANS_DIR"]
            .as_str()
            .unwrap()
            .ends_with(plans_dir)
    );
    assert!(
        agent["with"]["extra-args"]
            .as_str()
            .unwrap()
            .ends_with(plans_dir.trim_end_matches("/plans"))
    );
}

#[test]
fn the_gitlab_pipeline_hands_the_plans_from_agent_to_quartermaster() {
    let ci = load("gitlab-ci.yml");
    assert_eq!(ci["stages"], json!(["plan", "execute"]));
    let inputs = &ci["include"][0]["inputs"];
    assert_eq!(inputs["plan"], "docker-agent:deps-weekly");
    let plans_dir = format!("{}/", inputs["plans-dir"].as_str().unwrap());
    assert_eq!(ci["plan"]["artifacts"]["paths"], json!([plans_dir]));
    assert_eq!(ci[".plans-cache"]["cache"]["paths"], json!([plans_dir]));
    assert_eq!(ci["execute"]["needs"], json!(["plan"]));
    assert!(
        ci["plan"]["script"][0]
            .as_str()
            .unwrap()
            .contains("--data-dir \"$AGENT_DATA\"")
    );
}
