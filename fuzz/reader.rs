//! What every lock file and manifest reader's fuzz target checks.
//!
//! On any input: never a panic out of the reader, a stack overflow, a hang or unbounded memory;
//! what is read holds no more entries than the input has bytes. A third-party parser's panic
//! that the reader contains is a parse error in Quartermaster too, so it is no crash here.

/// A fuzz target reading its input as each of the named files.
macro_rules! fuzz_readers {
    ([$($name:expr),+ $(,)?]) => {
        static CONTAINED_PANICS_ARE_PARSE_ERRORS: std::sync::Once = std::sync::Once::new();

        libfuzzer_sys::fuzz_target!(|data: &[u8]| {
            // libFuzzer's hook aborts at any panic, caught or not; a panic that escapes the
            // reader still aborts, through its handler around this function.
            CONTAINED_PANICS_ARE_PARSE_ERRORS.call_once(|| std::panic::set_hook(Box::new(|_| {})));
            let Ok(text) = std::str::from_utf8(data) else {
                return;
            };
            for name in [$($name),+] {
                if let Ok(entries) = quartermaster::changes::parse_text(name, text) {
                    assert!(
                        entries <= text.len(),
                        "{name}: {entries} entries from {} bytes",
                        text.len()
                    );
                }
            }
        });
    };
}

pub(crate) use fuzz_readers;
