//! poetry's `poetry.lock` and the `pyproject.toml` reader poetry and uv share.
//!
//! The contract every reader's target checks is in `reader.rs`.
#![no_main]

#[path = "../reader.rs"]
mod reader;

reader::fuzz_readers!(["poetry.lock", "pyproject.toml"]);
