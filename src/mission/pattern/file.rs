//! The `<file:GLOB>` placeholder: a file an update command reads (`pip-compile … requirements.in`),
//! given as a plain relative path inside the working directory, so that a plan cannot point a tool
//! at a file outside the checkout or slip an option in as a file name.

use super::{PATH, PatternError, Refusal};
use crate::finding::{Code, clip};
use globset::{Glob, GlobMatcher};

/// Checks a pattern's glob: a file name with `*` wildcards, no directory.
pub(super) fn parse_glob(glob: &str) -> Result<String, PatternError> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '*' | '.' | '_' | '-');
    if glob.is_empty() || !glob.chars().all(plain) || glob.starts_with(['.', '-']) {
        return Err(PatternError::Glob(glob.to_string()));
    }
    Ok(glob.to_string())
}

fn matcher(glob: &str) -> GlobMatcher {
    Glob::new(glob)
        .expect("parse_glob admits only letters, digits, `*`, `.`, `_` and `-`")
        .compile_matcher()
}

/// Checks a value bound to `<file:GLOB>`.
pub(super) fn check(glob: &str, value: &str) -> Result<(), Refusal> {
    let refuse = |why: String| {
        Err(Refusal::new(
            Code::CommandInvalidFile,
            format!("`{}` {why}", clip(value)),
        ))
    };
    if value.starts_with('/') {
        return refuse("is an absolute path; give a path relative to the working directory".into());
    }
    if value
        .split('/')
        .any(|c| c == ".." || c == "." || c.is_empty())
    {
        return refuse(
            "is not a plain relative path inside the working directory (no `..`, `.` or empty parts)"
                .into(),
        );
    }
    if !PATH.is_match(value) {
        return refuse(
            "is not a path of letters, digits and `_.,:/+@-` that starts with a letter, digit, `_` or `.`"
                .into(),
        );
    }
    let name = value.rsplit('/').next().unwrap_or(value);
    if !matcher(glob).is_match(name) {
        return refuse(format!(
            "is not a `{glob}` file; this command reads only such files"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_are_plain_file_names() {
        assert_eq!(
            parse_glob("requirements*.in"),
            Ok("requirements*.in".into())
        );
        for bad in ["", "../x", "dir/*.in", ".hidden", "-x", "a?b", "[ab].in"] {
            assert!(parse_glob(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn values_are_relative_paths_matching_the_glob() {
        for ok in [
            "requirements.in",
            "requirements-dev.in",
            "deps/requirements.in",
        ] {
            assert_eq!(check("requirements*.in", ok), Ok(()), "{ok}");
        }
        let message = |value: &str| {
            let refusal = check("requirements*.in", value).unwrap_err();
            assert_eq!(refusal.code, Code::CommandInvalidFile);
            refusal.message
        };
        assert_eq!(
            message("/etc/requirements.in"),
            "`/etc/requirements.in` is an absolute path; give a path relative to the working directory"
        );
        assert_eq!(
            message("../requirements.in"),
            "`../requirements.in` is not a plain relative path inside the working directory (no `..`, `.` or empty parts)"
        );
        assert_eq!(
            message("a//requirements.in"),
            "`a//requirements.in` is not a plain relative path inside the working directory (no `..`, `.` or empty parts)"
        );
        assert_eq!(
            message("requirements.txt"),
            "`requirements.txt` is not a `requirements*.in` file; this command reads only such files"
        );
        assert_eq!(
            message("requirements.in/x"),
            "`requirements.in/x` is not a `requirements*.in` file; this command reads only such files"
        );
        assert_eq!(
            message("req uirements.in"),
            "`req uirements.in` is not a path of letters, digits and `_.,:/+@-` that starts with a letter, digit, `_` or `.`"
        );
    }
}
