//! Release notes for reviewers: the releases of the package's source repository between the
//! version it had and the one it moves to, through GitHub's or GitLab's API when the registry
//! names a repository there; otherwise a link to the changelog or the repository. Notes are
//! written by strangers: they are returned as data, and neutralised where they are posted.

use super::client::{FetchError, Header, Http};
use super::osv::compare;
use crate::changes::Ecosystem;
use serde_json::Value;
use std::cmp::Ordering;

/// The APIs release notes are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotesApis {
    /// GitHub's REST API, for repositories on github.com.
    pub github: String,
    /// GitLab's REST API (`…/api/v4`), for repositories on gitlab.com.
    pub gitlab: String,
}

impl Default for NotesApis {
    fn default() -> Self {
        Self {
            github: "https://api.github.com".into(),
            gitlab: "https://gitlab.com/api/v4".into(),
        }
    }
}

/// Releases read per repository: the newest hundred, enough for any weekly update.
const PER_PAGE: usize = 100;
const MAX_ANSWER: usize = 8 * 1024 * 1024;

/// What could be found for one update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// The releases between the two versions, newest first: (tag, title, body).
    Releases {
        repository: String,
        releases: Vec<(String, String, String)>,
    },
    /// No notes to quote; a page that has them.
    Link(String),
    /// Nothing, and why.
    Unavailable(String),
}

/// Which update the notes are for.
pub(crate) struct Wanted<'a> {
    pub ecosystem: Ecosystem,
    pub name: &'a str,
    pub from: Option<&'a str>,
    pub to: &'a str,
    pub repository: Option<&'a str>,
    pub changelog: Option<&'a str>,
}

pub(crate) async fn find(http: &Http, apis: &NotesApis, wanted: &Wanted<'_>) -> Found {
    let fallback = || match wanted.changelog.or(wanted.repository) {
        Some(url) if url.starts_with("https://") => Found::Link(url.to_string()),
        _ => Found::Unavailable("the registry names no source repository".into()),
    };
    let Some(repository) = wanted.repository else {
        return fallback();
    };
    let path = |host: &str| {
        repository
            .strip_prefix(&format!("https://{host}/"))
            .map(|p| p.trim_end_matches('/').to_string())
    };
    let listed = if let Some(path) = path("github.com").filter(|p| p.split('/').count() == 2) {
        let url = format!(
            "{}/repos/{path}/releases?per_page={PER_PAGE}",
            apis.github.trim_end_matches('/')
        );
        fetch(http, &url, "github").await
    } else if let Some(path) = path("gitlab.com") {
        let encoded = path.replace('/', "%2F");
        let url = format!(
            "{}/projects/{encoded}/releases?per_page={PER_PAGE}",
            apis.gitlab.trim_end_matches('/')
        );
        fetch(http, &url, "gitlab").await
    } else {
        return fallback();
    };
    match listed {
        Ok(all) => {
            let releases = between(wanted, all);
            if releases.is_empty() {
                Found::Link(format!("{repository}/releases"))
            } else {
                Found::Releases {
                    repository: repository.to_string(),
                    releases,
                }
            }
        }
        Err(why) => Found::Unavailable(why.to_string()),
    }
}

/// Why a forge's release list could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReleasesError {
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error("the {forge} API answered HTTP {status}")]
    Status { forge: String, status: u16 },
    #[error("the {forge} API sent no JSON: {source}")]
    Json {
        forge: String,
        #[source]
        source: serde_json::Error,
    },
}

/// The releases a repository lists: (tag, title, body).
async fn fetch(
    http: &Http,
    url: &str,
    forge: &str,
) -> Result<Vec<(String, String, String)>, ReleasesError> {
    let headers = [Header::Plain("accept", "application/json".into())];
    let fetched = http.get(url, &headers, MAX_ANSWER).await?;
    if !fetched.ok() {
        return Err(ReleasesError::Status {
            forge: forge.to_string(),
            status: fetched.status,
        });
    }
    let list: Value =
        serde_json::from_slice(&fetched.body).map_err(|source| ReleasesError::Json {
            forge: forge.to_string(),
            source,
        })?;
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    Ok(list
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["draft"].as_bool() != Some(true))
        .map(|r| {
            let body = if forge == "github" {
                &r["body"]
            } else {
                &r["description"]
            };
            (text(&r["tag_name"]), text(&r["name"]), text(body))
        })
        .collect())
}

/// The releases after `from`, up to and including `to`, newest first.
fn between(
    wanted: &Wanted<'_>,
    all: Vec<(String, String, String)>,
) -> Vec<(String, String, String)> {
    let e = wanted.ecosystem;
    let mut kept: Vec<(String, (String, String, String))> = all
        .into_iter()
        .filter_map(|release| {
            let version = tag_version(&release.0, wanted.name)?;
            let above = match wanted.from {
                Some(from) => compare(e, &version, from) == Some(Ordering::Greater),
                None => compare(e, &version, wanted.to) == Some(Ordering::Equal),
            };
            let within = matches!(
                compare(e, &version, wanted.to),
                Some(Ordering::Less | Ordering::Equal)
            );
            (above && within).then_some((version, release))
        })
        .collect();
    kept.sort_by(|a, b| compare(e, &b.0, &a.0).unwrap_or(Ordering::Equal));
    kept.into_iter().map(|(_, r)| r).collect()
}

/// The version a release tag names: `v1.2.3`, `1.2.3`, `name@1.2.3`, `name-v1.2.3`,
/// `name-1.2.3`.
fn tag_version(tag: &str, name: &str) -> Option<String> {
    let short = name.rsplit('/').next().unwrap_or(name);
    let rest = [
        format!("{name}@"),
        format!("{short}@"),
        format!("{short}-v"),
        format!("{short}-"),
    ]
    .iter()
    .find_map(|p| tag.strip_prefix(p.as_str()))
    .unwrap_or(tag);
    let rest = rest.strip_prefix('v').unwrap_or(rest);
    rest.starts_with(|c: char| c.is_ascii_digit())
        .then(|| rest.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted<'a>(from: Option<&'a str>, to: &'a str) -> Wanted<'a> {
        Wanted {
            ecosystem: Ecosystem::Npm,
            name: "@scope/lib",
            from,
            to,
            repository: None,
            changelog: None,
        }
    }

    #[test]
    fn tags_name_versions() {
        assert_eq!(tag_version("v1.2.3", "x").as_deref(), Some("1.2.3"));
        assert_eq!(
            tag_version("@scope/lib@1.2.3", "@scope/lib").as_deref(),
            Some("1.2.3")
        );
        assert_eq!(
            tag_version("lib-v2.0.0", "@scope/lib").as_deref(),
            Some("2.0.0")
        );
        assert_eq!(tag_version("nightly", "x"), None);
    }

    #[test]
    fn only_the_releases_between_from_and_to_newest_first() {
        let r = |t: &str| (t.to_string(), String::new(), format!("notes of {t}"));
        let all = vec![
            r("v1.0.0"),
            r("v1.0.2"),
            r("v1.0.1"),
            r("v1.1.0"),
            r("docs"),
        ];
        let kept: Vec<String> = between(&wanted(Some("1.0.0"), "1.0.2"), all.clone())
            .into_iter()
            .map(|r| r.0)
            .collect();
        assert_eq!(kept, vec!["v1.0.2", "v1.0.1"]);
        let added: Vec<String> = between(&wanted(None, "1.1.0"), all)
            .into_iter()
            .map(|r| r.0)
            .collect();
        assert_eq!(added, vec!["v1.1.0"]);
    }
}
