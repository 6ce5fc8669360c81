//! Where files are read from: the working directory, and its ancestors up to the repository root.
//!
//! Files are written by the commands that ran, that is by hostile code: a symbolic link could make
//! Quartermaster read (and quote in a parse error) any file on the machine, and a huge file could
//! exhaust memory, so both are refused.

use super::ChangesError;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// Larger than any real lock file (the biggest public ones are a few tens of MiB).
const SIZE_LIMIT: u64 = 128 * 1024 * 1024;

pub(crate) struct Place {
    root: PathBuf,
    working_dir: PathBuf,
    /// Every file read, by [`Place::rel`] path, with the bytes read (`None`: looked for, absent).
    read: RefCell<BTreeMap<String, Option<Vec<u8>>>>,
}

impl Place {
    pub(crate) fn new(root: &Path, working_dir: &Path) -> Result<Place, ChangesError> {
        let inside = working_dir
            .strip_prefix(root)
            .is_ok_and(|rel| rel.components().all(|c| matches!(c, Component::Normal(_))));
        if !inside {
            return Err(ChangesError::OutsideRoot(working_dir.display().to_string()));
        }
        Ok(Place {
            root: root.to_path_buf(),
            working_dir: working_dir.to_path_buf(),
            read: RefCell::default(),
        })
    }

    /// The files read so far, with their bytes: what a commit must hold.
    pub(crate) fn into_read(self) -> BTreeMap<String, Option<Vec<u8>>> {
        self.read.into_inner()
    }

    pub(crate) fn working_dir(&self) -> &Path {
        &self.working_dir
    }

    /// `path` relative to the repository root, `/`-separated (`.` for the root itself).
    pub(crate) fn rel(&self, path: &Path) -> String {
        let rel = relative(path, &self.root);
        if rel.is_empty() { ".".to_string() } else { rel }
    }

    /// The working directory relative to `dir` (an ancestor), `/`-separated, empty when equal.
    pub(crate) fn working_dir_from(&self, dir: &Path) -> String {
        relative(&self.working_dir, dir)
    }

    /// The nearest directory from the working directory up to the root holding one of `names`,
    /// with the first of `names` found there.
    pub(crate) fn find_up(&self, names: &[&'static str]) -> Option<(PathBuf, &'static str)> {
        let mut dir = self.working_dir.as_path();
        loop {
            if let Some(name) = names
                .iter()
                .find(|n| dir.join(n).symlink_metadata().is_ok())
            {
                return Some((dir.to_path_buf(), name));
            }
            if dir == self.root {
                return None;
            }
            dir = dir.parent()?;
        }
    }

    /// The text of `path`; `None` when it does not exist.
    pub(crate) fn read_optional(&self, path: &Path) -> Result<Option<String>, ChangesError> {
        let file = self.rel(path);
        let meta = match path.symlink_metadata() {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.read.borrow_mut().insert(file, None);
                return Ok(None);
            }
            Err(source) => return Err(ChangesError::Read { file, source }),
        };
        if meta.file_type().is_symlink() {
            return Err(ChangesError::Symlink { file });
        }
        if meta.len() > SIZE_LIMIT {
            return Err(ChangesError::TooLarge {
                file,
                limit: SIZE_LIMIT,
            });
        }
        let text = std::fs::read_to_string(path).map_err(|source| ChangesError::Read {
            file: file.clone(),
            source,
        })?;
        self.read
            .borrow_mut()
            .insert(file, Some(text.as_bytes().to_vec()));
        Ok(Some(text))
    }

    /// The text of `path`, which must exist.
    pub(crate) fn read(&self, path: &Path) -> Result<String, ChangesError> {
        let file = self.rel(path);
        self.read_optional(path)?.ok_or_else(|| ChangesError::Read {
            file,
            source: std::io::ErrorKind::NotFound.into(),
        })
    }

    /// The manifest `name` in the working directory, or the named error when it is missing.
    pub(crate) fn manifest(
        &self,
        ecosystem: &'static str,
        name: &'static str,
    ) -> Result<(String, String), ChangesError> {
        let path = self.working_dir.join(name);
        match self.read_optional(&path)? {
            Some(text) => Ok((self.rel(&path), text)),
            None => Err(ChangesError::MissingManifest {
                ecosystem,
                expected: name,
                dir: self.rel(&self.working_dir),
            }),
        }
    }

    /// The error for a lock file that is nowhere between the working directory and the root.
    pub(crate) fn missing_lock(
        &self,
        ecosystem: &'static str,
        expected: &'static str,
    ) -> ChangesError {
        ChangesError::MissingLock {
            ecosystem,
            expected,
            dir: self.rel(&self.working_dir),
        }
    }
}

fn relative(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .map(|rel| {
            rel.components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/")
        })
        .unwrap_or_default()
}

/// Runs a third-party parser, turning a panic into a parse error: the input is hostile and a
/// parser's `unwrap` must not take Quartermaster down with it.
pub(crate) fn guarded<T>(
    file: &str,
    parse: impl FnOnce() -> Result<T, ChangesError> + std::panic::UnwindSafe,
) -> Result<T, ChangesError> {
    std::panic::catch_unwind(parse).unwrap_or_else(|_| {
        Err(ChangesError::parse(
            file,
            None,
            "the parser failed on this input",
        ))
    })
}
