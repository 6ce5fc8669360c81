//! Python ecosystems end to end: uv, pip-compile and poetry update a real lock file against a PyPI
//! stand-in on 127.0.0.1, the app's unittest suite runs, and the PR states what the lock says.

use crate::common::pypi_index::PypiIndex;
use crate::common::*;
use serde_json::{Value, json};

const TEST: &str = "python3 -m unittest discover -s tests";

/// A `create_mr` that updates `lib` from `from` to `to` with `command`.
fn lib_update(branch: &str, command: &str, from: &str, to: &str) -> Value {
    json!({
        "type": "create_mr",
        "branch": branch,
        "title": "chore(deps): update lib",
        "description": "A patch release of lib.",
        "updates": [{"package": "lib", "from": from, "to": to, "update_type": "patch"}],
        "commands": [command],
        "test_command": TEST,
        "labels": ["dependencies"],
        "fallback_strategy": "batch",
        "confidence": 0.9
    })
}

fn python_plan(ecosystem: &str, lock_file: &str, actions: Vec<Value>) -> Value {
    plan_tested_by(ecosystem, lock_file, TEST, actions)
}

/// Runs `plan` with the stand-in as the only index, passed to the tools with `--extra-env` (uv and
/// pip; poetry reads the project's own source).
fn run_against(f: &Fixture, index: &PypiIndex, plan: &Value, env: &[(&str, &str)]) -> Run {
    let mut args = vec![
        "--extra-env",
        "UV_DEFAULT_INDEX",
        "--extra-env",
        "PIP_INDEX_URL",
    ];
    // PATH passes anyway: it is the trusted PATH programs are found on.
    for (name, _) in env.iter().filter(|(name, _)| *name != "PATH") {
        args.extend(["--extra-env", name]);
    }
    let mut vars = vec![
        ("UV_DEFAULT_INDEX", index.url.as_str()),
        ("PIP_INDEX_URL", index.url.as_str()),
    ];
    vars.extend_from_slice(env);
    f.run_with(plan, &args, &vars)
}

/// Runs `plan` with the stand-in named only in the operator's configuration file for `tool`
/// (`--tool-config TOOL=PATH`): `config` with `{url}` replaced by the index's URL.
fn run_configured(f: &Fixture, index: &PypiIndex, plan: &Value, tool: &str, config: &str) -> Run {
    let path = f.tmp().with_file_name(format!("{tool}-config"));
    std::fs::write(&path, config.replace("{url}", &index.url)).unwrap();
    let seed = format!("{tool}={}", path.display());
    f.run_with(plan, &[], &[("QM_TOOL_CONFIG", &seed)])
}

/// The one landed update of action `i`: from, to, landed, test.
fn landed(run: &Run, i: usize) -> (Value, Value, Value, Value) {
    let u = &run.action(i)["updates"][0];
    (
        u["from"].clone(),
        u["to"].clone(),
        u["landed"].clone(),
        u["test"].clone(),
    )
}

/// What `branch` changed, and the body of its PR.
fn branch_diff(f: &Fixture, branch: &str) -> (String, String) {
    let files = sh(&f.remote, &format!("git diff --name-only main {branch}"));
    let body = f
        .pulls()
        .iter()
        .find(|p| p["head"] == branch)
        .map(|p| p["body"].as_str().unwrap().to_string())
        .unwrap_or_default();
    (files, body)
}

const PATCH_ROW: &str = "| `lib` | `1.0.0` → `1.0.1` | patch |";

const UV_PROJECT: &str = "[project]\nname = \"app\"\nversion = \"0.1.0\"\nrequires-python = \">=3.9\"\ndependencies = [\"lib>=1.0\"]\n";

