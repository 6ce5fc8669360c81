//! The job log, the terminal and the Markdown summary: nothing a child printed, nor any other
//! text Quartermaster did not write, can act there.
//!
//! GitHub Actions obeys workflow commands (`::add-mask::`, `::error::`, `::set-output`) in any
//! line of a step's output that starts with `::`, unless they are suspended by
//! `::stop-commands::<token>` with a token the text cannot guess. GitLab folds the job log at
//! `section_start:<time>:<name>\r\e[0K` markers, and terminals obey escape sequences and carriage
//! returns (a line can overwrite the one before it, `\r\e[2K      => done: PR #1 created`). So
//! control characters are written as escapes (`\x1b`, `\x0d`), which leaves every marker and
//! sequence inert, and lines are never allowed to start with `::`.

/// `text` with every control character but the tab (line breaks too) written as an escape.
pub(crate) fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\t' {
            out.push_str(&format!("\\x{:02x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Text for the job log or the terminal, line by line: control characters made visible, and a
/// line that would start with `::` shifted, so it cannot be a workflow command.
pub(crate) fn terminal(text: &str) -> String {
    text.split('\n')
        .map(|line| {
            let line = visible(line.strip_suffix('\r').unwrap_or(line));
            if line.trim_start().starts_with("::") {
                format!("  {line}")
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lines that show `text` (untrusted, several lines) on GitHub Actions with every workflow
/// command in it suspended by `token`.
pub(crate) fn github_quoted(token: &str, text: &str) -> Vec<String> {
    let mut lines = vec![format!("::stop-commands::{token}")];
    lines.extend(text.lines().map(terminal));
    lines.push(format!("::{token}::"));
    lines
}

/// A fenced block for the Markdown summary holding a child's output, which can neither close
/// the fence nor carry an escape sequence or a carriage return.
pub(crate) fn summary_block(text: &str) -> String {
    let text: Vec<String> = text.lines().map(visible).collect();
    let text = text.join("\n");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}text\n{text}\n{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_carriage_returns_are_inert() {
        assert_eq!(
            visible("\u{1b}[2J\u{1b}]0;pwned\u{7}ok\r\tdone"),
            "\\x1b[2J\\x1b]0;pwned\\x07ok\\x0d\tdone"
        );
        // A fake collapsed GitLab section and an overwritten progress line.
        let faked = "section_start:1700000000:fake[collapsed=true]\r\u{1b}[0Khidden\n\r\u{1b}[2K      => done: PR #1 created";
        assert_eq!(
            terminal(faked),
            "section_start:1700000000:fake[collapsed=true]\\x0d\\x1b[0Khidden\n\\x0d\\x1b[2K      => done: PR #1 created"
        );
    }

    #[test]
    fn no_line_can_be_a_workflow_command() {
        assert_eq!(
            terminal("error: bad\n::add-mask::x\n  ::error::y"),
            "error: bad\n  ::add-mask::x\n    ::error::y"
        );
        assert_eq!(
            github_quoted("T", "::set-output name=a::b\r\nok"),
            [
                "::stop-commands::T",
                "  ::set-output name=a::b",
                "ok",
                "::T::"
            ]
        );
    }

    #[test]
    fn a_summary_block_holds_its_output() {
        assert_eq!(
            summary_block("```\n\u{1b}[31mred\r"),
            "````text\n```\n\\x1b[31mred\\x0d\n````"
        );
    }
}
