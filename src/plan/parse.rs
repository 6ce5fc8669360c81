//! Parsing plan bytes in two phases: JSON first, so that syntax errors carry line and column, then
//! the structural check, and serde into the plan's types only for the parts that passed it.

use super::{Action, ActionType, MAX_PLAN_BYTES, Plan, RepoContext, SCHEMA, structure};
use crate::finding::{Code, Finding, Pointer};
use serde_json::Value;

/// What parsing recovered from a plan, even when parts of it are broken: the repository context if
/// it was well-formed, every well-formed action with its index in the document, and the raw JSON of
/// the broken ones. Validation runs on all of these so that one broken field hides nothing else.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub repo_context: Option<RepoContext>,
    /// `repo_context` as JSON when it did not parse.
    pub(crate) raw_repo_context: Option<Value>,
    pub actions: Vec<(usize, Action)>,
    /// Actions of a known `type` that did not parse, as JSON, with their index.
    pub(crate) raw_actions: Vec<(usize, ActionType, Value)>,
    /// How many entries `actions` had, well-formed or not.
    pub(crate) action_count: usize,
}

impl Parsed {
    /// The complete plan, when every part of it parsed.
    pub(crate) fn into_plan(self) -> Option<Plan> {
        let repo_context = self.repo_context?;
        if self.actions.len() != self.action_count {
            return None;
        }
        Some(Plan {
            repo_context,
            actions: self.actions.into_iter().map(|(_, a)| a).collect(),
        })
    }
}

/// Parses plan bytes. Never panics; every problem becomes a finding.
pub fn parse(bytes: &[u8]) -> (Parsed, Vec<Finding>) {
    let mut findings = Vec::new();
    let mut parsed = Parsed::default();
    if bytes.len() > MAX_PLAN_BYTES {
        findings.push(Finding::error(
            "",
            Code::PlanTooLarge,
            format!(
                "the plan is {} bytes; plans are limited to {MAX_PLAN_BYTES} bytes (10 MiB)",
                bytes.len()
            ),
        ));
        return (parsed, findings);
    }
    // Editors on Windows prepend a byte order mark; it carries no meaning in JSON.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let document: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            findings.push(json_error(&e, bytes));
            return (parsed, findings);
        }
    };

    structure::check(&document, &SCHEMA, &mut findings);

    let Some(object) = document.as_object() else {
        return (parsed, findings);
    };
    let root = Pointer::root();
    if let Some(ctx) = object.get("repo_context") {
        let at = root.key("repo_context");
        if !has_errors_under(&findings, &at) {
            parsed.repo_context = typed(ctx, &at, &mut findings);
        }
        if parsed.repo_context.is_none() && ctx.is_object() {
            parsed.raw_repo_context = Some(ctx.clone());
        }
    }
    if let Some(actions) = object.get("actions").and_then(Value::as_array) {
        parsed.action_count = actions.len();
        for (index, action) in actions.iter().enumerate() {
            let at = root.key("actions").index(index);
            if !has_errors_under(&findings, &at)
                && let Some(a) = typed(action, &at, &mut findings)
            {
                parsed.actions.push((index, a));
            } else if let Some(kind) = action
                .get("type")
                .and_then(Value::as_str)
                .and_then(ActionType::from_name)
            {
                parsed.raw_actions.push((index, kind, action.clone()));
            }
        }
    }
    (parsed, findings)
}

fn has_errors_under(findings: &[Finding], at: &Pointer) -> bool {
    let prefix = at.as_str();
    findings.iter().any(|f| {
        f.is_error()
            && f.pointer.starts_with(prefix)
            && matches!(f.pointer.as_bytes().get(prefix.len()), None | Some(b'/'))
    })
}

/// Converts a structurally checked value into its type. The structural check already reported
/// everything serde could object to; this is the safety net should the two ever disagree.
fn typed<T: serde::de::DeserializeOwned>(
    value: &Value,
    at: &Pointer,
    findings: &mut Vec<Finding>,
) -> Option<T> {
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(v) => Some(v),
        Err(e) => {
            let mut pointer = at.clone();
            for segment in e.path().iter() {
                pointer = match segment {
                    serde_path_to_error::Segment::Seq { index } => pointer.index(*index),
                    serde_path_to_error::Segment::Map { key } => pointer.key(key),
                    serde_path_to_error::Segment::Enum { .. }
                    | serde_path_to_error::Segment::Unknown => pointer,
                };
            }
            findings.push(Finding::error(
                pointer,
                Code::InvalidType,
                e.into_inner().to_string(),
            ));
            None
        }
    }
}

