//! Python package indexes: the JSON API beside the simple index (`<root>/pypi/<name>/<version>/json`,
//! as pypi.org, Artifactory and devpi serve it) gives each file's `upload_time_iso_8601`, the
//! release's `yanked` flag and reason, and the project's URLs. Mirrors that serve only the
//! project's page (`<root>/pypi/<name>/json`, as bandersnatch does) give the same per release.

use super::super::client::{Header, Http};
use super::{
    Cache, Document, Facts, LookupError, MAX_DOCUMENT, MAX_SMALL, Withdrawn, body, parse_time,
    repository_url,
};
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
    #[serde(default)]
    yanked_reason: Option<String>,
}

/// The project's page: every release's files, and the URLs of the latest release.
#[derive(Deserialize)]
struct Project {
    info: Info,
    #[serde(default)]
    releases: HashMap<String, Vec<File>>,
}

/// What the JSON pages are, when they are not.
const PYPI_JSON: &str = "what PyPI's JSON API serves";

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
) -> Result<Facts, LookupError> {
    let root = api_root(index);
    let url = format!("{root}/pypi/{name}/{version}/json");
    let what = format!("the index's JSON page of {name} {version}");
    let document = cache
        .document(format!("pypi {url}"), || async {
            let Some(bytes) = page(http, &url, &what, MAX_SMALL).await? else {
                return Ok(Document::default());
            };
            let release: Release = serde_json::from_slice(&bytes)
                .map_err(|e| LookupError::json(&what, PYPI_JSON, e))?;
            Ok(Document {
                versions: HashMap::from([(version.to_string(), parse(release))]),
                shared: Facts::default(),
            })
        })
        .await?;
    if let Some(facts) = document.versions.get(version) {
        return Ok(facts.clone());
    }
    // No page per release here: the project's page lists every release.
    let url = format!("{root}/pypi/{name}/json");
    let what = format!("the index's JSON page of {name}");
    let project = cache
        .document(format!("pypi {url}"), || async {
            // A project's page lists every file of every release: megabytes for a project
            // with many wheels.
            let bytes = page(http, &url, &what, MAX_DOCUMENT)
                .await?
                .ok_or_else(|| LookupError::NoPages {
                    what: what.clone(),
                    version: version.to_string(),
                })?;
            let project: Project = serde_json::from_slice(&bytes)
                .map_err(|e| LookupError::json(&what, PYPI_JSON, e))?;
            Ok(parse_project(project))
        })
        .await?;
    project
        .versions
        .get(version)
        .cloned()
        .ok_or_else(|| LookupError::unlisted("index", name, version))
}

/// The body of a JSON page, or `None` when the index has no such page (HTTP 404).
async fn page(
    http: &Http,
    url: &str,
    what: &str,
    limit: usize,
) -> Result<Option<Vec<u8>>, LookupError> {
    let headers = [Header::Plain("accept", "application/json".into())];
    match http.get(url, &headers, limit).await {
        Ok(fetched) if fetched.status == 404 => Ok(None),
        fetched => body(fetched, what).map(Some),
    }
}

/// Every release of a project's page, each with the project's URLs.
fn parse_project(project: Project) -> Document {
    let links = links(project.info);
    let versions = project
        .releases
        .into_iter()
        .map(|(version, files)| {
            let reason = files.iter().find_map(|f| f.yanked_reason.clone());
            let yanked = !files.is_empty() && files.iter().all(|f| f.yanked);
            let facts = Facts {
                published: earliest(&files),
                withdrawn: yanked.then(|| Withdrawn {
                    how: "yanked",
                    message: reason.filter(|r| !r.is_empty()),
                }),
                ..links.clone()
            };
            (version, facts)
        })
        .collect();
    Document {
        versions,
        shared: Facts::default(),
    }
}

fn earliest(files: &[File]) -> Option<std::time::SystemTime> {
    files
        .iter()
        .filter_map(|f| f.upload_time_iso_8601.as_deref().and_then(parse_time))
        .min()
}

fn parse(release: Release) -> Facts {
    let yanked =
        release.info.yanked || (!release.urls.is_empty() && release.urls.iter().all(|f| f.yanked));
    let message = release.info.yanked_reason.clone();
    Facts {
        published: earliest(&release.urls),
        withdrawn: yanked.then(|| Withdrawn {
            how: "yanked",
            message: message.filter(|r| !r.is_empty()),
        }),
        ..links(release.info)
    }
}

/// The source repository and changelog the project's URLs name.
fn links(info: Info) -> Facts {
    let urls = info.project_urls.unwrap_or_default();
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
    .or(info.home_page)
    .and_then(|u| repository_url(&u));
    Facts {
        repository,
        changelog: pick(&["Changelog", "Changes", "Release Notes", "History"]),
        ..Facts::default()
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
