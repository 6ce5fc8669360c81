//! Package-name and version grammars of the ecosystems the missions cover.
//!
//! A `<pkg>` or `<ver>` placeholder accepts only what its ecosystem's registry would publish: a
//! name that could be confused with an option, a URL, a `file:`/`git+` spec, a path or an alias is
//! never a package here, because every one of those makes the tool fetch or run something other
//! than the declared registry package.

use regex::Regex;
use serde::Deserialize;
use std::sync::LazyLock;

/// Why a package name or a version is not one its ecosystem's registry would publish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrammarError {
    #[error("the package name is empty")]
    EmptyName,
    #[error("a package name never starts with `-` (that is an option)")]
    OptionName,
    #[error("package names are at most {MAX_NAME} characters")]
    LongName,
    /// A URL, a path, an archive or a shorthand (`kind` names which).
    #[error("this is {0}, not a registry package name")]
    Spec(&'static str),
    #[error("`user/repo` is a GitHub shorthand, not an npm package name")]
    GithubShorthand,
    #[error(
        "an npm name has `@` only as its scope prefix (`@scope/name`); {}",
        self.advice().unwrap_or_default()
    )]
    NpmAt,
    #[error(
        "extras (`name[extra]`) are not supported; {}",
        self.advice().unwrap_or_default()
    )]
    PypiExtras,
    #[error(
        "{}; the version belongs in `updates`",
        self.advice().unwrap_or_default()
    )]
    PypiVersion,
    /// Not a name of the ecosystem the word names.
    #[error("not a valid {0} package name")]
    InvalidName(&'static str),
    #[error("not a valid Go module path: {0}")]
    GoPath(&'static str),
    #[error("the version is empty")]
    EmptyVersion,
    #[error("versions are at most {MAX_VERSION} characters")]
    LongVersion,
    #[error("{}", .0.expected())]
    InvalidVersion(VersionGrammar),
}

impl GrammarError {
    /// What to write instead, where the error says (today part of the message).
    pub fn advice(&self) -> Option<&'static str> {
        match self {
            GrammarError::NpmAt => Some("give the version in its own place"),
            GrammarError::PypiExtras | GrammarError::PypiVersion => {
                Some("give the bare project name")
            }
            _ => None,
        }
    }
}

/// How an ecosystem spells package names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PackageGrammar {
    /// Go module or package paths: `github.com/gorilla/mux`, `golang.org/x/crypto`.
    GoModule,
    /// npm names, optionally scoped: `lodash`, `@types/node` (also yarn, pnpm, bun).
    Npm,
    /// PyPI project names per PEP 508: `requests`, `zope.interface`.
    Pypi,
    /// RubyGems names: `rails`, `aws-sdk-s3`.
    Rubygems,
    /// crates.io names: `serde`, `tokio-util`.
    Crates,
}

/// How an ecosystem spells exact versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VersionGrammar {
    /// Go module versions: `v` + semantic version, `+incompatible` allowed.
    Go,
    /// Semantic Versioning 2.0 without a `v` prefix: `4.17.21`, `1.0.0-rc.1`.
    Semver,
    /// PEP 440 versions: `2.31.0`, `1.0rc1`, `2024.1.post2`.
    Pep440,
    /// RubyGems versions: `7.1.3`, `1.0.0.pre`.
    Rubygems,
}

const MAX_NAME: usize = 214;
const MAX_VERSION: usize = 128;

/// Recognises things that are package *sources* rather than registry names, so the refusal can
/// say what was seen. Order matters: the more specific forms come first.
pub(crate) fn package_spec_kind(s: &str) -> Option<&'static str> {
    let lower = s.to_ascii_lowercase();
    const SCHEMES: &[(&str, &str)] = &[
        ("git+", "a git URL"),
        ("git:", "a git URL"),
        ("git@", "a git SSH address"),
        ("file:", "a `file:` spec"),
        ("link:", "a `link:` spec"),
        ("portal:", "a `portal:` spec"),
        ("patch:", "a `patch:` spec"),
        ("workspace:", "a `workspace:` spec"),
        ("npm:", "an `npm:` alias"),
        ("github:", "a `github:` shorthand"),
        ("gitlab:", "a `gitlab:` shorthand"),
        ("bitbucket:", "a `bitbucket:` shorthand"),
        ("gist:", "a `gist:` shorthand"),
        ("http:", "a URL"),
        ("https:", "a URL"),
        ("ssh:", "a URL"),
        ("ftp:", "a URL"),
    ];
    if let Some((_, kind)) = SCHEMES.iter().find(|(p, _)| lower.starts_with(p)) {
        return Some(kind);
    }
    if lower.contains("://") {
        return Some("a URL");
    }
    if s.starts_with('/') || s.starts_with('.') || s.starts_with('~') || s.contains('\\') {
        return Some("a path");
    }
    if [
        ".tgz", ".tar", ".tar.gz", ".tar.bz2", ".tar.xz", ".zip", ".whl", ".gem", ".crate",
    ]
    .iter()
    .any(|ext| lower.ends_with(ext))
    {
        return Some("an archive file");
    }
    None
}

