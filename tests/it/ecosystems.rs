//! yarn (classic and berry), pnpm, bun, bundler, and npm with a shrinkwrap, run for real in the
//! sandbox against registry stand-ins on 127.0.0.1: the mission's command moves the lock, the
//! project's test runner passes, and the PR, the commit and the report state what the lock file
//! says.

use crate::common::gem_source::GemSource;
use crate::common::npm_registry::NpmRegistry;
use crate::common::*;
use serde_json::{Value, json};

/// A `create_mr` that updates `async` from `from` to `to` with `command`.
fn async_update(branch: &str, command: &str, from: &str, to: &str, test: &str) -> Value {
    json!({
        "type": "create_mr",
        "branch": branch,
        "title": "chore(deps): update async",
        "description": "A patch release of async.",
        "updates": [{"package": "async", "from": from, "to": to, "update_type": "patch"}],
        "commands": [command],
        "test_command": test,
        "labels": ["dependencies"],
        "fallback_strategy": "batch",
        "confidence": 0.9
    })
}

/// Runs `plan` with the operator's npmrc naming `registry`: every package manager of the node
/// family reads it from the unit's HOME.
fn run_against(f: &Fixture, registry: &NpmRegistry, plan: &Value) -> Run {
    let npmrc = format!("npmrc={}", f.npmrc(registry).display());
    f.run_with(plan, &[], &[("QM_TOOL_CONFIG", &npmrc)])
}

/// Action `i` landed `package` `from` → `to` on its branch, its test passed, and the PR and the
/// commit state those versions; the branch changes `files` only.
fn assert_landed(f: &Fixture, run: &Run, i: usize, update: (&str, &str, &str), files: &str) {
    let (package, from, to) = update;
    let branch = run.action(i)["branch"].as_str().unwrap().to_string();
    assert_eq!(run.status(i), "done", "{}", run.said());
    let reported = &run.action(i)["updates"][0];
    assert_eq!(
        (&reported["package"], &reported["from"], &reported["to"]),
        (&json!(package), &json!(from), &json!(to))
    );
    assert_eq!(reported["landed"], true);
    assert_eq!(reported["test"], "passed", "{}", run.said());
    let pull = f
        .pulls()
        .into_iter()
        .find(|p| p["head"] == branch.as_str())
        .unwrap_or_else(|| panic!("no PR for {branch}: {}", run.said()));
    let body = pull["body"].as_str().unwrap();
    let row = format!("| `{from}` → `{to}` | patch |");
    let cell = body
        .lines()
        .find_map(|line| line.strip_suffix(&row))
        .unwrap_or_else(|| panic!("no row `{row}`: {body}"));
    if cell.starts_with("| [") {
        // A lock that names no registry (pnpm's, berry's) gets the package's public page.
        let page = format!("| [`{package}`](https://www.npmjs.com/package/{package}/v/{to}) ");
        assert_eq!(cell, page, "{body}");
    } else {
        assert_eq!(cell, format!("| `{package}` "), "{body}");
    }
    let message = sh(&f.remote, &format!("git log -1 --format=%B {branch}"));
    assert!(
        message.contains(&format!("- {package}: {from} -> {to}")),
        "{message}"
    );
    assert_eq!(
        sh(&f.remote, &format!("git diff --name-only main {branch}")),
        files
    );
}

/// The second action's async 3.2.5 → 3.2.6 landed changing `files`, and `install` passed on it.
fn assert_async_landed(f: &Fixture, run: &Run, files: &str, install: &str) {
    assert_landed(f, run, 1, ("async", "3.2.5", "3.2.6"), files);
    assert_installed(f, run, 1, install);
}

/// Action `i`'s tests ran on what `install` (the ecosystem's frozen install) built from the
/// committed files, and its PR says so.
fn assert_installed(f: &Fixture, run: &Run, i: usize, install: &str) {
    let installs: Vec<(&str, bool)> = run.action(i)["installs"]
        .as_array()
        .unwrap_or_else(|| panic!("no frozen install: {}", run.said()))
        .iter()
        .map(|r| (r["command"].as_str().unwrap(), r["ok"] == true))
        .collect();
    assert_eq!(installs, [(install, true)], "{}", run.said());
    let branch = run.action(i)["branch"].as_str().unwrap();
    let pull = f.pulls().into_iter().find(|p| p["head"] == branch).unwrap();
    let claim = format!("on an environment built from the committed files alone (`{install}`).");
    assert!(pull["body"].as_str().unwrap().contains(&claim), "{pull}");
}

