//! What is committed is what was verified. The commands of these tests stand for hostile code
//! that runs during an update (an sdist's build backend, a gemspec): a mission's `make` target
//! that runs the real `cargo update` against the local registry, then writes what such code could.

use crate::common::*;
use serde_json::{Value, json};

/// The project `p0` (its own Cargo.toml and Cargo.lock) with `makefile`, and flags for a mission
/// whose cargo commands are the Makefile's `targets`.
fn project(f: &Fixture, makefile: &str, targets: &[&str]) -> Vec<String> {
    f.add_projects(&["p0", "p1"], 0);
    f.commit_file("main", "p0/Makefile", makefile);
    let commands: Vec<String> = targets.iter().map(|t| format!("make {t}")).collect();
    f.custom_mission(
        "hostile",
        json!({"cargo": {"packages": "crates", "versions": "semver",
            "commands": commands, "files": ["Cargo.toml", "Cargo.lock"]}}),
    )
}

/// A `create_mr` of greeting in `p0` that runs `make <target>` and tests with `make check`.
fn action(target: &str) -> Value {
    let mut a = create_mr("quartermaster/p0", &[greeting()], "batch");
    a["working_dir"] = json!("p0");
    a["commands"] = json!([format!("make {target}")]);
    a["test_command"] = json!("make check");
    a
}

/// Wraps p0's `[dependencies]` table in `$Id:` … `$`: git's `ident` would cut it out when
/// staging, while the manifest's fields stay as they were.
const WRAP: &str = "\tsed -i 's/^\\[dependencies\\]/# $$Id: wrapped\\n[dependencies]/' Cargo.toml\n\techo '# $$' >> Cargo.toml\n";

/// The control: in a plain clone, with `target` run as in the unit, what libgit2's `add_path`
/// (the staging Quartermaster used, which applies the attributes of the working tree) stages for
/// p0/Cargo.toml, beside the file on disk.
fn staged_by_libgit2(f: &Fixture, target: &str) -> (String, String) {
    let work = f.root.path().join("control");
    sh(
        f.root.path(),
        &format!("git clone -q file://{} control", f.remote.display()),
    );
    let dir = work.join("p0");
    succeed(
        std::process::Command::new("make")
            .arg(target)
            .current_dir(&dir)
            .env("CARGO_HOME", &f.cargo_home),
    );
    let repo = git2::Repository::open(&work).unwrap();
    let mut index = repo.index().unwrap();
    let path = std::path::Path::new("p0/Cargo.toml");
    index.add_path(path).unwrap();
    let staged = repo.find_blob(index.get_path(path, 0).unwrap().id).unwrap();
    (
        std::fs::read_to_string(dir.join("Cargo.toml")).unwrap(),
        String::from_utf8(staged.content().to_vec()).unwrap(),
    )
}

const MAKEFILE_HEAD: &str = "check:\n\ttrue\n\n";

/// The attack: a command plants a self-ignoring `.gitignore` and a `.gitattributes` with
/// `ident`, so that staging would cut a table out of the manifest the verifier read. The unit is
/// denied for writing git's files, and nothing is pushed. The control shows that libgit2's
/// staging of the same files (what was committed before) holds another Cargo.toml than the one
/// on disk.
#[test]
fn planted_git_files_deny_the_unit() {
    let f = Fixture::new();
    let makefile = format!(
        "{MAKEFILE_HEAD}plant:\n\tcargo update -p greeting --precise 1.0.1\n\tprintf '.gitignore\\n.gitattributes\\n' > .gitignore\n\tprintf 'Cargo.toml ident\\n' > .gitattributes\n{WRAP}"
    );
    let flags = project(&f, &makefile, &["plant"]);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let run = f.run(&plan(vec![action("plant")]), &flags);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "denied", "{}", run.said());
    assert_eq!(
        run.reason(0),
        "[change.git_file] the commands wrote or removed `p0/.gitattributes`, `p0/.gitignore`, git's own files: attributes, ignore rules and submodules change what git commits and checks out, and no update needs them, so the unit is denied; a dependency whose code does this needs looking into; nothing was pushed"
    );
    assert_eq!(run.action(0)["commands"][0]["ok"], true, "the attack ran");
    assert_eq!(f.branches().len(), 1, "nothing pushed");
    assert!(f.pulls().is_empty());
    let (on_disk, staged) = staged_by_libgit2(&f, "plant");
    assert!(
        on_disk.contains("[dependencies]\ngreeting = \"1.0\""),
        "{on_disk}"
    );
    assert!(!staged.contains("[dependencies]"), "control: {staged}");
}

/// The repository's own `.gitattributes` asks for `ident` on p0's Cargo.toml, and the update
/// writes `$Id:` … `$` around its dependencies. What is pushed is the file the verifier read,
/// byte for byte; libgit2's staging with the tree's attributes (the control) cuts the table out.
#[test]
fn the_repositorys_attributes_do_not_filter_what_is_committed() {
    let f = Fixture::new();
    let makefile =
        format!("{MAKEFILE_HEAD}wrap:\n\tcargo update -p greeting --precise 1.0.1\n{WRAP}");
    let flags = project(&f, &makefile, &["wrap"]);
    f.commit_file("main", "p0/.gitattributes", "Cargo.toml ident\n");
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let run = f.run(&plan(vec![action("wrap")]), &flags);
    assert_eq!(run.code, 0, "{}", run.said());
    let (on_disk, staged) = staged_by_libgit2(&f, "wrap");
    assert!(!staged.contains("[dependencies]"), "control: {staged}");
    let pushed = f.show("quartermaster/p0", "p0/Cargo.toml") + "\n";
    assert_eq!(pushed, on_disk, "the verified bytes are pushed");
    assert!(pushed.contains("# $Id: wrapped\n[dependencies]\ngreeting = \"1.0\"\n# $"));
}

/// A command that also moves the lock file and the manifest of another directory: nothing read
/// them, so the unit is denied, naming each; nothing is pushed.
#[test]
fn a_manifest_outside_the_working_directory_denies_the_unit() {
    let f = Fixture::new();
    let makefile = format!(
        "{MAKEFILE_HEAD}both:\n\tcargo update -p greeting --precise 1.0.1\n\tcd ../p1 && cargo update -p greeting --precise 1.0.1\n\tsed -i 's/^greeting = \"1.0\"$$/greeting = \"1.0.1\"/' ../p1/Cargo.toml\n"
    );
    let flags = project(&f, &makefile, &["both"]);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let run = f.run(&plan(vec![action("both")]), &flags);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "denied", "{}", run.said());
    let outside = |file: &str| {
        format!(
            "[change.unverified_file] `{file}` changed, but no reader verified it: it is a manifest or lock file outside what working_dir `p0` and its lock file govern, so the unit is denied; update `p1` in an action of its own with `working_dir` `p1`"
        )
    };
    assert_eq!(
        run.reason(0),
        format!(
            "{}; {}; nothing was pushed",
            outside("p1/Cargo.lock"),
            outside("p1/Cargo.toml")
        )
    );
    let findings = &run.action(0)["changes"][0]["findings"];
    assert_eq!(findings[0]["code"], "change.unverified_file", "{findings}");
    assert_eq!(f.branches().len(), 1, "nothing pushed");
    assert!(f.pulls().is_empty());
}
