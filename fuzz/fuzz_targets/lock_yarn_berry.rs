//! yarn berry's `yarn.lock` (seeded with berry locks; the same reader as classic).
//!
//! The contract every reader's target checks is in `reader.rs`.
#![no_main]

#[path = "../reader.rs"]
mod reader;

reader::fuzz_readers!(["yarn.lock"]);