/// yarn classic: the lock has async 3.2.5 from the stand-in; 3.2.6 is then released and 3.2.7
/// never is. `yarn upgrade async@3.2.7` fails in the sandbox and nothing is published for it;
/// `yarn upgrade async@3.2.6` moves yarn.lock (and the range yarn writes into package.json),
/// `yarn test` passes, and the PR states what yarn.lock says.
#[test]
fn yarn_upgrade_states_what_yarn_lock_did() {
    let Some(f) = Fixture::with_tool(&["yarn", "--version"]) else {
        return;
    };
    let registry = NpmRegistry::async_app_locked_by(
        &f,
        &[&["yarn", "install", "--ignore-scripts", "--no-progress"]],
    );
    let plan = plan_tested_by(
        "yarn",
        "yarn.lock",
        "yarn test",
        vec![
            async_update(
                "quartermaster/async-unreleased",
                "yarn upgrade async@3.2.7",
                "3.2.5",
                "3.2.7",
                "yarn test",
            ),
            async_update(
                "quartermaster/async",
                "yarn upgrade async@3.2.6",
                "3.2.5",
                "3.2.6",
                "yarn test",
            ),
        ],
    );
    let run = run_against(&f, &registry, &plan);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "failed");
    assert_eq!(
        run.reason(0),
        "`yarn upgrade async@3.2.7` failed: exit code 1"
    );
    assert!(
        run.said()
            .contains("error Couldn't find any versions for \"async\" that matches \"3.2.7\""),
        "{}",
        run.said()
    );
    assert_async_landed(
        &f,
        &run,
        "package.json\nyarn.lock",
        "yarn install --frozen-lockfile",
    );
    assert_eq!(f.pulls().len(), 1);
    assert!(!f.branches().contains_key("quartermaster/async-unreleased"));
    let lock = f.show("quartermaster/async", "yarn.lock");
    let entry = format!(
        "async@3.2.6:\n  version \"3.2.6\"\n  resolved \"{}async/-/async-3.2.6.tgz",
        registry.url
    );
    assert!(lock.contains(&entry), "{lock}");
    assert!(!lock.contains("3.2.5"), "{lock}");
}

/// Where `.ci/run` installs yarn berry's release (npm's `@yarnpkg/cli-dist`), which a berry
/// project commits rather than installs.
const BERRY_RELEASE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/target/yarn-berry/node_modules/@yarnpkg/cli-dist/bin/yarn.js"
);

/// yarn berry, as a project runs it: its committed release named by `yarnPath`, started by the
/// global yarn; the operator's .yarnrc.yml names the stand-in. Berry has no `yarn upgrade`: the
/// mission's form fails there. `yarn add async@3.2.6` moves yarn.lock, the Plug'n'Play loader
/// and the range in package.json, `yarn test` passes under Plug'n'Play, and the PR states what
/// yarn.lock says.
#[test]
fn yarn_berry_add_states_what_yarn_lock_did() {
    if !tool_present(&["yarn", "--version"]) || !tool_present(&["node", BERRY_RELEASE, "--version"])
    {
        return;
    }
    let f = Fixture::new();
    let registry = NpmRegistry::start("async");
    registry.publish("3.2.5");
    f.add_berry_app(&registry, BERRY_RELEASE.as_ref(), &[("async", "^3.2.5")]);
    registry.publish("3.2.6");
    let plan = plan_tested_by(
        "yarn",
        "yarn.lock",
        "yarn test",
        vec![
            async_update(
                "quartermaster/async-upgrade",
                "yarn upgrade async@3.2.6",
                "3.2.5",
                "3.2.6",
                "yarn test",
            ),
            async_update(
                "quartermaster/async",
                "yarn add async@3.2.6",
                "3.2.5",
                "3.2.6",
                "yarn test",
            ),
        ],
    );
    let config = format!(
        "npmrc={},yarnrc-yml={}",
        f.npmrc(&registry).display(),
        f.yarnrc_yml(&registry).display()
    );
    // `CI` reaches the commands, as on a CI runner, where berry would refuse to change the lock.
    let run = f.run_with(&plan, &[], &[("QM_TOOL_CONFIG", &config), ("CI", "true")]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "failed");
    assert_eq!(
        run.reason(0),
        "`yarn upgrade async@3.2.6` failed: exit code 1"
    );
    assert!(
        run.said()
            .contains("Couldn't find a script named \"upgrade\""),
        "{}",
        run.said()
    );
    assert_async_landed(
        &f,
        &run,
        ".pnp.cjs\npackage.json\nyarn.lock",
        "yarn install --immutable",
    );
    assert!(!f.branches().contains_key("quartermaster/async-upgrade"));
    let lock = f.show("quartermaster/async", "yarn.lock");
    assert!(lock.contains("\n__metadata:\n"), "{lock}");
    assert!(
        lock.contains(
            "\"async@npm:3.2.6\":\n  version: 3.2.6\n  resolution: \"async@npm:3.2.6\"\n"
        ),
        "{lock}"
    );
    assert!(!lock.contains("3.2.5"), "{lock}");
}

