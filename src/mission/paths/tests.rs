use super::*;
use crate::mission::{Mission, TestCommand, load};

fn deps() -> Mission {
    load("deps", None).unwrap()
}

fn refused(m: &Mission, command: &str) -> Refusal {
    match m.check_test_command(command) {
        Ok(t) => panic!("`{command}` was allowed: {t:?}"),
        Err(r) => r,
    }
}

fn allowed(m: &Mission, command: &str) -> TestCommand {
    m.check_test_command(command)
        .unwrap_or_else(|r| panic!("`{command}` was refused: {r:?}"))
}

/// Asserts that every command is refused with its code and a message containing the text.
fn assert_refused(cases: &[(&str, Code, &str)]) {
    let m = deps();
    for (command, code, says) in cases {
        let r = refused(&m, command);
        assert_eq!(r.code, *code, "{command}: {}", r.message);
        assert!(r.message.contains(says), "{command}: {}", r.message);
    }
}

#[test]
fn go_takes_only_package_patterns_of_the_module() {
    assert_refused(&[
        (
            "go test -mod mod evil.example/pwn",
            Code::TestGoModMode,
            "`-mod mod` lets go resolve and download modules that go.mod and go.sum do not pin; use `-mod=readonly`",
        ),
        (
            "go test evil.example/pwn",
            Code::TestGoPackage,
            "`evil.example/pwn` is not a package pattern inside this module: go takes `./` patterns",
        ),
        (
            "go test all",
            Code::TestGoPackage,
            "`all` is not a package pattern",
        ),
        (
            "go vet std",
            Code::TestGoPackage,
            "`std` is not a package pattern",
        ),
        ("go test ./pkg...", Code::TestGoPackage, "`./pkg...` is not"),
        ("go test pkg/x", Code::TestGoPackage, "`pkg/x` is not"),
        (
            "go test ./vendor/evil.example/pwn/...",
            Code::TestDependencyDir,
            "into `vendor`",
        ),
    ]);
}

#[test]
fn unittest_takes_test_files_never_module_names() {
    assert_refused(&[
        (
            "python3 -m unittest -q install pip._internal.cli.main.main",
            Code::TestUnittestName,
            "`install` is a module name to unittest, which imports it and calls it when it is callable; name test files",
        ),
        (
            "python -m unittest tests.test_x",
            Code::TestUnittestName,
            "`tests.test_x` is a module name",
        ),
        (
            "python3 -m unittest -v discover",
            Code::TestUnittestName,
            "`discover` is a module name",
        ),
        (
            "python3 -m unittest discover tests",
            Code::TestUnittestName,
            "`tests` after `discover` is a start directory or module that unittest may import; give the start directory as `-s DIR`",
        ),
        (
            "python3 -m unittest discover -s tests extra",
            Code::TestUnittestName,
            "`extra` after `discover`",
        ),
    ]);
}

#[test]
fn paths_never_point_into_dependency_directories() {
    assert_refused(&[
        (
            "make -C node_modules/lodash test",
            Code::TestDependencyDir,
            "`-C node_modules/lodash` points into `node_modules`, which holds installed packages or build output rather than the repository's sources; name a path",
        ),
        (
            "make --directory=Vendor/x test",
            Code::TestDependencyDir,
            "into `vendor`",
        ),
        (
            "make node_modules/x/all",
            Code::TestDependencyDir,
            "`node_modules/x/all` points into `node_modules`",
        ),
        (
            "make -C a -C b test",
            Code::TestDirectoryRepeated,
            "`-C b` changes directory a second time: make resolves it from `-C a`",
        ),
        (
            "gradle -p node_modules/x test",
            Code::TestDependencyDir,
            "`-p node_modules/x` points",
        ),
        (
            "pytest .venv/lib/site-packages/pip",
            Code::TestDependencyDir,
            "into `.venv`",
        ),
        (
            "pytest --junitxml node_modules/x.xml",
            Code::TestDependencyDir,
            "into `node_modules`",
        ),
        (
            "ruby -Ivendor/bundle test/x.rb",
            Code::TestDependencyDir,
            "`-I vendor/bundle` points into `vendor`",
        ),
        (
            "bundle exec rspec vendor/bundle/gems/x/spec",
            Code::TestDependencyDir,
            "into `vendor`",
        ),
        (
            "npm test node_modules/x",
            Code::TestDependencyDir,
            "into `node_modules`",
        ),
        (
            "dotnet test .nuget/packages/x/x.dll",
            Code::TestDependencyDir,
            "into `.nuget`",
        ),
    ]);
}

