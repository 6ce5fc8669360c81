//! What one unit's commands may take of the runner, so that no unit can exhaust it for the
//! others: processes, memory, file size, open files, the size of its fresh `/tmp`, `/var/tmp` and
//! `/dev/shm`, and its share of the CPU. The defaults are far above what a test suite needs.
//!
//! Under a cgroup v2 child of its own (see [`super::cgroup`]) a unit's processes and memory are
//! counted together, and the kernel says when a limit bit. Otherwise each process gets rlimits:
//! `RLIMIT_NPROC` (the slot's uid, or the user namespace, holds only the unit's processes),
//! `RLIMIT_DATA` for memory (the writable memory of each process: `RLIMIT_AS` would also count
//! what runtimes merely reserve, such as V8's 4 GiB pointer cage, and stop `node` from starting),
//! `RLIMIT_FSIZE` and `RLIMIT_NOFILE`. With `--isolation none` no limit applies.

use super::SandboxError;
use serde::{Deserialize, Serialize};
use std::fmt;

const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;

/// The limits of each unit; `None` is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Processes and threads at once.
    pub processes: Option<u64>,
    /// Memory in bytes: the unit's under a cgroup, each process's writable memory otherwise.
    pub memory: Option<u64>,
    /// The largest file a command may write, in bytes.
    pub(crate) file_size: Option<u64>,
    /// Files open at once, per process.
    pub(crate) open_files: Option<u64>,
    /// The size of each fresh `/tmp`, `/var/tmp` and `/dev/shm`, in bytes (namespace levels).
    pub tmpfs: Option<u64>,
    /// The unit's CPU weight under a cgroup (1 to 10000; a cgroup's default is 100).
    pub(crate) cpu_weight: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            processes: Some(8192),
            memory: Some(default_memory()),
            file_size: Some(8 * GIB),
            open_files: Some(65_536),
            tmpfs: Some(GIB),
            // Half the weight of the runner's own processes: the runner stays responsive.
            cpu_weight: Some(50),
        }
    }
}

/// Three quarters of the machine's memory (8 GiB when it cannot be read), to the MiB.
fn default_memory() -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(8 * GIB, |kib| kib * 1024 / 4 * 3);
    total / MIB * MIB
}

impl Limits {
    /// Sets one limit from `KEY=VALUE` (`memory=4GiB`, `processes=2048`, `tmpfs=off`).
    pub fn set(&mut self, item: &str) -> Result<(), SandboxError> {
        let bad = |why: String| SandboxError::BadLimit {
            given: item.to_string(),
            why,
        };
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| bad("expected KEY=VALUE".into()))?;
        let (slot, size) = match key.trim() {
            "processes" => (&mut self.processes, false),
            "memory" => (&mut self.memory, true),
            "file-size" => (&mut self.file_size, true),
            "open-files" => (&mut self.open_files, false),
            "tmpfs" => (&mut self.tmpfs, true),
            "cpu-weight" => (&mut self.cpu_weight, false),
            other => {
                return Err(bad(format!(
                    "unknown limit `{other}`; known: processes, memory, file-size, open-files, tmpfs, cpu-weight"
                )));
            }
        };
        let value = value.trim();
        *slot =
            if matches!(value, "off" | "unlimited") {
                None
            } else if size {
                Some(parse_size(value).ok_or_else(|| {
                    bad(format!("`{value}` is not a size such as 512MiB or 4GiB"))
                })?)
            } else {
                Some(
                    value
                        .parse()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| bad(format!("`{value}` is not a positive number")))?,
                )
            };
        if key.trim() == "cpu-weight" && self.cpu_weight.is_some_and(|w| w > 10_000) {
            return Err(bad("a CPU weight is 1 to 10000".into()));
        }
        Ok(())
    }
}

/// `4GiB`, `512MiB`, `64KiB`, `1024` (bytes); `G`, `M`, `K` mean the same.
fn parse_size(text: &str) -> Option<u64> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let factor = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1024,
        "m" | "mib" => MIB,
        "g" | "gib" => GIB,
        "t" | "tib" => 1024 * GIB,
        _ => return None,
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .filter(|n| *n > 0)
}

/// A size as people read it: `4 GiB`, `1.5 GiB`, `512 MiB`.
pub struct Size(pub u64);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units = [
            (1024 * GIB, "TiB"),
            (GIB, "GiB"),
            (MIB, "MiB"),
            (1024, "KiB"),
        ];
        for (factor, unit) in units {
            if self.0 >= factor {
                let tenths = self.0 * 10 / factor;
                return if tenths.is_multiple_of(10) {
                    write!(f, "{} {unit}", tenths / 10)
                } else {
                    write!(f, "{}.{} {unit}", tenths / 10, tenths % 10)
                };
            }
        }
        write!(f, "{} bytes", self.0)
    }
}

