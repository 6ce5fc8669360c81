//! Credentials CI persisted in the user's checkout, hidden while agent commands run.

use super::{Result, git, io, redact_userinfo};
use std::path::{Path, PathBuf};

/// Credentials that CI left in the user's checkout (`http.<url>.extraheader` from
/// `actions/checkout`, credential files it includes, tokens in remote URLs as GitLab Runner leaves
/// them, `url.<url-with-token>.insteadOf` rewrites), hidden while agent commands run and restored
/// byte for byte when dropped. Every config of the checkout is covered: the shared one, a
/// worktree's `config.worktree`, and those of submodules (`actions/checkout` persists its header in
/// each).
pub(crate) struct CredentialGuard {
    saved: Vec<(PathBuf, Vec<u8>)>,
}

impl CredentialGuard {
    /// Neutralises the credentials persisted in the checkout at `checkout` (if it is a repository).
    pub(crate) fn neutralise(checkout: &Path) -> Result<Self> {
        let mut guard = Self { saved: Vec::new() };
        let Ok(repo) = git2::Repository::open(checkout) else {
            return Ok(guard);
        };
        for config_path in checkout_configs(&repo) {
            guard.neutralise_config(&config_path)?;
        }
        Ok(guard)
    }

    fn neutralise_config(&mut self, config_path: &Path) -> Result<()> {
        let Ok(original) = std::fs::read(config_path) else {
            return Ok(());
        };
        let found = PersistedCredentials::find(config_path)?;
        if found.is_empty() {
            return Ok(());
        }
        self.saved.push((config_path.to_path_buf(), original));
        for file in &found.included_files {
            if self.saved.iter().any(|(p, _)| p == file) {
                continue;
            }
            if let Ok(bytes) = std::fs::read(file) {
                self.saved.push((file.clone(), bytes));
                std::fs::write(file, b"")
                    .map_err(io("neutralising an included credential file"))?;
            }
        }
        let mut config =
            git2::Config::open(config_path).map_err(git("opening the checkout's config"))?;
        for name in &found.removed {
            config
                .remove_multivar(name, ".*")
                .map_err(git("removing a persisted credential"))?;
        }
        for (name, url) in &found.urls {
            config
                .set_str(name, url)
                .map_err(git("removing a token from a remote URL"))?;
        }
        drop(config);
        if found.subsections {
            strip_subsection_userinfo(config_path)?;
        }
        Ok(())
    }

    /// Whether anything was neutralised.
    pub(crate) fn is_active(&self) -> bool {
        !self.saved.is_empty()
    }

    /// Puts everything back now (as dropping does); for exits that skip destructors.
    pub(crate) fn restore(&mut self) {
        for (path, bytes) in self.saved.drain(..).rev() {
            if let Err(e) = std::fs::write(&path, &bytes) {
                tracing::error!("could not restore {}: {e}", path.display());
            }
        }
    }
}

impl Drop for CredentialGuard {
    fn drop(&mut self) {
        self.restore();
    }
}

/// The config files of a checkout: the shared config (in the common directory, which differs from
/// the git directory in a worktree), the worktree's own, and every submodule's, nested ones too.
fn checkout_configs(repo: &git2::Repository) -> Vec<PathBuf> {
    let mut out = vec![repo.commondir().join("config")];
    let worktree = repo.path().join("config.worktree");
    if worktree.is_file() {
        out.push(worktree);
    }
    let mut pending = vec![repo.commondir().join("modules")];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            // Symlinks are not followed: a submodule's git directory is a real directory.
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if path.join("HEAD").is_file() && path.join("config").is_file() {
                out.push(path.join("config"));
                pending.push(path.join("modules"));
            } else {
                pending.push(path);
            }
        }
    }
    out
}

/// What `CredentialGuard` looks for in a config file.
#[derive(Debug, Default)]
struct PersistedCredentials {
    /// Entries removed outright: `http.<url>.extraheader`, and `url.<base>.insteadOf` /
    /// `pushInsteadOf` whose base holds user information.
    removed: Vec<String>,
    /// `remote.<name>.url` / `pushurl` entries holding user information, with the URL stripped of it.
    urls: Vec<(String, String)>,
    /// Files pulled in by `include.path` / `includeIf.<cond>.path` that hold credentials.
    included_files: Vec<PathBuf>,
    /// Whether a section is named by a URL holding user information (`[url "https://x:tok@h/"]`).
    subsections: bool,
}

