//! A commit's files written raw into an empty directory: the base checkout of copy-on-write
//! workspaces, and the entries a layer is seeded with. Raw as a checkout is under [`super::RAW`]:
//! the blob's bytes, mode 0644 or 0755, or a link. No index is kept (the layers are compared with
//! trees, never with an index), and the files are written by several threads: libgit2's checkout
//! is one thread that keeps an index, 1.3 s for 50,000 small files where this takes 0.3 s.
//!
//! A tree comes from the remote, so every name is checked as git's checkout checks it before
//! anything is written: no `..`, `.`, separator or `.git` (NTFS spellings included).

use crate::git::{GitError, Result, git, io};
use gix_validate::path::component;
use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// At most this many writers: past it the disk, not the CPU, is what waits.
const MAX_WRITERS: usize = 4;

/// Git's defaults on Linux (`core.protectNTFS` on, `core.protectHFS` off).
const NAMES: component::Options = component::Options {
    protect_windows: false,
    protect_hfs: false,
    protect_ntfs: true,
};

/// A file or link to write: where, from which blob, with which git mode.
struct Entry {
    at: PathBuf,
    blob: git2::Oid,
    mode: u32,
}

/// Writes the tree of `commit`, read from the bare repository `repo`, into the empty `dir`.
pub(super) fn extract(repo: &Path, commit: git2::Oid, dir: &Path) -> Result<()> {
    let opened = git2::Repository::open_bare(repo).map_err(git("opening the mirror"))?;
    let tree = opened
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(git("reading the base commit's tree"))?;
    let entries = directories(&opened, &tree, dir)?;
    let writers = std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_WRITERS));
    let part = entries.len().div_ceil(writers).max(1);
    std::thread::scope(|scope| {
        let parts: Vec<_> = entries
            .chunks(part)
            .map(|part| scope.spawn(|| write_part(repo, part)))
            .collect();
        parts
            .into_iter()
            .try_for_each(|p| p.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    })
}

/// Makes every directory of `tree` under `dir` (and an empty one for each submodule, as git's
/// checkout does) and lists the files and links to write.
fn directories(repo: &git2::Repository, tree: &git2::Tree<'_>, dir: &Path) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    let mut trees = vec![(tree.id(), PathBuf::new())];
    while let Some((id, at)) = trees.pop() {
        let tree = repo
            .find_tree(id)
            .map_err(git("reading the base commit's tree"))?;
        for entry in tree.iter() {
            let mode = u32::try_from(entry.filemode()).unwrap_or_default();
            let path = at.join(OsStr::from_bytes(entry.name_bytes()));
            safe_name(entry.name_bytes(), mode, &path)?;
            match mode {
                0o040000 | 0o160000 => {
                    make_dir(&dir.join(&path)).map_err(io("writing the base checkout"))?;
                    if mode == 0o040000 {
                        trees.push((entry.id(), path));
                    }
                }
                _ => entries.push(Entry {
                    at: dir.join(path),
                    blob: entry.id(),
                    mode,
                }),
            }
        }
    }
    Ok(entries)
}

fn write_part(repo: &Path, part: &[Entry]) -> Result<()> {
    let opened = git2::Repository::open_bare(repo).map_err(git("opening the mirror"))?;
    let odb = opened.odb().map_err(git("opening the mirror"))?;
    for entry in part {
        let blob = odb
            .read(entry.blob)
            .map_err(git(format!("reading {}", entry.at.display())))?;
        write_entry(&entry.at, blob.data(), entry.mode).map_err(io("writing the base checkout"))?;
    }
    Ok(())
}

/// Refuses `path` if any of its names is one git's checkout would refuse; `mode` is the git mode
/// of its last name.
pub(super) fn safe_path(path: &Path, mode: u32) -> Result<()> {
    let names: Vec<&[u8]> = path.as_os_str().as_bytes().split(|b| *b == b'/').collect();
    let last = names.len() - 1;
    for (i, name) in names.into_iter().enumerate() {
        safe_name(name, if i == last { mode } else { 0o040000 }, path)?;
    }
    Ok(())
}

/// Refuses `name` (of `mode`, at `path`) if git's checkout would.
fn safe_name(name: &[u8], mode: u32, path: &Path) -> Result<()> {
    let link = (mode == 0o120000).then_some(component::Mode::Symlink);
    component(name.into(), link, NAMES).map_err(|why| GitError::UnsafePath {
        path: String::from_utf8_lossy(path.as_os_str().as_bytes()).into_owned(),
        why: why.to_string(),
    })?;
    Ok(())
}

pub(super) fn make_dir(at: &Path) -> std::io::Result<()> {
    std::fs::create_dir(at)?;
    std::fs::set_permissions(at, std::fs::Permissions::from_mode(0o755))
}

/// A new file (0644 or 0755) or symbolic link holding `bytes`, as git's `mode` says. Nothing
/// already at `at` is followed or overwritten: a tree that names one path twice fails here.
pub(super) fn write_entry(at: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    if mode == 0o120000 {
        return std::os::unix::fs::symlink(OsStr::from_bytes(bytes), at);
    }
    let perm = if mode == 0o100755 { 0o755 } else { 0o644 };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(perm)
        .open(at)?;
    file.write_all(bytes)?;
    // The mode asked for at creation passed through the umask.
    file.set_permissions(std::fs::Permissions::from_mode(perm))
}

#[cfg(test)]
mod tests;
