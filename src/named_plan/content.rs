//! The plan inside a named plan's `content`, and the content of a result plan.

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use std::borrow::Cow;

/// The plan JSON a named plan's `content` holds: the whole content when it is JSON, else the first
/// fenced code block whose info string starts with `json`, else the whole content again (so that
/// validation reports where its JSON breaks).
pub fn plan_json(content: &str) -> Cow<'_, str> {
    if serde_json::from_str::<serde::de::IgnoredAny>(content).is_ok() {
        return Cow::Borrowed(content);
    }
    first_json_block(content).map_or(Cow::Borrowed(content), Cow::Owned)
}

/// The first fenced ```` ```json ```` block, parsed as CommonMark (fence lengths, `~~~` fences,
/// indentation and nesting in lists or quotes are the parser's business, not ours).
fn first_json_block(markdown: &str) -> Option<String> {
    let mut block: Option<String> = None;
    for event in Parser::new(markdown) {
        match (event, &mut block) {
            (Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))), None) => {
                let lang = info.split_whitespace().next().unwrap_or("");
                if lang.eq_ignore_ascii_case("json") {
                    block = Some(String::new());
                }
            }
            (Event::Text(text), Some(body)) => body.push_str(&text),
            (Event::End(TagEnd::CodeBlock), Some(_)) => return block,
            _ => {}
        }
    }
    None
}

/// A result plan's content: the run's Markdown summary, then its JSON report in a fenced `json`
/// block whose fence is longer than any run of backticks in the report, so that command output
/// quoted in the report cannot close it.
pub fn result_content(summary_markdown: &str, report_json: &str) -> String {
    let longest = report_json
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    format!(
        "{}\n\n{fence}json\n{}\n{fence}\n",
        summary_markdown.trim_end(),
        report_json.trim_end()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_json_content_is_the_plan() {
        assert_eq!(plan_json(" {\"a\": 1}\n"), " {\"a\": 1}\n");
    }

    #[test]
    fn first_json_block_is_the_plan_when_the_content_is_prose() {
        let md = "Plan:\n\n```text\nnot this\n```\n\n~~~ JSON title\n{\"b\": 2}\n~~~\n\n```json\n{\"c\": 3}\n```\n";
        assert_eq!(plan_json(md), "{\"b\": 2}\n");
    }

    #[test]
    fn broken_json_without_a_block_is_returned_whole() {
        assert_eq!(plan_json("{\"a\": "), "{\"a\": ");
    }

    #[test]
    fn result_fence_outlasts_backticks_in_the_report() {
        let report = "{\"tail\": \"````x\"}";
        let content = result_content("# Summary\n", report);
        assert!(content.starts_with("# Summary\n\n`````json\n"), "{content}");
        assert_eq!(plan_json(&content), format!("{report}\n"));
    }
}
