//! Posting untrusted text to a forge as data.
//!
//! Titles, bodies and comments come from the plan, so from an LLM that may have read a prompt
//! injection. Before they reach a forge:
//! - a line starting with `/` is escaped: on GitLab it would be a quick action (`/merge`,
//!   `/approve`, `/close`) run with the bot's rights;
//! - `@mentions` (after any non-word character, `@_name` included), `#123`, `!123`, `GH-123` and
//!   `&123` references are broken with a zero-width space unless the operator allows mentions, so
//!   the bot does not ping people or cross-link issues, epics and merge requests; so are images
//!   (`![x](https://...)`, `<img>`), which would load a remote URL (a tracking beacon) whenever
//!   the text is viewed: they become links;
//! - `<!--` is escaped, so the text can neither hide content nor forge Quartermaster's own markers;
//! - control characters other than line breaks and tabs are dropped.
//!
//! Commit messages are plain text: [`commit_line`] breaks the same references (a `fixes #1`
//! reaching the default branch would close an issue) and CI skip directives (`[skip ci]`).

use regex::Regex;
use sha2::{Digest, Sha256};
use std::sync::LazyLock;

/// A zero-width space: invisible, also in code spans and in plain-text titles, and enough to keep
/// a forge from reading a mention or a reference.
const ZWSP: &str = "\u{200B}";

/// Longest body or comment Quartermaster posts: GitHub refuses more than 65,536 characters
/// (GitLab allows more).
pub const MAX_POSTED_BODY: usize = 65_000;
/// Longest text a plan may give for a body or comment: what Quartermaster posts adds its update
/// table, footer and hidden marker, and must stay under [`MAX_POSTED_BODY`].
pub const MAX_PLAN_BODY: usize = 60_000;

/// `text` cut so that, with `tail` appended whole, it stays within [`MAX_POSTED_BODY`]
/// characters; the cut is said.
pub fn cap_before(text: String, tail: &str) -> String {
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

static MENTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(^|[^A-Za-z0-9_])@([A-Za-z0-9_])").expect("valid regex"));
// Any `#12` or `!12`, including `owner/repo#12`; not `&#12;`, which is how entities are written.
static REFERENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(^|[^&])([#!])([0-9])").expect("valid regex"));
// GitHub's `GH-12` and GitLab's epic `&12` (never an entity such as `&#12;` or `&amp;`).
static OTHER_REFERENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)(^|[^A-Za-z0-9_])(gh-|&)([0-9])").expect("valid regex"));
static IMAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)<(img|picture|source|video|audio|iframe|object|embed)\b").expect("valid regex")
});
static SKIP_CI: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\[(skip|no) +(ci|actions)\]|\[(ci|actions) +skip\]|\*\*\*no_ci\*\*\*|skip-checks",
    )
    .expect("valid regex")
});

/// Makes agent-written Markdown safe to post (see the module documentation).
pub fn neutralise(text: &str, allow_mentions: bool) -> String {
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
    break_references(&escaped.join("\n"), allow_mentions)
}

/// Text for one line, such as a title (titles run no quick actions): control characters and
/// line breaks become spaces, mentions and references are broken.
pub fn one_line(text: &str, allow_mentions: bool) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    break_references(&cleaned.replace("<!--", "&lt;!--"), allow_mentions)
}

fn break_references(text: &str, allow_mentions: bool) -> String {
    if allow_mentions {
        return text.to_string();
    }
    let text = MENTION.replace_all(text, format!("$1@{ZWSP}$2"));
    let text = REFERENCE.replace_all(&text, format!("$1$2{ZWSP}$3"));
    let text = OTHER_REFERENCE.replace_all(&text, format!("$1$2{ZWSP}$3"));
    let text = text.replace("![", "\\![");
    IMAGE.replace_all(&text, "&lt;$1").into_owned()
}

/// A line of a commit message from plan text: one line, references broken as in a body, and CI
/// skip directives (`[skip ci]`, `***NO_CI***`, `skip-checks`) broken so that no CI is skipped.
pub fn commit_line(text: &str, allow_mentions: bool) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let cleaned = SKIP_CI.replace_all(&cleaned, |m: &regex::Captures<'_>| {
        let found = &m[0];
        let mut chars = found.chars();
        let first = chars.next().map(String::from).unwrap_or_default();
        format!("{first}{ZWSP}{}", chars.as_str())
    });
    if allow_mentions {
        return cleaned.into_owned();
    }
    let text = MENTION.replace_all(&cleaned, format!("$1@{ZWSP}$2"));
    let text = REFERENCE.replace_all(&text, format!("$1$2{ZWSP}$3"));
    OTHER_REFERENCE
        .replace_all(&text, format!("$1$2{ZWSP}$3"))
        .into_owned()
}

