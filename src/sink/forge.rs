//! Text posted to a forge or committed: bodies, titles, commit messages, and the values
//! Quartermaster quotes in its own Markdown.

use regex::{Captures, Regex};
use std::sync::LazyLock;

/// A zero-width space: enough to keep a forge from reading a mention or a reference in a body
/// (where Markdown would otherwise show what breaks it). Never used on one line (titles, commit
/// messages), where code spans do it visibly.
const ZWSP: &str = "\u{200B}";

static MENTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(^|[^A-Za-z0-9_])@([A-Za-z0-9_])").expect("valid regex"));
/// A whole mention on one line: `@alice`, `@org/team`, `@types/node`.
static MENTION_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(^|[^A-Za-z0-9_])(@[A-Za-z0-9_][A-Za-z0-9_./-]*)").expect("valid regex")
});
// Any `#12` or `!12`, including `owner/repo#12`; not `&#12;`, which is how entities are written.
static REFERENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(^|[^&])([#!])([0-9])").expect("valid regex"));
static REFERENCE_TOKEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(^|[^&])([#!][0-9]+)").expect("valid regex"));
// GitHub's `GH-12` and GitLab's epic `&12` (never an entity such as `&#12;` or `&amp;`).
static OTHER_REFERENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)(^|[^A-Za-z0-9_])(gh-|&)([0-9])").expect("valid regex"));
static OTHER_REFERENCE_TOKEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)(^|[^A-Za-z0-9_])((?:gh-|&)[0-9]+)").expect("valid regex"));
static IMAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)<(img|picture|source|video|audio|iframe|object|embed)\b").expect("valid regex")
});
/// What CI systems read as "skip this pipeline" in a commit message (and so in a squashed PR's
/// title and body): `[skip ci]`, `[ci skip]`, `[no ci]`, `[skip actions]`, `[skip azp]`...,
/// `***NO_CI***` and `skip-checks`.
static SKIP_CI: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\[\s*(skip|no)[\s_-]*[a-z]*\s*\]|\[\s*[a-z]*[\s_-]*skip\s*\]|\*\*\*no_ci\*\*\*|skip-checks",
    )
    .expect("valid regex")
});

/// Agent-written Markdown for a body or comment (see the module table).
pub(crate) fn body(text: &str, allow_mentions: bool) -> String {
    let cleaned: String = text
        .chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect();
    let escaped: Vec<String> = cleaned
        .replace("<!--", "&lt;!--")
        .split('\n')
        .map(|line| {
            let indent = line.len() - line.trim_start().len();
            if line.trim_start().starts_with('/') {
                format!("{}\\{}", &line[..indent], &line[indent..])
            } else {
                line.to_string()
            }
        })
        .collect();
    let text = break_skip_directives(&escaped.join("\n"));
    if allow_mentions {
        return text;
    }
    let text = MENTION.replace_all(&text, format!("$1@{ZWSP}$2"));
    let text = break_references(&text);
    let text = text.replace("![", "\\![");
    IMAGE.replace_all(&text, "&lt;$1").into_owned()
}

/// Untrusted text shown on one line inside a body (a table cell, a list item): [`body`]'s rules,
/// with control characters and line breaks made spaces.
pub(crate) fn body_line(text: &str, allow_mentions: bool) -> String {
    body(&one_line(text), allow_mentions)
}

/// One line of plain text, for a title or a commit message: control characters and line breaks
/// become spaces, skip directives are broken, and mentions and references go in code spans,
/// where neither a forge nor a commit parser reads them and nothing invisible is added.
pub(crate) fn line(text: &str, allow_mentions: bool) -> String {
    let text = break_skip_directives(&one_line(text));
    if allow_mentions {
        return text;
    }
    let text = MENTION_TOKEN.replace_all(&text, "$1`$2`");
    let text = REFERENCE_TOKEN.replace_all(&text, "$1`$2`");
    OTHER_REFERENCE_TOKEN
        .replace_all(&text, "$1`$2`")
        .into_owned()
}

/// A value from a lock file, a registry or a command, for a code span of Quartermaster's own
/// Markdown: a code span already keeps mentions from notifying, but a squashed PR's commit
/// message is plain text, where a reference would close an issue and a directive skip CI.
pub(crate) fn literal(text: &str) -> String {
    let cleaned: String = text.chars().filter(|c| !c.is_control()).collect();
    break_references(&break_skip_directives(&cleaned))
}

/// `text` on one line: control characters, line breaks included, become spaces.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn break_references(text: &str) -> String {
    let text = REFERENCE.replace_all(text, format!("$1$2{ZWSP}$3"));
    OTHER_REFERENCE
        .replace_all(&text, format!("$1$2{ZWSP}$3"))
        .into_owned()
}

/// `[skip ci]` becomes `(skip ci)`, `***NO_CI***` `NO_CI` and `skip-checks` `skip checks`:
/// visibly, so that what the text said is still readable.
fn break_skip_directives(text: &str) -> String {
    SKIP_CI
        .replace_all(text, |m: &Captures<'_>| {
            let found = &m[0];
            if found.starts_with('[') {
                format!("({})", &found[1..found.len() - 1])
            } else if found.starts_with('*') {
                found.trim_matches('*').to_string()
            } else {
                found.replace('-', " ")
            }
        })
        .into_owned()
}

#[cfg(test)]
mod tests;
