//! `describe_mission`: what a mission lets a plan do, in a form an agent can plan with.

use crate::mission::Mission;
use crate::mission::grammar::{PackageGrammar, VersionGrammar};
use crate::mission::pattern::{FlagSpec, Positionals, TestPattern, ValueKind};
use serde_json::{Map, Value, json};

/// The mission's action types, update commands and files per ecosystem, and test-runner policy.
pub(crate) fn describe(mission: &Mission) -> Value {
    let ecosystems: Map<String, Value> = mission
        .ecosystems
        .iter()
        .map(|(name, eco)| {
            let forms = |maintenance: bool| -> Vec<&str> {
                eco.commands
                    .iter()
                    .filter(|c| c.maintenance == maintenance)
                    .map(|c| c.source())
                    .collect()
            };
            let runs_as: Map<String, Value> = eco
                .commands
                .iter()
                .filter_map(|c| Some((c.source().to_string(), json!(c.runs.as_ref()?.source()))))
                .collect();
            let install: Vec<Value> = eco
                .install
                .iter()
                .map(|c| match c.when {
                    Some(when) => json!({"when": when.as_str(), "runs": c.source()}),
                    None => json!(c.source()),
                })
                .collect();
            let entry = json!({
                "package_names": package_grammar(eco.packages),
                "versions": version_grammar(eco.versions),
                "commands": forms(false),
                "lock_refresh_commands": forms(true),
                "runs_as": runs_as,
                "files_it_may_change": mission.files.patterns(name),
                "frozen_install": install,
            });
            (name.clone(), entry)
        })
        .collect();
    let action_types: Vec<&str> = mission.action_types.iter().map(|t| t.as_str()).collect();
    json!({
        "mission": mission.name,
        "description": mission.description,
        "action_types": action_types,
        "update_commands": {
            "rules": "A command must split (as shell words) into exactly the words of one pattern of a declared ecosystem: no prefix matching, no extra options, no shell syntax, no `NAME=value`, the program by its bare name. Nothing runs through a shell.",
            "<pkg>": "a package name valid in the ecosystem's grammar, declared in the action's `updates`",
            "<ver>": "a version valid in the ecosystem's grammar, equal to that update's `to`",
            "<from>": "a version valid in the ecosystem's grammar, equal to that update's `from`: the locked copy to move when the lock file holds several versions of the package (cargo's `-p <pkg>@<from>`, which a lock holding two versions of a crate requires)",
            "lock_refresh_commands": "Per ecosystem, commands that refresh the whole lock file. Only an action declaring one update with update_type `lock_file_maintenance` whose package is that ecosystem's lock file (e.g. `Cargo.lock`) may run them; its `from` and `to` are labels such as dates.",
            "runs_as": "Per ecosystem, the commands Quartermaster executes in another form: the ecosystem's lock-only mode, which updates the lock file without installing packages. Write the form listed under `commands`; reports show it as written.",
        },
        "ecosystems": ecosystems,
        "changed_files": "A branch may only change the files its ecosystems list (globs matching the end of a path: `go.sum` also matches `providers/s3/go.sum`); any other change refuses the branch.",
        "frozen_install": "After the commit, the tests' environment is built from the committed files alone: the workspace is brought back to exactly the committed tree (nothing the update commands installed survives), and each ecosystem's `frozen_install` commands run in a fresh sandbox HOME, in the directory of its lock file. `<env>` is the unit's own virtualenv and `<requirements>` every requirements*.txt of working_dir; `when` limits a command to yarn berry or classic locks, or to requirements files with or without hashes. An install that fails fails the unit, with the tool's message, and no PR opens.",
        "test_runner_policy": {
            "rules": "test_command (per action and in repo_context) must match one of these forms. `<script>` is a script of the working_dir's package.json; `<args>` takes only the options listed, and positional arguments of the kind given. Option values are written `-count 3`, `-count=3` or `-j4`, and never start with `-`. A form with `runs_as` executes as that (`npx` never downloads; `uv run` does not sync again), and the program it runs must come from the unit's environment the frozen install built (`node_modules/.bin`, the virtualenv). Anything else is refused: inline code, package executors, installs.",
            "commands": mission.tests.iter().map(test_form).collect::<Vec<_>>(),
        },
    })
}

