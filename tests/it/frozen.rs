//! Tests run on a frozen install of the committed files, in a unit of their own: a lock the
//! ecosystem's own frozen install refuses fails the unit, the operator's virtualenv never stands
//! in for the unit's, the runner forms on top of the environment (`npx`, `uv run`, `poetry run`)
//! resolve inside it, and nothing the update commands left reaches the tests.

use crate::common::npm_registry::NpmRegistry;
use crate::common::pypi_index::PypiIndex;
use crate::common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A `create_mr` of one update, with `commands` and `test`.
fn one_update(branch: &str, update: (&str, &str, &str), commands: &[&str], test: &str) -> Value {
    let (package, from, to) = update;
    json!({
        "type": "create_mr",
        "branch": branch,
        "title": format!("chore(deps): update {package}"),
        "description": format!("{package} {to}."),
        "updates": [{"package": package, "from": from, "to": to, "update_type": "minor"}],
        "commands": commands,
        "test_command": test,
        "labels": ["dependencies"],
        "fallback_strategy": "batch",
        "confidence": 0.9
    })
}

const LOCK_NPM: [&str; 3] = ["npm", "install", "--package-lock-only"];
const LOCK_YARN: [&str; 4] = ["yarn", "install", "--ignore-scripts", "--no-progress"];

/// An app whose lock (written by `lock`) has typescript 6.0.2 and tseslint 8.0.0, whose peer range
/// on typescript excludes 6.1.0; 6.1.0 is then released, and a plan moves typescript to it with
/// `update typescript@6.1.0` and tests with `test`, under `ecosystem` and its lock file. `None`
/// where the ecosystem's tool does not run here.
fn peer_conflict(
    (ecosystem, lock_file): (&str, &str),
    lock: &[&str],
    update: &str,
    test: &str,
) -> Option<(Fixture, Run)> {
    let f = Fixture::with_tool(&[ecosystem, "--version"])?;
    let registry = NpmRegistry::start("typescript");
    registry.publish("6.0.2");
    let peer = json!({"peerDependencies": {"typescript": ">=4.8.4 <6.1.0"}});
    registry.publish_package("tseslint", "8.0.0", peer);
    let dependencies = [("typescript", "6.0.2"), ("tseslint", "^8.0.0")];
    f.add_node_app(&registry, &dependencies, &[lock]);
    registry.publish("6.1.0");
    let plan = plan_for(
        ecosystem,
        lock_file,
        vec![one_update(
            "quartermaster/typescript",
            ("typescript", "6.0.2", "6.1.0"),
            &[&format!("{update} typescript@6.1.0")],
            test,
        )],
    );
    let npmrc = format!("npmrc={}", f.npmrc(&registry).display());
    let run = f.run_with(&plan, &[], &[("QM_TOOL_CONFIG", &npmrc)]);
    Some((f, run))
}

/// The commander.js case: `typescript-eslint` (here `tseslint`) has a peer range on typescript
/// that excludes the version the update installs. `npm install typescript@6.1.0` only warns
/// (ERESOLVE overriding peer dependency) and writes a package-lock.json that `npm ci` refuses.
/// The update command succeeds, its warning is in the report; the frozen install fails the unit
/// with npm's own message, and nothing is pushed.
#[test]
fn a_peer_conflict_npm_only_warned_about_fails_the_frozen_install() {
    let Some((f, run)) = peer_conflict(
        ("npm", "package-lock.json"),
        &LOCK_NPM,
        "npm install",
        "npm test",
    ) else {
        return;
    };
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "failed");
    assert_eq!(
        run.reason(0),
        "the frozen install `npm ci` failed: exit code 1; the committed lock files do not install as they are; no PR"
    );
    let update = &run.action(0)["commands"][0];
    assert_eq!(update["ok"], true, "npm install accepted the conflict");
    let warning = update["warnings"][0].as_str().unwrap_or_default();
    assert!(
        warning.starts_with("npm warn ERESOLVE overriding peer dependency\n"),
        "{}",
        run.said()
    );
    assert!(warning.contains("peer typescript@\">=4.8.4 <6.1.0\" from tseslint@8.0.0"));
    let install = &run.action(0)["installs"][0];
    assert_eq!(
        (&install["command"], &install["ok"]),
        (&json!("npm ci"), &json!(false))
    );
    let npm_said = install["output_tail"].as_str().unwrap();
    assert!(
        npm_said.contains("npm error ERESOLVE could not resolve"),
        "{npm_said}"
    );
    assert!(run.action(0)["test"].is_null(), "no test ran");
    assert_eq!(run.action(0)["updates"][0]["test"], "not_run");
    assert!(
        run.summary.contains("### Resolver warnings"),
        "{}",
        run.summary
    );
    assert!(
        run.summary.contains("npm error ERESOLVE could not resolve"),
        "{}",
        run.summary
    );
    assert!(f.pulls().is_empty());
    assert_eq!(f.branches().len(), 1, "nothing pushed");
}

