//! Gem sources: `<source>api/v1/versions/<name>.json` lists every version still published with
//! its `created_at`; a version the lock resolved that the list no longer holds was yanked (the
//! API drops yanked versions). `api/v1/gems/<name>.json` names the source and changelog.

use super::super::client::Http;
use super::{
    Cache, Document, Facts, LookupError, MAX_DOCUMENT, MAX_SMALL, Withdrawn, body, parse_time,
    repository_url,
};
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Deserialize)]
struct Version {
    number: String,
    #[serde(default)]
    created_at: Option<String>,
}

pub(super) async fn facts(
    http: &Http,
    cache: &Cache,
    source: &str,
    name: &str,
    version: &str,
) -> Result<Facts, LookupError> {
    let url = format!("{source}api/v1/versions/{name}.json");
    let document = cache
        .document(format!("gems {url}"), || async {
            let what = format!("the version list of {name}");
            let bytes = body(http.get(&url, &[], MAX_DOCUMENT).await, &what)?;
            let list: Vec<Version> = serde_json::from_slice(&bytes)
                .map_err(|e| LookupError::json(&what, "what RubyGems serves", e))?;
            Ok(parse(list))
        })
        .await?;
    match document.versions.get(version) {
        Some(facts) => Ok(facts.clone()),
        None if !document.versions.is_empty() => Ok(Facts {
            withdrawn: Some(Withdrawn {
                how: "yanked",
                message: Some(format!("the source no longer lists {name} {version}")),
            }),
            ..Facts::default()
        }),
        None => Err(LookupError::NoVersions {
            name: name.to_string(),
        }),
    }
}

fn parse(list: Vec<Version>) -> Document {
    let mut versions: HashMap<String, Facts> = HashMap::new();
    for v in list {
        let published = v.created_at.as_deref().and_then(parse_time);
        // Platform builds of one version: the earliest is when the version appeared.
        let entry = versions.entry(v.number).or_default();
        entry.published = match (entry.published, published) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    Document {
        versions,
        shared: Facts::default(),
    }
}

/// The gem's source repository and changelog, as its page names them.
pub(super) async fn links(
    http: &Http,
    source: &str,
    name: &str,
) -> Result<(Option<String>, Option<String>), LookupError> {
    let url = format!("{source}api/v1/gems/{name}.json");
    let bytes = body(http.get(&url, &[], MAX_SMALL).await, "the gem's page")?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
    let text = |k: &str| {
        value[k]
            .as_str()
            .filter(|s| !s.is_empty())
            .map(String::from)
    };
    let repository = text("source_code_uri")
        .or_else(|| text("homepage_uri"))
        .and_then(|u| repository_url(&u));
    Ok((repository, text("changelog_uri")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_builds_share_the_version() {
        let list: Vec<Version> = serde_json::from_str(
            r#"[{"number":"1.0.0","created_at":"2024-01-02T00:00:00.000Z","platform":"x86_64-linux"},
                {"number":"1.0.0","created_at":"2024-01-01T00:00:00.000Z","platform":"ruby"}]"#,
        )
        .unwrap();
        let doc = parse(list);
        assert_eq!(
            doc.versions["1.0.0"].published,
            parse_time("2024-01-01T00:00:00Z")
        );
    }
}