fn test_form(test: &TestPattern) -> Value {
    let form = test.pattern.source();
    let mut described = if form.split_whitespace().any(|w| w == "<args>") {
        let options: Vec<String> = test.flags.iter().map(flag).collect();
        let arguments = match &test.positionals {
            Positionals::Kind(kind) => value_kind(*kind).to_string(),
            Positionals::OneOf(choices) => format!("one of: {}", choices.join(", ")),
        };
        json!({"form": form, "options": options, "arguments": arguments})
    } else {
        json!({"form": form, "options": [], "arguments": "none"})
    };
    if let Some(runs) = &test.runs {
        described["runs_as"] = json!(runs.source());
    }
    described
}

fn flag(spec: &FlagSpec) -> String {
    let Some(kind) = spec.value else {
        return spec.name.clone();
    };
    let placeholder = kind.placeholder();
    let glue = if spec.glued { "=" } else { " " };
    format!("{}{glue}{placeholder}", spec.name)
}

fn value_kind(kind: ValueKind) -> &'static str {
    match kind {
        ValueKind::Number => "numbers",
        ValueKind::Word => "plain words (letters, digits, `_.,:/+@%^*`)",
        ValueKind::Path => "relative paths inside the checkout (no `..`, `.git` or URL)",
        ValueKind::Dir => "existing directories inside the checkout",
        ValueKind::File => "existing files inside the checkout",
        ValueKind::Cwd => "one existing directory inside the checkout to run from",
        ValueKind::Out => "report files to write inside the checkout",
        ValueKind::Expr => "filter expressions (letters, digits, spaces, `_.,:=!()~*`)",
        ValueKind::Target => "target names (letters, digits, `_.:/-`)",
        ValueKind::Test => "test locations: a path, optionally `::id` (pytest) or `:line` (rspec)",
        ValueKind::GoPackage => "go package patterns inside the module: `.`, `./pkg`, `./...`",
        ValueKind::PythonFile => "Python test files such as `tests/test_x.py`, never dotted names",
        ValueKind::Filter => "test paths or name patterns",
    }
}

fn package_grammar(grammar: PackageGrammar) -> &'static str {
    match grammar {
        PackageGrammar::GoModule => "go-module: module paths such as `github.com/gorilla/mux`",
        PackageGrammar::Npm => "npm: names such as `lodash` or `@types/node`",
        PackageGrammar::Pypi => "pypi: PEP 508 names such as `requests`",
        PackageGrammar::Rubygems => "rubygems: names such as `aws-sdk-s3`",
        PackageGrammar::Crates => "crates: names such as `tokio-util`",
    }
}

fn version_grammar(grammar: VersionGrammar) -> &'static str {
    match grammar {
        VersionGrammar::Go => "go: `v` and a semantic version, such as `v1.8.1`",
        VersionGrammar::Semver => "semver: such as `4.17.21` or `1.0.0-rc.1`, no `v`",
        VersionGrammar::Pep440 => "pep440: such as `2.31.0` or `1.0rc1`",
        VersionGrammar::Rubygems => "rubygems: such as `7.1.3` or `1.0.0.pre`",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_list_forms_and_what_each_runs_as() {
        let deps = crate::mission::load("deps", None).unwrap();
        let described = describe(&deps);
        let bundle = &described["ecosystems"]["bundle"];
        assert_eq!(
            bundle["commands"],
            json!(["bundle update <pkg>", "bundle lock --update <pkg>"])
        );
        assert_eq!(
            bundle["lock_refresh_commands"],
            json!(["bundle update", "bundle lock --update"])
        );
        assert_eq!(
            bundle["runs_as"],
            json!({"bundle update <pkg>": "bundle lock --update <pkg>", "bundle update": "bundle lock --update"})
        );
        assert_eq!(
            described["ecosystems"]["poetry"]["runs_as"]["poetry add <pkg>@<ver>"],
            "poetry add --lock <pkg>@<ver>"
        );
        assert_eq!(described["ecosystems"]["go"]["runs_as"], json!({}));
    }

    #[test]
    fn each_ecosystem_names_its_frozen_install_and_runners_their_frozen_form() {
        let deps = crate::mission::load("deps", None).unwrap();
        let described = describe(&deps);
        let installs: Map<String, Value> = described["ecosystems"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(name, eco)| (name.clone(), eco["frozen_install"].clone()))
            .collect();
        insta::assert_snapshot!(
            "frozen_installs",
            serde_json::to_string_pretty(&installs).unwrap()
        );
        let npx = described["test_runner_policy"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["form"] == "npx jest <args>")
            .unwrap();
        assert_eq!(npx["runs_as"], "npx --no -- jest <args>");
    }
}