/// uv.lock locks lib 1.0.0 from the stand-in; 1.0.1 is then released. `uv lock
/// --upgrade-package lib==1.0.1`, with the index in the operator's uv.toml, moves the lock alone,
/// the tests run, and the PR says 1.0.0 → 1.0.1.
#[test]
fn uv_lock_upgrades_one_package() {
    let Some(f) = Fixture::with_tool(&["uv", "--version"]) else {
        return;
    };
    let index = PypiIndex::lib_app(&f, &[("pyproject.toml", UV_PROJECT)], &["uv", "lock"]);
    let branch = "quartermaster/uv-lib";
    let plan = python_plan(
        "uv",
        "uv.lock",
        vec![lib_update(
            branch,
            "uv lock --upgrade-package lib==1.0.1",
            "1.0.0",
            "1.0.1",
        )],
    );
    let uv_toml = "[[index]]\nurl = \"{url}\"\ndefault = true\n";
    let run = run_configured(&f, &index, &plan, "uv", uv_toml);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(
        landed(&run, 0),
        (json!("1.0.0"), json!("1.0.1"), json!(true), json!("passed"))
    );
    let (files, body) = branch_diff(&f, branch);
    assert_eq!(files, "uv.lock");
    assert!(body.contains(PATCH_ROW), "{body}");
    let lock = f.show(branch, "uv.lock");
    let wheel = format!(
        "{}/files/lib-1.0.1-py3-none-any.whl",
        index.url.trim_end_matches("/simple")
    );
    assert!(lock.contains("version = \"1.0.1\""), "{lock}");
    assert!(lock.contains(&wheel), "{lock}");
    let message = sh(&f.remote, &format!("git log -1 --format=%B {branch}"));
    assert!(message.contains("- lib: 1.0.0 -> 1.0.1"), "{message}");
}