/// Applies the rlimits to the current process (the command, about to `exec`): soft and hard,
/// so that it cannot raise them again. `counted_by_cgroup` leaves processes and memory to the
/// cgroup, which counts the whole unit.
pub(crate) fn apply_rlimits(
    limits: &Limits,
    counted_by_cgroup: bool,
) -> Result<(), super::LaunchError> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let mut wanted = vec![
        (Resource::RLIMIT_FSIZE, limits.file_size, "file size"),
        (Resource::RLIMIT_NOFILE, limits.open_files, "open files"),
    ];
    if !counted_by_cgroup {
        wanted.push((Resource::RLIMIT_NPROC, limits.processes, "processes"));
        wanted.push((Resource::RLIMIT_DATA, limits.memory, "memory"));
    }
    for (resource, limit, what) in wanted {
        let Some(limit) = limit else {
            continue;
        };
        // Never above the hard limit this process already has (raising it needs privileges).
        let (_, hard) =
            getrlimit(resource).map_err(|source| super::LaunchError::ReadLimit { what, source })?;
        let limit = limit.min(hard);
        setrlimit(resource, limit, limit)
            .map_err(|source| super::LaunchError::SetLimit { what, source })?;
    }
    Ok(())
}

const XFSZ: i32 = nix::sys::signal::Signal::SIGXFSZ as i32;

/// Which limit most likely stopped a command that failed, from how it ended and what it
/// printed, when no cgroup counted it: exact for a file-size kill (SIGXFSZ) and a full tmpfs,
/// a reading of the output otherwise.
pub(crate) fn bitten(
    limits: &Limits,
    signal: Option<i32>,
    full: &[String],
    output: &str,
) -> Option<String> {
    if let (Some(XFSZ), Some(size)) = (signal, limits.file_size) {
        return Some(format!("killed: file size limit {}", Size(size)));
    }
    if let (Some(dir), Some(size)) = (full.first(), limits.tmpfs) {
        return Some(format!("limit reached: {dir} is full ({})", Size(size)));
    }
    let said = |needles: &[&'static str]| needles.iter().find(|n| output.contains(**n)).copied();
    let readings = [
        (
            limits
                .file_size
                .map(|s| format!("file size limit {}", Size(s))),
            said(&["File size limit exceeded", "EFBIG"]),
        ),
        (
            limits.processes.map(|n| format!("limit of {n} processes")),
            said(&["Resource temporarily unavailable", "EAGAIN", "Cannot fork"]),
        ),
        (
            limits.memory.map(|s| format!("memory limit {}", Size(s))),
            said(&[
                "Cannot allocate memory",
                "ENOMEM",
                "MemoryError",
                "out of memory",
            ]),
        ),
        (
            limits
                .open_files
                .map(|n| format!("limit of {n} open files")),
            said(&["Too many open files", "EMFILE"]),
        ),
    ];
    readings.into_iter().find_map(|(limit, evidence)| {
        Some(format!(
            "probably stopped by the {} (the output says `{}`)",
            limit?, evidence?
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_set_by_name_and_refused_with_a_reason() {
        let mut limits = Limits::default();
        for item in ["memory=4GiB", "processes=200", "tmpfs=64M", "file-size=off"] {
            limits.set(item).unwrap();
        }
        assert_eq!(limits.memory, Some(4 * GIB));
        assert_eq!(limits.processes, Some(200));
        assert_eq!(limits.tmpfs, Some(64 * MIB));
        assert_eq!(limits.file_size, None);
        let err = |item: &str| Limits::default().set(item).unwrap_err().to_string();
        insta::assert_snapshot!(
            [
                err("memory"),
                err("disk=1G"),
                err("memory=lots"),
                err("processes=0"),
                err("cpu-weight=20000"),
            ]
            .join("\n")
        );
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(Size(4 * GIB).to_string(), "4 GiB");
        assert_eq!(Size(3 * GIB / 2).to_string(), "1.5 GiB");
        assert_eq!(Size(64 * MIB).to_string(), "64 MiB");
        assert_eq!(Size(12).to_string(), "12 bytes");
        assert_eq!(parse_size("1t"), Some(1024 * GIB));
        assert_eq!(parse_size("0"), None);
    }

    #[test]
    fn the_limit_that_stopped_a_command_is_named() {
        let limits = Limits {
            memory: Some(4 * GIB),
            ..Limits::default()
        };
        assert_eq!(
            bitten(&limits, Some(XFSZ), &[], "").unwrap(),
            "killed: file size limit 8 GiB"
        );
        assert_eq!(
            bitten(&limits, None, &["/dev/shm".into()], "").unwrap(),
            "limit reached: /dev/shm is full (1 GiB)"
        );
        assert_eq!(
            bitten(
                &limits,
                None,
                &[],
                "sh: fork: Resource temporarily unavailable"
            )
            .unwrap(),
            "probably stopped by the limit of 8192 processes (the output says `Resource temporarily unavailable`)"
        );
        assert_eq!(
            bitten(&limits, None, &[], "MemoryError").unwrap(),
            "probably stopped by the memory limit 4 GiB (the output says `MemoryError`)"
        );
        assert_eq!(bitten(&limits, None, &[], "assertion failed"), None);
        let none = Limits {
            processes: None,
            ..limits
        };
        assert_eq!(bitten(&none, None, &[], "EAGAIN"), None);
    }
}
