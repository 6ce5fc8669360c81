//! Where files are read from, and how: the one reader of every lock file and manifest.
//!
//! Files are written by the commands that ran, that is by hostile code. So a file is opened
//! without following any symbolic link on its way from the repository root (a link could make
//! Quartermaster read, and quote in a parse error, any file on the machine), non-blocking (a FIFO
//! planted where a lock file belongs would block the read forever), and must then be a regular
//! file no larger than its format's cap. The parsers' own budgets are in [`super::budget`].

use super::ChangesError;
use nix::errno::Errno;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

const MIB: u64 = 1024 * 1024;

/// The largest file of each kind that is parsed: several times the largest real ones (public
/// `package-lock.json` files reach a few tens of MiB), and small enough that parsing stays within
/// a few hundred MiB of memory.
pub(crate) fn size_limit(name: &str) -> u64 {
    match name {
        "package-lock.json" | "npm-shrinkwrap.json" | "yarn.lock" => 128 * MIB,
        "pnpm-lock.yaml" | "bun.lock" | "go.sum" => 64 * MIB,
        "Cargo.lock" | "poetry.lock" | "uv.lock" | "Gemfile.lock" | "gems.locked" => 32 * MIB,
        name if name.ends_with(".txt") => 16 * MIB,
        // Manifests (package.json, Cargo.toml, pyproject.toml, Gemfile, go.mod) and the
        // toolchain files (.nvmrc, rust-toolchain.toml, ...).
        _ => 4 * MIB,
    }
}

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

    /// The text of `path` (inside the root); `None` when it does not exist.
    pub(crate) fn read_optional(&self, path: &Path) -> Result<Option<String>, ChangesError> {
        let file = self.rel(path);
        let opened = match path.strip_prefix(&self.root) {
            Ok(rel) => open_beneath(&self.root, rel),
            Err(_) => return Err(ChangesError::OutsideRoot(path.display().to_string())),
        };
        let text = read_opened(opened, &file, size_limit(&file_name(path)))?;
        let bytes = text.as_ref().map(|t| t.as_bytes().to_vec());
        self.read.borrow_mut().insert(file, bytes);
        Ok(text)
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

/// The text of a lock file or manifest at `path`, named `file` in errors, when no repository root
/// is at hand: only its last component may not be a symbolic link. `None` when it does not exist.
pub(crate) fn read_file(path: &Path, file: &str) -> Result<Option<String>, ChangesError> {
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits())
        .open(path);
    read_opened(opened, file, size_limit(&file_name(path)))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Opens `rel` below `root` with no symbolic link anywhere on the way, nor `..` leaving it.
fn open_beneath(root: &Path, rel: &Path) -> std::io::Result<File> {
    let dir = nix::fcntl::open(
        root,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )?;
    let how = OpenHow::new()
        .flags(OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOCTTY | OFlag::O_CLOEXEC)
        .resolve(
            ResolveFlag::RESOLVE_NO_SYMLINKS
                | ResolveFlag::RESOLVE_BENEATH
                | ResolveFlag::RESOLVE_NO_MAGICLINKS,
        );
    match nix::fcntl::openat2(&dir, rel, how) {
        Ok(fd) => Ok(File::from(fd)),
        // A kernel older than 5.6: the last component at least is not followed.
        Err(Errno::ENOSYS) => std::fs::OpenOptions::new()
            .read(true)
            .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits())
            .open(root.join(rel)),
        Err(e) => Err(e.into()),
    }
}

/// Checks what was opened (a regular file within `limit` bytes) and reads it as UTF-8.
fn read_opened(
    opened: std::io::Result<File>,
    file: &str,
    limit: u64,
) -> Result<Option<String>, ChangesError> {
    let read_error = |source| ChangesError::Read {
        file: file.to_string(),
        source,
    };
    let handle = match opened {
        Ok(handle) => handle,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(Errno::ELOOP as i32) => {
            return Err(ChangesError::Symlink {
                file: file.to_string(),
            });
        }
        Err(e) => return Err(read_error(e)),
    };
    let meta = handle.metadata().map_err(read_error)?;
    if let Some(kind) = not_regular(&meta.file_type()) {
        return Err(ChangesError::NotRegular {
            file: file.to_string(),
            kind,
        });
    }
    let too_large = || ChangesError::TooLarge {
        file: file.to_string(),
        limit,
    };
    if meta.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // The file may grow while it is read: no more than the cap is ever taken in.
    handle
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|e| read_error(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

/// What a file that is not a regular file is, for the message.
fn not_regular(kind: &std::fs::FileType) -> Option<&'static str> {
    if kind.is_file() {
        None
    } else if kind.is_dir() {
        Some("a directory")
    } else if kind.is_fifo() {
        Some("a FIFO")
    } else if kind.is_socket() {
        Some("a socket")
    } else if kind.is_block_device() || kind.is_char_device() {
        Some("a device")
    } else {
        Some("a special file")
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