/// `manager update async` (pnpm or bun) run twice from a lock at async 3.2.5, once 3.2.6 is
/// released and 3.2.7 never is: the plan claiming 3.2.7 fails naming where the lock ended, the
/// true one lands and its test (`test`) passes.
fn update_within_range(
    manager: &str,
    lock: &[&str],
    lock_file: &str,
    test: &str,
) -> (Fixture, NpmRegistry, Run) {
    let f = Fixture::new();
    let registry = NpmRegistry::async_app_locked_by(&f, &[lock]);
    let command = format!("{manager} update async");
    let plan = plan_tested_by(
        manager,
        lock_file,
        test,
        vec![
            async_update(
                "quartermaster/async-claimed",
                &command,
                "3.2.5",
                "3.2.7",
                test,
            ),
            async_update("quartermaster/async", &command, "3.2.5", "3.2.6", test),
        ],
    );
    let run = run_against(&f, &registry, &plan);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "failed");
    assert_eq!(
        run.reason(0),
        format!(
            "[update.not_reached] `async` ended at 3.2.6 in {lock_file}, not at the declared 3.2.7 (it was 3.2.5): declare 3.2.6 as `to`, or use a command that reaches 3.2.7"
        )
    );
    assert!(!f.branches().contains_key("quartermaster/async-claimed"));
    (f, registry, run)
}

/// [`update_within_range`], landed: the PR changes package.json and the lock file, and the frozen
/// install passes. The registry, and the lock file on the PR's branch; `None` where `manager`
/// does not run here.
fn landed_within_range(
    manager: &str,
    lock: &[&str],
    lock_file: &str,
    test: &str,
) -> Option<(NpmRegistry, String)> {
    if !tool_present(&[manager, "--version"]) {
        return None;
    }
    let (f, registry, run) = update_within_range(manager, lock, lock_file, test);
    let mut files = ["package.json", lock_file];
    files.sort_unstable();
    let install = format!("{manager} install --frozen-lockfile");
    assert_async_landed(&f, &run, &files.join("\n"), &install);
    Some((registry, f.show("quartermaster/async", lock_file)))
}

/// pnpm 9: `pnpm update async` moves pnpm-lock.yaml (and the range in package.json) to 3.2.6,
/// and `pnpm test` passes. The lock names no registry, so the PR links the package's public page.
#[test]
fn pnpm_update_states_what_pnpm_lock_did() {
    let Some((_registry, lock)) = landed_within_range(
        "pnpm",
        &["pnpm", "install", "--lockfile-only"],
        "pnpm-lock.yaml",
        "pnpm test",
    ) else {
        return;
    };
    assert!(
        lock.contains("specifier: ^3.2.6\n        version: 3.2.6\n"),
        "{lock}"
    );
    assert!(
        lock.contains("\n  async@3.2.6:\n    resolution: {integrity: sha512-"),
        "{lock}"
    );
    assert!(!lock.contains("3.2.5"), "{lock}");
}

