//! The same gates on npm, PyPI (uv and pip-compile), Go and Bundler, each with its real tool
//! against its registry stand-in: the publish time, deprecation and yank come from the
//! registry's own metadata (the npm packument's `time` and `deprecated`, PyPI's JSON API, the
//! module proxy's `.info`, RubyGems' versions API), advisories from the OSV stand-in.

use crate::common::gem_source::GemSource;
use crate::common::go_proxy::GoProxy;
use crate::common::npm_registry::NpmRegistry;
use crate::common::pypi_index::PypiIndex;
use crate::common::*;
use crate::supply_chain::{refused_before_tests, stable};
use serde_json::{Value, json};

/// A one-action plan updating `package` from `from` to `to` with `command` in `ecosystem`.
fn one_update(
    ecosystem: &str,
    lock: &str,
    test: &str,
    update: (&str, &str, &str),
    command: &str,
) -> Value {
    let (package, from, to) = update;
    let mut action = create_mr(
        &format!("quartermaster/{ecosystem}-{to}"),
        &[json!({"package": package, "from": from, "to": to, "update_type": "patch"})],
        "batch",
    );
    action["title"] = json!(format!("chore(deps): update {package}"));
    action["commands"] = json!([command]);
    action["test_command"] = json!(test);
    plan_tested_by(ecosystem, lock, test, vec![action])
}

fn npm_run(f: &Fixture, registry: &NpmRegistry, to: &str) -> Run {
    let plan = one_update(
        "npm",
        "package-lock.json",
        "npm test",
        ("async", "3.2.5", to),
        &format!("npm install async@{to}"),
    );
    let npmrc = format!("npmrc={}", f.npmrc(registry).display());
    f.run_with(&plan, &[], &[("QM_TOOL_CONFIG", &npmrc)])
}

#[test]
fn npm_a_too_new_version_is_refused_and_an_old_one_lands_with_its_release_notes() {
    let Some(f) = Fixture::with_tool(&["npm", "--version"]) else {
        return;
    };
    let registry = NpmRegistry::async_app(&f);
    registry.publish_at("3.2.7", &hours_ago(3));
    let run = npm_run(&f, &registry, "3.2.7");
    refused_before_tests(&f, &run, "denied", "policy.release_too_new");
    insta::assert_snapshot!(stable(run.reason(0)));
    f.releases.release(
        "example/async",
        "v3.2.6",
        "### Fixed\n- a leak in `queue` (fixes #12, thanks @someone)",
    );
    f.releases
        .release("example/async", "v3.2.7", "Not this one.");
    let run = npm_run(&f, &registry, "3.2.6");
    assert_eq!(run.status(0), "done", "{}", run.said());
    let body = f.pulls()[0]["body"].as_str().unwrap().to_string();
    let notes = "<details><summary>async 3.2.5 → 3.2.6</summary>\n\n#### v3.2.6\n\n> ### Fixed\n> - a leak in `queue` (fixes #\u{200B}12, thanks @\u{200B}someone)\n\n[all releases](https://github.com/example/async/releases)\n\n</details>";
    assert!(body.contains(notes), "{body}");
    assert!(
        !body.contains("Not this one"),
        "only the releases between from and to: {body}"
    );
}

#[test]
fn npm_deprecated_and_vulnerable_versions_are_refused() {
    let Some(f) = Fixture::with_tool(&["npm", "--version"]) else {
        return;
    };
    let registry = NpmRegistry::async_app(&f);
    registry.publish("3.2.7");
    registry.deprecate("3.2.7", "this release leaks memory, use 3.2.8");
    let run = npm_run(&f, &registry, "3.2.7");
    refused_before_tests(&f, &run, "denied", "policy.deprecated");
    insta::assert_snapshot!(stable(run.reason(0)));
    registry.publish("3.2.8");
    f.osv.add(osv::advisory(
        "GHSA-fwr7-v2mv-hh25",
        "npm",
        "async",
        &["3.2.8"],
        "3.2.9",
    ));
    let run = npm_run(&f, &registry, "3.2.8");
    refused_before_tests(&f, &run, "denied", "policy.vulnerable");
    insta::assert_snapshot!(stable(run.reason(0)));
}

const UV_PROJECT: &str = "[project]\nname = \"app\"\nversion = \"0.1.0\"\nrequires-python = \">=3.9\"\ndependencies = [\"lib>=1.0\"]\n";
const PY_TEST: &str = "python3 -m unittest discover -s tests";