impl PackageGrammar {
    /// `Ok` when `name` is a valid registry name; otherwise why not.
    pub fn check(self, name: &str) -> Result<(), GrammarError> {
        if name.is_empty() {
            return Err(GrammarError::EmptyName);
        }
        if name.starts_with('-') {
            return Err(GrammarError::OptionName);
        }
        if name.len() > MAX_NAME {
            return Err(GrammarError::LongName);
        }
        if let Some(kind) = package_spec_kind(name) {
            return Err(GrammarError::Spec(kind));
        }
        let ok = match self {
            PackageGrammar::GoModule => return check_go_path(name),
            PackageGrammar::Npm => NPM.is_match(name),
            PackageGrammar::Pypi => PYPI.is_match(name),
            PackageGrammar::Rubygems => RUBYGEMS_NAME.is_match(name),
            PackageGrammar::Crates => CRATES.is_match(name),
        };
        if ok {
            Ok(())
        } else {
            Err(match self {
                PackageGrammar::Npm if name.contains('/') && !name.starts_with('@') => {
                    GrammarError::GithubShorthand
                }
                PackageGrammar::Npm if name.contains('@') => GrammarError::NpmAt,
                PackageGrammar::Pypi if name.contains('[') => GrammarError::PypiExtras,
                PackageGrammar::Pypi if name.contains(['=', '<', '>', '@']) => {
                    GrammarError::PypiVersion
                }
                _ => GrammarError::InvalidName(self.ecosystem_word()),
            })
        }
    }

    fn ecosystem_word(self) -> &'static str {
        match self {
            PackageGrammar::GoModule => "Go module",
            PackageGrammar::Npm => "npm",
            PackageGrammar::Pypi => "PyPI",
            PackageGrammar::Rubygems => "RubyGems",
            PackageGrammar::Crates => "crates.io",
        }
    }
}

impl VersionGrammar {
    /// `Ok` when `version` is an exact version in this grammar; otherwise why not.
    pub fn check(self, version: &str) -> Result<(), GrammarError> {
        if version.is_empty() {
            return Err(GrammarError::EmptyVersion);
        }
        if version.len() > MAX_VERSION {
            return Err(GrammarError::LongVersion);
        }
        let ok = match self {
            VersionGrammar::Go => version.strip_prefix('v').is_some_and(|rest| {
                semver::Version::parse(rest)
                    .is_ok_and(|v| v.build.is_empty() || v.build.as_str() == "incompatible")
            }),
            VersionGrammar::Semver => semver::Version::parse(version).is_ok(),
            VersionGrammar::Pep440 => PEP440.is_match(version),
            VersionGrammar::Rubygems => RUBYGEMS_VERSION.is_match(version),
        };
        if ok {
            Ok(())
        } else {
            Err(GrammarError::InvalidVersion(self))
        }
    }

    /// What a version of this grammar looks like.
    fn expected(self) -> &'static str {
        match self {
            VersionGrammar::Go => "Go versions look like `v1.8.1` or `v2.0.0+incompatible`",
            VersionGrammar::Semver => {
                "an exact semantic version is needed, like `4.17.21` (no range, tag or `v` prefix)"
            }
            VersionGrammar::Pep440 => "a PEP 440 version is needed, like `2.31.0` or `1.0rc1`",
            VersionGrammar::Rubygems => "a RubyGems version is needed, like `7.1.3`",
        }
    }
}

/// Go module path rules (golang.org/x/mod/module.CheckPath), for module and package paths.
fn check_go_path(path: &str) -> Result<(), GrammarError> {
    let bad = |why: &'static str| Err(GrammarError::GoPath(why));
    let mut elements = path.split('/');
    let first = elements.next().unwrap_or_default();
    if !first.contains('.') {
        return bad("the first element must be a domain name, like `github.com`");
    }
    if !first
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
    {
        return bad("the domain may hold only lower-case letters, digits, `.` and `-`");
    }
    for element in path.split('/') {
        if element.is_empty() {
            return bad("empty path element");
        }
        if element.starts_with('.') || element.ends_with('.') {
            return bad("a path element may not start or end with `.`");
        }
        if element.starts_with('-') {
            return bad("a path element may not start with `-`");
        }
        if !element
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
        {
            return bad("only letters, digits and `-._~` are allowed");
        }
    }
    Ok(())
}

