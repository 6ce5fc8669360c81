//! The CI files of the scale examples as the forges will see them, checked against GitHub's and
//! GitLab's own schemas (check-jsonschema's vendored copies, no network) and yamllint: the child
//! pipelines `shards --format gitlab-pipeline` writes, the shard workflow with a matrix
//! `shards --format github-matrix` wrote in place of its `fromJSON`, and the fleet generator's
//! child pipeline. Opt-in, as it needs the linters from PyPI: `.ci/run` installs them and runs it
//! (`QM_LINT_TOOLS` names their virtualenv, default `target/lint-tools`).

use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The workflow's matrix expression, which the plan job's output replaces.
const MATRIX: &str = "${{ fromJSON(needs.plan.outputs.matrix) }}";

fn qm(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_quartermaster"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn tool(name: &str) -> PathBuf {
    let dir = std::env::var_os("QM_LINT_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(ROOT).join("target/lint-tools"));
    let tool = dir.join("bin").join(name);
    assert!(
        tool.exists(),
        "{} is missing: run .ci/run once",
        tool.display()
    );
    tool
}

fn check(tool_name: &str, args: &[&str], files: &[PathBuf]) {
    let out = Command::new(tool(tool_name))
        .args(args)
        .args(files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{tool_name} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Child pipelines and workflows for the example plans and an empty one, with one and four shards.
fn generate(dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let empty = dir.join("empty.json");
    std::fs::write(
        &empty,
        r#"{"repo_context":{"platform":"github","ecosystems":["go"],"default_branch":"main"},"actions":[]}"#,
    )
    .unwrap();
    let workflow =
        std::fs::read_to_string(Path::new(ROOT).join("examples/shards/github.yml")).unwrap();
    assert_eq!(workflow.matches(MATRIX).count(), 1, "the workflow's matrix");
    let plans = [
        Path::new(ROOT).join("examples/plans/seed-deps.json"),
        Path::new(ROOT).join("examples/plans/twenty-actions.json"),
        empty,
    ];
    let (mut children, mut workflows) = (Vec::new(), Vec::new());
    for plan in &plans {
        let name = plan.file_stem().unwrap().to_str().unwrap();
        let plan = plan.to_str().unwrap();
        for max in ["1", "4"] {
            let child = dir.join(format!("child-{name}-{max}.yml"));
            let text = qm(&["shards", plan, "--max", max, "--format", "gitlab-pipeline"]);
            std::fs::write(&child, text).unwrap();
            children.push(child);
            let matrix = qm(&["shards", plan, "--max", max, "--format", "github-matrix"]);
            let filled = dir.join(format!("workflow-{name}-{max}.yml"));
            std::fs::write(&filled, workflow.replace(MATRIX, matrix.trim())).unwrap();
            workflows.push(filled);
        }
    }
    (children, workflows)
}

#[test]
#[ignore = "needs check-jsonschema and yamllint from PyPI; .ci/run installs and runs it"]
fn generated_ci_files_pass_the_forges_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let (mut children, workflows) = generate(dir.path());
    let list = dir.path().join("fleet.txt");
    std::fs::write(
        &list,
        "tools/widgets\n# retired: tools/old\ntools/sub/gadgets\n",
    )
    .unwrap();
    let fleet = Command::new("sh")
        .arg(Path::new(ROOT).join("examples/fleet/gitlab-fleet-pipeline.sh"))
        .arg(&list)
        .output()
        .unwrap();
    assert!(fleet.status.success());
    let fleet_child = dir.path().join("fleet-child.yml");
    std::fs::write(&fleet_child, fleet.stdout).unwrap();
    children.push(fleet_child);

    check(
        "check-jsonschema",
        &["--builtin-schema", "vendor.github-workflows"],
        &workflows,
    );
    check(
        "check-jsonschema",
        &["--builtin-schema", "vendor.gitlab-ci"],
        &children,
    );
    let config = Path::new(ROOT).join(".yamllint.yml");
    check(
        "yamllint",
        &["--strict", "-c", config.to_str().unwrap()],
        &children,
    );
}
