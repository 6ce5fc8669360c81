//! The plans directory. Reads take no lock: every write is a complete file renamed into place, so
//! a reader sees one revision or the next, never half of one. Every write (claim, finish, result,
//! `submit_plan`) happens under an exclusive `flock` on the sentinel `.plans.lock` in the same
//! directory, so Quartermaster's own processes never lose each other's writes. docker-agent 1.91
//! serialises its writes only within its own process (its documentation says two processes writing
//! one plan at the same instant race), so a docker-agent write at the very instant of a claim is the
//! one race left.

use super::error::StoreError;
use super::file::{Change, PlanFile};
use super::name::PlanName;
use super::{AUTHOR, IN_PROGRESS, PlanStatus, READY};
use nix::errno::Errno;
use nix::fcntl::OFlag;
use std::fs::{DirBuilder, File, OpenOptions, Permissions, TryLockError};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// The lock sentinel; never deleted (two processes must lock the same inode).
pub const LOCK_FILE: &str = ".plans.lock";
/// The largest content stored: a plan may be no larger ([`crate::plan::MAX_PLAN_BYTES`]).
pub const MAX_CONTENT_BYTES: usize = crate::plan::MAX_PLAN_BYTES;
/// The largest file read or written: content escaped at worst to six bytes a byte, plus room for
/// the other fields. It bounds memory for a hostile file.
pub const MAX_FILE_BYTES: usize = 6 * MAX_CONTENT_BYTES + (10 << 20);
/// How often a contended lock is tried again: short next to the time a write takes.
const LOCK_RETRY: Duration = Duration::from_millis(10);

/// A plans directory, as docker-agent's filesystem storage lays it out.
#[derive(Debug, Clone)]
pub struct PlanStore {
    dir: PathBuf,
    lock_timeout: Duration,
    clock: fn() -> SystemTime,
}

/// A plan Quartermaster has claimed: it is `in-progress` at [`Claim::revision`], and its content
/// is what the run executes.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    plan: PlanFile,
}

impl Claim {
    pub fn name(&self) -> &PlanName {
        self.plan.name()
    }

    /// The revision the claim wrote; finishing requires the plan to still be at it.
    pub fn revision(&self) -> i64 {
        self.plan.revision()
    }

    pub fn plan(&self) -> &PlanFile {
        &self.plan
    }
}

