//! Cargo registries: the index file of a crate (sparse over HTTP, or a local registry's on disk)
//! has one line per version with `yanked` and, since 2025, `pubtime`. Where a line has no
//! `pubtime`, the registry's web API (named by the index's `config.json`) gives `created_at`.

use super::super::client::Http;
use super::{
    Cache, Document, Facts, LookupError, MAX_DOCUMENT, MAX_SMALL, Withdrawn, body, parse_time,
    repository_url,
};
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Deserialize)]
struct Line {
    vers: String,
    #[serde(default)]
    yanked: bool,
    #[serde(default)]
    pubtime: Option<String>,
}

/// The index path of a crate: `1/a`, `2/ab`, `3/a/abc`, `se/rd/serde` (lower case).
fn index_path(name: &str) -> String {
    let name = name.to_lowercase();
    match name.len() {
        1 => format!("1/{name}"),
        2 => format!("2/{name}"),
        3 => format!("3/{}/{name}", &name[..1]),
        _ => format!("{}/{}/{name}", &name[..2], &name[2..4]),
    }
}

pub(super) async fn facts(
    http: &Http,
    cache: &Cache,
    index: &str,
    name: &str,
    version: &str,
) -> Result<Facts, LookupError> {
    let url = format!("{index}{}", index_path(name));
    let document = cache
        .document(format!("crates {url}"), || async {
            let what = format!("the index file of {name}");
            let bytes = body(http.get(&url, &[], MAX_DOCUMENT).await, &what)?;
            Ok(parse(&bytes))
        })
        .await?;
    let mut facts = document
        .versions
        .get(version)
        .cloned()
        .ok_or_else(|| LookupError::unlisted("index", name, version))?;
    if facts.published.is_none()
        && let Ok(Some(api)) = api(http, cache, index).await
    {
        facts.published = created_at(http, &api, name, version).await;
    }
    Ok(facts)
}

fn parse(bytes: &[u8]) -> Document {
    let versions = String::from_utf8_lossy(bytes)
        .lines()
        .filter_map(|l| serde_json::from_str::<Line>(l).ok())
        .map(|l| {
            let facts = Facts {
                published: l.pubtime.as_deref().and_then(parse_time),
                withdrawn: l.yanked.then_some(Withdrawn {
                    how: "yanked",
                    message: None,
                }),
                ..Facts::default()
            };
            (l.vers, facts)
        })
        .collect::<HashMap<_, _>>();
    Document {
        versions,
        shared: Facts::default(),
    }
}

/// The registry's web API, from the sparse index's `config.json` (`"api"`); `None` where the
/// registry has none (a local registry, a config without `api`).
async fn api(http: &Http, cache: &Cache, index: &str) -> Result<Option<String>, LookupError> {
    if !index.starts_with("http") {
        return Ok(None);
    }
    let url = format!("{index}config.json");
    let document = cache
        .document(format!("crates-config {url}"), || async {
            let bytes = body(
                http.get(&url, &[], MAX_SMALL).await,
                "the index's config.json",
            )?;
            let config: serde_json::Value = serde_json::from_slice(&bytes)
                .map_err(|e| LookupError::IndexConfig(std::sync::Arc::new(e)))?;
            Ok(Document {
                versions: HashMap::new(),
                shared: Facts {
                    repository: config["api"].as_str().map(String::from),
                    ..Facts::default()
                },
            })
        })
        .await?;
    Ok(document.shared.repository.clone())
}

async fn created_at(
    http: &Http,
    api: &str,
    name: &str,
    version: &str,
) -> Option<std::time::SystemTime> {
    let url = format!(
        "{}/api/v1/crates/{name}/{version}",
        api.trim_end_matches('/')
    );
    let bytes = body(http.get(&url, &[], MAX_SMALL).await, "the crate's version").ok()?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    value["version"]["created_at"].as_str().and_then(parse_time)
}

/// The crate's repository, from the registry's web API; the error says why it could not be
/// asked.
pub(super) async fn repository(
    http: &Http,
    cache: &Cache,
    index: &str,
    name: &str,
) -> Result<Option<String>, LookupError> {
    let Some(api) = api(http, cache, index).await? else {
        return Ok(None);
    };
    let url = format!("{}/api/v1/crates/{name}", api.trim_end_matches('/'));
    let what = format!("the page of {name} on the registry's web API");
    let bytes = body(http.get(&url, &[], MAX_SMALL).await, &what)?;
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| LookupError::json(&what, "JSON", e))?;
    Ok(value["crate"]["repository"]
        .as_str()
        .and_then(repository_url))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_paths_follow_cargo() {
        assert_eq!(index_path("a"), "1/a");
        assert_eq!(index_path("ab"), "2/ab");
        assert_eq!(index_path("abc"), "3/a/abc");
        assert_eq!(index_path("Serde"), "se/rd/serde");
    }

    #[test]
    fn lines_give_pubtime_and_yanked() {
        let doc = parse(
            b"{\"name\":\"x\",\"vers\":\"1.0.0\",\"deps\":[],\"cksum\":\"00\",\"features\":{},\"yanked\":false,\"pubtime\":\"2014-12-05T20:20:39Z\"}\n{\"name\":\"x\",\"vers\":\"1.0.1\",\"yanked\":true}\nnot json\n",
        );
        assert_eq!(
            doc.versions["1.0.0"].published,
            parse_time("2014-12-05T20:20:39Z")
        );
        assert!(doc.versions["1.0.0"].withdrawn.is_none());
        assert_eq!(
            doc.versions["1.0.1"].withdrawn.as_ref().unwrap().how,
            "yanked"
        );
        assert_eq!(doc.versions["1.0.1"].published, None);
    }
}
