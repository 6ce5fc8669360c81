//! Where branches go: the remote's URL, which never prints its credentials, and how to
//! authenticate to it.

use super::{GitError, Result, git};
use secrecy::{ExposeSecret, SecretString};
use std::cell::Cell;

/// A remote repository's URL. It prints (`Display`, `Debug`) without user information, so it can
/// go to any log or report; only libgit2 is handed the URL as written.
#[derive(Clone, PartialEq, Eq)]
pub struct RemoteUrl(String);

impl RemoteUrl {
    pub fn new(url: impl Into<String>) -> Self {
        Self(url.into())
    }

    /// The URL as written, credentials included: for libgit2 only.
    pub(super) fn expose(&self) -> &str {
        &self.0
    }

    /// Local paths and `file://` URLs: fetched in full (libgit2's local transport has no depth).
    pub(crate) fn is_local(&self) -> bool {
        !self.0.contains("://") || self.0.starts_with("file://")
    }

    /// The object store of a local remote that opens as a git repository.
    pub(super) fn local_objects(&self) -> Option<std::path::PathBuf> {
        let path = match self.0.strip_prefix("file://") {
            Some(_) => url::Url::parse(&self.0).ok()?.to_file_path().ok()?,
            None if self.is_local() => std::path::PathBuf::from(&self.0),
            None => return None,
        };
        let repo = git2::Repository::open(path).ok()?;
        std::fs::canonicalize(repo.commondir().join("objects")).ok()
    }

    /// Whether `other` names the same repository (ignoring user information, a trailing `/` or
    /// `.git`, and the case of scheme and host).
    pub(crate) fn same_repository(&self, other: &str) -> bool {
        normal(&self.0) == normal(other)
    }
}

impl std::fmt::Display for RemoteUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&redact_userinfo(&self.0))
    }
}

impl std::fmt::Debug for RemoteUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", redact_userinfo(&self.0))
    }
}

/// Where branches are fetched from and pushed to, and how to authenticate.
#[derive(Clone)]
pub struct RemoteSpec {
    pub url: RemoteUrl,
    /// User name for HTTP basic authentication (`x-access-token` on GitHub, `oauth2` on GitLab).
    pub username: Option<String>,
    pub token: Option<SecretString>,
}

impl std::fmt::Debug for RemoteSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteSpec")
            .field("url", &self.url)
            .field("username", &self.username)
            .field("token", &self.token.as_ref().map(|_| "***"))
            .finish()
    }
}

impl RemoteSpec {
    pub(super) fn callbacks(&self) -> git2::RemoteCallbacks<'_> {
        let mut callbacks = git2::RemoteCallbacks::new();
        let tries = Cell::new(0u8);
        callbacks.credentials(move |url, _user, allowed| {
            // The token goes to the configured remote and nowhere else: not to a host a redirect
            // or a rewritten URL points at.
            if !self.url.same_repository(url) {
                return Err(git2::Error::from_str(&format!(
                    "refusing to send credentials to {}",
                    redact_userinfo(url)
                )));
            }
            // libgit2 asks again after a refused token; asking forever would loop.
            tries.set(tries.get() + 1);
            match (&self.token, tries.get()) {
                (Some(token), 1) if allowed.contains(git2::CredentialType::USER_PASS_PLAINTEXT) => {
                    git2::Cred::userpass_plaintext(
                        self.username.as_deref().unwrap_or("x-access-token"),
                        token.expose_secret(),
                    )
                }
                _ => Err(git2::Error::from_str("authentication failed")),
            }
        });
        callbacks
    }

    pub(super) fn classify(&self, context: &str, e: git2::Error) -> GitError {
        if e.class() == git2::ErrorClass::Http && e.code() == git2::ErrorCode::Auth
            || e.message().contains("authentication failed")
            || e.message().contains("status code: 401")
            || e.message().contains("status code: 403")
        {
            GitError::Auth {
                url: self.url.to_string(),
            }
        } else {
            GitError::Git {
                context: context.to_string(),
                message: e.message().to_string(),
            }
        }
    }
}

/// A URL in the form two URLs of one repository share.
fn normal(url: &str) -> String {
    let shown = redact_userinfo(url);
    let shown = shown.trim_end_matches('/');
    let shown = shown.strip_suffix(".git").unwrap_or(shown);
    match shown.split_once("://") {
        Some((scheme, rest)) => {
            let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
            format!(
                "{}://{}/{path}",
                scheme.to_ascii_lowercase(),
                host.to_ascii_lowercase()
            )
        }
        None => shown.to_string(),
    }
}

/// Opens `spec` as an anonymous remote of `repo`, refusing it if the repository's configuration
/// rewrote its URL (`url.<x>.insteadOf`) or gave it a push URL: a command could have written that
/// configuration to send the next push, and the token, elsewhere.
pub(super) fn open_remote<'r>(
    repo: &'r git2::Repository,
    spec: &RemoteSpec,
) -> Result<git2::Remote<'r>> {
    let url = spec.url.expose();
    let remote = repo
        .remote_anonymous(url)
        .map_err(git("opening the remote"))?;
    let rewritten = remote.url().ok() != Some(url) || remote.pushurl().ok().flatten().is_some();
    if rewritten {
        return Err(GitError::Tampered);
    }
    Ok(remote)
}

/// A URL with any user information (`user:token@`) removed, fit for logs and reports.
pub fn redact_userinfo(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            if path.is_empty() && !rest.contains('/') {
                format!("{scheme}://{host}")
            } else {
                format!("{scheme}://{host}/{path}")
            }
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_credentials_for_display() {
        assert_eq!(
            redact_userinfo("https://gitlab-ci-token:glcbt-abc@gitlab.example.com/g/p.git"),
            "https://gitlab.example.com/g/p.git"
        );
        assert_eq!(
            redact_userinfo("https://github.com/o/r"),
            "https://github.com/o/r"
        );
        assert_eq!(redact_userinfo("/srv/git/r.git"), "/srv/git/r.git");
        assert_eq!(redact_userinfo("https://u:p@host"), "https://host");
        let url = RemoteUrl::new("https://oauth2:s3cret@gitlab.example.com/g/p.git");
        assert_eq!(url.to_string(), "https://gitlab.example.com/g/p.git");
        assert!(!format!("{url:?}").contains("s3cret"));
    }

    #[test]
    fn remotes_compare_without_credentials_or_suffixes() {
        let same = |a: &str, b: &str| RemoteUrl::new(a).same_repository(b);
        assert!(same(
            "https://github.com/o/r.git",
            "https://x-access-token@GitHub.com/o/r"
        ));
        assert!(same("/srv/r.git", "/srv/r.git"));
        assert!(!same(
            "https://github.com/o/r.git",
            "https://evil.example/o/r.git"
        ));
        assert!(!same(
            "https://github.com/o/r.git",
            "https://github.com/o/other.git"
        ));
    }

    #[test]
    fn local_remotes_are_recognised() {
        let local = |url: &str| RemoteUrl::new(url).is_local();
        assert!(local("/srv/git/r.git"));
        assert!(local("file:///srv/git/r.git"));
        assert!(!local("https://github.com/o/r.git"));
    }
}
