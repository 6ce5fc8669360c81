//! Quartermaster's own cost when running a 20-action plan on the local forge.
//!
//! Run with `cargo bench --bench run`. Builds the test fixture (a cargo project, a local registry,
//! a bare remote), then runs the same 20-action plan twice with the release binary: first run
//! (12 branches pushed and PRs opened, issues, comments, closes), second run (everything already
//! there). For each it prints the report's timing: wall time, time in commands and tests, and the
//! rest (Quartermaster, git, the forge), per action; and the process's peak memory.

#[path = "../tests/it/common/mod.rs"]
mod common;

use common::*;
use serde_json::json;

fn main() {
    let f = Fixture::new();
    let mut actions: Vec<_> = (0..12)
        .map(|i| {
            create_mr(
                &format!("quartermaster/bench-{i:02}"),
                &[greeting()],
                "batch",
            )
        })
        .collect();
    for i in 0..3 {
        actions.push(json!({"type": "create_issue", "title": format!("Major update {i}"), "body": "Migration notes.", "labels": ["major-update"], "confidence": 0.9}));
    }
    actions.push(json!({"type": "comment_issue", "issue_id": 13, "body": "Still pending.", "confidence": 0.9}));
    actions.push(json!({"type": "comment_issue", "issue_id": 14, "body": "Still pending.", "confidence": 0.9}));
    actions.push(json!({"type": "close_mr", "mr_id": 1, "comment": "Superseded.", "delete_branch": true, "confidence": 0.9}));
    actions.push(json!({"type": "close_mr", "mr_id": 2, "comment": "Superseded.", "delete_branch": true, "confidence": 0.9}));
    actions.push(json!({"type": "skip", "package": "serde", "reason": "Held", "reason_type": "human_hold", "confidence": 1.0}));
    assert_eq!(actions.len(), 20);
    let plan = plan(actions);
    for round in ["first run", "second run"] {
        let run = f.run(&plan, &[]);
        assert_eq!(run.code, 0, "{}", run.said());
        let t = &run.report["timing"];
        let total = t["total_ms"].as_u64().unwrap();
        let children = t["commands_ms"].as_u64().unwrap();
        let overhead = t["overhead_ms"].as_u64().unwrap();
        println!(
            "{round}: 20 actions, wall {total} ms, commands and tests {children} ms, overhead {overhead} ms ({:.1} ms per action), peak memory {} KiB",
            overhead as f64 / 20.0,
            t["peak_memory_kb"]
        );
    }
}
