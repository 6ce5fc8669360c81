//! The server driven by a real MCP client: the official Python SDK (PyPI `mcp`). Opt-in:
//! `python3 -m venv target/mcp-client && target/mcp-client/bin/pip install mcp`, then
//! `PATH=$PWD/target/mcp-client/bin:$PATH cargo test --test it -- --ignored needs_registry`.

use crate::common::assert_succeeded;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

#[test]
#[ignore = "needs the `mcp` package from PyPI"]
fn the_python_sdk_validates_explains_and_submits_needs_registry() {
    let plans = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/drive.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_quartermaster"))
        .arg(plans.path())
        .output()
        .unwrap();
    assert_succeeded(&out);
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["server"], "quartermaster");
    assert!(
        summary["protocol"].as_str().unwrap() >= "2025-06-18",
        "{summary}"
    );
    assert_eq!(
        summary["tools"],
        json!([
            "check_update",
            "describe_mission",
            "explain_code",
            "get_schema",
            "submit_plan",
            "validate_plan"
        ])
    );
    assert_eq!(
        summary["errors"],
        json!([["/actions/0/confidence", "confidence.out_of_range"]])
    );
    assert_eq!(summary["explained"], "confidence.out_of_range");
    assert_eq!(summary["submitted"], json!([false, 1]));
    assert!(plans.path().join("weekly.json").is_file());
}
