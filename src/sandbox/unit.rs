//! A unit: one branch being built in one slot, with its own HOME, TMPDIR and work directory,
//! removed when the unit is dropped.

use super::guard::{PermissionGuard, Watch};
use super::job::{Exposure, Job, JobAction, MountPlan, Report, SlotIdentity};
use super::layers::CellCaches;
use super::layout::{self, Layout};
use super::outcome::{Exit, ProcessOutcome, append_log, redacted_tail};
use super::{LaunchError, Level, Sandbox, SandboxError, ToolConfig, cgroup, limits, spawn};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a unit needs besides the sandbox's own settings.
#[derive(Debug, Clone, Default)]
pub struct UnitSpec {
    /// Which concurrent slot (and so which uid) the unit uses: below the configured count.
    pub slot: u32,
    /// More private paths for this unit only (its workspace's git directory).
    pub hidden: Vec<PathBuf>,
    /// Directories outside the unit's own that its commands may write (a worktree placed
    /// elsewhere); handed to the slot uid when commands run as one.
    pub writable: Vec<PathBuf>,
    /// The run's warm-up: what its commands write in the caches is kept for every later unit.
    pub warm_up: bool,
    /// The writable paths are a layered workspace, the slot's already through its idmap:
    /// nothing is handed over.
    pub layered: bool,
}

/// One program to run in a unit.
pub struct Program<'a> {
    pub argv: &'a [String],
    pub cwd: &'a Path,
    /// The scrubbed environment; the unit replaces HOME, TMPDIR and the tools' locations.
    pub env: &'a BTreeMap<OsString, OsString>,
    pub timeout: Duration,
    /// Strings that must never appear in captured output.
    pub secrets: &'a [String],
    /// A log file the whole output is appended to (redacted, after a header line), if any.
    pub log: Option<&'a Path>,
}

pub struct Cell<'a> {
    pub(crate) sandbox: &'a Sandbox,
    pub(crate) slot: u32,
    pub(crate) identity: Option<SlotIdentity>,
    pub(crate) layout: Layout,
    pub(crate) hidden: Vec<PathBuf>,
    pub(crate) writable: Vec<PathBuf>,
    pub(crate) seeds: Vec<(ToolConfig, PathBuf)>,
    pub(crate) seed_watch: Watch,
    /// The uid level's permission changes on this unit's own hidden paths, undone on drop.
    pub(crate) permissions: Option<PermissionGuard>,
    /// The unit's own cgroup, when the runner delegates cgroups.
    pub(crate) cgroup: Option<PathBuf>,
    /// The unit's own layer over the run's warm caches, when it has one.
    pub(crate) caches: Option<CellCaches>,
}

