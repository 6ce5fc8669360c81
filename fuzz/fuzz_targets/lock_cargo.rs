//! cargo's `Cargo.lock` and `Cargo.toml`.
//!
//! The contract every reader's target checks is in `reader.rs`.
#![no_main]

#[path = "../reader.rs"]
mod reader;

reader::fuzz_readers!(["Cargo.lock", "Cargo.toml"]);
