//! Branch names: the prefix every branch Quartermaster writes lives under, git's rules for them,
//! and the names of the branches a `create_mr` splits into.

use crate::finding::{Code, Finding, Pointer, clip};

/// Every branch Quartermaster writes lives under this prefix.
pub(crate) const BRANCH_PREFIX: &str = "quartermaster/";
/// Branch names are bounded so that split branches (`<branch>--<package>`) stay within git's and
/// the forges' limits.
pub(crate) const MAX_BRANCH_BYTES: usize = 200;

/// The branches a `create_mr` splits into (strategies `individual` and `individual_on_failure`),
/// one per update, in order: `<branch>--<package-slug>`, siblings of the batch branch (git cannot
/// hold `a/b` beside `a/b/c`), with `-2`, `-3`... when two packages slug alike.
pub(crate) fn split_branches<'a>(
    branch: &str,
    packages: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    let mut taken = std::collections::BTreeSet::new();
    packages
        .into_iter()
        .map(|package| {
            let base = format!("{branch}--{}", slug(package));
            let mut name = base.clone();
            let mut n = 2;
            while !taken.insert(name.clone()) {
                name = format!("{base}-{n}");
                n += 1;
            }
            name
        })
        .collect()
}

/// A package name as a branch-name fragment: `github.com/gorilla/mux` → `github.com-gorilla-mux`.
fn slug(package: &str) -> String {
    let mut out = String::new();
    for c in package.trim_start_matches('@').chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.contains("..") {
        out = out.replace("..", ".");
    }
    let out: String = out
        .trim_matches(|c| c == '-' || c == '.')
        .chars()
        .take(50)
        .collect();
    let out = out.trim_end_matches(['-', '.']).to_string();
    let out = out.strip_suffix(".lock").map(String::from).unwrap_or(out);
    if out.is_empty() {
        "package".to_string()
    } else {
        out
    }
}

/// Why git would refuse `name` as a branch, or `None`. gix-validate applies git's ref-name rules
/// (as `git check-ref-format` does; libgit2 would too, but initialising it costs tens of
/// milliseconds of OpenSSL set-up that `validate` has no use for); `git branch` additionally
/// refuses `@` and a leading `-`.
pub(crate) fn ref_problem(name: &str) -> Option<String> {
    use gix_validate::reference::name::Error;
    if name == "@" {
        return Some("`@` alone means HEAD, not a branch".into());
    }
    if name.starts_with('-') {
        return Some("it starts with `-`".into());
    }
    let full = format!("refs/heads/{name}");
    let error = gix_validate::reference::branch_name(full.as_bytes().into()).err()?;
    Some(match error {
        Error::InvalidByte { byte } => format!("it contains {byte:?}"),
        Error::StartsWithSlash | Error::RepeatedSlash | Error::EndsWithSlash => {
            "it has an empty path component (leading, trailing or double `/`)".into()
        }
        Error::RepeatedDot => "it contains `..`".into(),
        Error::LockFileSuffix => "a component ends with `.lock`".into(),
        Error::ReflogPortion => "it contains `@{`".into(),
        Error::Asterisk => "it contains `*`".into(),
        Error::StartsWithDot => "a component starts with `.`".into(),
        Error::EndsWithDot => "it ends with `.`".into(),
        Error::Empty => "it is empty".into(),
        Error::Reserved { .. } => "`HEAD` is reserved".into(),
        _ => "git refuses it (see `git check-ref-format`)".into(),
    })
}

/// The branch rules of an action's `branch`: the prefix, git's ref-name rules, the length.
pub(crate) fn check(name: &str, at: &Pointer, out: &mut Vec<Finding>) {
    if !name.starts_with(BRANCH_PREFIX) || name.len() == BRANCH_PREFIX.len() {
        out.push(Finding::error(
            at,
            Code::BranchPrefix,
            format!(
                "branch `{}` must start with `{BRANCH_PREFIX}` followed by a name, e.g. `{BRANCH_PREFIX}go-patch-updates`",
                clip(name)
            ),
        ));
        return;
    }
    if let Some(problem) = ref_problem(name) {
        out.push(Finding::error(
            at,
            Code::BranchInvalidRef,
            format!("`{}` is not a valid git branch name: {problem}", clip(name)),
        ));
    } else if name.len() > MAX_BRANCH_BYTES {
        out.push(Finding::error(
            at,
            Code::TooLong,
            format!(
                "the branch name is {} bytes; at most {MAX_BRANCH_BYTES}",
                name.len()
            ),
        ));
    }
}

