//! Quartermaster beyond one CI job: a plan exported as a pangolin run, cut into CI shards that
//! `run --only` executes, and the shards' reports merged back into one.
//!
//! Quartermaster schedules nothing itself here: it cuts its work along the lock keys of
//! [`crate::schedule`] into pieces that engines users already run (GitHub Actions matrices, GitLab
//! child pipelines, pangolin-orchestrator's queue) can schedule safely, and puts the pieces'
//! results back together.

pub(crate) mod export;
pub(crate) mod merge;
pub(crate) mod only;
pub(crate) mod shards;

pub use only::{Only, OnlyError};

use sha2::{Digest, Sha256};

/// The plan's identity across shards and exports: the SHA-256 of the plan file's bytes exactly as
/// read (what `sha256sum plan.json` prints), so anyone can check it without Quartermaster.
pub fn plan_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn plan_digest_is_sha256_of_the_bytes() {
        assert_eq!(
            super::plan_sha256(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
