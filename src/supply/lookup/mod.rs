//! What a registry says of one version: when it was published, whether it was deprecated or
//! yanked, and where its source lives (for release notes). One module per registry protocol;
//! documents that hold every version of a package (an npm packument, a sparse index file) are
//! fetched once per run.

mod crates;
mod gems;
mod go;
mod npm;
mod pypi;

use super::client::{Fetched, Http};
use super::registries::Endpoint;
use std::collections::HashMap;
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
pub struct Facts {
    /// When the registry first published it; `None` when the registry does not say.
    pub published: Option<SystemTime>,
    /// Deprecated or yanked, with the registry's message.
    pub withdrawn: Option<Withdrawn>,
    /// The source repository, as the registry names it.
    pub repository: Option<String>,
    /// A changelog the registry names.
    pub changelog: Option<String>,
}

/// A version its registry took back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Withdrawn {
    /// `deprecated` (npm) or `yanked` (PyPI, crates, RubyGems).
    pub how: &'static str,
    pub message: Option<String>,
}

/// Answers kept for the run, each loaded once however many callers ask at once; a failure is
/// kept too (asking again in the same run would fail the same way, after the same retries).
pub(crate) struct Memo<T>(Mutex<HashMap<String, Arc<Slot<T>>>>);

type Slot<T> = OnceCell<Result<Arc<T>, String>>;

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Self(Mutex::default())
    }
}

impl<T> Memo<T> {
    /// The value at `key`, loaded by `load` on first use.
    pub(crate) async fn get<F, Fut>(&self, key: String, load: F) -> Result<Arc<T>, String>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<T, String>>,
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
pub struct Cache {
    documents: Memo<Document>,
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
    ) -> Result<Arc<Document>, String>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<Document, String>>,
    {
        self.documents.get(key, load).await
    }
}

/// What the registry at `endpoint` says of `name` at `version`; the error says why nothing
/// could be learned.
pub async fn facts(
    http: &Http,
    cache: &Cache,
    endpoint: &Endpoint,
    name: &str,
    version: &str,
) -> Result<Facts, String> {
    match endpoint {
        Endpoint::Npm { base, token } => {
            npm::facts(http, cache, base, token.as_ref(), name, version).await
        }
        Endpoint::Python { index } => pypi::facts(http, cache, index, name, version).await,
        Endpoint::CratesSparse { index } => crates::facts(http, cache, index, name, version).await,
        Endpoint::CratesLocal { dir } => {
            let index = url::Url::from_directory_path(dir.join("index"))
                .map_err(|()| format!("{} is not an absolute path", dir.display()))?;
            crates::facts(http, cache, index.as_str(), name, version).await
        }
        Endpoint::Gems { source } => gems::facts(http, cache, source, name, version).await,
        Endpoint::GoProxy { base } => go::facts(http, base, name, version).await,
        Endpoint::None(why) => Err(why.clone()),
    }
}

/// The source repository and changelog of `name`, for release notes: what the version's facts
/// name, or what the registry's package page does (crates and gems keep them there); the error
/// says why that page could not be read.
pub async fn links(
    http: &Http,
    cache: &Cache,
    endpoint: &Endpoint,
    name: &str,
    facts: &Facts,
) -> Result<(Option<String>, Option<String>), String> {
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
    fetched: Result<Fetched, super::client::FetchError>,
    what: &str,
) -> Result<Vec<u8>, String> {
    match fetched {
        Ok(f) if f.ok() => Ok(f.body),
        Ok(f) if f.status == 404 || f.status == 410 => {
            Err(format!("{what} is not there (HTTP {})", f.status))
        }
        Ok(f) => Err(format!("{what}: HTTP {}", f.status)),
        Err(e) => Err(format!("{what}: {e}")),
    }
}

/// An RFC 3339 time as registries write them (`2024-01-01T00:00:00.000Z`, `+00:00`).
pub fn parse_time(text: &str) -> Option<SystemTime> {
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
pub fn repository_url(raw: &str) -> Option<String> {
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
