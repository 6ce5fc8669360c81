//! Go module proxies: `<proxy>/<module>/@v/<version>.info` gives `{"Version", "Time"}`, the time
//! the proxy first saw the version (for a tagged version, the tag's commit time). Module paths are
//! case-encoded as the proxy protocol says (`Azure` → `!azure`).

use super::super::client::Http;
use super::{Facts, LookupError, MAX_SMALL, body, parse_time};

/// The GOPROXY protocol's case encoding: an upper-case letter becomes `!` and the lower case.
pub(super) fn escape(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if c.is_ascii_uppercase() {
            out.push('!');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

pub(super) async fn facts(
    http: &Http,
    base: &str,
    module: &str,
    version: &str,
) -> Result<Facts, LookupError> {
    let url = format!("{base}/{}/@v/{}.info", escape(module), escape(version));
    let what = format!("the proxy's .info of {module} {version}");
    let bytes = body(http.get(&url, &[], MAX_SMALL).await, &what)?;
    let info: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| LookupError::json(&what, "JSON", e))?;
    Ok(Facts {
        published: info["Time"].as_str().and_then(parse_time),
        repository: repository(module),
        ..Facts::default()
    })
}

/// The repository of a module hosted on GitHub or GitLab: its first three path elements.
pub(super) fn repository(module: &str) -> Option<String> {
    let parts: Vec<&str> = module.split('/').collect();
    match parts.as_slice() {
        [host @ ("github.com" | "gitlab.com"), owner, repo, ..] => {
            Some(format!("https://{host}/{owner}/{repo}"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn paths_are_case_encoded_and_repositories_found() {
        assert_eq!(super::escape("github.com/Azure/x"), "github.com/!azure/x");
        assert_eq!(
            super::repository("github.com/o/r/v2/sub").as_deref(),
            Some("https://github.com/o/r")
        );
        assert_eq!(super::repository("example.com/lib"), None);
    }
}
