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

impl Source {
    /// The key the new-source rule compares: the host for URLs, git repositories and Go modules;
    /// a fixed word for the default registry, local paths and entries without a source.
    pub fn origin(&self) -> String {
        match self {
            Source::Registry(url) | Source::Git(url) => host(url).to_lowercase(),
            Source::Module(path) => path.split('/').next().unwrap_or_default().to_lowercase(),
            Source::DefaultRegistry => "default registry".to_string(),
            Source::Path(_) => "local path".to_string(),
            Source::Unrecorded => "no recorded source".to_string(),
        }
    }

    /// Classifies a URL-like string as found in npm, yarn and bun lock files.
    pub(crate) fn from_url(url: &str) -> Source {
        let lower = url.to_ascii_lowercase();
        if lower.starts_with("git+") || lower.starts_with("git://") || lower.starts_with("github:")
        {
            Source::Git(url.to_string())
        } else if lower.starts_with("http://") || lower.starts_with("https://") {
            Source::Registry(url.split('#').next().unwrap_or(url).to_string())
        } else if url.is_empty() {
            Source::Unrecorded
        } else {
            Source::Path(url.trim_start_matches("file:").to_string())
        }
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

/// The host (with port) of a URL as written; for scp-like git addresses (`git@host:path`) the
/// host too. Hand-written because only the authority is needed and lock files hold URLs the
/// `url` crate rejects (`git+ssh://git@host:org/repo`).
pub(crate) fn host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority.rsplit('@').next().unwrap_or_default();
    if url.contains("://") {
        authority
    } else {
        authority.split(':').next().unwrap_or_default()
    }
}

const NPM_HOSTS: [&str; 3] = [
    "registry.npmjs.org",
    "registry.npmjs.com",
    "registry.yarnpkg.com",
];
const PYPI_HOSTS: [&str; 2] = ["pypi.org", "files.pythonhosted.org"];
const CRATES_IO: [&str; 2] = [
    "registry+https://github.com/rust-lang/crates.io-index",
    "sparse+https://index.crates.io/",
];

/// The public registry page of `name` at `version`, when the source is that public registry.
/// Locks that record no URL for the default registry (pnpm, yarn berry, bun, pip, Go) are taken
/// to use the public one: the tools' defaults. A named private registry gets no link.
pub fn registry_link(
    ecosystem: Ecosystem,
    name: &str,
    version: &str,
    source: &Source,
) -> Option<String> {
    let host = match source {
        Source::Registry(url) => Some(host(url).to_lowercase()),
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
        Ecosystem::Bundle if public(&["rubygems.org"]) => Some(format!(
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
