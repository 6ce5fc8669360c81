use super::*;
use crate::mission::{Mission, load};
use std::fs;
use std::os::unix::fs::symlink;

/// A checkout with the shapes an attacker uses: a registry tarball's Makefile, a symbolic link out
/// of the checkout, one into `node_modules`, a dangling one, and an ignored build directory.
struct Checkout {
    root: tempfile::TempDir,
    _outside: tempfile::TempDir,
}

impl Checkout {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("Makefile"), "test:\n\ttrue\n").unwrap();
        let r = root.path();
        for dir in ["node_modules/x", "sub", "tests", "build/lib", "crates/core"] {
            fs::create_dir_all(r.join(dir)).unwrap();
        }
        for file in [
            "node_modules/x/Makefile",
            "sub/Makefile",
            "build/lib/Makefile",
        ] {
            fs::write(r.join(file), "test:\n\ttrue\n").unwrap();
        }
        fs::write(r.join("tests/test_a.py"), "").unwrap();
        fs::write(r.join("crates/core/Cargo.toml"), "").unwrap();
        fs::write(r.join(".gitignore"), "build/\n*.log\n/out\n").unwrap();
        symlink(outside.path(), r.join("shared")).unwrap();
        symlink("node_modules/x", r.join("deps")).unwrap();
        symlink("sub", r.join("inside")).unwrap();
        symlink("nowhere", r.join("dangling")).unwrap();
        Self {
            root,
            _outside: outside,
        }
    }

    fn path(&self) -> &Path {
        self.root.path()
    }

    fn check(&self, m: &Mission, command: &str) -> Result<(), Refusal> {
        let test = m.check_test_command(command).unwrap();
        check_test_paths(&test, self.path(), self.path())
    }
}

#[test]
fn paths_of_the_repository_pass() {
    let m = load("deps", None).unwrap();
    let c = Checkout::new();
    for ok in [
        "make -C sub test",
        "make -C inside test",
        "make test",
        "python -m unittest tests/test_a.py",
        "python3 -m unittest discover -s tests -t .",
        "pytest --junitxml build/junit.xml tests/test_a.py::test_x",
        "pytest --junitxml reports/new/junit.xml",
        "npm test auth",
        "npm test tests",
        "go test ./...",
        "go test ./sub/...",
    ] {
        assert_eq!(c.check(&m, ok), Ok(()), "{ok}");
    }
}

/// Asserts that every command is refused in the checkout with its code and a message containing
/// the text.
fn assert_refused(cases: &[(&str, Code, &str)]) {
    let m = load("deps", None).unwrap();
    let c = Checkout::new();
    for (command, code, says) in cases {
        let r = c.check(&m, command).unwrap_err();
        assert_eq!(r.code, *code, "{command}: {}", r.message);
        assert!(r.message.contains(says), "{command}: {}", r.message);
    }
}

#[test]
fn links_out_and_dependency_or_ignored_paths_are_refused() {
    assert_refused(&[
        (
            "make -C shared test",
            Code::TestPathOutside,
            "`-C shared` leads outside the checkout through a symbolic link; name a path inside the repository",
        ),
        (
            "make --directory=shared test",
            Code::TestPathOutside,
            "`--directory=shared` leads outside",
        ),
        (
            "go test ./shared/...",
            Code::TestPathOutside,
            "`./shared/...` leads outside",
        ),
        (
            "npm test shared",
            Code::TestPathOutside,
            "`shared` leads outside",
        ),
        (
            "pytest --junitxml shared/junit.xml",
            Code::TestPathOutside,
            "`--junitxml shared/junit.xml` leads outside",
        ),
        (
            "pytest dangling",
            Code::TestPathOutside,
            "`dangling` is a symbolic link that leads nowhere inside the checkout",
        ),
        (
            "make -C deps test",
            Code::TestDependencyDir,
            "`-C deps` resolves into `node_modules`, which holds installed packages",
        ),
        (
            "make -C build/lib test",
            Code::TestPathIgnored,
            "`-C build/lib` is ignored by the repository's .gitignore, so it holds generated or downloaded files rather than the repository's sources; name a tracked path",
        ),
    ]);
}