impl Cell<'_> {
    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// The unit's HOME (fresh, removed with the unit).
    pub fn home(&self) -> &Path {
        &self.layout.home
    }

    /// Hands `path` (a tree Quartermaster wrote, such as a worktree it reset) to the slot's uid
    /// so that commands can write it; nothing to do when commands keep Quartermaster's uid.
    pub(crate) fn grant(&self, path: &Path) -> Result<(), SandboxError> {
        match self.identity {
            Some(owner) => layout::chown_tree(path, owner).map_err(SandboxError::io(format!(
                "cannot hand {} to the sandbox user",
                path.display()
            ))),
            None => Ok(()),
        }
    }

    /// Runs one command to completion, timeout or interrupt; then checks that the runner's
    /// file-command files and the seeded configuration are unchanged. A sandbox failure or a
    /// containment breach is an error; how the command itself ended is in the outcome.
    pub fn run(&self, command: &Program<'_>) -> Result<ProcessOutcome, SandboxError> {
        let started = Instant::now();
        let finish = |exit: Exit, tail: &[u8], full: &[String]| {
            let output_tail = redacted_tail(&String::from_utf8_lossy(tail), command.secrets);
            let limit = (!exit.success())
                .then(|| self.limit_bitten(&exit, full, &output_tail))
                .flatten();
            ProcessOutcome {
                exit,
                duration: started.elapsed(),
                output_tail,
                limit,
            }
        };
        if spawn::interrupted() {
            let exit = Exit::SpawnFailed("the run is being interrupted".into());
            return Ok(finish(exit, b"", &[]));
        }
        let action = JobAction::Exec(command.argv.to_vec());
        let job = self.job(action, command.cwd, command.env, command.timeout)?;
        // The output goes to a private file first: the log gets it redacted.
        let mut tee = match command.log {
            Some(_) => Some(tempfile::tempfile().map_err(SandboxError::io(
                "cannot create a file for the command's log",
            ))?),
            None => None,
        };
        let copy = tee.as_ref().map(std::fs::File::try_clone).transpose();
        let copy = copy.map_err(SandboxError::io(
            "cannot create a file for the command's log",
        ))?;
        let ran = self.sandbox.zygote.run(&job, copy, self.cache_mount()?)?;
        let full: Vec<String> = ran
            .reports
            .iter()
            .filter_map(|r| match r {
                Report::Full(path) => Some(path.display().to_string()),
                _ => None,
            })
            .collect();
        let exit = verdict(ran.reports, command.timeout, self.identity)?;
        self.sandbox.watch.verify_file_commands()?;
        self.verify_seeds()?;
        let outcome = finish(exit, &ran.tail, &full);
        if let (Some(path), Some(tee)) = (command.log, tee.as_mut()) {
            let header = format!(
                "$ {}  ({}, {:.1}s)",
                command.argv.join(" "),
                outcome.exit,
                outcome.duration.as_secs_f64()
            );
            append_log(tee, ran.total, &header, path, command.secrets).map_err(
                SandboxError::io(format!("cannot write the log {}", path.display())),
            )?;
        }
        Ok(outcome)
    }

    /// The resource limit that stopped a failed command, if one did (see [`super::Limits`]).
    fn limit_bitten(&self, exit: &Exit, full: &[String], output: &str) -> Option<String> {
        let limits = self.sandbox.limits();
        match (&self.cgroup, self.sandbox.level) {
            (_, Level::None) => None,
            (Some(dir), _) => cgroup::bitten(dir, limits),
            (None, _) => {
                let signal = match exit {
                    Exit::Signal(s) => Some(*s),
                    _ => None,
                };
                limits::bitten(limits, signal, full, output)
            }
        }
    }

    /// Resolves `programs` as the command identity would (the probe's trial).
    pub(crate) fn resolve(
        &self,
        programs: &[String],
        env: &BTreeMap<OsString, OsString>,
    ) -> Result<Vec<(String, Option<PathBuf>)>, SandboxError> {
        let job = self.job(
            JobAction::Check(programs.to_vec()),
            &self.layout.work,
            env,
            Duration::from_secs(30),
        )?;
        let ran = self.sandbox.zygote.run(&job, None, self.cache_mount()?)?;
        let mut failure = None;
        for report in ran.reports {
            match report {
                Report::Resolved(found) => return Ok(found),
                Report::Reachable { path, how } => {
                    return Err(SandboxError::Reachable { path, how });
                }
                Report::Setup(why) | Report::SpawnFailed(why) => {
                    failure = Some(LaunchError::Reported(why));
                }
                _ => {}
            }
        }
        Err(failure.unwrap_or(LaunchError::NothingReported).into())
    }

    fn job(
        &self,
        action: JobAction,
        cwd: &Path,
        env: &BTreeMap<OsString, OsString>,
        timeout: Duration,
    ) -> Result<Job, SandboxError> {
        let sandbox = self.sandbox;
        let seeded: Vec<ToolConfig> = self.seeds.iter().map(|(tool, _)| *tool).collect();
        let view = self.caches.as_ref().and_then(|_| sandbox.cache_view());
        let env = utf8_env(self.layout.env(env, &seeded, &sandbox.toolchain_env, view))?;
        let mut protected = sandbox.protected.clone();
        protected.extend(self.hidden.iter().cloned());
        let mounts = if sandbox.level.namespaced() {
            let rw = std::iter::once(&self.layout.dir).chain(&self.writable);
            let mut expose: Vec<Exposure> = rw
                .map(|path| Exposure {
                    path: path.clone(),
                    writable: true,
                })
                .collect();
            expose.extend(sandbox.toolchain_dirs.iter().map(|path| Exposure {
                path: path.clone(),
                writable: false,
            }));
            let mut hide = sandbox.hide.clone();
            hide.extend(self.hidden.iter().cloned());
            MountPlan {
                hide,
                fresh: sandbox.fresh.clone(),
                fresh_size: sandbox.config.limits.tmpfs,
                expose,
                caches: view.map(Path::to_path_buf),
            }
        } else {
            MountPlan::default()
        };
        Ok(Job {
            level: sandbox.level,
            action,
            cwd: cwd.to_path_buf(),
            env,
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            identity: self.identity,
            mounts,
            protected,
            limits: sandbox.config.limits,
            cgroup: self.cgroup.clone(),
        })
    }

    fn verify_seeds(&self) -> Result<(), SandboxError> {
        match self.seed_watch.changed() {
            Some((path, what)) => {
                let tool = self
                    .seeds
                    .iter()
                    .find(|(_, p)| *p == path)
                    .map_or("?", |(tool, _)| tool.name());
                Err(SandboxError::SeedChanged { tool, path, what })
            }
            None => Ok(()),
        }
    }
}

