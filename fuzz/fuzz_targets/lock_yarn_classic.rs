//! yarn classic's `yarn.lock` (seeded with v1 locks).
//!
//! The contract every reader's target checks is in `reader.rs`.
#![no_main]

#[path = "../reader.rs"]
mod reader;

reader::fuzz_readers!(["yarn.lock"]);