/// Runs `plan` with the index in the operator's configuration file for `tool`.
fn python_run(f: &Fixture, index: &PypiIndex, plan: &Value, tool: &str, config: &str) -> Run {
    let path = f.tmp().with_file_name(format!("{tool}-config"));
    std::fs::write(&path, config.replace("{url}", &index.url)).unwrap();
    f.run_with(
        plan,
        &[],
        &[("QM_TOOL_CONFIG", &format!("{tool}={}", path.display()))],
    )
}

/// uv against `index`: `lib` 1.0.1, published an hour ago, then 1.0.2, yanked, each refused
/// before the tests; the two reasons.
fn uv_refusals(index: &PypiIndex) -> (String, String) {
    let f = Fixture::new();
    index.publish("1.0.0");
    f.add_python_app(index, &[("pyproject.toml", UV_PROJECT)], &["uv", "lock"]);
    index.publish_at("1.0.1", &hours_ago(1));
    let uv_toml = "[[index]]\nurl = \"{url}\"\ndefault = true\n";
    let plan = |to: &str| {
        one_update(
            "uv",
            "uv.lock",
            PY_TEST,
            ("lib", "1.0.0", to),
            &format!("uv lock --upgrade-package lib=={to}"),
        )
    };
    let too_new = python_run(&f, index, &plan("1.0.1"), "uv", uv_toml);
    refused_before_tests(&f, &too_new, "denied", "policy.release_too_new");
    index.publish("1.0.2");
    index.yank("1.0.2", "broken wheel");
    let yanked = python_run(&f, index, &plan("1.0.2"), "uv", uv_toml);
    refused_before_tests(&f, &yanked, "denied", "policy.deprecated");
    (too_new.reason(0).to_string(), yanked.reason(0).to_string())
}

#[test]
fn uv_too_new_and_yanked_versions_are_refused() {
    if !tool_present(&["uv", "--version"]) {
        return;
    }
    let index = PypiIndex::start("lib");
    let (too_new, yanked) = uv_refusals(&index);
    insta::assert_snapshot!(stable(&too_new));
    insta::assert_snapshot!(stable(&yanked));
    let asked = index.requests.lock().unwrap().clone();
    assert!(
        asked.contains(&"/pypi/lib/1.0.2/json".to_string()),
        "{asked:?}"
    );
}

/// A mirror that serves only project pages (bandersnatch) still gives publish times and yanks:
/// without them every version would be of unknown age, and refused as such.
#[test]
fn uv_gates_read_a_mirror_that_serves_only_project_pages() {
    if !tool_present(&["uv", "--version"]) {
        return;
    }
    let index = PypiIndex::start("lib");
    index.serve_project_pages_only();
    let (_, yanked) = uv_refusals(&index);
    assert!(yanked.contains("broken wheel"), "{yanked}");
    let asked = index.requests.lock().unwrap().clone();
    assert!(asked.contains(&"/pypi/lib/json".to_string()), "{asked:?}");
}

#[test]
fn pip_compile_too_new_and_vulnerable_versions_are_refused() {
    let Some(f) = Fixture::with_tool(&["pip-compile", "--version"]) else {
        return;
    };
    let index = PypiIndex::start("lib");
    index.publish("1.0.0");
    f.add_python_app(
        &index,
        &[("requirements.in", "lib>=1.0\n")],
        &["pip-compile", "requirements.in"],
    );
    index.publish_at("1.0.1", &hours_ago(6));
    let pip_conf = "[global]\nindex-url = {url}\n";
    let plan = |to: &str| {
        let command = format!("pip-compile --upgrade-package lib=={to} requirements.in");
        one_update(
            "pip",
            "requirements.txt",
            PY_TEST,
            ("lib", "1.0.0", to),
            &command,
        )
    };
    let run = python_run(&f, &index, &plan("1.0.1"), "pip", pip_conf);
    refused_before_tests(&f, &run, "denied", "policy.release_too_new");
    insta::assert_snapshot!(stable(run.reason(0)));
    index.publish("1.0.2");
    f.osv.add(osv::advisory(
        "PYSEC-2026-17",
        "PyPI",
        "lib",
        &["1.0.2"],
        "1.0.3",
    ));
    let run = python_run(&f, &index, &plan("1.0.2"), "pip", pip_conf);
    refused_before_tests(&f, &run, "denied", "policy.vulnerable");
    insta::assert_snapshot!(stable(run.reason(0)));
}

