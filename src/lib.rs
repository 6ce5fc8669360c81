//! Quartermaster: the trusted executor for agent-written dependency-update plans.
//!
//! An agent writes a JSON [`plan`]; Quartermaster [`validate`]s it against a [`mission`]'s typed
//! allowlists and runs nothing unless every rule holds.

pub mod cli;
pub mod finding;
pub mod mission;
pub mod plan;
pub mod validate;
