//! npm's `package-lock.json` (lockfile versions 1-3), and the `package.json` reader that npm,
//! yarn, pnpm and bun share.
//!
//! On any input: never a panic, a stack overflow, a hang or unbounded memory; what is read
//! holds no more entries than the input has bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for name in ["package-lock.json", "package.json"] {
        if let Ok(entries) = quartermaster::changes::parse_text(name, text) {
            assert!(
                entries <= text.len(),
                "{name}: {entries} entries from {} bytes",
                text.len()
            );
        }
    }
});
