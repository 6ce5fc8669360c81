//! What a registry says of one version: when it was published, whether it was deprecated or
//! yanked, and where its source lives (for release notes). One module per registry protocol;
//! documents that hold every version of a package (an npm packument, a sparse index file) are
//! fetched once per run.

mod crates;
mod gems;
mod go;
mod npm;
mod pypi;

use super::client::{FetchError, Fetched, Http};
use super::registries::Endpoint;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use tokio::sync::OnceCell;

/// The largest registry document read: npm packuments of packages with thousands of versions
/// run to tens of megabytes.
pub(crate) const MAX_DOCUMENT: usize = 96 * 1024 * 1024;
/// The largest answer of an API that describes one version.
pub(crate) const MAX_SMALL: usize = 4 * 1024 * 1024;

/// What the registry says of one version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Facts {
    /// When the registry first published it; `None` when the registry does not say.
    pub published: Option<SystemTime>,
    /// Deprecated or yanked, with the registry's message.
    pub(crate) withdrawn: Option<Withdrawn>,
    /// The source repository, as the registry names it.
    pub repository: Option<String>,
    /// A changelog the registry names.
    pub changelog: Option<String>,
}

/// A version its registry took back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Withdrawn {
    /// `deprecated` (npm) or `yanked` (PyPI, crates, RubyGems).
    pub how: &'static str,
    pub message: Option<String>,
}

/// Why a registry could not say anything of a version. Clone, because a failure is kept for the
/// run like an answer.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum LookupError {
    /// No registry is asked for the package; the registry configuration says why.
    #[error("{0}")]
    NotAsked(String),
    #[error("{} is not an absolute path", .0.display())]
    NotAbsolute(PathBuf),
    /// The request for `what` had no answer.
    #[error("{what}: {source}")]
    Fetch {
        what: String,
        #[source]
        source: FetchError,
    },
    #[error("{what} is not there (HTTP {status})")]
    Missing { what: String, status: u16 },
    #[error("{what}: HTTP {status}")]
    Status { what: String, status: u16 },
    /// `what` is not the JSON the registry's protocol serves (`shape` names it).
    #[error("{what} is not {shape}: {source}")]
    Json {
        what: String,
        shape: &'static str,
        #[source]
        source: Arc<serde_json::Error>,
    },
    /// A cargo index's `config.json` that is not JSON.
    #[error("{0}")]
    IndexConfig(#[source] Arc<serde_json::Error>),
    /// The document lists versions, but not this one (`place` names the document's owner).
    #[error("the {place} lists no {name} {version}")]
    Unlisted {
        place: &'static str,
        name: String,
        version: String,
    },
    #[error("the source lists no version of {name}")]
    NoVersions { name: String },
    /// A Python index with neither the release's JSON page nor the project's.
    #[error("{what} is not there (HTTP 404), nor that of {version}")]
    NoPages { what: String, version: String },
}

impl LookupError {
    /// `what` is not `shape`, as `source` says.
    pub(crate) fn json(what: &str, shape: &'static str, source: serde_json::Error) -> Self {
        Self::Json {
            what: what.to_string(),
            shape,
            source: Arc::new(source),
        }
    }

    pub(crate) fn unlisted(place: &'static str, name: &str, version: &str) -> Self {
        Self::Unlisted {
            place,
            name: name.to_string(),
            version: version.to_string(),
        }
    }
}

/// Answers kept for the run, each loaded once however many callers ask at once; a failure is
/// kept too (asking again in the same run would fail the same way, after the same retries).
pub(crate) struct Memo<T, E>(Mutex<HashMap<String, Arc<Slot<T, E>>>>);

type Slot<T, E> = OnceCell<Result<Arc<T>, E>>;

impl<T, E> Default for Memo<T, E> {
    fn default() -> Self {
        Self(Mutex::default())
    }
}

impl<T, E: Clone> Memo<T, E> {
    /// The value at `key`, loaded by `load` on first use.
    pub(crate) async fn get<F, Fut>(&self, key: String, load: F) -> Result<Arc<T>, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let cell = {
            let mut slots = self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            slots.entry(key).or_default().clone()
        };
        cell.get_or_init(|| async { load().await.map(Arc::new) })
            .await
            .clone()
    }
}

/// Per-run memory of what registries answered: each document is fetched once, however many
/// units ask.
#[derive(Default)]
pub(crate) struct Cache {
    documents: Memo<Document, LookupError>,
}

/// A fetched document, parsed to the facts of each version it lists.
#[derive(Debug, Default)]
pub(crate) struct Document {
    pub(crate) versions: HashMap<String, Facts>,
    /// Facts every version shares (the repository).
    pub(crate) shared: Facts,
}

