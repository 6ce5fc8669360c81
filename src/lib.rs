//! Quartermaster: the trusted executor for agent-written dependency-update plans.
//!
//! An agent writes a JSON [`plan`]; Quartermaster [`validate`]s it against a [`mission`]'s typed
//! allowlists and runs nothing unless every rule holds.

pub mod cli;
pub mod config;
pub mod engine;
pub mod finding;
pub mod forge;
pub mod git;
pub mod manifest;
pub mod markdown;
pub mod mission;
pub mod plan;
pub mod process;
pub mod progress;
pub mod report;
pub mod validate;