/// How the command ended, from the helper's reports; a containment failure is an error.
fn verdict(
    reports: Vec<Report>,
    timeout: Duration,
    identity: Option<SlotIdentity>,
) -> Result<Exit, SandboxError> {
    let mut exit = None;
    for report in reports {
        let this = match report {
            Report::Reachable { path, how } => {
                return Err(SandboxError::Reachable { path, how });
            }
            Report::Survivors(pids) => {
                let pids: Vec<String> = pids.iter().map(i32::to_string).collect();
                return Err(SandboxError::Survivors {
                    uid: identity.map_or(0, |i| i.uid),
                    pids: pids.join(", "),
                });
            }
            Report::Setup(why) => return Err(LaunchError::Reported(why).into()),
            Report::SpawnFailed(why) => (0, Exit::SpawnFailed(why)),
            Report::TimedOut => (1, Exit::TimedOut(timeout)),
            Report::Interrupted => (2, Exit::Signal(nix::sys::signal::Signal::SIGKILL as i32)),
            Report::Exited(code) => (3, Exit::Code(code)),
            Report::Signalled(signal) => (3, Exit::Signal(signal)),
            Report::Resolved(_) | Report::Full(_) => continue,
        };
        // The most telling report wins: a spawn failure, then a timeout, then an interrupt.
        if exit.as_ref().is_none_or(|(rank, _)| this.0 < *rank) {
            exit = Some(this);
        }
    }
    exit.map(|(_, exit)| exit)
        .ok_or(LaunchError::NoResult.into())
}

/// The job's environment: JSON carries text, so a variable that is not UTF-8 is refused (named,
/// never quoted: its value may be a secret).
fn utf8_env(env: BTreeMap<OsString, OsString>) -> Result<Vec<(String, String)>, SandboxError> {
    env.into_iter()
        .map(|(k, v)| {
            let name = k.to_string_lossy().into_owned();
            let not_utf8 = |what: String| SandboxError::NotUtf8 { what };
            let k = k
                .into_string()
                .map_err(|_| not_utf8(format!("the environment variable name {name}")))?;
            let v = v
                .into_string()
                .map_err(|_| not_utf8(format!("the value of {name}")))?;
            Ok((k, v))
        })
        .collect()
}

impl Drop for Cell<'_> {
    fn drop(&mut self) {
        let _ = layout::remove_tree(&self.layout.dir);
        if let Some(caches) = self.caches.take() {
            caches.drop_layer();
        }
        if let Some(dir) = &self.cgroup {
            cgroup::remove(dir);
        }
        // Without namespaces, /tmp, /var/tmp and /dev/shm are shared by every slot.
        if let (Some(identity), Level::Uid) = (self.identity, self.sandbox.level) {
            layout::sweep_shared_dirs(identity.uid);
        }
        self.sandbox.release(self.slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    #[test]
    fn containment_failures_are_errors_and_the_most_telling_exit_wins() {
        let t = Duration::from_secs(5);
        let id = Some(SlotIdentity {
            uid: 61_000,
            gid: 61_000,
        });
        let err = |reports| verdict(reports, t, id).unwrap_err().to_string();
        assert_eq!(
            err(vec![Report::Exited(0), Report::Survivors(vec![12, 13])]),
            "processes of uid 61000 survived the end of the command (pid 12, 13)"
        );
        let reachable = Report::Reachable {
            path: PathBuf::from("/checkout"),
            how: "readable".into(),
        };
        assert_eq!(
            err(vec![reachable]),
            "/checkout is within reach of sandboxed commands (readable); refusing to run"
        );
        assert_eq!(
            err(vec![]),
            "the sandbox could not be set up: the sandbox helper ended without a result"
        );
        let exit = verdict(vec![Report::Exited(1), Report::TimedOut], t, id).unwrap();
        assert_eq!(exit, Exit::TimedOut(t));
        let spawn = Report::SpawnFailed("program `x` not found in PATH".into());
        let exit = verdict(vec![spawn, Report::Exited(127)], t, id).unwrap();
        assert_eq!(
            exit.to_string(),
            "could not start: program `x` not found in PATH"
        );
    }

    #[test]
    fn an_environment_that_is_not_utf8_is_refused() {
        let mut env = BTreeMap::new();
        env.insert(
            OsString::from("LANG"),
            OsString::from_vec(b"C.\xff".to_vec()),
        );
        assert_eq!(
            utf8_env(env).unwrap_err().to_string(),
            "the value of LANG is not valid UTF-8 and cannot be passed to a sandboxed command"
        );
    }
}
