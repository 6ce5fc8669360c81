//! Python package indexes: the JSON API beside the simple index (`<root>/pypi/<name>/<version>/json`,
//! as pypi.org, Artifactory and devpi serve it) gives each file's `upload_time_iso_8601`, the
//! release's `yanked` flag and reason, and the project's URLs.

use super::super::client::{Header, Http};
use super::{Cache, Document, Facts, MAX_SMALL, Withdrawn, body, parse_time, repository_url};
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Deserialize)]
struct Release {
    info: Info,
    #[serde(default)]
    urls: Vec<File>,
}

#[derive(Deserialize)]
struct Info {
    #[serde(default)]
    yanked: bool,
    #[serde(default)]
    yanked_reason: Option<String>,
    #[serde(default)]
    project_urls: Option<HashMap<String, String>>,
    #[serde(default)]
    home_page: Option<String>,
}

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    upload_time_iso_8601: Option<String>,
    #[serde(default)]
    yanked: bool,
}

/// The JSON API's root for a simple index URL: `https://pypi.org/simple/` → `https://pypi.org`.
fn api_root(index: &str) -> String {
    let trimmed = index.trim_end_matches('/');
    trimmed
        .strip_suffix("/simple")
        .or_else(|| trimmed.strip_suffix("/+simple"))
        .unwrap_or(trimmed)
        .to_string()
}

pub(super) async fn facts(
    http: &Http,
    cache: &Cache,
    index: &str,
    name: &str,
    version: &str,
) -> Result<Facts, String> {
    let url = format!("{}/pypi/{name}/{version}/json", api_root(index));
    let key = format!("pypi {url}");
    let document = cache
        .document(key, || async {
            let headers = [Header::Plain("accept", "application/json".into())];
            let what = format!("the index's JSON page of {name} {version}");
            let bytes = body(http.get(&url, &headers, MAX_SMALL).await, &what)?;
            let release: Release = serde_json::from_slice(&bytes)
                .map_err(|e| format!("{what} is not what PyPI's JSON API serves: {e}"))?;
            Ok(Document {
                versions: HashMap::from([(version.to_string(), parse(release))]),
                shared: Facts::default(),
            })
        })
        .await?;
    document
        .versions
        .get(version)
        .cloned()
        .ok_or_else(|| format!("the index lists no {name} {version}"))
}

fn parse(release: Release) -> Facts {
    let published = release
        .urls
        .iter()
        .filter_map(|f| f.upload_time_iso_8601.as_deref().and_then(parse_time))
        .min();
    let yanked =
        release.info.yanked || (!release.urls.is_empty() && release.urls.iter().all(|f| f.yanked));
    let urls = release.info.project_urls.unwrap_or_default();
    let pick = |keys: &[&str]| {
        urls.iter()
            .find(|(k, _)| keys.iter().any(|key| k.eq_ignore_ascii_case(key)))
            .map(|(_, v)| v.clone())
    };
    let repository = pick(&[
        "Source",
        "Source Code",
        "Repository",
        "Code",
        "GitHub",
        "Homepage",
    ])
    .or(release.info.home_page)
    .and_then(|u| repository_url(&u));
    Facts {
        published,
        withdrawn: yanked.then(|| Withdrawn {
            how: "yanked",
            message: release.info.yanked_reason.filter(|r| !r.is_empty()),
        }),
        repository,
        changelog: pick(&["Changelog", "Changes", "Release Notes", "History"]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_api_sits_beside_the_simple_index() {
        assert_eq!(api_root("https://pypi.org/simple/"), "https://pypi.org");
        assert_eq!(api_root("http://127.0.0.1:8/simple"), "http://127.0.0.1:8");
        assert_eq!(
            api_root("https://a.example/artifactory/api/pypi/remote/simple"),
            "https://a.example/artifactory/api/pypi/remote"
        );
    }

    #[test]
    fn the_earliest_file_is_the_publish_time_and_yanks_are_seen() {
        let release: Release = serde_json::from_str(
            r#"{"info":{"yanked":true,"yanked_reason":"broken","project_urls":{"Source":"https://github.com/o/p","Changelog":"https://o.example/changes"}},
            "urls":[{"upload_time_iso_8601":"2024-05-02T10:00:00.123456Z","yanked":true},{"upload_time_iso_8601":"2024-05-01T10:00:00.000000Z","yanked":true}]}"#,
        )
        .unwrap();
        let facts = parse(release);
        assert_eq!(facts.published, parse_time("2024-05-01T10:00:00Z"));
        assert_eq!(facts.withdrawn.unwrap().message.as_deref(), Some("broken"));
        assert_eq!(facts.repository.as_deref(), Some("https://github.com/o/p"));
        assert_eq!(
            facts.changelog.as_deref(),
            Some("https://o.example/changes")
        );
    }
}
