//! A cgroup v2 child per unit, where the runner delegates one: the unit's processes and memory
//! are then counted together (rlimits count one process at a time), its CPU weight is set, and
//! the kernel's event counters say which limit bit.
//!
//! A cgroup can give controllers to children only while it holds no process itself, so
//! Quartermaster's own cgroup must hold nothing but Quartermaster, which moves into a leaf
//! beside its units:
//!
//! ```text
//! <own cgroup>/                    +memory +pids +cpu for its children
//!   quartermaster-<pid>/           the same
//!     main/                        Quartermaster and its helpers
//!     unit-<n>/                    memory.max, pids.max, cpu.weight; one unit's commands
//! ```
//!
//! Without cgroup v2, without those controllers, without write access, or with other processes
//! in Quartermaster's cgroup (a shell that started it), units get rlimits instead.

use super::limits::{Limits, Size};
use std::path::{Path, PathBuf};

/// The controllers a unit's cgroup needs; `cpu` is used when offered.
const NEEDED: [&str; 2] = ["memory", "pids"];

/// Why units get no cgroup of their own (they get rlimits instead).
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error("no limits apply without a sandbox")]
    NoSandbox,
    #[error("this process is in no cgroup v2 hierarchy")]
    NoHierarchy,
    #[error("no cgroup v2 file system is mounted")]
    NotMounted,
    #[error("the runner delegates no `{controller}` controller to {}", own.display())]
    NotDelegated {
        controller: &'static str,
        own: PathBuf,
    },
    #[error("other processes share Quartermaster's cgroup {} (pid {pids})", own.display())]
    Shared { own: PathBuf, pids: String },
    #[error("reading {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("writing {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("creating {}: {source}", path.display())]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The cgroup tree of a run's units; restored when dropped.
#[derive(Debug)]
pub(crate) struct Cgroups {
    own: PathBuf,
    tree: PathBuf,
    cpu: bool,
}

/// The cgroup v2 directory of this process: its `0::` line in `/proc/self/cgroup` under the
/// cgroup2 mount of `/proc/self/mountinfo`.
pub(crate) fn own_dir(cgroup: &str, mountinfo: &str) -> Result<PathBuf, CgroupError> {
    let path = cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or(CgroupError::NoHierarchy)?;
    let mount = mountinfo
        .lines()
        .find_map(|line| {
            let (fields, fs) = line.split_once(" - ")?;
            fs.starts_with("cgroup2 ")
                .then(|| fields.split(' ').nth(4).map(PathBuf::from))?
        })
        .ok_or(CgroupError::NotMounted)?;
    Ok(mount.join(path.trim_start_matches('/')))
}

