//! Where a locked package comes from, and the registry page of a public one.

use super::Ecosystem;
use std::fmt;

/// The origin of a locked copy, as the lock records it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// A registry or tarball URL written in the lock.
    Registry(String),
    /// The tool's configured default registry: pnpm, yarn berry (`npm:`), bun and pip record no
    /// URL for it.
    DefaultRegistry,
    /// A Go module fetched by its path (through GOPROXY, whose address no file records).
    Module(String),
    /// A git repository (URL, with the revision when the lock pins one).
    Git(String),
    /// A directory inside the repository (workspace member, `path`/`file:`/`link:` dependency).
    Path(String),
    /// The lock entry names no source at all.
    Unrecorded,
}

/// What the new-source rule compares: where a copy is fetched from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// A registry host (with its port when not the scheme's default), as WHATWG URL parsing
    /// reads it: what npm, pip and cargo then contact.
    Registry(String),
    /// A git host.
    Git(String),
    /// A Go module path's first element (its host, through GOPROXY).
    Module(String),
    /// A directory inside the repository, exactly: no path admits another.
    Path(String),
    /// The registry the unit's configuration resolves to, for a lock that records no URL.
    Default,
    /// A URL that tools and Quartermaster could read differently, or not at all: never admitted.
    Invalid(String),
}

impl Origin {
    /// The host `--registry-host` names to admit this origin.
    pub fn host(&self) -> Option<&str> {
        match self {
            Origin::Registry(host) | Origin::Git(host) | Origin::Module(host) => Some(host),
            _ => None,
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Registry(host) | Origin::Git(host) | Origin::Module(host) => {
                write!(f, "{host}")
            }
            Origin::Path(path) => write!(f, "the path {path}"),
            Origin::Default => write!(f, "the default registry"),
            Origin::Invalid(why) => write!(f, "an invalid URL ({why})"),
        }
    }
}

impl Source {
    /// The key the new-source rule compares (see [`Origin`]).
    pub fn origin(&self) -> Origin {
        match self {
            Source::Registry(url) => match registry_host(url) {
                Ok(host) => Origin::Registry(host),
                Err(why) => Origin::Invalid(why.to_string()),
            },
            Source::Git(url) => match git_host(url) {
                Ok(host) => Origin::Git(host),
                Err(why) => Origin::Invalid(why.to_string()),
            },
            Source::Module(path) => {
                Origin::Module(path.split('/').next().unwrap_or_default().to_lowercase())
            }
            Source::Path(path) => Origin::Path(path.clone()),
            Source::DefaultRegistry | Source::Unrecorded => Origin::Default,
        }
    }

    /// Classifies a URL-like string as found in npm, yarn and bun lock files: anything with a
    /// URL scheme is a URL (WHATWG parsing accepts `http:/host` and `http:host` as
    /// `http://host`, and so do the tools); `file:`, `link:`, `portal:` and what has no scheme
    /// are paths.
    pub(crate) fn from_url(url: &str) -> Source {
        let lower = url.to_ascii_lowercase();
        let local = ["file:", "link:", "portal:"]
            .iter()
            .find(|p| lower.starts_with(**p))
            .map(|p| &url[p.len()..]);
        if lower.starts_with("git+") || lower.starts_with("git://") || lower.starts_with("github:")
        {
            Source::Git(url.to_string())
        } else if let Some(path) = local {
            Source::Path(path.to_string())
        } else if url.is_empty() {
            Source::Unrecorded
        } else if has_scheme(url) {
            Source::Registry(url.split('#').next().unwrap_or(url).to_string())
        } else {
            Source::Path(url.to_string())
        }
    }
}

/// Whether `text` starts with a URL scheme (`letter *( letter / digit / "+" / "-" / "." ) ":"`)
/// of more than one letter (`C:` would be a drive).
fn has_scheme(text: &str) -> bool {
    let Some((scheme, _)) = text.split_once(':') else {
        return false;
    };
    scheme.len() > 1
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Why a URL in a lock file cannot be trusted to mean one host, if it cannot.
fn suspicious(url: &str) -> Option<&'static str> {
    if url.contains('\\') {
        Some("a backslash, which URL parsers read as `/`")
    } else if url.chars().any(char::is_whitespace) {
        Some("whitespace")
    } else if url.chars().any(char::is_control) {
        Some("a control character")
    } else {
        None
    }
}

/// The host (and non-default port) of a registry URL, parsed as npm, pip and cargo parse it; a
/// cargo source id's `registry+` or `sparse+` prefix is not part of the URL.
pub(crate) fn registry_host(url: &str) -> Result<String, &'static str> {
    if let Some(why) = suspicious(url) {
        return Err(why);
    }
    let bare = url
        .strip_prefix("registry+")
        .or_else(|| url.strip_prefix("sparse+"))
        .unwrap_or(url);
    let parsed = url::Url::parse(bare).map_err(|_| "not a URL")?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("credentials in the URL");
    }
    let host = parsed.host_str().ok_or("no host")?;
    Ok(match parsed.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    })
}

