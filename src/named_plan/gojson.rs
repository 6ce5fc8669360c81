//! JSON exactly as Go's `json.MarshalIndent(v, "", "  ")` writes it, so that a plan file written by
//! Quartermaster is byte-identical to one written by docker-agent.
//!
//! serde_json's pretty printer already matches Go on layout (two-space indent, `": "`, `{}` and
//! `[]` for empty containers, no trailing newline) and on control characters (`\b`, `\f`, `\n`,
//! `\r`, `\t`, else `\u00XX` in lower-case hex, as Go 1.22 and later write them). Go additionally
//! escapes `<`, `>` and `&` (HTML safety) and U+2028/U+2029 (JavaScript line terminators); this
//! formatter adds those.

use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};
use std::io::{self, Write};

/// Serialises `value` the way Go's `json.MarshalIndent(value, "", "  ")` does.
pub(crate) fn marshal_indent<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, GoFormatter::new());
    value
        .serialize(&mut serializer)
        .expect("a JSON value serialises into memory");
    out
}

struct GoFormatter {
    pretty: PrettyFormatter<'static>,
}

impl GoFormatter {
    fn new() -> Self {
        Self {
            pretty: PrettyFormatter::with_indent(b"  "),
        }
    }
}

/// The characters Go escapes beyond what JSON requires, with their escapes.
fn go_escape(c: char) -> Option<&'static str> {
    match c {
        '<' => Some("\\u003c"),
        '>' => Some("\\u003e"),
        '&' => Some("\\u0026"),
        '\u{2028}' => Some("\\u2028"),
        '\u{2029}' => Some("\\u2029"),
        _ => None,
    }
}

impl Formatter for GoFormatter {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            if let Some(escape) = go_escape(c) {
                writer.write_all(&fragment.as_bytes()[start..at])?;
                writer.write_all(escape.as_bytes())?;
                start = at + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    // Layout is the pretty printer's; only the methods it overrides need forwarding.
    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.pretty.begin_array(writer)
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.pretty.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.pretty.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.pretty.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.pretty.begin_object(writer)
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.pretty.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.pretty.begin_object_key(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.pretty.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.pretty.end_object_value(writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escapes_what_go_escapes_and_nothing_more() {
        let out = marshal_indent(
            &json!({"s": "<a href='x'>&</a>\u{2028}\u{2029}\u{7f}é\u{1}\u{8}\u{c}"}),
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\n  \"s\": \"\\u003ca href='x'\\u003e\\u0026\\u003c/a\\u003e\\u2028\\u2029\u{7f}é\\u0001\\b\\f\"\n}"
        );
    }

    #[test]
    fn empty_containers_and_nesting_match_go_layout() {
        let out = marshal_indent(&json!({"a": [], "b": {}, "c": [1, {"d": null}]}));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": null\n    }\n  ]\n}"
        );
    }
}