fn read(path: &Path) -> Result<String, CgroupError> {
    std::fs::read_to_string(path).map_err(|source| CgroupError::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn write(path: &Path, text: &str) -> Result<(), CgroupError> {
    std::fs::write(path, text).map_err(|source| CgroupError::Write {
        path: path.to_path_buf(),
        source,
    })
}

fn create(dir: &Path) -> Result<(), CgroupError> {
    std::fs::create_dir(dir).map_err(|source| CgroupError::Create {
        path: dir.to_path_buf(),
        source,
    })
}

impl Cgroups {
    /// Sets up the tree under this process's own cgroup, or says why it cannot be used.
    pub(crate) fn open() -> Result<Cgroups, CgroupError> {
        let own = own_dir(
            &read(Path::new("/proc/self/cgroup"))?,
            &read(Path::new("/proc/self/mountinfo"))?,
        )?;
        Cgroups::setup(&own, std::process::id())
    }

    /// The checks and moves of [`Cgroups::open`], on `own` for process `pid`.
    pub(crate) fn setup(own: &Path, pid: u32) -> Result<Cgroups, CgroupError> {
        let offered = read(&own.join("cgroup.controllers"))?;
        let offered: Vec<&str> = offered.split_whitespace().collect();
        if let Some(missing) = NEEDED.iter().find(|c| !offered.contains(c)) {
            return Err(CgroupError::NotDelegated {
                controller: missing,
                own: own.to_path_buf(),
            });
        }
        let others: Vec<String> = read(&own.join("cgroup.procs"))?
            .split_whitespace()
            .filter(|p| *p != pid.to_string())
            .map(String::from)
            .collect();
        if !others.is_empty() {
            return Err(CgroupError::Shared {
                own: own.to_path_buf(),
                pids: others.join(", "),
            });
        }
        let cpu = offered.contains(&"cpu");
        let tree = own.join(format!("quartermaster-{pid}"));
        let main = tree.join("main");
        for dir in [&tree, &main] {
            create(dir)?;
        }
        write(&main.join("cgroup.procs"), &pid.to_string())?;
        let controllers = if cpu {
            "+memory +pids +cpu"
        } else {
            "+memory +pids"
        };
        write(&own.join("cgroup.subtree_control"), controllers)?;
        write(&tree.join("cgroup.subtree_control"), controllers)?;
        Ok(Cgroups {
            own: own.to_path_buf(),
            tree,
            cpu,
        })
    }

    /// A fresh cgroup for a unit, with its limits written.
    pub(crate) fn unit(&self, name: &str, limits: &Limits) -> Result<PathBuf, CgroupError> {
        let dir = self.tree.join(name);
        create(&dir)?;
        let max = |limit: Option<u64>| limit.map_or("max".to_string(), |n| n.to_string());
        let written = write(&dir.join("pids.max"), &max(limits.processes))
            .and_then(|()| write(&dir.join("memory.max"), &max(limits.memory)))
            .and_then(|()| {
                // Swap would let the unit take the runner's memory all the same, only slower
                // (the file is there when the kernel accounts swap).
                let swap = dir.join("memory.swap.max");
                if swap.exists() {
                    write(&swap, "0")
                } else {
                    Ok(())
                }
            })
            .and_then(|()| match (self.cpu, limits.cpu_weight) {
                (true, Some(weight)) => write(&dir.join("cpu.weight"), &weight.to_string()),
                _ => Ok(()),
            });
        if let Err(why) = written {
            let _ = std::fs::remove_dir(&dir);
            return Err(why);
        }
        Ok(dir)
    }
}

/// Which limit the kernel says the unit in `dir` met: an out-of-memory kill, or a fork refused
/// at the process limit.
pub(crate) fn bitten(dir: &Path, limits: &Limits) -> Option<String> {
    let count = |file: &str, key: &str| {
        let text = std::fs::read_to_string(dir.join(file)).ok()?;
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.trim().parse::<u64>().ok())
    };
    if let (Some(1..), Some(memory)) = (count("memory.events", "oom_kill "), limits.memory) {
        return Some(format!("killed: memory limit {}", Size(memory)));
    }
    if let (Some(1..), Some(processes)) = (count("pids.events", "max "), limits.processes) {
        return Some(format!("limit reached: {processes} processes"));
    }
    None
}

/// Ends whatever is left in a unit's cgroup and removes it.
pub(crate) fn remove(dir: &Path) {
    let _ = std::fs::write(dir.join("cgroup.kill"), "1");
    for _ in 0..50 {
        if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

impl Drop for Cgroups {
    /// Gives the controllers back and moves Quartermaster back where it was.
    fn drop(&mut self) {
        let controllers = "-memory -pids -cpu";
        let _ = std::fs::write(self.tree.join("cgroup.subtree_control"), controllers);
        let _ = std::fs::write(self.own.join("cgroup.subtree_control"), controllers);
        let _ = std::fs::write(
            self.own.join("cgroup.procs"),
            std::process::id().to_string(),
        );
        let _ = std::fs::remove_dir(self.tree.join("main"));
        let _ = std::fs::remove_dir(&self.tree);
    }
}

#[cfg(test)]
mod tests;
