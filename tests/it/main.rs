//! The integration suite, one binary: the real `quartermaster` binary against real git
//! repositories (local bare remotes), real test runners, local registry stand-ins, and HTTP fakes
//! of the forges that follow their published API shapes. Hermetic: no network.

mod adversarial;
mod behaviour;
mod cli_validate;
mod common;
mod conformance;
mod demo;
mod docs;
mod engine;
mod explain;
mod facts;
mod github;
mod gitlab;
mod packaging;
mod schema;
