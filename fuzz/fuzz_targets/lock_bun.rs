//! bun's JSONC `bun.lock`.
//!
//! The contract every reader's target checks is in `reader.rs`.
#![no_main]

#[path = "../reader.rs"]
mod reader;

reader::fuzz_readers!(["bun.lock"]);
