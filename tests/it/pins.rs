//! What the image and CI build from is fixed: the tools' versions come from one file that both
//! read, the Dockerfile's base images are pinned by digest, and third-party actions by commit.

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn text(path: &str) -> String {
    std::fs::read_to_string(format!("{ROOT}/{path}")).unwrap()
}

/// `.ci/tools.env`'s `NAME=VALUE` lines.
fn tool_versions() -> Vec<(String, String)> {
    text(".ci/tools.env")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (name, value) = l.split_once('=').unwrap();
            (name.to_string(), value.to_string())
        })
        .collect()
}

/// The image carries the tools at the versions the tests run them with: every version in
/// `.ci/tools.env` is an `ARG` default of the Dockerfile or the tag of its base image, and
/// `.ci/run` installs from the file, naming no version of its own.
#[test]
fn the_image_and_the_tests_share_one_list_of_tool_versions() {
    let dockerfile = text("Dockerfile");
    let run = text(".ci/run");
    assert!(run.contains("\nsource .ci/tools.env\n"));
    for (name, version) in tool_versions() {
        match name.as_str() {
            // The machine's toolchain runs the tests; CI installs this one.
            "RUST_VERSION" => {
                let rust: Vec<&str> = dockerfile
                    .lines()
                    .filter(|l| l.contains(" rust:"))
                    .collect();
                assert_eq!(rust.len(), 2);
                for from in rust {
                    assert!(from.starts_with(&format!("FROM rust:{version}-")), "{from}");
                }
                let install = format!("rustup toolchain install {version} ");
                assert!(text(".github/workflows/ci.yml").contains(&install));
                assert!(text(".github/workflows/image.yml").contains(&install));
                continue;
            }
            "GO_VERSION" => {
                assert!(dockerfile.contains(&format!("\nFROM golang:{version}-bookworm@")));
            }
            // A project's own committed release, which the tests copy; the image has none.
            "YARN_BERRY_VERSION" => {}
            _ => assert!(
                dockerfile.contains(&format!("\nARG {name}={version}\n")),
                "the Dockerfile's {name} is not {version}"
            ),
        }
        assert!(
            run.contains(&format!("${name}")),
            ".ci/run does not use {name}"
        );
        assert!(!run.contains(&version), ".ci/run names {version} itself");
    }
    let args = dockerfile.lines().filter(|l| l.starts_with("ARG ")).count();
    assert_eq!(
        args,
        tool_versions().len() - 3,
        "an ARG the file does not set"
    );
}

/// Every image the Dockerfile and GitLab's pipeline build from is pinned by digest, and every
/// third-party action by commit, with the version it is in a comment.
#[test]
fn images_and_actions_are_pinned() {
    let digest = regex::Regex::new(r"^[^\s@]+:[^\s@]+@sha256:[0-9a-f]{64}$").unwrap();
    let dockerfile = text("Dockerfile");
    let syntax = dockerfile.lines().next().unwrap();
    assert!(
        digest.is_match(syntax.trim_start_matches("# syntax=")),
        "{syntax}"
    );
    let stages: Vec<&str> = dockerfile
        .lines()
        .filter_map(|l| l.strip_prefix("FROM "))
        .map(|from| from.split(" AS ").next().unwrap())
        .collect();
    assert_eq!(stages.len(), 6);
    for image in stages.iter().filter(|i| !["runtime"].contains(i)) {
        assert!(
            digest.is_match(image),
            "FROM {image} is not pinned by digest"
        );
    }
    let gitlab = text(".gitlab-ci.yml");
    let images: Vec<&str> = gitlab
        .lines()
        .filter(|l| l.contains("docker:2") || l.contains("gitlab-org/cli:"))
        .map(|l| l.rsplit(' ').next().unwrap())
        .collect();
    assert_eq!(images.len(), 3, "{images:?}");
    for image in images {
        assert!(digest.is_match(image), "{image} is not pinned by digest");
    }

    let uses = regex::Regex::new(r"(?m)^\s+(?:- )?uses: (\S+)(.*)$").unwrap();
    let pin = regex::Regex::new(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$").unwrap();
    let comment = regex::Regex::new(r"^  # v\d+\.\d+\.\d+$").unwrap();
    // The project's workflows, and the examples users copy (whose own action is a placeholder).
    let examples = [
        "examples/github/quartermaster.yml",
        "examples/github/quartermaster-runner.yml",
        "examples/fleet/github.yml",
        "examples/shards/github.yml",
        "examples/docker-agent/github-workflow.yml",
    ];
    let workflows = std::fs::read_dir(format!("{ROOT}/.github/workflows"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .chain(examples.iter().map(|e| format!("{ROOT}/{e}").into()));
    for path in workflows {
        let workflow = std::fs::read_to_string(&path).unwrap();
        for found in uses.captures_iter(&workflow) {
            let (action, rest) = (&found[1], &found[2]);
            if action.starts_with("./") || action.starts_with("org/quartermaster") {
                continue;
            }
            assert!(
                pin.is_match(action),
                "{}: {action} is not pinned by commit",
                path.display()
            );
            assert!(
                comment.is_match(rest),
                "{}: {action} has no `  # vX.Y.Z`",
                path.display()
            );
        }
    }
}