#[test]
fn go_too_new_and_vulnerable_versions_are_refused() {
    let Some(f) = Fixture::with_tool(&["go", "version"]) else {
        return;
    };
    let proxy = GoProxy::new(&f, "example.com/lib");
    proxy.publish("v1.0.0");
    f.add_go_app(&proxy, "example.com/lib", "v1.0.0");
    proxy.publish_at("v1.0.1", &hours_ago(2));
    let run = proxy.run_update_to(&f, "v1.0.1", "local");
    refused_before_tests(&f, &run, "denied", "policy.release_too_new");
    insta::assert_snapshot!(stable(run.reason(0)));
    proxy.publish("v1.0.2");
    // OSV writes Go versions without their `v`.
    f.osv.add(osv::advisory(
        "GO-2026-4017",
        "Go",
        "example.com/lib",
        &["1.0.2"],
        "1.0.3",
    ));
    let run = proxy.run_update_to(&f, "v1.0.2", "local");
    refused_before_tests(&f, &run, "denied", "policy.vulnerable");
    insta::assert_snapshot!(stable(run.reason(0)));
    assert!(
        f.osv
            .queried()
            .contains(&("Go".into(), "example.com/lib".into(), "1.0.2".into()))
    );
}

#[test]
fn bundler_a_too_new_version_is_refused() {
    let Some(f) = Fixture::with_tool(&["bundle", "--version"]) else {
        return;
    };
    let source = GemSource::lib_app(&f);
    source.publish_at("1.0.1", &hours_ago(4));
    let plan = one_update(
        "bundle",
        "Gemfile.lock",
        "make gems",
        ("lib", "1.0.0", "1.0.1"),
        "bundle update lib",
    );
    let run = f.run(&plan, &[]);
    refused_before_tests(&f, &run, "denied", "policy.release_too_new");
    insta::assert_snapshot!(stable(run.reason(0)));
}

/// An operator whose npm is set up as `actions/setup-node` leaves it (`NPM_CONFIG_USERCONFIG`
/// naming an npmrc whose token is `${NODE_AUTH_TOKEN}`), with no `--tool-config`: the npmrc and
/// the token are carried into the unit, said so at start-up without the token, and the gates ask
/// the same registry with the same credential. Control: with an npmrc that names no registry, the
/// unit's npm does not ask the private registry.
#[test]
fn the_operators_npmrc_and_its_token_are_carried_into_units() {
    let Some(f) = Fixture::with_tool(&["npm", "--version"]) else {
        return;
    };
    let registry = NpmRegistry::async_app(&f);
    let token = "npm_operator_secret_7f3a9c";
    let host = registry
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/');
    let npmrc = f.root.path().join("setup-node.npmrc");
    let text = format!(
        "registry={}\n//{host}/:_authToken=${{NODE_AUTH_TOKEN}}\naudit=false\nfund=false\nfetch-retries=0\n",
        registry.url
    );
    std::fs::write(&npmrc, text).unwrap();
    let userconfig = npmrc.display().to_string();
    let env = [
        ("NPM_CONFIG_USERCONFIG", userconfig.as_str()),
        ("NODE_AUTH_TOKEN", token),
    ];
    let run = f.run_with(
        &one_update(
            "npm",
            "package-lock.json",
            "npm test",
            ("async", "3.2.5", "3.2.6"),
            "npm update async",
        ),
        &[],
        &env,
    );
    assert_eq!(run.status(0), "done", "{}", run.said());
    let line = format!(
        "quartermaster: registry configuration carried into units (read-only): npmrc from NPM_CONFIG_USERCONFIG ({userconfig}), NODE_AUTH_TOKEN (a secret: passed to commands, redacted from their output); lock files may therefore also resolve from {host}"
    );
    assert!(run.stderr.contains(&line), "{}", run.stderr);
    let everything = format!("{}{}{}", run.said(), run.report, f.pulls()[0]);
    assert!(
        !everything.contains(token),
        "the token is never printed or reported"
    );
    let authorizations = registry.authorizations.lock().unwrap().clone();
    assert!(
        authorizations
            .iter()
            .any(|a| a == &format!("Bearer {token}")),
        "{authorizations:?}"
    );
    // Control: the same file naming another registry (a closed port) sends the unit's npm
    // there: the private registry is not asked, so what asked it was the carried npmrc.
    std::fs::write(
        &npmrc,
        "registry=http://127.0.0.1:9/\nfetch-retries=0\naudit=false\n",
    )
    .unwrap();
    let asked = registry.requests.lock().unwrap().len();
    let plan = one_update(
        "npm",
        "package-lock.json",
        "npm test",
        ("async", "3.2.5", "3.2.6"),
        "npm install async@3.2.6",
    );
    // Cold caches: a warm-up would ask the private registry for the base's own lock file.
    let run = f.run_with(&plan, &["--caches", "cold"], &env);
    assert_ne!(run.status(0), "done", "{}", run.said());
    assert_eq!(
        registry.requests.lock().unwrap().len(),
        asked,
        "{}",
        run.said()
    );
}
