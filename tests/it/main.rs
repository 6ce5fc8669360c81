//! The integration suite, one binary: the real `quartermaster` binary against real git
//! repositories (local bare remotes), real test runners, local registry stand-ins, and HTTP fakes
//! of the forges that follow their published API shapes. Hermetic: no network.

mod adversarial;
mod behaviour;
mod claim_race;
mod cli_validate;
mod common;
mod conformance;
mod containment;
mod demo;
mod docker_agent_examples;
mod docs;
mod ecosystems;
mod engine;
mod explain;
mod facts;
mod fleet;
mod github;
mod gitlab;
mod golden;
mod hardening;
mod jobs;
mod lock_maintenance;
mod mcp_python_client;
mod mcp_stdio;
mod named_plan;
mod named_run;
mod packaging;
mod pangolin;
mod policy;
mod python;
mod scale_ci;
mod schema;
mod shards;
mod text;
mod toolchain;