impl PersistedCredentials {
    fn find(config_path: &Path) -> Result<Self> {
        let config =
            git2::Config::open(config_path).map_err(git("opening the checkout's config"))?;
        let mut found = Self::default();
        let mut entries = config
            .entries(None)
            .map_err(git("reading the checkout's config"))?;
        while let Some(entry) = entries.next() {
            let Ok(entry) = entry else { continue };
            let (Ok(name), Ok(value)) = (entry.name(), entry.value()) else {
                continue;
            };
            let lower = name.to_ascii_lowercase();
            if entry.include_depth() > 0 {
                continue;
            }
            if let Some((_, rest)) = name.split_once('.')
                && let Some((subsection, _)) = rest.rsplit_once('.')
                && has_userinfo(subsection)
            {
                found.subsections = true;
            }
            let rewrite_base = name
                .get(4..)
                .filter(|_| lower.starts_with("url."))
                .and_then(|rest| {
                    strip_suffix_ci(rest, ".insteadof")
                        .or_else(|| strip_suffix_ci(rest, ".pushinsteadof"))
                });
            let removed = (lower.starts_with("http.") && lower.ends_with(".extraheader"))
                || rewrite_base.is_some_and(has_userinfo);
            if removed {
                if !found.removed.iter().any(|h| h.eq_ignore_ascii_case(name)) {
                    found.removed.push(name.to_string());
                }
            } else if lower.starts_with("remote.")
                && (lower.ends_with(".url") || lower.ends_with(".pushurl"))
            {
                if has_userinfo(value) {
                    found.urls.push((name.to_string(), redact_userinfo(value)));
                }
            } else if lower.starts_with("credential.") && lower.ends_with(".helper") {
                match store_file(config_path, value) {
                    Some(file) => found.included_files.push(file),
                    // A shell helper can hold the token in its own text.
                    None if value.trim_start().starts_with('!') => {
                        found.removed.push(name.to_string());
                    }
                    None => {}
                }
            } else if is_include(&lower)
                && let Some(file) = resolve_include(config_path, value)
            {
                credential_files(&file, &mut found.included_files, 0);
            }
        }
        Ok(found)
    }

    fn is_empty(&self) -> bool {
        self.removed.is_empty()
            && self.urls.is_empty()
            && self.included_files.is_empty()
            && !self.subsections
    }
}

/// Rewrites section headers named by a URL with user information to the URL without it. libgit2
/// removes a section's entries but leaves its header, and the header is where the token is.
fn strip_subsection_userinfo(config_path: &Path) -> Result<()> {
    let text = std::fs::read_to_string(config_path).map_err(io("reading the checkout's config"))?;
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let header = line.trim_start().starts_with('[');
        match (header, line.find('"'), line.rfind('"')) {
            (true, Some(open), Some(close))
                if close > open && has_userinfo(&line[open + 1..close]) =>
            {
                out.push_str(&line[..=open]);
                out.push_str(&redact_userinfo(&line[open + 1..close]));
                out.push_str(&line[close..]);
            }
            _ => out.push_str(line),
        }
    }
    std::fs::write(config_path, out).map_err(io("removing a token from the checkout's config"))
}

/// Whether a URL carries `user[:password]@` before its host.
fn has_userinfo(url: &str) -> bool {
    url.contains("://") && redact_userinfo(url) != url
}

/// `strip_suffix`, ignoring ASCII case (git config variable names are case-insensitive).
fn strip_suffix_ci<'s>(s: &'s str, suffix: &str) -> Option<&'s str> {
    let split = s.len().checked_sub(suffix.len())?;
    (s.is_char_boundary(split) && s[split..].eq_ignore_ascii_case(suffix)).then(|| &s[..split])
}

fn is_include(lower_name: &str) -> bool {
    lower_name == "include.path"
        || lower_name.starts_with("includeif.") && lower_name.ends_with(".path")
}

/// Includes nest no deeper than this (git's own limit is 10).
const MAX_INCLUDE_DEPTH: usize = 10;

