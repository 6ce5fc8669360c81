//! A sandbox for every process Quartermaster starts, per unit (one branch being built).
//!
//! [`Sandbox::probe`] picks the strongest isolation available and proves it with a trial run:
//!
//! | level | when | identity | reach | nothing outlives a command |
//! |---|---|---|---|---|
//! | `uid+namespaces` | root with CAP_SYS_ADMIN | slot uid, no capability, `no_new_privs` | mount namespace: read-only file system, private paths covered, fresh `/tmp` and `/proc` | PID namespace |
//! | `uid` | root without it (a container) | the same | file permissions (other bits removed, restored exactly) | kill-by-uid |
//! | `namespaces` | unprivileged, user namespaces allowed | the operator's uid, no capability | the same mount namespace | PID namespace |
//! | `none` | only when asked for | Quartermaster's | none | freeze-then-kill of descendants |
//!
//! Every command runs through a helper: Quartermaster's own binary re-executed with a hidden
//! first argument ([`enter_if_requested`] must be the first call in `main`), a fresh
//! single-threaded process that enters the namespaces, forks the namespace's init and watches
//! the deadline. Before `exec`, the command checks as its final identity that it can neither read
//! nor write any protected path, and refuses to run if it can.

mod cgroup;
mod child;
mod claim;
mod config;
mod error;
mod guard;
mod helper;
mod identity;
mod job;
pub(crate) mod layers;
mod layout;
mod limits;
pub(crate) mod mounts;
mod outcome;
mod probe;
mod reaper;
mod spawn;
mod token;
mod unit;
pub(crate) mod workspaces;

pub use cgroup::CgroupError;
pub(crate) use claim::CLAIMS_DIR;
pub use config::{
    CONTAINER_FILE_COMMANDS, DEFAULT_UID_BASE, FILE_COMMAND_VARS, Isolation, Level, SandboxConfig,
    Seed, ToolConfig,
};
pub use error::{LaunchError, SandboxError};
pub use helper::{HELPER_ARG, enter_if_requested};
pub use layers::{Caches, LayerError};
pub use limits::{Limits, Size};
pub use outcome::{Exit, OUTPUT_TAIL_BYTES, ProcessOutcome, redact};
pub use probe::Sandbox;
pub(crate) use spawn::interrupt;
pub(crate) use token::{parent_env, take_env, wipe_value};
pub use unit::{Cell, Program, UnitSpec};
pub use workspaces::{Workspaces, enter_private_mounts};