#[test]
fn cargo_specs_and_response_files_cannot_pick_code() {
    assert_refused(&[
        (
            "cargo test --manifest-path target/x/Cargo.toml",
            Code::TestDependencyDir,
            "`--manifest-path target/x/Cargo.toml` points into `target`",
        ),
        (
            "cargo test --target specs/x.json",
            Code::TestTargetSpec,
            "`--target specs/x.json` loads a target specification file",
        ),
        (
            "cargo test --target=x.JSON",
            Code::TestTargetSpec,
            "give a built-in target triple",
        ),
        (
            "cargo test -p foo@1.0.0",
            Code::TestCargoPackage,
            "`-p foo@1.0.0` is not a plain package name: cargo matches package specs against every package in the lock file",
        ),
        (
            "dotnet test -c @x/y.rsp",
            Code::TestResponseFile,
            "`@x/y.rsp` makes dotnet read more arguments from the file `x/y.rsp`",
        ),
        (
            "pytest --cov @tests/args",
            Code::TestResponseFile,
            "makes pytest read more arguments",
        ),
        (
            "python -m pytest --cov @tests/args",
            Code::TestResponseFile,
            "makes pytest read more arguments",
        ),
    ]);
}

#[test]
fn options_that_load_code_from_a_file_stay_refused() {
    let m = deps();
    for command in [
        "make -f node_modules/x/Makefile test",
        "make --file=x.mk test",
        "make -I node_modules test",
        "mvn -f x/pom.xml test",
        "gradle -b x/build.gradle test",
        "pytest --rootdir x",
        "pytest -c x.ini",
        "pytest --confcutdir x",
        "pytest --pyargs pip",
        "ruby -r x test/x.rb",
        "bundle exec rspec --require x",
        "python3 -m unittest -s tests",
    ] {
        let r = refused(&m, command);
        assert_eq!(
            r.code,
            Code::TestOptionNotAllowed,
            "{command}: {}",
            r.message
        );
    }
    for command in ["dotnet test @file.rsp", "go test ../x/...", "go test /abs"] {
        let r = refused(&m, command);
        assert_eq!(
            r.code,
            Code::TestInvalidArgument,
            "{command}: {}",
            r.message
        );
    }
}

#[test]
fn allowed_commands_carry_their_path_arguments() {
    let m = deps();
    let arg = |word: usize, flag: Option<&str>, path: &str, role: PathRole| PathArg {
        word,
        flag: flag.map(String::from),
        path: path.into(),
        role,
    };
    for (command, paths) in [
        ("go test ./...", vec![arg(2, None, ".", PathRole::Existing)]),
        (
            "go test -mod=vendor ./pkg/... .",
            vec![
                arg(3, None, "./pkg", PathRole::Existing),
                arg(4, None, ".", PathRole::Existing),
            ],
        ),
        ("go vet -mod readonly", vec![]),
        (
            "make -C sub test",
            vec![arg(2, Some("-C"), "sub", PathRole::Cwd)],
        ),
        ("make vendor", vec![]),
        (
            "python3 -m unittest -v tests/test_x.py",
            vec![arg(4, None, "tests/test_x.py", PathRole::File)],
        ),
        (
            "python -m unittest discover -s tests -t .",
            vec![
                arg(5, Some("-s"), "tests", PathRole::Dir),
                arg(7, Some("-t"), ".", PathRole::Dir),
            ],
        ),
        (
            "pytest tests/test_a.py::test_b --junitxml=build/junit.xml",
            vec![
                arg(1, None, "tests/test_a.py", PathRole::Existing),
                arg(2, Some("--junitxml"), "build/junit.xml", PathRole::Output),
            ],
        ),
        (
            "bundle exec rspec spec/a_spec.rb:12:30",
            vec![arg(3, None, "spec/a_spec.rb", PathRole::Existing)],
        ),
        (
            "npm test auth",
            vec![arg(2, None, "auth", PathRole::Filter)],
        ),
        (
            "gradle --project-dir app test",
            vec![arg(2, Some("--project-dir"), "app", PathRole::Cwd)],
        ),
        (
            "ruby -Itest test/all_test.rb",
            vec![
                arg(1, Some("-I"), "test", PathRole::Dir),
                arg(2, None, "test/all_test.rb", PathRole::Existing),
            ],
        ),
        ("cargo test my_test -- --nocapture", vec![]),
        ("npm test -w @scope/pkg", vec![]),
    ] {
        assert_eq!(allowed(&m, command).paths, paths, "{command}");
    }
}

#[test]
fn cargo_packages_are_left_for_the_workspace_check() {
    let m = deps();
    let cargo = allowed(
        &m,
        "cargo test -p core --manifest-path crates/core/Cargo.toml --target x86_64-unknown-linux-gnu",
    );
    assert_eq!(cargo.cargo_packages, vec!["core"]);
    assert_eq!(
        cargo.paths,
        vec![PathArg {
            word: 5,
            flag: Some("--manifest-path".into()),
            path: "crates/core/Cargo.toml".into(),
            role: PathRole::File,
        }]
    );
}

#[test]
fn go_patterns_stay_inside_the_module() {
    for ok in [".", "./...", "./pkg", "./pkg/...", "./a/b/", "./x_test.go"] {
        assert!(is_go_pattern(ok), "{ok}");
    }
    for bad in [
        "",
        "..",
        "all",
        "./",
        "./a//b",
        "./.../x",
        "./a...",
        "example.com/x",
    ] {
        assert!(!is_go_pattern(bad), "{bad}");
    }
}