/// bun: `bun update async` moves bun.lock (and the range in package.json) to 3.2.6, and
/// `bun run test` passes.
#[test]
fn bun_update_states_what_bun_lock_did() {
    let Some((registry, lock)) = landed_within_range(
        "bun",
        &["bun", "install", "--lockfile-only"],
        "bun.lock",
        "bun run test",
    ) else {
        return;
    };
    let entry = format!(
        "\"async\": [\"async@3.2.6\", \"{}async/-/async-3.2.6.tgz\", {{}}, \"sha512-",
        registry.url
    );
    assert!(lock.contains(&entry), "{lock}");
    assert!(!lock.contains("3.2.5"), "{lock}");
}

/// npm with npm-shrinkwrap.json instead of package-lock.json: `npm update async` moves the
/// shrinkwrap, and the facts are read from it.
#[test]
fn npm_update_states_what_the_shrinkwrap_did() {
    let Some(f) = Fixture::with_tool(&["npm", "--version"]) else {
        return;
    };
    let registry = NpmRegistry::async_app_locked_by(
        &f,
        &[
            &["npm", "install", "--package-lock-only"],
            &["npm", "shrinkwrap"],
        ],
    );
    let plan = plan_tested_by(
        "npm",
        "npm-shrinkwrap.json",
        "npm test",
        vec![
            async_update(
                "quartermaster/async-claimed",
                "npm update async",
                "3.2.5",
                "3.2.7",
                "npm test",
            ),
            async_update(
                "quartermaster/async",
                "npm update async",
                "3.2.5",
                "3.2.6",
                "npm test",
            ),
        ],
    );
    let run = run_against(&f, &registry, &plan);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(
        run.reason(0),
        "[update.not_reached] `async` ended at 3.2.6 in npm-shrinkwrap.json, not at the declared 3.2.7 (it was 3.2.5): declare 3.2.6 as `to`, or use a command that reaches 3.2.7"
    );
    assert_async_landed(&f, &run, "npm-shrinkwrap.json", "npm ci");
    assert!(
        sh(&f.remote, "git ls-tree --name-only quartermaster/async")
            .lines()
            .all(|f| f != "package-lock.json")
    );
    let lock = f.show("quartermaster/async", "npm-shrinkwrap.json");
    let resolved = format!("\"resolved\": \"{}async/-/async-3.2.6.tgz\"", registry.url);
    assert!(lock.contains(&resolved), "{lock}");
}

/// bundler: Gemfile.lock has lib 1.0.0 from a gem source stand-in; 1.0.1 is then released and
/// 1.0.2 never is. `bundle update lib` (run as `bundle lock --update lib`) claimed to reach
/// 1.0.2 fails naming where the lock ended; the true one lands, `make gems` (`bundle exec ruby`,
/// which installs the locked gems first) passes, and the PR states what Gemfile.lock says.
#[test]
fn bundle_update_states_what_gemfile_lock_did() {
    let Some(f) = Fixture::with_tool(&["bundle", "--version"]) else {
        return;
    };
    let source = GemSource::lib_app(&f);
    source.publish("1.0.1");
    let update = |branch: &str, to: &str| {
        let mut action = async_update(branch, "bundle update lib", "1.0.0", to, "make gems");
        action["title"] = json!("chore(deps): update lib");
        action["updates"][0]["package"] = json!("lib");
        action
    };
    let plan = plan_tested_by(
        "bundle",
        "Gemfile.lock",
        "make gems",
        vec![
            update("quartermaster/lib-claimed", "1.0.2"),
            update("quartermaster/lib", "1.0.1"),
        ],
    );
    let run = f.run(&plan, &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "failed");
    assert_eq!(
        run.reason(0),
        "[update.not_reached] `lib` ended at 1.0.1 in Gemfile.lock, not at the declared 1.0.2 (it was 1.0.0): declare 1.0.1 as `to`, or use a command that reaches 1.0.2"
    );
    assert_landed(&f, &run, 1, ("lib", "1.0.0", "1.0.1"), "Gemfile.lock");
    assert_installed(&f, &run, 1, "bundle install");
    let before = f.show("main", "Gemfile.lock");
    let lock = f.show("quartermaster/lib", "Gemfile.lock");
    assert_eq!(lock, before.replace("    lib (1.0.0)", "    lib (1.0.1)"));
    assert!(
        source
            .requests
            .lock()
            .unwrap()
            .iter()
            .any(|p| p == "/gems/lib-1.0.1.gem"),
        "the test's bundle exec installed the new gem from the stand-in"
    );
}
