//! Where the policy comes from: the file at the root of the default branch's tip, read from git
//! (never the working tree), or the operator's `--policy FILE`; the defaults when there is none.

use super::{Policy, PolicyError, parse};
use std::io::Read;
use std::path::Path;

/// The policy's path at the repository root.
pub(crate) const POLICY_FILE: &str = ".quartermaster.toml";
/// Longer than any real policy; a bigger file is refused, not read.
const MAX_BYTES: u64 = 64 * 1024;

/// The policy of the commit `commit` of `branch`, given what its tree holds at [`POLICY_FILE`]:
/// `None` when nothing, `Some(Err(kind))` when not a regular file (a link, a directory, a
/// submodule), else the file's bytes.
pub(crate) fn from_tree(
    entry: Option<Result<Vec<u8>, &'static str>>,
    branch: &str,
    commit: &str,
) -> Result<Policy, PolicyError> {
    let short = commit.get(..8).unwrap_or(commit);
    let origin = format!("{POLICY_FILE} at {branch} ({short})");
    match entry {
        None => Ok(Policy {
            source: format!("the defaults (no {POLICY_FILE} at {branch} ({short}))"),
            ..Policy::default()
        }),
        Some(Err(kind)) => Err(PolicyError::Unreadable {
            origin,
            message: format!("is {kind}, not a regular file"),
        }),
        Some(Ok(bytes)) => parse_bytes(&bytes, &origin),
    }
}

/// The policy in the operator's file `path` (`--policy`).
pub(crate) fn from_file(path: &Path) -> Result<Policy, PolicyError> {
    let origin = path.display().to_string();
    let unreadable = |message: String| PolicyError::Unreadable {
        origin: origin.clone(),
        message,
    };
    let file = std::fs::File::open(path).map_err(|e| unreadable(format!("cannot be read: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| unreadable(format!("cannot be read: {e}")))?;
    if !meta.is_file() {
        return Err(unreadable("is not a regular file".into()));
    }
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(format!("cannot be read: {e}")))?;
    parse_bytes(&bytes, &origin)
}

fn parse_bytes(bytes: &[u8], origin: &str) -> Result<Policy, PolicyError> {
    if bytes.len() as u64 > MAX_BYTES {
        return Err(PolicyError::Unreadable {
            origin: origin.to_string(),
            message: format!("is larger than {} KiB", MAX_BYTES / 1024),
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|_| PolicyError::Unreadable {
        origin: origin.to_string(),
        message: "is not UTF-8 text".into(),
    })?;
    parse(text, origin)
}