/// `file`, an included config, when it holds credentials, and those it includes in turn.
fn credential_files(file: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    if out.iter().any(|f| f == file) || depth > MAX_INCLUDE_DEPTH {
        return;
    }
    if holds_credentials(file) {
        out.push(file.to_path_buf());
    }
    let Ok(config) = git2::Config::open(file) else {
        return;
    };
    let Ok(mut entries) = config.entries(None) else {
        return;
    };
    let mut nested = Vec::new();
    while let Some(Ok(entry)) = entries.next() {
        if entry.include_depth() == 0
            && let (Ok(name), Ok(value)) = (entry.name(), entry.value())
            && is_include(&name.to_ascii_lowercase())
            && let Some(inner) = resolve_include(file, value)
        {
            nested.push(inner);
        }
    }
    for inner in nested {
        credential_files(&inner, out, depth + 1);
    }
}

/// The file a `store --file <path>` credential helper keeps passwords in, when it exists.
fn store_file(config_path: &Path, helper: &str) -> Option<PathBuf> {
    let words = shell_words::split(helper).ok()?;
    let (program, args) = words.split_first()?;
    if program != "store" {
        return None;
    }
    let path = args.iter().enumerate().find_map(|(i, arg)| {
        arg.strip_prefix("--file=").map(String::from).or_else(|| {
            (arg == "--file")
                .then(|| args.get(i + 1).cloned())
                .flatten()
        })
    })?;
    resolve_include(config_path, &path)
}

fn resolve_include(config_path: &Path, value: &str) -> Option<PathBuf> {
    let path = if let Some(rest) = value.strip_prefix("~/") {
        PathBuf::from(std::env::var_os("HOME")?).join(rest)
    } else {
        let p = PathBuf::from(value);
        if p.is_absolute() {
            p
        } else {
            config_path.parent()?.join(p)
        }
    };
    path.is_file().then_some(path)
}

fn holds_credentials(file: &Path) -> bool {
    std::fs::read_to_string(file).is_ok_and(|text| {
        let lower = text.to_ascii_lowercase();
        lower.contains("extraheader")
            || lower.contains("authorization")
            || lower.contains("@") && lower.contains("://")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token two includes deep, and one in a `store --file` credential file, are hidden while
    /// the guard lives and restored byte for byte after.
    #[test]
    fn nested_includes_and_credential_store_files_are_hidden() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path().join("checkout")).unwrap();
        let inner = dir.path().join("inner.config");
        let outer = dir.path().join("outer.config");
        let store = dir.path().join("store");
        let header =
            "[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n";
        std::fs::write(&inner, header).unwrap();
        std::fs::write(&outer, format!("[include]\n\tpath = {}\n", inner.display())).unwrap();
        std::fs::write(&store, "https://x-access-token:s3cret@github.com\n").unwrap();
        let mut config = repo.config().unwrap();
        config
            .set_str("include.path", &outer.display().to_string())
            .unwrap();
        config
            .set_str(
                "credential.helper",
                &format!("store --file {}", store.display()),
            )
            .unwrap();
        config
            .set_str(
                "credential.https://example.com.helper",
                "!f() { echo password=x; }; f",
            )
            .unwrap();
        let config_before = std::fs::read(repo.path().join("config")).unwrap();
        let guard = CredentialGuard::neutralise(&dir.path().join("checkout")).unwrap();
        assert!(guard.is_active());
        assert_eq!(std::fs::read_to_string(&inner).unwrap(), "");
        assert_eq!(std::fs::read_to_string(&store).unwrap(), "");
        assert_eq!(
            std::fs::read_to_string(&outer).unwrap(),
            format!("[include]\n\tpath = {}\n", inner.display()),
            "an include holding no credential itself stays"
        );
        let hidden = std::fs::read_to_string(repo.path().join("config")).unwrap();
        assert!(!hidden.contains("password=x"), "{hidden}");
        drop(guard);
        assert_eq!(std::fs::read_to_string(&inner).unwrap(), header);
        assert_eq!(
            std::fs::read_to_string(&store).unwrap(),
            "https://x-access-token:s3cret@github.com\n"
        );
        assert_eq!(
            std::fs::read(repo.path().join("config")).unwrap(),
            config_before
        );
    }
}
