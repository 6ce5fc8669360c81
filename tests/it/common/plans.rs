//! Plans and their parts as tests write them, and the forge requests tests expect.

use super::*;

pub(crate) fn block<T>(future: impl Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

pub(crate) fn greeting() -> Value {
    json!({"package": "greeting", "from": "1.0.0", "to": "1.0.1", "update_type": "patch"})
}

pub(crate) fn farewell() -> Value {
    json!({"package": "farewell", "from": "2.0.0", "to": "2.0.1", "update_type": "patch"})
}

pub(crate) fn command(update: &Value) -> String {
    format!(
        "cargo update -p {} --precise {}",
        update["package"].as_str().unwrap(),
        update["to"].as_str().unwrap()
    )
}

/// A `create_mr` for the given updates.
pub(crate) fn create_mr(branch: &str, updates: &[Value], strategy: &str) -> Value {
    json!({
        "type": "create_mr",
        "branch": branch,
        "title": "chore(deps): update cargo patch dependencies",
        "description": "Patch releases.",
        "updates": updates,
        "commands": updates.iter().map(command).collect::<Vec<_>>(),
        "test_command": "cargo test",
        "labels": ["dependencies"],
        "fallback_strategy": strategy,
        "confidence": 0.9
    })
}

pub(crate) fn plan(actions: Vec<Value>) -> Value {
    json!({
        "repo_context": {
            "platform": "github",
            "ecosystems": ["cargo"],
            "test_command": "cargo test",
            "default_branch": "main",
            "lock_files": ["Cargo.lock"]
        },
        "actions": actions
    })
}

/// `plan(actions)` for one ecosystem and its lock file.
pub(crate) fn plan_for(ecosystem: &str, lock_file: &str, actions: Vec<Value>) -> Value {
    let mut plan = plan(actions);
    plan["repo_context"]["ecosystems"] = json!([ecosystem]);
    plan["repo_context"]["lock_files"] = json!([lock_file]);
    plan
}

/// [`plan_for`] a repository whose tests `test` runs.
pub(crate) fn plan_tested_by(
    ecosystem: &str,
    lock_file: &str,
    test: &str,
    actions: Vec<Value>,
) -> Value {
    let mut plan = plan_for(ecosystem, lock_file, actions);
    plan["repo_context"]["test_command"] = json!(test);
    plan
}

/// `value` without what differs from one run to the next: times, and the order of cargo's
/// parallel log lines.
pub(crate) fn strip_timings(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for key in [
                "timing",
                "started_at",
                "finished_at",
                "started_ms",
                "duration_ms",
                "forge_requests",
                // How old a version was when the gates checked it.
                "age_seconds",
                // Each fixture's runs have a sandbox uid range of their own.
                "uid_base",
            ] {
                map.remove(key);
            }
            // Cargo compiles crates in parallel: its log lines come in any order.
            if let Some(Value::String(tail)) = map.get_mut("output_tail") {
                let mut lines: Vec<&str> = tail.lines().collect();
                lines.sort_unstable();
                *tail = lines.join("\n");
            }
            map.values_mut().for_each(strip_timings);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_timings),
        _ => {}
    }
}

/// A plan of one `create_mr` on `quartermaster/cargo` with the greeting update.
pub(crate) fn one_pr() -> Value {
    plan(vec![create_mr(
        "quartermaster/cargo",
        &[greeting()],
        "batch",
    )])
}

/// A `GET` of `uri`, as [`super::Fixture::calls`] lists it.
pub(crate) fn get(uri: &str) -> (String, String) {
    ("GET".into(), uri.into())
}

/// A plan of one `create_mr` on `quartermaster/cargo` with both updates (farewell's breaks the
/// app's test), under the fallback `strategy`.
pub(crate) fn both_updates(strategy: &str) -> Value {
    plan(vec![create_mr(
        "quartermaster/cargo",
        &[greeting(), farewell()],
        strategy,
    )])
}
