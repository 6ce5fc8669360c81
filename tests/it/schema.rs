//! The published JSON Schema and the validator agree: every seed example passes both, structural
//! faults fail both, and `quartermaster schema` prints exactly the schema the validator uses.

use assert_cmd::Command;
use quartermaster::{mission, plan, validate};
use serde_json::{Value, json};
use std::path::Path;

fn examples() -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/plans");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (
                name,
                serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn mission_for(name: &str) -> &'static str {
    if name.contains("docs-drift") {
        "docs-drift"
    } else {
        "deps"
    }
}

fn schema_accepts(instance: &Value) -> bool {
    let validator = jsonschema::validator_for(&plan::json_schema()).unwrap();
    validator.is_valid(instance)
}

fn validator_accepts(instance: &Value, mission_name: &str) -> bool {
    let m = mission::load(mission_name, None).unwrap();
    validate::validate(serde_json::to_string(instance).unwrap().as_bytes(), &m).is_valid()
}

#[test]
fn every_seed_example_validates_with_both() {
    let all = examples();
    assert!(all.iter().any(|(n, _)| n == "seed-deps.json"));
    for (name, plan) in all {
        assert!(schema_accepts(&plan), "schema refuses {name}");
        let m = mission::load(mission_for(&name), None).unwrap();
        let v = validate::validate(serde_json::to_string(&plan).unwrap().as_bytes(), &m);
        assert!(v.is_valid(), "{name}: {:?}", v.findings);
        assert_eq!(v.warnings().count(), 0, "{name}: {:?}", v.findings);
    }
}

#[test]
fn the_seed_covers_every_action_type() {
    let (_, plan) = examples()
        .into_iter()
        .find(|(n, _)| n == "seed-deps.json")
        .unwrap();
    let types: Vec<&str> = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["type"].as_str().unwrap())
        .collect();
    for t in plan::ActionType::ALL {
        assert!(types.contains(&t.as_str()), "seed example lacks {t}");
    }
}

/// Breaks a plan in place.
type Fault = fn(&mut Value);

#[test]
fn structural_faults_fail_both() {
    let (_, seed) = examples()
        .into_iter()
        .find(|(n, _)| n == "seed-deps.json")
        .unwrap();
    let faults: Vec<(&str, Fault)> = vec![
        ("unknown field", |p: &mut Value| {
            p["actions"][0]["fallback_stratgy"] = json!("batch")
        }),
        ("missing field", |p: &mut Value| {
            p["actions"][0]
                .as_object_mut()
                .unwrap()
                .shift_remove("title");
        }),
        ("wrong type", |p: &mut Value| {
            p["actions"][0]["confidence"] = json!("high")
        }),
        ("closed enum", |p: &mut Value| {
            p["actions"][0]["fallback_strategy"] = json!("yolo")
        }),
        ("update type", |p: &mut Value| {
            p["actions"][0]["updates"][0]["update_type"] = json!("huge")
        }),
        ("reason type", |p: &mut Value| {
            p["actions"][6]["reason_type"] = json!("lazy")
        }),
        ("unknown action", |p: &mut Value| {
            p["actions"][3]["type"] = json!("merge_mr")
        }),
        ("negative id", |p: &mut Value| {
            p["actions"][3]["mr_id"] = json!(-1)
        }),
        ("zero id", |p: &mut Value| {
            p["actions"][3]["mr_id"] = json!(0)
        }),
        ("confidence above 1", |p: &mut Value| {
            p["actions"][2]["confidence"] = json!(1.01)
        }),
        ("too many actions", |p: &mut Value| {
            let skip = p["actions"][6].clone();
            let a = p["actions"].as_array_mut().unwrap();
            while a.len() < 21 {
                a.push(skip.clone());
            }
        }),
        ("platform", |p: &mut Value| {
            p["repo_context"]["platform"] = json!("gitea")
        }),
        ("top-level extra", |p: &mut Value| p["x"] = json!(1)),
        ("actions object", |p: &mut Value| p["actions"] = json!({})),
    ];
    for (name, fault) in faults {
        let mut plan = seed.clone();
        fault(&mut plan);
        assert!(!schema_accepts(&plan), "schema accepts {name}");
        assert!(
            !validator_accepts(&plan, "deps"),
            "validator accepts {name}"
        );
    }
}

#[test]
fn policy_rules_are_beyond_the_schema() {
    // The schema describes shapes; allowlists and the test-runner policy need the validator.
    let (_, mut plan) = examples()
        .into_iter()
        .find(|(n, _)| n == "seed-deps.json")
        .unwrap();
    plan["actions"][0]["commands"][1] = json!("go mod tidy; curl evil");
    assert!(schema_accepts(&plan));
    assert!(!validator_accepts(&plan, "deps"));
}

#[test]
fn schema_subcommand_prints_the_validators_schema() {
    let out = Command::cargo_bin("quartermaster")
        .unwrap()
        .arg("schema")
        .assert()
        .success();
    let printed: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(printed, plan::json_schema());
    assert_eq!(
        printed["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(printed["properties"]["actions"]["maxItems"], 20);
    let actions = printed["$defs"]["Action"]["oneOf"].as_array().unwrap();
    for kind in ["create_mr", "update_mr"] {
        let action = actions
            .iter()
            .find(|a| a["properties"]["type"]["const"] == kind)
            .unwrap();
        assert_eq!(action["properties"]["updates"]["minItems"], 1, "{kind}");
        assert!(
            action["required"]
                .as_array()
                .unwrap()
                .contains(&json!("updates")),
            "{kind}"
        );
    }
}