/// yarn classic resolves a peer range it does not meet with a warning, and its frozen install
/// accepts the lock: the PR opens, and its body shows what the update and the install warned.
#[test]
fn a_pr_shows_the_resolver_warnings_of_its_build() {
    let Some((f, run)) = peer_conflict(
        ("yarn", "yarn.lock"),
        &LOCK_YARN,
        "yarn upgrade",
        "yarn test",
    ) else {
        return;
    };
    assert_eq!(run.code, 0, "{}", run.said());
    let warning = "warning \" > tseslint@8.0.0\" has incorrect peer dependency \"typescript@>=4.8.4 <6.1.0\".";
    assert_eq!(run.action(0)["commands"][0]["warnings"], json!([warning]));
    assert_eq!(run.action(0)["installs"][0]["warnings"], json!([warning]));
    let body = f.pulls()[0]["body"].as_str().unwrap().to_string();
    let shown = format!(
        "**Resolver warnings** (the package managers resolved this branch with them)\n\n`yarn upgrade typescript@6.1.0`:\n\n```text\n{warning}\n```\n\n`yarn install --frozen-lockfile`:\n\n```text\n{warning}\n```\n"
    );
    assert!(body.contains(&shown), "{body}");
    assert!(
        run.summary.contains("### Resolver warnings"),
        "{}",
        run.summary
    );
}

/// A tests module that imports `lib` and checks it is the version the project's lock file
/// (uv.lock or poetry.lock) names, saying where it came from.
const LOCKED_TEST: &str = "import pathlib\nimport re\nimport unittest\n\nimport lib\n\n\nclass LockedTest(unittest.TestCase):\n    def test_lib_is_the_locked_version(self):\n        root = pathlib.Path(__file__).resolve().parent.parent\n        lock = next(p for p in (root / 'uv.lock', root / 'poetry.lock') if p.exists()).read_text()\n        locked = re.search(r'name = \"lib\"\\nversion = \"([^\"]+)\"', lock).group(1)\n        print('lib', lib.VERSION, 'from', lib.__file__)\n        self.assertEqual(lib.VERSION, locked, 'lib ' + lib.VERSION + ' imported from ' + lib.__file__)\n";

/// lib is only a test dependency, in a group `uv sync` leaves out by default (pydantic-settings
/// keeps pytest in `testing`): the frozen install must bring it anyway.
const UV_PROJECT: &str = "[project]\nname = \"app\"\nversion = \"0.1.0\"\nrequires-python = \">=3.9\"\ndependencies = []\n\n[dependency-groups]\ntesting = [\"lib>=1.0\"]\n";

const POETRY_PROJECT: &str = "[tool.poetry]\nname = \"app\"\nversion = \"0.1.0\"\ndescription = \"\"\nauthors = []\npackage-mode = false\n\n[tool.poetry.dependencies]\npython = \"^3.9\"\nlib = \">=1.0\"\n";

/// The operator's own virtualenv, with lib 1.0.0 from the stand-in: what a run started from an
/// activated virtualenv (the image's `/opt/venv`, a developer's shell) finds first on PATH.
fn operator_venv(f: &Fixture, index: &PypiIndex) -> PathBuf {
    let venv = f.root.path().join("operator-venv");
    let root = f.root.path();
    let path = venv.display().to_string();
    succeed(&mut f.python_tool(index, root, &["uv", "venv", "--quiet", &path]));
    let python = venv.join("bin/python").display().to_string();
    let install = [
        "uv",
        "pip",
        "install",
        "--quiet",
        "--python",
        &python,
        "lib==1.0.0",
    ];
    succeed(&mut f.python_tool(index, root, &install));
    venv
}

