//! docker-agent's named plans as a plan source, and the place results go back to.
//!
//! docker-agent's `plan` toolset keeps each shared plan as `<plans-dir>/<name>.json` (default
//! `~/.cagent/plans`, under its `--data-dir`), a JSON object `{name, title, content, author,
//! status, revision, updatedAt}` written with Go's `json.MarshalIndent`, mode 0600 in a 0700
//! directory, by temporary file and rename. Every write bumps `revision`; a write that names a stale
//! `last_known_revision` is refused.
//!
//! Quartermaster reads the plan from `content` ([`plan_json`]), claims it ([`PlanStore::claim`]:
//! `ready` becomes `in-progress`, compare-and-set), records the outcome ([`PlanStore::finish`]:
//! `done`, `failed` or `invalid`), and writes the run's summary and report to the sibling plan
//! `<name>-result` ([`PlanStore::write_result`], [`result_content`]), where the agent reads it on
//! its next run. Fields docker-agent does not know are kept, in place.

mod content;
mod error;
mod file;
mod gojson;
mod name;
mod store;

pub use content::{plan_json, result_content};
pub use error::StoreError;
pub use file::{Change, PlanFile};
pub use name::PlanName;
pub use store::{Claim, LOCK_FILE, MAX_CONTENT_BYTES, MAX_FILE_BYTES, PlanStore};

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

/// How `--plan` names a docker-agent plan: `docker-agent:<name>`.
pub(crate) const SCHEME: &str = "docker-agent:";
/// The status a plan must have to be claimed, unless the operator asks for another.
pub(crate) const READY: &str = "ready";
/// The status of a plan Quartermaster is running.
pub(crate) const IN_PROGRESS: &str = "in-progress";
/// The author Quartermaster writes.
pub(crate) const AUTHOR: &str = "quartermaster";

/// The plan a `--plan` value names, if it uses the `docker-agent:` scheme.
pub fn parse_reference(value: &str) -> Option<Result<PlanName, StoreError>> {
    value.strip_prefix(SCHEME).map(PlanName::parse)
}

/// docker-agent's default plans directory for these `HOME` and `TMPDIR` values: `<data-dir>/plans`, where the data directory is
/// `$HOME/.cagent`, or `$TMPDIR/.cagent` (`/tmp/.cagent`) when `HOME` is unset or empty. docker-
/// agent's `--data-dir` replaces the data directory; Quartermaster's `--plans-dir` and
/// `QM_PLANS_DIR` replace the whole path.
pub fn plans_dir_for(home: Option<OsString>, tmpdir: Option<OsString>) -> PathBuf {
    let non_empty = |v: Option<OsString>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
    let data = match non_empty(home) {
        Some(home) => home.join(".cagent"),
        None => non_empty(tmpdir)
            .unwrap_or_else(|| PathBuf::from("/tmp"))
            .join(".cagent"),
    };
    // Go's filepath.Clean, which docker-agent applies: the same directory spelled the same way.
    path_clean::clean(data.join("plans"))
}

/// How a run ended, as the status written back to the plan and its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanStatus {
    /// Every action was done or skipped.
    Done,
    /// Some action failed or was denied, or the run could not start on a valid plan.
    Failed,
    /// The plan did not validate; nothing ran.
    Invalid,
}

impl PlanStatus {
    /// The outcome of a run from its report's `validation.valid` and `exit_code`.
    pub fn from_run(plan_valid: bool, exit_code: u8) -> Self {
        match (plan_valid, exit_code) {
            (false, _) => PlanStatus::Invalid,
            (true, 0) => PlanStatus::Done,
            (true, _) => PlanStatus::Failed,
        }
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            PlanStatus::Done => "done",
            PlanStatus::Failed => "failed",
            PlanStatus::Invalid => "invalid",
        }
    }
}

impl fmt::Display for PlanStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