/// `uv add lib==1.0.1` of a declared dependency runs as `uv add --no-sync lib==1.0.1`. With the
/// index in `UV_DEFAULT_INDEX`, uv writes that index into pyproject.toml (`[[tool.uv.index]]`),
/// and the unit is denied for it. With the index in the operator's uv.toml, the requirement in
/// pyproject.toml and the lock move to 1.0.1, and nothing is installed.
#[test]
fn uv_add_moves_a_declared_requirement() {
    let Some(f) = Fixture::with_tool(&["uv", "--version"]) else {
        return;
    };
    let index = PypiIndex::lib_app(&f, &[("pyproject.toml", UV_PROJECT)], &["uv", "lock"]);
    let branch = "quartermaster/uv-add";
    let plan = python_plan(
        "uv",
        "uv.lock",
        vec![lib_update(branch, "uv add lib==1.0.1", "1.0.0", "1.0.1")],
    );
    let run = run_against(&f, &index, &plan, &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(
        (run.status(0), run.reason(0)),
        (
            "denied",
            "[change.manifest_field] `pyproject.toml: tool.uv.index` was added by the commands; an update may change only dependency entries, so the unit is denied: undo that change; nothing was pushed"
        )
    );
    assert!(f.pulls().is_empty());
    let uv_toml = "[[index]]\nurl = \"{url}\"\ndefault = true\n";
    let run = run_configured(&f, &index, &plan, "uv", uv_toml);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(
        landed(&run, 0),
        (json!("1.0.0"), json!("1.0.1"), json!(true), json!("passed"))
    );
    let (files, body) = branch_diff(&f, branch);
    assert_eq!(files, "pyproject.toml\nuv.lock");
    assert!(body.contains(PATCH_ROW), "{body}");
    let manifest = f.show(branch, "pyproject.toml");
    assert!(manifest.contains("\"lib==1.0.1\""), "{manifest}");
    assert_eq!(
        run.action(0)["commands"][0]["command"],
        "uv add lib==1.0.1",
        "the report shows the form the plan wrote"
    );
}

/// `uv add` of a package pyproject.toml does not declare would add it: refused before anything
/// runs, naming the package and the tables looked at.
#[test]
fn uv_add_cannot_add_a_package() {
    let f = Fixture::new();
    f.commit_file("main", "pyproject.toml", UV_PROJECT);
    let mut action = lib_update("quartermaster/pwn", "uv add evil==1.0.0", "0.9.0", "1.0.0");
    action["updates"][0]["package"] = json!("evil");
    let run = f.run(&python_plan("uv", "uv.lock", vec![action]), &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(
        (run.status(0), run.reason(0)),
        (
            "denied",
            "`evil` is not a dependency the project declares in the repository root (pyproject.toml's `[project] dependencies`, `[project.optional-dependencies]` or `[dependency-groups]`): Quartermaster updates dependencies, it does not add new ones"
        )
    );
    assert!(run.action(0)["commands"].as_array().unwrap().is_empty());
    assert!(f.pulls().is_empty());
}

/// requirements.txt, compiled from requirements.in with hashes (the project's `.pip-tools.toml`),
/// pins lib 1.0.0; 1.0.1 is released. `pip-compile --upgrade-package lib==1.0.1 requirements.in`,
/// with the index in the operator's pip.conf, pins 1.0.1 with the hash of the wheel served.
#[test]
fn pip_compile_upgrades_requirements_txt() {
    let Some(f) = Fixture::with_tool(&["pip-compile", "--version"]) else {
        return;
    };
    let index = PypiIndex::start("lib");
    index.publish("1.0.0");
    let config = "[tool.pip-tools]\ngenerate-hashes = true\n";
    let files = [
        ("requirements.in", "lib>=1.0\n"),
        (".pip-tools.toml", config),
    ];
    f.add_python_app(&index, &files, &["pip-compile", "requirements.in"]);
    index.publish("1.0.1");
    let branch = "quartermaster/pip-lib";
    let command = "pip-compile --upgrade-package lib==1.0.1 requirements.in";
    let plan = python_plan(
        "pip",
        "requirements.txt",
        vec![lib_update(branch, command, "1.0.0", "1.0.1")],
    );
    let pip_conf = "[global]\nindex-url = {url}\n";
    let run = run_configured(&f, &index, &plan, "pip", pip_conf);
    assert_eq!(run.code, 0, "{}", run.said());
    assert_eq!(
        landed(&run, 0),
        (json!("1.0.0"), json!("1.0.1"), json!(true), json!("passed"))
    );
    let (files, body) = branch_diff(&f, branch);
    assert_eq!(files, "requirements.txt");
    assert!(body.contains(PATCH_ROW), "{body}");
    let requirements = f.show(branch, "requirements.txt");
    assert!(
        requirements.contains("lib==1.0.1 \\\n    --hash=sha256:"),
        "{requirements}"
    );
    assert!(!requirements.contains("lib==1.0.0"), "{requirements}");
    let installs: Vec<&str> = run.action(0)["installs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["command"].as_str().unwrap())
        .collect();
    assert_eq!(
        installs,
        [
            "python3 -m venv <env>",
            "pip install --require-hashes -r requirements.txt"
        ],
        "requirements.txt pins with hashes"
    );
    assert!(index.fetched("1.0.1"), "pip hashed the wheel it fetched");
}

const POETRY_PROJECT: &str = "[tool.poetry]\nname = \"app\"\nversion = \"0.1.0\"\ndescription = \"\"\nauthors = []\npackage-mode = false\n\n[tool.poetry.dependencies]\npython = \"^3.9\"\nlib = \">=1.0\"\n";

/// poetry.lock locks lib 1.0.0 from the project's own source, the stand-in; 1.0.1 is released.
/// Three `poetry update lib` actions: one declared truly lands; one that claims `from` 0.9.0 lands
/// too, stating the lock's 1.0.0; one that claims `to` 1.0.2 fails, naming where the lock ended.
#[test]
fn poetry_update_states_what_the_lock_did() {
    let Some(f) = Fixture::with_tool(&["poetry", "--version"]) else {
        return;
    };
    let index = PypiIndex::start("lib");
    index.publish("1.0.0");
    let source = format!(
        "\n[[tool.poetry.source]]\nname = \"stand-in\"\nurl = \"{}/\"\npriority = \"primary\"\n",
        index.url
    );
    let project = format!("{POETRY_PROJECT}{source}");
    f.add_python_app(&index, &[("pyproject.toml", &project)], &["poetry", "lock"]);
    index.publish("1.0.1");
    let plan = python_plan(
        "poetry",
        "poetry.lock",
        vec![
            lib_update("quartermaster/lib", "poetry update lib", "1.0.0", "1.0.1"),
            lib_update(
                "quartermaster/lib-from",
                "poetry update lib",
                "0.9.0",
                "1.0.1",
            ),
            lib_update(
                "quartermaster/lib-to",
                "poetry update lib",
                "1.0.0",
                "1.0.2",
            ),
        ],
    );
    let run = run_against(&f, &index, &plan, &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    for (i, branch) in [(0, "quartermaster/lib"), (1, "quartermaster/lib-from")] {
        assert_eq!(run.status(i), "done", "{}", run.said());
        assert_eq!(
            landed(&run, i),
            (json!("1.0.0"), json!("1.0.1"), json!(true), json!("passed"))
        );
        let (files, body) = branch_diff(&f, branch);
        assert_eq!(files, "poetry.lock");
        assert!(body.contains(PATCH_ROW), "{body}");
        assert!(!body.contains("0.9.0"), "{body}");
        let lock = f.show(branch, "poetry.lock");
        assert!(
            lock.contains("name = \"lib\"\nversion = \"1.0.1\""),
            "{lock}"
        );
    }
    assert_eq!(run.action(1)["updates"][0]["declared_from"], "0.9.0");
    assert!(
        run.stderr.contains(
            "note [update.from_mismatch]: `lib` was declared from 0.9.0, but the base poetry.lock had 1.0.0; 1.0.0 is what gets published"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(run.status(2), "failed");
    assert_eq!(
        run.reason(2),
        "[update.not_reached] `lib` ended at 1.0.1 in poetry.lock, not at the declared 1.0.2 (it was 1.0.0): declare 1.0.1 as `to`, or use a command that reaches 1.0.2"
    );
    assert_eq!(f.pulls().len(), 2);
}

/// `pip install -U lib` installs into an environment and changes no file: validation warns, and
/// the unit fails saying why and what to use. The pip is that of the virtualenv pip-compile comes
/// from (a pyenv shim's pip fails after installing: it cannot rehash the operator's shims), and
/// `PIP_DRY_RUN` lets it resolve and fetch without writing into that environment.
#[test]
fn pip_install_says_why_it_changed_nothing() {
    if !tool_present(&["pip-compile", "--version"]) {
        return;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<std::path::PathBuf> = std::env::split_paths(&path).collect();
    let tools = dirs
        .iter()
        .position(|d| d.join("pip-compile").is_file())
        .unwrap();
    let tools = dirs.remove(tools);
    dirs.insert(0, tools);
    let path = std::env::join_paths(dirs).unwrap();
    let f = Fixture::new();
    let index = PypiIndex::start("lib");
    index.publish("1.0.0");
    index.publish("1.0.1");
    f.commit_file("main", "requirements.txt", "lib==1.0.0\n");
    let plan = python_plan(
        "pip",
        "requirements.txt",
        vec![lib_update(
            "quartermaster/pip-install",
            "pip install -U lib",
            "1.0.0",
            "1.0.1",
        )],
    );
    let why = "pip install changes no file of the repository; use `pip-compile --upgrade-package <pkg>==<ver>` (requirements.txt) or `uv lock --upgrade-package <pkg>==<ver>` (uv.lock)";
    let plan_file = f.write_plan(&plan);
    let out = f.qm().arg("validate").arg(&plan_file).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "warning[command.changes_no_file] /actions/0/commands/0: {why}"
        )),
        "{text}"
    );
    let path = path.to_str().unwrap();
    let run = run_against(&f, &index, &plan, &[("PIP_DRY_RUN", "1"), ("PATH", path)]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(
        (run.status(0), run.reason(0)),
        ("failed", format!("no changes: {why}").as_str())
    );
    assert!(index.fetched("1.0.1"), "pip ran: {}", run.said());
    assert!(f.pulls().is_empty());
}

/// `uv lock --upgrade-package leaf==1.0.1` of a package the app has only through lib: declared
/// in the plan, it lands, and the PR states the lock's versions once, not also as a transitive
/// change.
#[test]
fn uv_lock_upgrades_a_transitive_package() {
    let Some(f) = Fixture::with_tool(&["uv", "--version"]) else {
        return;
    };
    let index = PypiIndex::start("lib");
    index.publish_project("leaf", "1.0.0", &[]);
    index.publish_project("lib", "1.0.0", &["leaf>=1.0"]);
    f.add_python_app(&index, &[("pyproject.toml", UV_PROJECT)], &["uv", "lock"]);
    index.publish_project("leaf", "1.0.1", &[]);
    let branch = "quartermaster/uv-leaf";
    let mut action = lib_update(
        branch,
        "uv lock --upgrade-package leaf==1.0.1",
        "1.0.0",
        "1.0.1",
    );
    action["updates"][0]["package"] = json!("leaf");
    let plan = python_plan("uv", "uv.lock", vec![action]);
    let uv_toml = "[[index]]\nurl = \"{url}\"\ndefault = true\n";
    let run = run_configured(&f, &index, &plan, "uv", uv_toml);
    assert_eq!(run.code, 0, "{}", run.said());
    let (files, body) = branch_diff(&f, branch);
    assert_eq!(files, "uv.lock");
    assert!(
        body.contains("| `leaf` | `1.0.0` → `1.0.1` | patch |"),
        "{body}"
    );
    assert!(!body.contains("transitive"), "{body}");
    let message = sh(&f.remote, &format!("git log -1 --format=%B {branch}"));
    assert!(message.contains("- leaf: 1.0.0 -> 1.0.1\n\n"), "{message}");
}