fn json_error(e: &serde_json::Error, bytes: &[u8]) -> Finding {
    if let Some(finding) = not_json(bytes) {
        return finding;
    }
    let text = e.to_string();
    // serde_json appends " at line L column C"; we put the position first, where people look.
    let what = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(what, _)| what);
    if what.contains("recursion limit exceeded") {
        return Finding::error(
            "",
            Code::JsonTooDeep,
            format!(
                "line {}, column {}: the JSON nests deeper than 128 levels; a plan needs fewer than 10",
                e.line(),
                e.column()
            ),
        );
    }
    let hint = if e.is_eof() {
        " (the document ends early: a missing `}`, `]` or `\"`?)"
    } else {
        ""
    };
    Finding::error(
        "",
        Code::JsonSyntax,
        format!("line {}, column {}: {what}{hint}", e.line(), e.column()),
    )
}

/// A plan that is not JSON at all, said so: an empty file, or text that does not start as a JSON
/// object does (YAML, most often), rather than the parser's first complaint.
fn not_json(bytes: &[u8]) -> Option<Finding> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let message = match first {
        None => "the file is empty: a plan is a JSON object with `repo_context` and `actions` (`quartermaster schema` prints its schema)".to_string(),
        Some(b'{' | b'[' | b'"') => return None,
        Some(_) => "the plan is JSON, and this text does not start with `{` as a JSON object does (is it YAML?): write the plan as JSON; `quartermaster schema` prints its schema".to_string(),
    };
    Some(Finding::error("", Code::JsonSyntax, message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Platform;

    fn codes(findings: &[Finding]) -> Vec<(&str, Code)> {
        findings
            .iter()
            .map(|f| (f.pointer.as_str(), f.code))
            .collect()
    }

    const MINIMAL: &str = r#"{"repo_context":{"platform":"github","ecosystems":["go"],"default_branch":"main"},"actions":[]}"#;

    #[test]
    fn minimal_plan_parses() {
        let (parsed, findings) = parse(MINIMAL.as_bytes());
        assert!(findings.is_empty(), "{findings:?}");
        let plan = parsed.into_plan().unwrap();
        assert_eq!(plan.repo_context.default_branch, "main");
        assert_eq!(plan.repo_context.platform, Platform::Github);
    }

    #[test]
    fn syntax_error_reports_line_and_column() {
        let (_, findings) = parse(b"{\n  \"actions\": [,]\n}");
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].code, Code::JsonSyntax);
        assert!(
            findings[0].message.starts_with("line 2, column 15:"),
            "{}",
            findings[0].message
        );
    }

    #[test]
    fn truncated_document_says_it_ends_early() {
        let (_, findings) = parse(b"{\"actions\": [");
        assert_eq!(findings[0].code, Code::JsonSyntax);
        assert!(findings[0].message.contains("ends early"));
    }

    #[test]
    fn byte_order_mark_is_ignored() {
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        bytes.extend_from_slice(MINIMAL.as_bytes());
        let (_, findings) = parse(&bytes);
        assert!(findings.is_empty(), "{findings:?}");
    }

    #[test]
    fn deep_nesting_is_refused_clearly() {
        let deep = "[".repeat(100_000);
        let (_, findings) = parse(deep.as_bytes());
        assert_eq!(codes(&findings), vec![("", Code::JsonTooDeep)]);
        assert!(findings[0].message.contains("deeper than 128"));
    }

    #[test]
    fn oversized_plan_is_refused_before_parsing() {
        let big = vec![b' '; MAX_PLAN_BYTES + 1];
        let (_, findings) = parse(&big);
        assert_eq!(codes(&findings), vec![("", Code::PlanTooLarge)]);
    }

    #[test]
    fn one_broken_action_does_not_hide_the_others() {
        let plan = r#"{"repo_context":{"platform":"github","ecosystems":["go"],"default_branch":"main"},
          "actions":[
            {"type":"skip","package":"x","reason":"r","reason_type":"pinned","confidence":1},
            {"type":"comment_mr","mr_id":"seven","body":"b","confidence":1},
            {"type":"comment_issue","issue_id":3,"body":"b","confidence":1}
          ]}"#;
        let (parsed, findings) = parse(plan.as_bytes());
        assert_eq!(
            codes(&findings),
            vec![("/actions/1/mr_id", Code::InvalidType)]
        );
        assert_eq!(parsed.action_count, 3);
        let indexes: Vec<usize> = parsed.actions.iter().map(|(i, _)| *i).collect();
        assert_eq!(indexes, vec![0, 2]);
        assert_eq!(parsed.raw_actions.len(), 1);
        assert_eq!(parsed.raw_actions[0].0, 1);
        assert_eq!(parsed.raw_actions[0].1, ActionType::CommentMr);
        assert!(parsed.into_plan().is_none());
    }
}
