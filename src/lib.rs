//! Quartermaster: the trusted executor for agent-written dependency-update plans.
//!
//! An agent writes a JSON [`plan`]; Quartermaster [`validate`]s it against a [`mission`]'s typed
//! allowlists and runs nothing unless every rule holds. Data flows one way: [`config`] (inputs)
//! → [`validate::ValidatedPlan`] → [`engine`] (over [`git`], [`process`] and a [`forge`])
//! → [`report`] → [`ci`] outputs; [`app`] strings one run together and [`cli`] is the command line.
//! [`schedule`] holds the lock keys that say which actions may run at once; [`scale`] cuts a plan
//! into CI shards or a pangolin run along them, and merges the shards' reports.
//! Agents can also hand plans over as docker-agent [`named_plan`]s, and check them first through
//! the [`mcp`] server.

pub(crate) mod app;
pub mod changes;
pub mod ci;
pub mod cli;
pub(crate) mod config;
pub(crate) mod declarations;
pub mod engine;
pub mod finding;
pub mod forge;
pub mod git;
pub(crate) mod harden;
pub mod hint;
pub(crate) mod markdown;
pub(crate) mod mcp;
pub mod mission;
pub mod named_plan;
pub mod plan;
pub mod policy;
pub mod process;
pub mod report;
pub mod sandbox;
pub mod scale;
pub mod schedule;
pub(crate) mod sink;
pub mod supply;
pub(crate) mod toolchain;
mod tree;
pub mod validate;
