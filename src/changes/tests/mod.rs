//! Tests of the changes module on real lock files (see `tests/fixtures/changes/README.md`).

mod declared;
mod diffs;
mod errors;
mod formats;
mod limits;
mod parsers;
mod rules;
mod sources;

use super::{ChangesError, Ecosystem, EcosystemSnapshot, LockedPackage, Snapshot, snapshot};
use std::path::{Path, PathBuf};

pub(super) fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/changes")
        .join(rel)
}

/// Reads one ecosystem of a fixture directory (`working_dir` relative to it).
pub(super) fn read(
    dir: &Path,
    working_dir: &str,
    ecosystem: &str,
) -> Result<Snapshot, ChangesError> {
    snapshot(dir, &dir.join(working_dir), &[ecosystem])
}

pub(super) fn eco(snapshot: &Snapshot, ecosystem: Ecosystem) -> &EcosystemSnapshot {
    &snapshot.ecosystems[&ecosystem]
}

/// The copies of `name`, as (version, direct) pairs.
pub(super) fn copies(eco: &EcosystemSnapshot, name: &str) -> Vec<(String, bool)> {
    let mut found: Vec<_> = eco
        .packages
        .iter()
        .filter(|p| p.name == name)
        .map(|p| (p.version.clone(), p.direct))
        .collect();
    found.sort();
    found
}

pub(super) fn package<'a>(
    eco: &'a EcosystemSnapshot,
    name: &str,
    version: &str,
) -> &'a LockedPackage {
    eco.packages
        .iter()
        .find(|p| p.name == name && p.version == version)
        .unwrap_or_else(|| panic!("{name} {version} not locked"))
}

/// A copy of a fixture directory to edit.
pub(super) fn copy(rel: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_tree(&fixture(rel), dir.path());
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("fixture dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// Replaces `from` (which must occur) by `to` in `file`.
pub(super) fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains(from), "{file} does not contain {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
}
