//! The MCP server as a client sees it: the real binary started as `quartermaster mcp`, spoken
//! to in newline-delimited JSON-RPC on its stdin and stdout.

use quartermaster::cli::render_json;
use quartermaster::mission::{self, Mission};
use quartermaster::validate::validate;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

const VALID_PLAN: &str = r#"{
  "repo_context": {"platform": "github", "ecosystems": ["go"], "default_branch": "main"},
  "actions": [{
    "type": "create_mr", "branch": "quartermaster/mux", "title": "Update mux",
    "description": "Patch update.", "labels": ["dependencies"], "fallback_strategy": "batch",
    "updates": [{"package": "github.com/gorilla/mux", "from": "v1.8.0", "to": "v1.8.1", "update_type": "patch"}],
    "commands": ["go get github.com/gorilla/mux@v1.8.1"], "test_command": "go test ./...", "confidence": 0.9
  }]
}"#;

pub(crate) struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    plans: tempfile::TempDir,
}

impl Server {
    /// Starts the server and completes the MCP handshake.
    fn start() -> Self {
        Self::start_with(&[], &[])
    }

    /// [`Server::start`] with more arguments and variables.
    pub(crate) fn start_with(args: &[&str], env: &[(&str, &str)]) -> Self {
        let plans = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_quartermaster"))
            .arg("mcp")
            .arg("--plans-dir")
            .arg(plans.path())
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        let mut server = Server {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            plans,
        };
        let init = server.request(
            0,
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "qm-test", "version": "1"}
            }),
        );
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
        assert_eq!(init["result"]["serverInfo"]["name"], "quartermaster");
        assert!(
            init["result"]["capabilities"]["tools"].is_object(),
            "{init}"
        );
        server.send_line(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        );
        server
    }

    fn send_line(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn read_message(&mut self) -> Value {
        let mut line = String::new();
        assert!(
            self.stdout.read_line(&mut line).unwrap() > 0,
            "the server closed its output"
        );
        serde_json::from_str(&line).unwrap()
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send_line(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        self.read_message()
    }

    /// Calls a tool; returns its text and whether it is a tool error.
    pub(crate) fn call(&mut self, tool: &str, arguments: Value) -> (String, bool) {
        let reply = self.request(
            7,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
        let result = &reply["result"];
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{reply}"));
        (text.to_string(), result["isError"] == json!(true))
    }

    pub(crate) fn call_json(&mut self, tool: &str, arguments: Value) -> Value {
        let (text, is_error) = self.call(tool, arguments);
        assert!(!is_error, "{text}");
        serde_json::from_str(&text).unwrap()
    }

    /// Closes stdin and expects a clean exit.
    pub(crate) fn finish(mut self) {
        drop(self.stdin);
        assert!(self.child.wait().unwrap().success());
    }
}

fn deps() -> Mission {
    mission::load("deps", None).unwrap()
}

#[test]
fn lists_its_tools_with_schemas() {
    let mut server = Server::start();
    let reply = server.request(1, "tools/list", json!({}));
    let tools = reply["result"]["tools"].as_array().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "check_update",
            "describe_mission",
            "explain_code",
            "get_schema",
            "submit_plan",
            "validate_plan"
        ]
    );
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        let read_only = tool["annotations"]["readOnlyHint"] == json!(true);
        assert_eq!(read_only, tool["name"] != "submit_plan", "{tool}");
    }
    server.finish();
}

#[test]
fn get_schema_is_the_plan_schema() {
    let mut server = Server::start();
    assert_eq!(
        server.call_json("get_schema", json!({})),
        quartermaster::plan::json_schema()
    );
    server.finish();
}