impl Cache {
    /// The document at `key`, fetched and parsed by `load` on first use.
    pub(crate) async fn document<F, Fut>(
        &self,
        key: String,
        load: F,
    ) -> Result<Arc<Document>, LookupError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Document, LookupError>>,
    {
        self.documents.get(key, load).await
    }
}

/// What the registry at `endpoint` says of `name` at `version`; the error says why nothing
/// could be learned.
pub(crate) async fn facts(
    http: &Http,
    cache: &Cache,
    endpoint: &Endpoint,
    name: &str,
    version: &str,
) -> Result<Facts, LookupError> {
    match endpoint {
        Endpoint::Npm { base, token } => {
            npm::facts(http, cache, base, token.as_ref(), name, version).await
        }
        Endpoint::Python { index } => pypi::facts(http, cache, index, name, version).await,
        Endpoint::CratesSparse { index } => crates::facts(http, cache, index, name, version).await,
        Endpoint::CratesLocal { dir } => {
            let index = url::Url::from_directory_path(dir.join("index"))
                .map_err(|()| LookupError::NotAbsolute(dir.clone()))?;
            crates::facts(http, cache, index.as_str(), name, version).await
        }
        Endpoint::Gems { source } => gems::facts(http, cache, source, name, version).await,
        Endpoint::GoProxy { base } => go::facts(http, base, name, version).await,
        Endpoint::None(why) => Err(LookupError::NotAsked(why.clone())),
    }
}

/// The source repository and changelog of `name`, for release notes: what the version's facts
/// name, or what the registry's package page does (crates and gems keep them there); the error
/// says why that page could not be read.
pub(crate) async fn links(
    http: &Http,
    cache: &Cache,
    endpoint: &Endpoint,
    name: &str,
    facts: &Facts,
) -> Result<(Option<String>, Option<String>), LookupError> {
    match endpoint {
        Endpoint::CratesSparse { index } if facts.repository.is_none() => {
            Ok((crates::repository(http, cache, index, name).await?, None))
        }
        Endpoint::Gems { source } => gems::links(http, source, name).await,
        _ => Ok((facts.repository.clone(), facts.changelog.clone())),
    }
}

/// The body of a successful answer, or why there is none (`what` names the document).
pub(crate) fn body(
    fetched: Result<Fetched, FetchError>,
    what: &str,
) -> Result<Vec<u8>, LookupError> {
    let what = what.to_string();
    match fetched {
        Ok(f) if f.ok() => Ok(f.body),
        Ok(f) if f.status == 404 || f.status == 410 => Err(LookupError::Missing {
            what,
            status: f.status,
        }),
        Ok(f) => Err(LookupError::Status {
            what,
            status: f.status,
        }),
        Err(source) => Err(LookupError::Fetch { what, source }),
    }
}

/// An RFC 3339 time as registries write them (`2024-01-01T00:00:00.000Z`, `+00:00`).
pub(crate) fn parse_time(text: &str) -> Option<SystemTime> {
    let text = text.trim();
    let text = match text.strip_suffix("+00:00") {
        Some(rest) => format!("{rest}Z"),
        None if !text.ends_with('Z') && text.len() == 19 => format!("{text}Z"),
        None => text.to_string(),
    };
    humantime::parse_rfc3339_weak(&text)
        .or_else(|_| humantime::parse_rfc3339(&text))
        .ok()
}

/// A repository URL a registry gives, tidied: `git+https://…/x.git` → `https://…/x`,
/// `github:o/r` → `https://github.com/o/r`, `git@github.com:o/r` → `https://github.com/o/r`.
pub(crate) fn repository_url(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let raw = raw.strip_prefix("git+").unwrap_or(raw);
    let url = if let Some(path) = raw.strip_prefix("github:") {
        format!("https://github.com/{path}")
    } else if let Some(path) = raw.strip_prefix("gitlab:") {
        format!("https://gitlab.com/{path}")
    } else if let Some(rest) = raw.strip_prefix("git@") {
        let (host, path) = rest.split_once(':')?;
        format!("https://{host}/{path}")
    } else if let Some(rest) = raw.strip_prefix("git://") {
        format!("https://{rest}")
    } else if let Some(rest) = raw.strip_prefix("ssh://git@") {
        format!("https://{rest}")
    } else if raw.starts_with("https://") || raw.starts_with("http://") {
        raw.to_string()
    } else if raw.split('/').count() == 2 && !raw.contains(':') && !raw.is_empty() {
        format!("https://github.com/{raw}")
    } else {
        return None;
    };
    let url = url.split(['#', '?']).next().unwrap_or_default();
    Some(
        url.trim_end_matches('/')
            .trim_end_matches(".git")
            .to_string(),
    )
}

#[cfg(test)]
mod tests;
