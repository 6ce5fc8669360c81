//! npm registries: the packument at `<registry>/<name>` (`@scope%2fname`) gives every version's
//! publish time (`time[version]`), its `deprecated` message, and the `repository`.

use super::super::client::{Header, Http};
use super::super::registries::Credential;
use super::{
    Cache, Document, Facts, LookupError, MAX_DOCUMENT, Withdrawn, body, parse_time, repository_url,
};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;

#[derive(Deserialize)]
struct Packument {
    #[serde(default)]
    time: HashMap<String, Value>,
    #[serde(default)]
    versions: HashMap<String, VersionDoc>,
    #[serde(default)]
    repository: Option<Value>,
}

#[derive(Deserialize)]
struct VersionDoc {
    #[serde(default)]
    deprecated: Option<Value>,
    #[serde(default)]
    repository: Option<Value>,
}

pub(super) async fn facts(
    http: &Http,
    cache: &Cache,
    base: &str,
    token: Option<&Credential>,
    name: &str,
    version: &str,
) -> Result<Facts, LookupError> {
    let url = format!("{base}{}", name.replacen('/', "%2f", 1));
    let key = format!("npm {url}");
    let document = cache
        .document(key, || async {
            let mut headers = vec![Header::Plain("accept", "application/json".into())];
            if let Some(token) = token {
                headers.push(Header::Secret("authorization", token.0.clone()));
            }
            let what = format!("the packument of {name}");
            let bytes = body(http.get(&url, &headers, MAX_DOCUMENT).await, &what)?;
            parse(&bytes).map_err(|e| LookupError::json(&what, "what npm serves", e))
        })
        .await?;
    let mut facts = document
        .versions
        .get(version)
        .cloned()
        .ok_or_else(|| LookupError::unlisted("registry", name, version))?;
    if facts.repository.is_none() {
        facts.repository = document.shared.repository.clone();
    }
    Ok(facts)
}

fn parse(bytes: &[u8]) -> Result<Document, serde_json::Error> {
    let doc: Packument = serde_json::from_slice(bytes)?;
    let shared = Facts {
        repository: doc.repository.as_ref().and_then(repository),
        ..Facts::default()
    };
    let versions = doc
        .versions
        .iter()
        .map(|(version, v)| {
            let deprecated = v
                .deprecated
                .as_ref()
                .and_then(|d| match d {
                    Value::String(s) if !s.is_empty() => Some(Some(s.clone())),
                    Value::Bool(true) => Some(None),
                    _ => None,
                })
                .map(|message| Withdrawn {
                    how: "deprecated",
                    message,
                });
            let facts = Facts {
                published: doc
                    .time
                    .get(version)
                    .and_then(Value::as_str)
                    .and_then(parse_time),
                withdrawn: deprecated,
                repository: v.repository.as_ref().and_then(repository),
                changelog: None,
            };
            (version.clone(), facts)
        })
        .collect();
    Ok(Document { versions, shared })
}

/// `repository` as a string or `{type, url, directory}`.
fn repository(value: &Value) -> Option<String> {
    let raw = match value {
        Value::String(s) => s.as_str(),
        Value::Object(o) => o.get("url")?.as_str()?,
        _ => return None,
    };
    repository_url(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packument_gives_times_deprecations_and_the_repository() {
        let doc = parse(
            br#"{"name":"x","time":{"created":"2020-01-01T00:00:00.000Z","1.0.0":"2020-01-02T03:04:05.678Z","1.0.1":"2026-11-27T00:00:00Z"},
            "versions":{"1.0.0":{"deprecated":"use y instead"},"1.0.1":{"deprecated":""},"2.0.0":{}},
            "repository":{"type":"git","url":"git+https://github.com/o/x.git"}}"#,
        )
        .unwrap();
        let v1 = &doc.versions["1.0.0"];
        assert_eq!(v1.published, parse_time("2020-01-02T03:04:05.678Z"),);
        assert!(v1.published.is_some());
        assert_eq!(
            v1.withdrawn,
            Some(Withdrawn {
                how: "deprecated",
                message: Some("use y instead".into())
            })
        );
        assert_eq!(
            doc.versions["1.0.1"].withdrawn, None,
            "an empty message undeprecates"
        );
        assert_eq!(doc.versions["2.0.0"].published, None);
        assert_eq!(
            doc.shared.repository.as_deref(),
            Some("https://github.com/o/x")
        );
    }
}