impl PlanStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            lock_timeout: Duration::from_secs(30),
            clock: SystemTime::now,
        }
    }

    /// How long a write waits for another process's lock before giving up (default 30 s).
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }

    /// Where `updatedAt` comes from (tests pin it).
    pub fn with_clock(mut self, clock: fn() -> SystemTime) -> Self {
        self.clock = clock;
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn path_of(&self, name: &PlanName) -> PathBuf {
        self.dir.join(name.file_name())
    }

    /// Reads a plan.
    pub fn read(&self, name: &PlanName) -> Result<PlanFile, StoreError> {
        self.load(name)?.ok_or_else(|| self.not_found(name))
    }

    /// Claims a plan for a run: under the lock, re-reads it, requires `required_status` (and
    /// `expected_revision`, when the caller read it before), then writes `in-progress` by
    /// `quartermaster` as the next revision. Exactly one of several concurrent claimers wins.
    pub fn claim(
        &self,
        name: &PlanName,
        expected_revision: Option<i64>,
        required_status: &str,
    ) -> Result<Claim, StoreError> {
        let plan = self.update(name, |current| {
            let current = current.ok_or_else(|| self.not_found(name))?;
            check_revision(current, expected_revision)?;
            if current.status() != required_status {
                return Err(StoreError::WrongStatus {
                    name: name.to_string(),
                    expected: required_status.to_string(),
                    found: describe_status(current.status()),
                    revision: current.revision(),
                });
            }
            Ok(Change {
                status: Some(IN_PROGRESS),
                author: Some(AUTHOR),
                ..Change::default()
            })
        })?;
        Ok(Claim { plan })
    }

    /// Records a claimed run's outcome as the plan's status, if the plan is still at the claim's
    /// revision. The content is left as it was.
    pub fn finish(&self, claim: &Claim, outcome: PlanStatus) -> Result<PlanFile, StoreError> {
        self.update(claim.name(), |current| {
            let current = current.ok_or_else(|| self.not_found(claim.name()))?;
            check_revision(current, Some(claim.revision()))?;
            Ok(Change {
                status: Some(outcome.as_str()),
                author: Some(AUTHOR),
                ..Change::default()
            })
        })
    }

    /// Creates or updates the result plan of a run: `content` (see [`super::result_content`]),
    /// status the outcome, author `quartermaster`.
    pub fn write_result(
        &self,
        result: &PlanName,
        outcome: PlanStatus,
        content: &str,
    ) -> Result<PlanFile, StoreError> {
        self.update(result, |_| {
            Ok(Change {
                title: Some("Quartermaster run result"),
                content: Some(content),
                author: Some(AUTHOR),
                status: Some(outcome.as_str()),
            })
        })
    }

    /// Writes a plan the agent submitted, with status `ready`. With `expected_revision` it is a
    /// compare-and-set; without, it creates the plan or replaces it, unless Quartermaster is
    /// running it.
    pub fn submit(
        &self,
        name: &PlanName,
        content: &str,
        author: Option<&str>,
        expected_revision: Option<i64>,
    ) -> Result<PlanFile, StoreError> {
        self.update(name, |current| {
            let revision = current.map_or(0, PlanFile::revision);
            match (current, expected_revision) {
                (_, Some(_)) => check_revision_of(name, revision, expected_revision)?,
                (Some(plan), None) if plan.status() == IN_PROGRESS => {
                    return Err(StoreError::InProgress {
                        name: name.to_string(),
                        revision,
                    });
                }
                _ => {}
            }
            Ok(Change {
                content: Some(content),
                author,
                status: Some(READY),
                ..Change::default()
            })
        })
    }

    /// Read, decide, write: the whole step under the directory's lock.
    fn update<'c>(
        &self,
        name: &PlanName,
        decide: impl FnOnce(Option<&PlanFile>) -> Result<Change<'c>, StoreError>,
    ) -> Result<PlanFile, StoreError> {
        let _lock = self.lock()?;
        let current = self.load(name)?;
        let change = decide(current.as_ref())?;
        let mut plan = current.unwrap_or_else(|| PlanFile::new(name.clone()));
        plan.apply(change, (self.clock)())?;
        let too_large = |what, size, max| StoreError::TooLarge {
            name: name.to_string(),
            what,
            size,
            max,
        };
        if plan.content().len() > MAX_CONTENT_BYTES {
            return Err(too_large(
                "content",
                plan.content().len(),
                MAX_CONTENT_BYTES,
            ));
        }
        // A file this store would refuse to read is never written.
        let bytes = plan.to_bytes();
        if bytes.len() > MAX_FILE_BYTES {
            return Err(too_large("JSON", bytes.len(), MAX_FILE_BYTES));
        }
        self.write_atomic(name, &bytes)?;
        Ok(plan)
    }

    fn not_found(&self, name: &PlanName) -> StoreError {
        StoreError::NotFound {
            name: name.to_string(),
            dir: self.dir.clone(),
        }
    }

    fn ensure_dir(&self) -> Result<(), StoreError> {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|e| StoreError::io("create the plans directory", &self.dir, e))
    }

    /// Takes the directory's exclusive lock; it is released when the returned file is closed.
    fn lock(&self) -> Result<File, StoreError> {
        self.ensure_dir()?;
        let path = self.dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC).bits())
            .open(&path)
            .map_err(|e| StoreError::io("open the plans lock", &path, e))?;
        let deadline = Instant::now() + self.lock_timeout;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(file),
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(LOCK_RETRY);
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(StoreError::LockTimeout {
                        path,
                        waited: humantime::format_duration(self.lock_timeout).to_string(),
                    });
                }
                Err(TryLockError::Error(e)) => {
                    return Err(StoreError::io("lock", &path, e));
                }
            }
        }
    }

    /// The plan, or `None` when there is no such file. Only a regular file is read (never a
    /// symbolic link, a directory, a pipe or a device), and never more than [`MAX_FILE_BYTES`].
    fn load(&self, name: &PlanName) -> Result<Option<PlanFile>, StoreError> {
        let path = self.path_of(name);
        // O_NONBLOCK: opening a FIFO planted in the directory must not hang.
        let opened = OpenOptions::new()
            .read(true)
            .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC).bits())
            .open(&path);
        let file = match opened {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) if e.raw_os_error() == Some(Errno::ELOOP as i32) => {
                return Err(StoreError::corrupt(
                    &path,
                    "it is a symbolic link, and only a regular file is read as a plan",
                ));
            }
            Err(e) => return Err(StoreError::io("read", &path, e)),
        };
        let meta = file
            .metadata()
            .map_err(|e| StoreError::io("read", &path, e))?;
        if meta.is_dir() {
            return Err(StoreError::corrupt(
                &path,
                "it is a directory, not a plan file",
            ));
        }
        if !meta.is_file() {
            return Err(StoreError::corrupt(
                &path,
                "it is not a regular file (a device or a named pipe?)",
            ));
        }
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| StoreError::io("read", &path, e))?;
        if bytes.len() > MAX_FILE_BYTES {
            return Err(StoreError::corrupt(
                &path,
                format!("it is larger than {MAX_FILE_BYTES} bytes"),
            ));
        }
        PlanFile::parse(name.clone(), &bytes, &path).map(Some)
    }

    /// Replaces the plan file atomically: a temporary file in the same directory (mode 0600),
    /// synced, renamed over the plan, then the directory synced.
    fn write_atomic(&self, name: &PlanName, bytes: &[u8]) -> Result<(), StoreError> {
        let path = self.path_of(name);
        // The name starts with a dot and does not end in `.json`, so docker-agent never lists a
        // temporary file as a plan.
        let mut tmp = tempfile::Builder::new()
            .prefix(&format!(".{}.", name.file_name()))
            .suffix(".tmp")
            .tempfile_in(&self.dir)
            .map_err(|e| StoreError::io("create a temporary file in", &self.dir, e))?;
        let written = tmp
            .as_file()
            .set_permissions(Permissions::from_mode(0o600))
            .and_then(|()| tmp.write_all(bytes))
            .and_then(|()| tmp.as_file().sync_all());
        written.map_err(|e| StoreError::io("write", tmp.path().to_path_buf(), e))?;
        tmp.persist(&path)
            .map_err(|e| StoreError::io("replace", &path, e.error))?;
        File::open(&self.dir)
            .and_then(|dir| dir.sync_all())
            .map_err(|e| StoreError::io("sync", &self.dir, e))
    }
}

fn check_revision(current: &PlanFile, expected: Option<i64>) -> Result<(), StoreError> {
    check_revision_of(current.name(), current.revision(), expected)
}

fn check_revision_of(
    name: &PlanName,
    current: i64,
    expected: Option<i64>,
) -> Result<(), StoreError> {
    match expected {
        Some(expected) if expected != current => Err(StoreError::Conflict {
            name: name.to_string(),
            expected,
            current,
        }),
        _ => Ok(()),
    }
}

fn describe_status(status: &str) -> String {
    if status.is_empty() {
        "(none)".to_string()
    } else {
        format!("`{}`", crate::finding::clip(status))
    }
}