#[test]
fn validate_plan_reports_what_validate_reports() {
    let mut server = Server::start();
    let bad = VALID_PLAN.replace(
        "go get github.com/gorilla/mux@v1.8.1",
        "go get -toolexec=/tmp/x github.com/gorilla/mux@v1.8.1",
    );
    let plan: Value = serde_json::from_str(&bad).unwrap();
    let (text, is_error) = server.call("validate_plan", json!({"plan": plan}));
    assert!(!is_error);
    let object_text = serde_json::to_string_pretty(&plan).unwrap() + "\n";
    assert_eq!(
        text,
        render_json(&validate(object_text.as_bytes(), &deps()))
    );
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(report["valid"], false);
    assert_eq!(report["errors"][0]["pointer"], "/actions/0/commands/0");
    assert_eq!(report["errors"][0]["code"], "command.option_injection");

    let (text, _) = server.call("validate_plan", json!({"plan": "{\n  \"actions\": [,]\n}"}));
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(report["errors"][0]["code"], "json.syntax");
    assert!(
        report["errors"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("line 2, column 15:")
    );

    let report = server.call_json(
        "validate_plan",
        json!({"plan": VALID_PLAN, "mission": "deps"}),
    );
    assert_eq!(report["valid"], true, "{report}");
    let refused = server.call_json(
        "validate_plan",
        json!({"plan": VALID_PLAN, "mission": "docs-drift"}),
    );
    assert_eq!(
        refused["errors"][0]["code"], "mission.action_not_allowed",
        "{refused}"
    );
    server.finish();
}

#[test]
fn describe_mission_gives_commands_files_and_test_policy() {
    let mut server = Server::start();
    let deps = server.call_json("describe_mission", json!({}));
    assert_eq!(deps["mission"], "deps");
    assert!(
        deps["action_types"]
            .as_array()
            .unwrap()
            .contains(&json!("close_mr"))
    );
    let go = &deps["ecosystems"]["go"];
    assert!(
        go["commands"]
            .as_array()
            .unwrap()
            .contains(&json!("go get <pkg>@<ver>")),
        "{go}"
    );
    assert!(
        go["files_it_may_change"]
            .as_array()
            .unwrap()
            .contains(&json!("go.sum"))
    );
    let tests = deps["test_runner_policy"]["commands"].as_array().unwrap();
    let go_test = tests
        .iter()
        .find(|t| t["form"] == "go test <args>")
        .unwrap();
    assert!(
        go_test["options"]
            .as_array()
            .unwrap()
            .contains(&json!("-count <n>")),
        "{go_test}"
    );
    let drift = server.call_json("describe_mission", json!({"mission": "docs-drift"}));
    assert_eq!(
        drift["action_types"],
        json!(["create_issue", "comment_issue", "skip"])
    );
    assert_eq!(drift["ecosystems"], json!({}));
    let (text, is_error) = server.call("describe_mission", json!({"mission": "nope"}));
    assert!(is_error);
    assert_eq!(
        text,
        "mission: unknown mission `nope`; available: deps, docs-drift"
    );
    server.finish();
}

#[test]
fn explain_code_explains_and_suggests() {
    let mut server = Server::start();
    let known = server.call_json("explain_code", json!({"code": "branch.prefix"}));
    assert_eq!(known["code"], "branch.prefix");
    assert!(
        known["fix"].as_str().unwrap().contains("quartermaster/"),
        "{known}"
    );
    let (text, is_error) = server.call("explain_code", json!({"code": "branch.prefx"}));
    assert!(is_error);
    assert!(text.starts_with("`branch.prefx` is not a finding code; did you mean `branch.prefix`? codes are: json.syntax, "), "{text}");
    server.finish();
}

#[test]
fn submit_plan_stores_valid_plans_only() {
    let mut server = Server::start();
    let bad = VALID_PLAN.replace("quartermaster/mux", "feature/mux");
    let (text, is_error) = server.call("submit_plan", json!({"name": "weekly", "plan": bad}));
    assert!(is_error);
    assert!(
        text.starts_with(
            "the plan is invalid, so it was not stored; fix every error and submit again:\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("\"pointer\": \"/actions/0/branch\"") && text.contains("branch.prefix"),
        "{text}"
    );
    assert!(!server.plans.path().join("weekly.json").exists());

    let stored = server.call_json(
        "submit_plan",
        json!({"name": "weekly", "plan": VALID_PLAN, "author": "planner"}),
    );
    assert_eq!(
        (stored["revision"].clone(), stored["status"].clone()),
        (json!(1), json!("ready"))
    );
    let file: Value =
        serde_json::from_slice(&std::fs::read(server.plans.path().join("weekly.json")).unwrap())
            .unwrap();
    assert_eq!(file["content"], VALID_PLAN);
    assert_eq!(file["author"], "planner");

    let (text, is_error) = server.call(
        "submit_plan",
        json!({"name": "weekly", "plan": VALID_PLAN, "last_known_revision": 0}),
    );
    assert!(is_error);
    assert!(text.contains("expected revision 0, found 1"), "{text}");
    let (text, is_error) =
        server.call("submit_plan", json!({"name": "../etc", "plan": VALID_PLAN}));
    assert!(is_error);
    assert!(
        text.starts_with("`../etc` is not a valid plan name"),
        "{text}"
    );
    server.finish();
}

#[test]
fn malformed_input_gets_json_rpc_errors_and_the_server_goes_on() {
    let mut server = Server::start();
    server.send_line("this is not json");
    let reply = server.read_message();
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (Value::Null, json!(-32700)),
        "{reply}"
    );
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Parse error: ")
    );
    server.send_line(r#"{"jsonrpc": "2.0", "id": 9}"#);
    let reply = server.read_message();
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (json!(9), json!(-32600)),
        "{reply}"
    );
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Invalid Request: ")
    );
    server.send_line(r#"{"jsonrpc": "2.0", "id": 15, "method": "tools/call", "params": "x"}"#);
    let reply = server.read_message();
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (json!(15), json!(-32602)),
        "{reply}"
    );
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Invalid params for `tools/call`: ")
    );
    server.send_line(r#"{"jsonrpc": "1.0", "id": 16, "method": "ping"}"#);
    assert_eq!(server.read_message()["error"]["code"], -32600);
    server.send_line(r#"[{"jsonrpc": "2.0", "id": 10, "method": "ping"}]"#);
    assert_eq!(server.read_message()["error"]["code"], -32600);
    let reply = server.request(11, "no/such/method", json!({}));
    assert_eq!(reply["error"]["code"], -32601, "{reply}");
    let reply = server.request(
        12,
        "tools/call",
        json!({"name": "launch_missiles", "arguments": {}}),
    );
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert_eq!(reply["error"]["message"], "tool not found");
    // Arguments that do not fit a tool are a tool error, which the model sees and can correct.
    let (text, is_error) = server.call("explain_code", json!({}));
    assert!(is_error);
    assert_eq!(
        text,
        "failed to deserialize parameters: missing field `code`"
    );
    server.send_line(r#"{"jsonrpc": "2.0", "method": "notifications/unheard-of"}"#);
    let pong = server.request(14, "ping", json!({}));
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": 14, "result": {}}));
    server.finish();
}

#[test]
fn huge_input_is_refused_without_harm() {
    let mut server = Server::start();
    let padded = format!("{{\"pad\": \"{}\"}}", " ".repeat(11 << 20));
    let report = server.call_json("validate_plan", json!({"plan": padded}));
    assert_eq!(
        report["errors"][0]["code"], "plan.too_large",
        "{}",
        report["errors"][0]
    );
    let line = format!(
        r#"{{"jsonrpc": "2.0", "id": 20, "method": "ping", "params": {{"pad": "{}"}}}}"#,
        "x".repeat(33 << 20)
    );
    server.send_line(&line);
    let reply = server.read_message();
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert_eq!(
        reply["error"]["message"],
        format!(
            "Invalid Request: the request is longer than {} bytes",
            32 << 20
        )
    );
    let pong = server.request(21, "ping", json!({}));
    assert_eq!(pong["id"], 21);
    server.finish();
}

#[test]
fn an_unknown_server_mission_stops_it_at_once() {
    let out = Command::new(env!("CARGO_BIN_EXE_quartermaster"))
        .args(["mcp", "--mission", "nope"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: mission: unknown mission `nope`; available: deps, docs-drift\n"
    );
}

#[test]
fn requests_sent_just_before_the_input_closes_are_all_answered() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_quartermaster"))
        .args(["mcp", "--plans-dir", "unused"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    ];
    input.push(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for id in 1..=5 {
        input.push(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "validate_plan", "arguments": {"plan": VALID_PLAN}}}));
    }
    let text: String = input.iter().map(|m| format!("{m}\n")).collect();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(text.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    // Handlers may finish in any order; every request must be answered once.
    let mut ids: Vec<i64> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_i64()
                .unwrap()
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, [0, 1, 2, 3, 4, 5]);
}
