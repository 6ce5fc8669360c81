//! The version a tool reports: the first `N.N[.N]` in what it printed (`go version go1.22.3
//! linux/amd64`, `v20.11.1`, `Python 3.12.1`, `Bundler version 2.5.6`, `rustc 1.78.0 (...)`).

use std::sync::LazyLock;

static VERSION: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"\d+\.\d+(?:\.\d+)?").expect("the version pattern compiles")
});

/// The version in a tool's output, when it printed one.
pub(crate) fn version_in(output: &str) -> Option<String> {
    VERSION.find(output).map(|m| m.as_str().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_what_tools_print() {
        let cases = [
            ("go version go1.22.3 linux/amd64\n", "1.22.3"),
            ("v20.11.1\n", "20.11.1"),
            ("Python 3.12.1\n", "3.12.1"),
            (
                "ruby 3.3.0 (2023-12-25 revision 5124f9ac75) [x86_64-linux]",
                "3.3.0",
            ),
            ("Bundler version 2.5.6\n", "2.5.6"),
            ("rustc 1.78.0 (9b00956e5 2024-04-29)\n", "1.78.0"),
            ("Poetry (version 1.8.3)\n", "1.8.3"),
            ("uv 0.4.18\n", "0.4.18"),
        ];
        for (output, version) in cases {
            assert_eq!(version_in(output).as_deref(), Some(version), "{output}");
        }
        assert_eq!(version_in("command not found"), None);
    }
}
