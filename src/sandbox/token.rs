//! Token hygiene: once read, the token leaves the process environment *and* the initial
//! environment block the kernel shows in `/proc/<pid>/environ` (libc's `unsetenv` only drops the
//! pointer, the bytes stay); and a check of whether the parent process still holds it.

use super::{LaunchError, SandboxError};
use std::ffi::OsString;
use std::os::unix::fs::FileExt;

/// Removes `name` from the environment and overwrites every `name=...` entry of the initial
/// environment block with zeros; returns the value it had. Call it at start-up, before any other
/// thread exists: it refuses to run otherwise.
pub(crate) fn take_env(name: &str) -> Result<Option<OsString>, SandboxError> {
    single_threaded(name)?;
    let value = std::env::var_os(name);
    // SAFETY: the process has a single thread (checked above), so nothing reads or writes the
    // environment concurrently.
    unsafe { std::env::remove_var(name) };
    let prefix = [name.as_bytes(), b"="].concat();
    wipe_block(|entry| entry.starts_with(&prefix))?;
    Ok(value)
}

/// Removes every variable whose value contains `secret`, from the environment and from the
/// initial block (a container action also receives its token as `INPUT_TOKEN`); returns their
/// names. Same start-up rule as [`take_env`].
pub(crate) fn wipe_value(secret: &str) -> Result<Vec<String>, SandboxError> {
    if secret.is_empty() {
        return Ok(Vec::new());
    }
    single_threaded("the token")?;
    let names: Vec<OsString> = std::env::vars_os()
        .filter(|(_, value)| value.to_string_lossy().contains(secret))
        .map(|(name, _)| name)
        .collect();
    for name in &names {
        // SAFETY: single-threaded, as above.
        unsafe { std::env::remove_var(name) };
    }
    let needle = secret.as_bytes();
    wipe_block(|entry| entry.windows(needle.len()).any(|w| w == needle))?;
    Ok(names
        .iter()
        .map(|n| n.to_string_lossy().into_owned())
        .collect())
}

fn single_threaded(what: &str) -> Result<(), SandboxError> {
    let me = procfs::process::Process::myself().map_err(proc_error)?;
    let threads = me.status().map_err(proc_error)?.threads;
    if threads == 1 {
        Ok(())
    } else {
        Err(LaunchError::Threads {
            what: what.to_string(),
            threads,
        }
        .into())
    }
}

fn proc_error(source: procfs::ProcError) -> SandboxError {
    LaunchError::Proc {
        what: "/proc/self",
        source,
    }
    .into()
}

/// Zeroes the entries of the initial environment block that `matches`, through `/proc/self/mem`
/// (no raw pointer is needed).
fn wipe_block(matches: impl Fn(&[u8]) -> bool) -> Result<(), SandboxError> {
    let stat = procfs::process::Process::myself()
        .and_then(|me| me.stat())
        .map_err(proc_error)?;
    let (Some(start), Some(end)) = (stat.env_start, stat.env_end) else {
        return Err(LaunchError::NoEnvironmentBlock.into());
    };
    let io = |what: &'static str| SandboxError::io(format!("{what} the environment block"));
    let mem = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/proc/self/mem")
        .map_err(io("cannot open"))?;
    let len = usize::try_from(end.saturating_sub(start)).unwrap_or(0);
    let mut block = vec![0u8; len];
    mem.read_exact_at(&mut block, start)
        .map_err(io("cannot read"))?;
    let mut offset = 0;
    for entry in block.split(|b| *b == 0) {
        if !entry.is_empty() && matches(entry) {
            let zeros = vec![0u8; entry.len()];
            mem.write_all_at(&zeros, start + offset as u64)
                .map_err(io("cannot overwrite"))?;
        }
        offset += entry.len() + 1;
    }
    Ok(())
}

/// Whether the parent process's environment holds the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ParentEnv {
    /// Quartermaster has no parent in its PID namespace (it is a container's PID 1).
    NoParent,
    Clean {
        pid: u32,
    },
    /// These variables of the parent hold the token.
    Holds {
        pid: u32,
        names: Vec<String>,
    },
    /// The parent's environment could not be read (another user's process, usually).
    Unreadable {
        pid: u32,
        why: String,
    },
}

/// Reads `/proc/<ppid>/environ` for any variable whose value contains `secret`.
pub(crate) fn parent_env(secret: &str) -> ParentEnv {
    let pid = std::os::unix::process::parent_id();
    if pid == 0 {
        return ParentEnv::NoParent;
    }
    let environ = procfs::process::Process::new(pid as i32).and_then(|p| p.environ());
    match environ {
        Ok(vars) => {
            let mut names: Vec<String> = vars
                .iter()
                .filter(|(_, v)| !secret.is_empty() && v.to_string_lossy().contains(secret))
                .map(|(k, _)| k.to_string_lossy().into_owned())
                .collect();
            names.sort();
            if names.is_empty() {
                ParentEnv::Clean { pid }
            } else {
                ParentEnv::Holds { pid, names }
            }
        }
        Err(e) => ParentEnv::Unreadable {
            pid,
            why: e.to_string(),
        },
    }
}

impl ParentEnv {
    /// The warning to print, when there is one.
    pub(crate) fn warning(&self) -> Option<String> {
        match self {
            ParentEnv::Holds { pid, names } => Some(format!(
                "the parent process (pid {pid}) holds the token in its environment ({}): anything that can read /proc/{pid}/environ can read it; start Quartermaster with `exec` (for example `exec quartermaster run ...`) so that no shell stays behind holding it",
                names.join(", ")
            )),
            _ => None,
        }
    }
}