/// The host of a git URL: a URL (`git+https://`, `git+ssh://git@host/...`, `git://`), an
/// scp-like address (`git@host:org/repo`, also behind `git+ssh://`), or `github:org/repo`.
fn git_host(url: &str) -> Result<String, &'static str> {
    if let Some(why) = suspicious(url) {
        return Err(why);
    }
    let bare = url.strip_prefix("git+").unwrap_or(url);
    if let Some((shorthand, _)) = bare.split_once(':')
        && let Some(host) = match shorthand {
            "github" => Some("github.com"),
            "gitlab" => Some("gitlab.com"),
            "bitbucket" => Some("bitbucket.org"),
            _ => None,
        }
    {
        return Ok(host.to_string());
    }
    if let Ok(parsed) = url::Url::parse(bare)
        && let Some(host) = parsed.host_str()
    {
        return Ok(host.to_string());
    }
    // `git@host:org/repo`, or `ssh://git@host:org/repo` as npm writes scp-like addresses.
    let rest = bare.split_once("://").map_or(bare, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    let host = host.split(':').next().unwrap_or_default().to_lowercase();
    if host.is_empty() {
        Err("no host")
    } else {
        Ok(host)
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Registry(url) => write!(f, "{url}"),
            Source::DefaultRegistry => write!(f, "the default registry"),
            Source::Module(path) => write!(f, "module {path}"),
            Source::Git(url) => write!(f, "git {url}"),
            Source::Path(path) => write!(f, "path {path}"),
            Source::Unrecorded => write!(f, "no recorded source"),
        }
    }
}

const NPM_HOSTS: [&str; 3] = [
    "registry.npmjs.org",
    "registry.npmjs.com",
    "registry.yarnpkg.com",
];
const PYPI_HOSTS: [&str; 2] = ["pypi.org", "files.pythonhosted.org"];
const RUBYGEMS_HOSTS: [&str; 2] = ["rubygems.org", "index.rubygems.org"];
const CRATES_IO: [&str; 2] = [
    "registry+https://github.com/rust-lang/crates.io-index",
    "sparse+https://index.crates.io/",
];

/// The registry hosts of `ecosystem`'s public registry (crates.io is told by its source ids).
fn public_hosts(ecosystem: Ecosystem) -> &'static [&'static str] {
    match ecosystem {
        Ecosystem::Npm | Ecosystem::Yarn | Ecosystem::Pnpm | Ecosystem::Bun => &NPM_HOSTS,
        Ecosystem::Pip | Ecosystem::Poetry | Ecosystem::Uv => &PYPI_HOSTS,
        Ecosystem::Bundle => &RUBYGEMS_HOSTS,
        Ecosystem::Go | Ecosystem::Cargo => &[],
    }
}

/// Whether `source` is its ecosystem's public registry, which is trusted by default, as the
/// tools themselves trust it.
pub(crate) fn is_public(ecosystem: Ecosystem, source: &Source) -> bool {
    match source {
        Source::Registry(url) if ecosystem == Ecosystem::Cargo => CRATES_IO.contains(&url.as_str()),
        Source::Registry(url) => {
            registry_host(url).is_ok_and(|h| public_hosts(ecosystem).contains(&h.as_str()))
        }
        _ => false,
    }
}

/// The registry host the tools of `ecosystem` use when nothing configures one.
pub(crate) fn default_host(ecosystem: Ecosystem) -> Option<&'static str> {
    match ecosystem {
        Ecosystem::Npm | Ecosystem::Pnpm | Ecosystem::Bun => Some("registry.npmjs.org"),
        Ecosystem::Yarn => Some("registry.yarnpkg.com"),
        Ecosystem::Pip | Ecosystem::Poetry | Ecosystem::Uv => Some("pypi.org"),
        Ecosystem::Bundle => Some("rubygems.org"),
        Ecosystem::Go | Ecosystem::Cargo => None,
    }
}

/// The public registry page of `name` at `version`, when the source is that public registry.
/// Locks that record no URL for the default registry (pnpm, yarn berry, bun, pip, Go) are taken
/// to use the public one: the tools' defaults. A named private registry gets no link.
pub(crate) fn registry_link(
    ecosystem: Ecosystem,
    name: &str,
    version: &str,
    source: &Source,
) -> Option<String> {
    let host = match source {
        Source::Registry(url) => Some(registry_host(url).ok()?),
        Source::DefaultRegistry | Source::Module(_) => None,
        _ => return None,
    };
    let public = |hosts: &[&str]| host.as_deref().is_none_or(|h| hosts.contains(&h));
    match ecosystem {
        Ecosystem::Npm | Ecosystem::Yarn | Ecosystem::Pnpm | Ecosystem::Bun
            if public(&NPM_HOSTS) =>
        {
            Some(format!("https://www.npmjs.com/package/{name}/v/{version}"))
        }
        Ecosystem::Pip | Ecosystem::Poetry | Ecosystem::Uv if public(&PYPI_HOSTS) => {
            Some(format!("https://pypi.org/project/{name}/{version}/"))
        }
        Ecosystem::Bundle if public(&RUBYGEMS_HOSTS) => Some(format!(
            "https://rubygems.org/gems/{name}/versions/{version}"
        )),
        Ecosystem::Cargo => match source {
            Source::Registry(url) if CRATES_IO.contains(&url.as_str()) => {
                Some(format!("https://crates.io/crates/{name}/{version}"))
            }
            _ => None,
        },
        Ecosystem::Go if matches!(source, Source::Module(_)) => {
            Some(format!("https://pkg.go.dev/{name}@{version}"))
        }
        _ => None,
    }
}