static NPM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(@[a-z0-9][a-z0-9._-]*/)?[A-Za-z0-9][A-Za-z0-9._-]*$").expect("valid regex")
});
static PYPI: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])$").expect("valid regex")
});
static RUBYGEMS_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9][A-Za-z0-9._-]*$").expect("valid regex"));
static CRATES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$").expect("valid regex"));
/// PEP 440, Appendix B ("the canonical public version regex", permissive spellings included).
static PEP440: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)^v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*",
        r"(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?",
        r"(?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?",
        r"(?:[-_.]?dev[-_.]?[0-9]*)?",
        r"(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$"
    ))
    .expect("valid regex")
});
static RUBYGEMS_VERSION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[0-9]+(\.[0-9A-Za-z]+)*(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$")
        .expect("valid regex")
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_paths() {
        let g = PackageGrammar::GoModule;
        for ok in [
            "github.com/gorilla/mux",
            "golang.org/x/crypto",
            "github.com/jackc/pgx/v5",
            "github.com/Masterminds/semver",
            "gopkg.in/yaml.v3",
        ] {
            assert_eq!(g.check(ok), Ok(()), "{ok}");
        }
        for bad in [
            "mux",
            "GitHub.com/x/y",
            "github.com//x",
            "github.com/x/.hidden",
            "github.com/x/-opt",
            "-toolexec=/tmp/x",
            "https://github.com/x/y",
            "github.com/x/y@v1",
            "github.com/x/y;rm",
        ] {
            assert!(g.check(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn npm_names() {
        let g = PackageGrammar::Npm;
        for ok in [
            "lodash",
            "@types/node",
            "JSONStream",
            "lodash.merge",
            "@babel/core",
        ] {
            assert_eq!(g.check(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("file:../evil", "`file:` spec"),
            ("git+https://evil/x.git", "git URL"),
            ("expressjs/express", "GitHub shorthand"),
            ("npm:lodash@1", "`npm:` alias"),
            ("https://evil/x.tgz", "URL"),
            ("./local", "path"),
            ("evil.tar", "archive"),
            ("EVIL.TGZ", "archive"),
            ("--registry=http://evil", "option"),
            ("_private", "not a valid npm"),
            ("lodash@4", "scope prefix"),
        ] {
            let err = g.check(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn pypi_rubygems_crates_names() {
        assert!(PackageGrammar::Pypi.check("zope.interface").is_ok());
        assert!(
            PackageGrammar::Pypi
                .check("requests[socks]")
                .unwrap_err()
                .to_string()
                .contains("extras")
        );
        assert!(
            PackageGrammar::Pypi
                .check("requests==2.0")
                .unwrap_err()
                .to_string()
                .contains("bare")
        );
        assert!(PackageGrammar::Pypi.check("pkg-").is_err());
        assert!(PackageGrammar::Rubygems.check("aws-sdk-s3").is_ok());
        assert!(PackageGrammar::Crates.check("tokio-util").is_ok());
        assert!(PackageGrammar::Crates.check("1abc").is_err());
        assert!(PackageGrammar::Crates.check(&"a".repeat(65)).is_err());
    }

    #[test]
    fn versions() {
        let cases = [
            (VersionGrammar::Go, "v1.8.1", true),
            (VersionGrammar::Go, "v2.0.0+incompatible", true),
            (
                VersionGrammar::Go,
                "v0.0.0-20230101000000-abcdefabcdef",
                true,
            ),
            (VersionGrammar::Go, "1.8.1", false),
            (VersionGrammar::Go, "v1.8", false),
            (VersionGrammar::Go, "latest", false),
            (VersionGrammar::Go, "v1.0.0+meta", false),
            (VersionGrammar::Semver, "4.17.21", true),
            (VersionGrammar::Semver, "1.0.0-rc.1", true),
            (VersionGrammar::Semver, "^4.17.21", false),
            (VersionGrammar::Semver, "v4.17.21", false),
            (VersionGrammar::Semver, "latest", false),
            (VersionGrammar::Semver, "01.0.0", false),
            (VersionGrammar::Pep440, "2.31.0", true),
            (VersionGrammar::Pep440, "1.0rc1", true),
            (VersionGrammar::Pep440, "2024.1.post2", true),
            (VersionGrammar::Pep440, "1!2.0.dev3+local.7", true),
            (VersionGrammar::Pep440, ">=2.0", false),
            (VersionGrammar::Pep440, "2.0 ; rm", false),
            (VersionGrammar::Rubygems, "7.1.3", true),
            (VersionGrammar::Rubygems, "1.0.0.pre", true),
            (VersionGrammar::Rubygems, "~> 7.1", false),
        ];
        for (g, v, ok) in cases {
            assert_eq!(g.check(v).is_ok(), ok, "{g:?} {v}");
        }
    }

    #[test]
    fn advice_is_kept_apart_from_the_message_it_ends() {
        let cases = [
            (
                PackageGrammar::Npm.check("lodash@4"),
                "an npm name has `@` only as its scope prefix (`@scope/name`); give the version in its own place",
                Some("give the version in its own place"),
            ),
            (
                PackageGrammar::Pypi.check("requests[socks]"),
                "extras (`name[extra]`) are not supported; give the bare project name",
                Some("give the bare project name"),
            ),
            (
                PackageGrammar::Pypi.check("requests==2.0"),
                "give the bare project name; the version belongs in `updates`",
                Some("give the bare project name"),
            ),
            (
                PackageGrammar::Npm.check(""),
                "the package name is empty",
                None,
            ),
        ];
        for (result, message, advice) in cases {
            let err = result.unwrap_err();
            assert_eq!(err.to_string(), message);
            assert_eq!(err.advice(), advice, "{message}");
        }
    }
}
