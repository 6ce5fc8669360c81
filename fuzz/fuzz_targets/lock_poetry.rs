//! poetry's `poetry.lock` and the `pyproject.toml` reader poetry and uv share.
//!
//! On any input: never a panic, a stack overflow, a hang or unbounded memory; what is read
//! holds no more entries than the input has bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for name in ["poetry.lock", "pyproject.toml"] {
        if let Ok(entries) = quartermaster::changes::parse_text(name, text) {
            assert!(
                entries <= text.len(),
                "{name}: {entries} entries from {} bytes",
                text.len()
            );
        }
    }
});
