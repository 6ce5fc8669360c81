//! Quartermaster's own Markdown: code spans, links, table cells and hidden markers. Untrusted
//! text goes through [`crate::sink`] first, values quoted in code spans included.

use sha2::{Digest, Sha256};

/// Longest body or comment Quartermaster posts: GitHub refuses more than 65,536 characters
/// (GitLab allows more).
pub(crate) const MAX_POSTED_BODY: usize = 65_000;
/// Longest text a plan may give for a body or comment: what Quartermaster posts adds its update
/// table, footer and hidden marker, and must stay under [`MAX_POSTED_BODY`].
pub(crate) const MAX_PLAN_BODY: usize = 60_000;

/// `text` cut so that, with `tail` appended whole, it stays within [`MAX_POSTED_BODY`]
/// characters; the cut is said.
pub(crate) fn cap_before(text: String, tail: &str) -> String {
    const CUT: &str = "… (truncated)";
    let room = MAX_POSTED_BODY.saturating_sub(tail.chars().count());
    let text = if text.chars().count() <= room {
        text
    } else {
        let keep = room.saturating_sub(CUT.chars().count());
        text.chars().take(keep).collect::<String>() + CUT
    };
    text + tail
}

/// An inline code span that holds `text` verbatim, whatever backticks it contains.
pub(crate) fn code(text: &str) -> String {
    let text = crate::sink::literal(text);
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// A Markdown link to an `https://` URL Quartermaster built; characters that could end the link
/// or the table cell are percent-encoded. Anything else is shown as plain `text`.
pub(crate) fn link(text: &str, url: &str) -> String {
    if !url.starts_with("https://") {
        return text.to_string();
    }
    let url: String = url
        .chars()
        .map(|c| match c {
            c if c.is_ascii_alphanumeric() || "-._~:/?#[]@!$&'*+,;=%".contains(c) => c.to_string(),
            c => c.to_string().bytes().map(|b| format!("%{b:02X}")).collect(),
        })
        .collect();
    format!("[{text}]({url})")
}

/// A code span inside a table cell: GFM splits cells at `|` even within backticks, so it is escaped.
pub(crate) fn cell_code(text: &str) -> String {
    code(text).replace('|', "\\|")
}

/// Text for a cell of Quartermaster's own summary table: kept on one line, with nothing that can
/// end the cell or open HTML. (The summary goes to the CI job page, not to a thread where
/// mentions notify or quick actions run.)
pub(crate) fn cell(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .replace('<', "&lt;")
        .replace('|', "\\|")
}

/// The hidden marker that tells Quartermaster which of its actions produced a body or comment.
/// Keys are hashed: branch names may hold `-->`, which would end the comment early.
pub(crate) fn marker(kind: &str, key: &str) -> String {
    format!("<!-- quartermaster:{kind}:{} -->", short_hash(key))
}

/// A short, stable hash for idempotency keys.
pub(crate) fn short_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capped_body_keeps_its_tail_whole() {
        let body = cap_before("x".repeat(MAX_POSTED_BODY), "\n<!-- marker -->");
        assert_eq!(body.chars().count(), MAX_POSTED_BODY);
        assert!(body.ends_with("… (truncated)\n<!-- marker -->"));
        assert_eq!(cap_before("short".into(), "!"), "short!");
    }

    #[test]
    fn table_code_spans_cannot_split_the_row() {
        assert_eq!(cell_code("1.0 | @evil <!--"), "`1.0 \\| @evil <!--`");
    }

    #[test]
    fn markers_cannot_be_forged() {
        assert_eq!(
            marker("pr", "quartermaster/a-->b"),
            marker("pr", "quartermaster/a-->b")
        );
        assert!(!marker("pr", "x-->y").contains("x-->y"));
    }

    #[test]
    fn code_spans_survive_backticks() {
        assert_eq!(code("lodash"), "`lodash`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
    }

    #[test]
    fn cells_and_titles_stay_on_one_line() {
        assert_eq!(cell("a|b\nc <!-- x"), "a\\|b c &lt;!-- x");
        assert_eq!(cell("PR #1"), "PR #1");
    }
}
