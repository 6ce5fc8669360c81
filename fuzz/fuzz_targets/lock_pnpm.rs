//! pnpm's `pnpm-lock.yaml`, through the budgeted YAML loader.
//!
//! The contract every reader's target checks is in `reader.rs`.
#![no_main]

#[path = "../reader.rs"]
mod reader;

reader::fuzz_readers!(["pnpm-lock.yaml"]);