/// Whether `child` is a branch inside `parent`'s namespace (`a` and `a/b` clash in git).
pub(crate) fn nests(parent: &str, child: &str) -> bool {
    child
        .strip_prefix(parent)
        .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_branches_are_branch_safe_and_distinct() {
        assert_eq!(slug("github.com/gorilla/mux"), "github.com-gorilla-mux");
        assert_eq!(slug("@types/node"), "types-node");
        assert_eq!(slug("Zope.Interface"), "zope.interface");
        assert_eq!(slug("a..b"), "a.b");
        assert_eq!(slug("x.lock"), "x");
        assert_eq!(slug("@@"), "package");
        let names = split_branches("quartermaster/deps", ["@a/b", "a-b", "x.lock", "-x-"]);
        assert_eq!(
            names,
            vec![
                "quartermaster/deps--a-b",
                "quartermaster/deps--a-b-2",
                "quartermaster/deps--x",
                "quartermaster/deps--x-2",
            ]
        );
        for name in names {
            assert_eq!(ref_problem(&name), None, "{name}");
        }
    }

    #[test]
    fn ref_problems_are_explained() {
        assert_eq!(ref_problem("main"), None);
        assert_eq!(ref_problem("quartermaster/go-1.2"), None);
        for (name, why) in [
            ("", "empty"),
            ("a b", "\" \""),
            ("a~b", "\"~\""),
            ("a..b", "`..`"),
            ("a@{b", "`@{`"),
            ("a//b", "empty path component"),
            ("a/", "empty path component"),
            ("a*", "`*`"),
            ("a.", "ends with `.`"),
            ("a/.b", "starts with `.`"),
            ("a/b.lock", "`.lock`"),
            ("@", "`@` alone"),
            ("HEAD", "`HEAD` is reserved"),
            ("-x", "starts with `-`"),
        ] {
            let got = ref_problem(name).unwrap_or_default();
            assert!(got.contains(why), "{name:?}: {got}");
        }
    }

    /// The verdicts agree with git itself (where git is installed, as on every CI machine here).
    #[test]
    fn ref_verdicts_match_git_check_ref_format() {
        let names = [
            "main",
            "quartermaster/go-1.2",
            "release/v1",
            "a b",
            "a~b",
            "a^b",
            "a:b",
            "a?b",
            "a*b",
            "a[b",
            "a\\b",
            "a..b",
            "a@{b",
            "a@b",
            "a//b",
            "/a",
            "a/",
            "a.",
            "a/.b",
            ".a",
            "a/b.lock",
            "a.lock/b",
            "a\tb",
            "\u{7f}",
            "é/ü",
            "a/b/c",
            "x.y",
            "-x",
            "@",
        ];
        let Ok(git) = std::process::Command::new("git").arg("--version").output() else {
            return;
        };
        assert!(git.status.success());
        for name in names {
            let git_ok = std::process::Command::new("git")
                .args(["check-ref-format", &format!("refs/heads/{name}")])
                .status()
                .unwrap()
                .success();
            let ours = ref_problem(name).is_none();
            // `-x` and `@` are valid refs but `git branch` refuses them, and so do we.
            if name == "-x" || name == "@" {
                assert!(git_ok && !ours, "{name}");
            } else {
                assert_eq!(ours, git_ok, "{name:?}: {:?}", ref_problem(name));
            }
        }
    }

    #[test]
    fn branch_nesting() {
        assert!(nests("quartermaster/a", "quartermaster/a/b"));
        assert!(!nests("quartermaster/a", "quartermaster/ab"));
    }
}
