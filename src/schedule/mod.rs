//! Which actions may run at the same time: lock keys, and the greedy scheduler over them.
//!
//! An action holds a key for everything it may write that another action of the same plan (or of
//! another run on the same repository) could also write: the branches it may push, the PR or issue
//! it touches, the issue title it deduplicates on, and the lock files of its working directory.
//! Two actions sharing a key never run at the same time, and the earlier one in the plan goes
//! first, so one job is exactly plan order and a later action never overtakes an earlier one it
//! shares a key with. `--jobs` runs the [`Scheduler`] over these keys; the pangolin export and CI
//! shards (see [`crate::scale`]) hand them to other engines.
//!
//! Everything here is a pure function of a plan and of the checkout's workspace layout: no forge,
//! no git, no clock.

mod keys;
mod roots;
mod scheduler;

pub use keys::{KeyContext, LockKey, action_keys, ordered, plan_keys};
pub(crate) use scheduler::Scheduler;