#[test]
fn missing_paths_and_wrong_kinds_are_refused() {
    assert_refused(&[
        (
            "make -C missing test",
            Code::TestPathMissing,
            "`-C missing` does not exist in the working directory; name an existing path",
        ),
        (
            "make -C tests/test_a.py test",
            Code::TestPathMissing,
            "`-C tests/test_a.py` is not a directory",
        ),
        (
            "python3 -m unittest discover -s json",
            Code::TestPathMissing,
            "`-s json` does not exist",
        ),
        (
            "python3 -m unittest discover -s tests/test_a.py",
            Code::TestPathMissing,
            "is not a directory",
        ),
        (
            "python -m unittest pip.py",
            Code::TestPathMissing,
            "`pip.py` does not exist",
        ),
        (
            "python -m unittest sub/Makefile.py",
            Code::TestPathMissing,
            "does not exist",
        ),
        (
            "cargo test --manifest-path crates/core",
            Code::TestPathMissing,
            "`--manifest-path crates/core` is not a file; name a file",
        ),
    ]);
}

#[test]
fn paths_are_resolved_from_the_working_directory() {
    let m = load("deps", None).unwrap();
    let c = Checkout::new();
    let test = m.check_test_command("make test -C x").unwrap();
    let sub = c.path().join("node_modules");
    let r = check_test_paths(&test, c.path(), &sub).unwrap_err();
    assert_eq!(r.code, Code::TestDependencyDir, "{}", r.message);
    let r = check_test_paths(&test, c.path(), &c.path().join("sub")).unwrap_err();
    assert_eq!(r.code, Code::TestPathMissing, "{}", r.message);
    let r = check_test_paths(&test, c.path(), &c.path().join("shared")).unwrap_err();
    assert_eq!(r.code, Code::TestPathOutside, "{}", r.message);
    assert!(r.message.contains("the working directory leads outside"));
}

#[test]
fn gitignore_is_read_as_git_reads_it() {
    let c = Checkout::new();
    let r = c.path();
    fs::write(r.join("sub/.gitignore"), "!keep.log\n!/build\n").unwrap();
    fs::create_dir_all(r.join("vendor-src")).unwrap();
    symlink("../.gitignore", r.join("vendor-src/.gitignore")).unwrap();
    let mut ignores = Ignores::new(r);
    for (path, is_dir, ignored) in [
        ("build", true, true),
        ("build/lib/Makefile", false, true),
        ("x.log", false, true),
        ("sub/x.log", false, true),
        ("sub/keep.log", false, false),
        ("out", false, true),
        ("sub/out", false, false),
        ("sub/build", true, false),
        ("tests/test_a.py", false, false),
        ("vendor-src/out", false, false),
    ] {
        assert_eq!(
            ignores.is_ignored(Path::new(path), is_dir),
            ignored,
            "{path}"
        );
    }
}

#[test]
fn cargo_packages_must_be_workspace_members() {
    let m = load("deps", None).unwrap();
    let c = Checkout::new();
    let check = |command: &str| c.check(&m, command);
    let r = check("cargo test -p core").unwrap_err();
    assert_eq!(r.code, Code::TestCargoPackage);
    assert!(
        r.message.contains(
            "`-p core`: cannot confirm it (there is no Cargo.lock in the working directory or above it); cargo would build and run the tests"
        ),
        "{}",
        r.message
    );
    fs::write(
        c.path().join("Cargo.lock"),
        "version = 4\n\n[[package]]\nname = \"core\"\nversion = \"0.1.0\"\n\n[[package]]\nname = \"cfg-if\"\nversion = \"1.0.0\"\nsource = \"registry+index\"\n",
    )
    .unwrap();
    assert_eq!(check("cargo test -p core"), Ok(()));
    assert_eq!(
        check("cargo test --manifest-path crates/core/Cargo.toml --package core"),
        Ok(())
    );
    let r = check("cargo test -p cfg-if").unwrap_err();
    assert_eq!(r.code, Code::TestCargoPackage);
    assert!(
        r.message
            .contains("`-p cfg-if`: Cargo.lock lists no such workspace package"),
        "{}",
        r.message
    );
    fs::write(c.path().join("Cargo.lock"), "not toml [").unwrap();
    let r = check("cargo test -p core").unwrap_err();
    assert!(
        r.message.contains("cannot confirm it (Cargo.lock:"),
        "{}",
        r.message
    );
}