/// The variables of a run from the operator's activated virtualenv: its `bin` first on PATH,
/// `VIRTUAL_ENV` naming it and passed on to commands, and `extra` more.
fn from_venv(venv: &Path, extra: &[(&str, &str)]) -> (Vec<String>, Vec<(String, String)>) {
    let path = format!(
        "{}:{}",
        venv.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut args = vec!["--extra-env".to_string(), "VIRTUAL_ENV".to_string()];
    let mut vars = vec![
        ("PATH".to_string(), path),
        ("VIRTUAL_ENV".to_string(), venv.display().to_string()),
    ];
    for (k, v) in extra {
        vars.push((k.to_string(), v.to_string()));
    }
    args.extend(
        extra
            .iter()
            .filter(|(k, _)| !k.starts_with("QM_"))
            .flat_map(|(k, _)| ["--extra-env".to_string(), k.to_string()]),
    );
    (args, vars)
}

fn run_from(
    f: &Fixture,
    plan: &Value,
    (args, vars): &(Vec<String>, Vec<(String, String)>),
    more: &[String],
) -> Run {
    let args: Vec<&str> = args.iter().chain(more).map(String::as_str).collect();
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    f.run_with(plan, &args, &vars)
}

/// The deps mission's `ecosystem` as a mission of its own without a frozen install: the tests
/// then run on the committed files as they are, with the operator's toolchains.
fn without_install(f: &Fixture, ecosystem: &str) -> Vec<String> {
    let deps: Value =
        serde_json::from_str(include_str!("../../missions/deps/allowlist.json")).unwrap();
    let mut spec = deps["ecosystems"][ecosystem].clone();
    spec.as_object_mut().unwrap().remove("install");
    f.custom_mission("no-install", json!({ ecosystem: spec }))
}

/// The action's test output, which a failed run keeps.
fn test_output(run: &Run, i: usize) -> String {
    run.action(i)["test"]["runs"][0]["output_tail"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The pydantic-settings case: uv.lock moves lib (a `testing` group dependency) to 1.0.1 while the
/// operator's virtualenv, first on PATH, has 1.0.0. Without a frozen install (the control) the tests import the operator's
/// 1.0.0 and fail; with it, `python3 -m unittest` and `uv run python -m unittest` both import the
/// locked 1.0.1 from the unit's own virtualenv, and the PRs say how it was built.
#[test]
fn uv_tests_import_the_locked_version_not_the_operators_virtualenv() {
    let Some(f) = Fixture::with_tool(&["uv", "--version"]) else {
        return;
    };
    let index = PypiIndex::start("lib");
    index.publish("1.0.0");
    let files = [
        ("pyproject.toml", UV_PROJECT),
        ("tests/test_lib.py", LOCKED_TEST),
    ];
    f.add_python_app(&index, &files, &["uv", "lock"]);
    index.publish("1.0.1");
    let venv = operator_venv(&f, &index);
    let env = from_venv(&venv, &[("UV_DEFAULT_INDEX", &index.url)]);
    let lock = "uv lock --upgrade-package lib==1.0.1";
    let python = "python3 -m unittest discover -s tests";
    let action =
        |branch: &str, test: &str| one_update(branch, ("lib", "1.0.0", "1.0.1"), &[lock], test);
    let plan = |actions| plan_for("uv", "uv.lock", actions);

    let control = run_from(
        &f,
        &plan(vec![action("quartermaster/uv-python", python)]),
        &env,
        &without_install(&f, "uv"),
    );
    assert_eq!(control.code, 1, "{}", control.said());
    assert_eq!(control.status(0), "failed", "{}", control.said());
    assert!(
        test_output(&control, 0).contains(&format!("lib 1.0.0 imported from {}", venv.display())),
        "without a frozen install the operator's virtualenv stands in: {}",
        control.said()
    );
    assert!(f.pulls().is_empty());

    let uv_run = "uv run python -m unittest discover -s tests";
    let actions = vec![
        action("quartermaster/uv-python", python),
        action("quartermaster/uv-run", uv_run),
    ];
    let run = run_from(&f, &plan(actions), &env, &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    for i in 0..2 {
        assert_eq!(
            run.action(i)["updates"][0]["test"],
            "passed",
            "{}",
            run.said()
        );
        let installs = &run.action(i)["installs"];
        assert_eq!(
            installs[0]["command"],
            "uv sync --frozen --all-groups --all-extras",
            "{}",
            run.said()
        );
        assert_eq!(installs[0]["ok"], true);
    }
    assert_eq!(
        run.action(1)["test"]["command"],
        uv_run,
        "the report shows the form the plan wrote"
    );
    let pulls = f.pulls();
    assert_eq!(pulls.len(), 2);
    for pull in &pulls {
        let body = pull["body"].as_str().unwrap();
        assert!(
            body.contains(
                "on an environment built from the committed files alone (`uv sync --frozen --all-groups --all-extras`)."
            ),
            "{body}"
        );
    }
}

/// The same leak through Poetry: `VIRTUAL_ENV` names the operator's virtualenv (lib 1.0.0), which
/// Poetry uses whenever it is set. Without a frozen install, `poetry run` and `python3` both run
/// the operator's; with it, Poetry installs poetry.lock into the unit's own virtualenv and the
/// tests import the locked 1.0.1.
#[test]
fn poetry_tests_import_the_locked_version_not_the_operators_virtualenv() {
    if !tool_present(&["poetry", "--version"]) || !tool_present(&["uv", "--version"]) {
        return;
    }
    let f = Fixture::new();
    let index = PypiIndex::start("lib");
    index.publish("1.0.0");
    let source = format!(
        "\n[[tool.poetry.source]]\nname = \"stand-in\"\nurl = \"{}/\"\npriority = \"primary\"\n",
        index.url
    );
    let project = format!("{POETRY_PROJECT}{source}");
    let files = [
        ("pyproject.toml", project.as_str()),
        ("tests/test_lib.py", LOCKED_TEST),
    ];
    f.add_python_app(&index, &files, &["poetry", "lock"]);
    index.publish("1.0.1");
    let venv = operator_venv(&f, &index);
    let env = from_venv(&venv, &[]);
    let update = "poetry update lib";
    let action =
        |branch: &str, test: &str| one_update(branch, ("lib", "1.0.0", "1.0.1"), &[update], test);
    let tests = [
        (
            "quartermaster/poetry-run",
            "poetry run python -m unittest discover -s tests",
        ),
        (
            "quartermaster/poetry-python",
            "python3 -m unittest discover -s tests",
        ),
    ];
    let plan = plan_for(
        "poetry",
        "poetry.lock",
        tests.iter().map(|(b, t)| action(b, t)).collect(),
    );

    let control = run_from(&f, &plan, &env, &without_install(&f, "poetry"));
    assert_eq!(control.code, 1, "{}", control.said());
    for i in 0..2 {
        assert!(
            test_output(&control, i)
                .contains(&format!("lib 1.0.0 imported from {}", venv.display())),
            "without a frozen install the operator's virtualenv stands in: {}",
            control.said()
        );
    }
    assert!(f.pulls().is_empty());

    let run = run_from(&f, &plan, &env, &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    for i in 0..2 {
        assert_eq!(
            run.action(i)["updates"][0]["test"],
            "passed",
            "{}",
            run.said()
        );
        let commands: Vec<&str> = run.action(i)["installs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["command"].as_str().unwrap())
            .collect();
        assert_eq!(
            commands,
            [
                "python3 -m venv --without-pip <env>",
                "poetry install --sync"
            ]
        );
    }
    assert_eq!(f.pulls().len(), 2);
}

/// `npx jest` runs as `npx --no -- jest`: the jest the lock installed in node_modules/.bin (a
/// stand-in that says it ran). `npx vitest run`, which the project does not install, fails the
/// unit before anything runs, and npx never asks the registry for it.
#[test]
fn npx_runs_only_a_test_runner_the_lock_installs() {
    let Some(f) = Fixture::with_tool(&["npm", "--version"]) else {
        return;
    };
    let registry = NpmRegistry::start("async");
    registry.publish("3.2.5");
    let cli = "#!/usr/bin/env node\nconsole.log('jest stand-in ran:', require('async/package.json').version);\n";
    registry.publish_files(
        "jest",
        "29.7.0",
        json!({"bin": {"jest": "cli.js"}}),
        &[("cli.js", cli)],
    );
    f.add_npm_app(&registry, &[("async", "^3.2.5"), ("jest", "29.7.0")]);
    registry.publish("3.2.6");
    let update = ("async", "3.2.5", "3.2.6");
    let plan = plan_for(
        "npm",
        "package-lock.json",
        vec![
            one_update(
                "quartermaster/jest",
                update,
                &["npm update async"],
                "npx jest --ci",
            ),
            one_update(
                "quartermaster/vitest",
                update,
                &["npm update async"],
                "npx vitest run",
            ),
        ],
    );
    let npmrc = format!("npmrc={}", f.npmrc(&registry).display());
    let run = f.run_with(&plan, &[], &[("QM_TOOL_CONFIG", &npmrc)]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "done", "{}", run.said());
    assert!(
        run.stderr.contains("$ npx jest --ci  (exit code 0"),
        "{}",
        run.said()
    );
    assert_eq!(run.action(0)["installs"][0]["command"], "npm ci");
    assert_eq!(run.status(1), "failed");
    assert_eq!(
        run.reason(1),
        "`vitest` is not installed in node_modules/.bin: the frozen install did not install it from the committed lock, and `npx` does not download it; add it to the project's devDependencies; no PR"
    );
    assert!(
        run.action(1)["test"]["runs"]
            .as_array()
            .is_none_or(|r| r.len() == 1)
    );
    let asked: Vec<String> = registry.requests.lock().unwrap().clone();
    assert!(!asked.iter().any(|r| r.contains("vitest")), "{asked:?}");
    assert_eq!(f.pulls().len(), 1);
}

/// An update command that leaves an ignored file in the workspace and one in its HOME: neither
/// reaches the tests, which run on the committed files in a fresh unit. The control runs the
/// same check as a last update command, where both are still there.
#[test]
fn nothing_the_update_commands_leave_reaches_the_tests() {
    let f = Fixture::new();
    let makefile = f.show("main", "Makefile")
        + "\nstray:\n\tmkdir -p target && echo stray > target/stray && echo stray > $$HOME/stray\n\nfresh:\n\ttest ! -e target/stray && test ! -e $$HOME/stray\n";
    f.commit_file("main", "Makefile", &makefile);
    let deps: Value =
        serde_json::from_str(include_str!("../../missions/deps/allowlist.json")).unwrap();
    let mut cargo = deps["ecosystems"]["cargo"].clone();
    cargo["commands"] = json!([
        "cargo update -p <pkg> --precise <ver>",
        "make stray",
        "make fresh"
    ]);
    let mission = f.custom_mission("leftovers", json!({"cargo": cargo}));
    let mission: Vec<&str> = mission.iter().map(String::as_str).collect();
    let mut tested = create_mr("quartermaster/tested", &[greeting()], "batch");
    tested["commands"] = json!([command(&greeting()), "make stray"]);
    tested["test_command"] = json!("make fresh");
    let mut control = create_mr("quartermaster/control", &[greeting()], "batch");
    control["commands"] = json!([command(&greeting()), "make stray", "make fresh"]);
    control["test_command"] = json!("make fresh");
    let run = f.run(&plan(vec![tested, control]), &mission);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "done", "{}", run.said());
    assert_eq!(
        run.action(0)["installs"][0]["command"],
        "cargo fetch --locked"
    );
    assert_eq!(run.status(1), "failed");
    assert_eq!(run.reason(1), "`make fresh` failed: exit code 2");
    assert_eq!(f.pulls().len(), 1);
}

/// A replay reads the test command and working directory a PR body says passed.
#[test]
fn a_pr_body_names_the_test_it_passed() {
    use crate::common::replay::claimed_test;
    let body = "Bumps.\n\nTests passed: `npm test` in `web`, on an environment built from the committed files alone (`npm ci`).\n";
    assert_eq!(
        claimed_test(body),
        Some(("npm test".into(), Some("web".into())))
    );
    assert_eq!(
        claimed_test("Tests passed: `` make `x` ``.\n"),
        Some(("make `x`".into(), None))
    );
    assert_eq!(claimed_test("No tests.\n"), None);
}