/// An inline code span that holds `text` verbatim, whatever backticks it contains.
pub fn code(text: &str) -> String {
    let text: String = text.chars().filter(|c| !c.is_control()).collect();
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
pub fn link(text: &str, url: &str) -> String {
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
pub fn cell_code(text: &str) -> String {
    code(text).replace('|', "\\|")
}

/// Text for a cell of Quartermaster's own summary table: kept on one line, with nothing that can
/// end the cell or open HTML. (The summary goes to the CI job page, not to a thread where
/// mentions notify or quick actions run.)
pub fn cell(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .replace('<', "&lt;")
        .replace('|', "\\|")
}

/// The hidden marker that tells Quartermaster which of its actions produced a body or comment.
/// Keys are hashed: branch names may hold `-->`, which would end the comment early.
pub fn marker(kind: &str, key: &str) -> String {
    format!("<!-- quartermaster:{kind}:{} -->", short_hash(key))
}

/// A short, stable hash for idempotency keys.
pub fn short_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_actions_are_escaped() {
        let out = neutralise("Please review.\n/merge\n  /approve\nnot /close here", false);
        assert_eq!(
            out,
            "Please review.\n\\/merge\n  \\/approve\nnot /close here"
        );
    }

    #[test]
    fn mentions_and_references_do_not_ping() {
        let out = neutralise(
            "cc @alice and @org/team, fixes #12, see !7, mail a@b.c, ref octo/widgets#3, &#8203;",
            false,
        );
        assert_eq!(
            out,
            "cc @\u{200B}alice and @\u{200B}org/team, fixes #\u{200B}12, see !\u{200B}7, mail a@b.c, ref octo/widgets#\u{200B}3, &#8203;"
        );
        assert_eq!(neutralise("cc @alice #12", true), "cc @alice #12");
        // After any non-word character, in code spans too (the space is invisible there).
        for (given, broken) in [
            ("`@alice`", "`@\u{200B}alice`"),
            ("team/@alice", "team/@\u{200B}alice"),
            ("@_name", "@\u{200B}_name"),
            ("see GH-12 and gh-3", "see GH-\u{200B}12 and gh-\u{200B}3"),
            (
                "epic &12, not &#12; or &amp;",
                "epic &\u{200B}12, not &#12; or &amp;",
            ),
        ] {
            assert_eq!(neutralise(given, false), broken, "{given}");
        }
    }

    #[test]
    fn remote_images_become_links() {
        assert_eq!(
            neutralise("![beacon](https://evil.example/t.gif) <IMG src=x>", false),
            "\\![beacon](https://evil.example/t.gif) &lt;IMG src=x>"
        );
        assert_eq!(neutralise("![x](y)", true), "![x](y)");
    }

    #[test]
    fn commit_lines_close_nothing_and_skip_no_ci() {
        assert_eq!(
            commit_line("fixes #1 [skip ci] @alice\n[CI skip] ***NO_CI***", false),
            "fixes #\u{200B}1 [\u{200B}skip ci] @\u{200B}alice [\u{200B}CI skip] *\u{200B}**NO_CI***"
        );
        assert_eq!(
            commit_line("[skip actions] #1", true),
            "[\u{200B}skip actions] #1"
        );
    }

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
    fn markers_cannot_be_forged_or_hidden() {
        let out = neutralise("<!-- quartermaster:pr:abc -->hidden", false);
        assert!(!out.contains("<!--"));
        assert_eq!(
            marker("pr", "quartermaster/a-->b"),
            marker("pr", "quartermaster/a-->b")
        );
        assert!(!marker("pr", "x-->y").contains("x-->y"));
    }

    #[test]
    fn control_characters_are_dropped() {
        assert_eq!(neutralise("a\u{7}b\u{1b}[31mc\td", false), "ab[31mc\td");
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
        assert_eq!(
            one_line("/close\nnow @bob", false),
            "/close now @\u{200B}bob"
        );
    }
}
