//! How a run's caches were kept: warm (and what the warm-up did) or cold, and why.

use super::ProcessRecord;
use serde::{Deserialize, Serialize};

/// How a run's caches were kept, and what its warm-up did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CachesReport {
    #[serde(flatten)]
    pub mode: crate::sandbox::Caches,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_up: Option<WarmUpReport>,
}

/// The warm-up: its commands as they ran, and whether it filled the caches (else why not).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WarmUpReport {
    pub ok: bool,
    pub duration_ms: u64,
    pub commands: Vec<WarmUpCommand>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

/// One command of the warm-up: a frozen install or a pre-build of one ecosystem.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WarmUpCommand {
    pub ecosystem: String,
    pub command: String,
    #[serde(flatten)]
    pub process: ProcessRecord,
}
