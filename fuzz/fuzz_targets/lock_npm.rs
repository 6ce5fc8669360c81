//! npm's `package-lock.json` (lockfile versions 1-3), and the `package.json` reader that npm,
//! yarn, pnpm and bun share.
//!
//! The contract every reader's target checks is in `reader.rs`.
#![no_main]

#[path = "../reader.rs"]
mod reader;

reader::fuzz_readers!(["package-lock.json", "package.json"]);
