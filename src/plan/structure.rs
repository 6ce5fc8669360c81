//! Structural check of a JSON document against the plan's own JSON Schema.
//!
//! serde stops at the first problem and loses positions inside tagged enums; an agent fixing its
//! plan wants every unknown, missing and mistyped field at once, each with its JSON Pointer. This
//! walker covers exactly the schema keywords schemars derives for the plan types (`$ref`, `type`,
//! `properties`, `required`, `additionalProperties`, `items`, `enum`, `const`, and `oneOf` either as
//! a string enum or as objects discriminated by `type`). Deriving the check from the schema keeps
//! the validator and the published schema in agreement by construction. Bounds (`minimum`,
//! `maxItems`, ...) are left to the validator, which words them per field.

use crate::finding::{Code, Finding, Pointer, clip, closest};
use serde_json::{Map, Value};

/// The property that selects the branch of a discriminated `oneOf` (the action `type`).
const TAG: &str = "type";

pub(super) fn check(document: &Value, schema: &Value, findings: &mut Vec<Finding>) {
    let walker = Walker { root: schema };
    walker.value(document, schema, &Pointer::root(), findings);
}

struct Walker<'s> {
    root: &'s Value,
}

impl<'s> Walker<'s> {
    /// Follows local `$ref`s (`#/$defs/Name`), the only kind schemars emits.
    fn resolve(&self, mut schema: &'s Value) -> &'s Value {
        while let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let Some(target) = reference
                .strip_prefix('#')
                .and_then(|p| self.root.pointer(p))
            else {
                break;
            };
            schema = target;
        }
        schema
    }

    fn value(&self, value: &Value, schema: &'s Value, at: &Pointer, out: &mut Vec<Finding>) {
        let schema = self.resolve(schema);
        if let Some(branches) = schema.get("oneOf").and_then(Value::as_array) {
            match string_choices(self, branches) {
                Some(choices) => self.choice(value, &choices, at, out),
                None => self.tagged(value, branches, at, out),
            }
            return;
        }
        if let Some(types) = schema.get("type")
            && !type_matches(value, types, schema)
        {
            out.push(Finding::error(
                at,
                Code::InvalidType,
                format!(
                    "expected {}, found {}",
                    describe_types(types, schema),
                    describe_value(value)
                ),
            ));
            return;
        }
        if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
            let choices: Vec<&str> = choices.iter().filter_map(Value::as_str).collect();
            self.choice(value, &choices, at, out);
        }
        match value {
            Value::Object(object) if schema.get("properties").is_some() => {
                self.object(object, schema, at, "this object", out);
            }
            Value::Array(items) => {
                if let Some(item_schema) = schema.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        self.value(item, item_schema, &at.index(i), out);
                    }
                }
            }
            _ => {}
        }
    }

    fn object(
        &self,
        object: &Map<String, Value>,
        schema: &'s Value,
        at: &Pointer,
        what: &str,
        out: &mut Vec<Finding>,
    ) {
        let empty = Map::new();
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        for (key, value) in object {
            match properties.get(key) {
                Some(property) => self.value(value, property, &at.key(key), out),
                None if closed => {
                    let known: Vec<&str> = properties.keys().map(String::as_str).collect();
                    let hint = match closest(key, &known) {
                        Some(near) => format!("did you mean `{near}`? "),
                        None => String::new(),
                    };
                    out.push(Finding::error(
                        at.key(key),
                        Code::UnknownField,
                        format!(
                            "unknown field `{key}`; {hint}{what} takes: {}",
                            known.join(", ")
                        ),
                    ));
                }
                None => {}
            }
        }
        for required in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !object.contains_key(required) {
                let about = properties
                    .get(required)
                    .and_then(|p| p.get("description"))
                    .and_then(Value::as_str)
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default();
                out.push(Finding::error(
                    at.key(required),
                    Code::MissingField,
                    format!("missing required field `{required}`{about}"),
                ));
            }
        }
    }

    /// A `oneOf` of objects told apart by their `type` constant: the actions.
    fn tagged(&self, value: &Value, branches: &'s [Value], at: &Pointer, out: &mut Vec<Finding>) {
        let tags: Vec<(&str, &'s Value)> = branches
            .iter()
            .map(|b| self.resolve(b))
            .filter_map(|b| {
                let tag = b.pointer(&format!("/properties/{TAG}/const"))?.as_str()?;
                Some((tag, b))
            })
            .collect();
        let names: Vec<&str> = tags.iter().map(|(t, _)| *t).collect();
        let Value::Object(object) = value else {
            out.push(Finding::error(
                at,
                Code::InvalidType,
                format!(
                    "expected an object with a `{TAG}` of {}, found {}",
                    names.join(", "),
                    describe_value(value)
                ),
            ));
            return;
        };
        let tag = match object.get(TAG) {
            None => {
                out.push(Finding::error(
                    at.key(TAG),
                    Code::MissingField,
                    format!(
                        "missing required field `{TAG}` (one of {})",
                        names.join(", ")
                    ),
                ));
                return;
            }
            Some(Value::String(tag)) => tag,
            Some(other) => {
                out.push(Finding::error(
                    at.key(TAG),
                    Code::InvalidType,
                    format!(
                        "expected one of {}, found {}",
                        names.join(", "),
                        describe_value(other)
                    ),
                ));
                return;
            }
        };
        match tags.iter().find(|(t, _)| t == tag) {
            Some((name, branch)) => {
                self.object(object, branch, at, &format!("a {name} action"), out);
            }
            None => {
                let hint = match closest(tag, &names) {
                    Some(near) => format!("did you mean `{near}`? "),
                    None => String::new(),
                };
                out.push(Finding::error(
                    at.key(TAG),
                    Code::UnknownActionType,
                    format!(
                        "unknown action type `{}`; {hint}known types: {}",
                        clip(tag),
                        names.join(", ")
                    ),
                ));
            }
        }
    }

    fn choice(&self, value: &Value, choices: &[&str], at: &Pointer, out: &mut Vec<Finding>) {
        match value {
            Value::String(s) if choices.contains(&s.as_str()) => {}
            Value::String(s) => {
                let hint = match closest(s, choices) {
                    Some(near) => format!("did you mean `{near}`? "),
                    None => String::new(),
                };
                out.push(Finding::error(
                    at,
                    Code::InvalidType,
                    format!(
                        "`{}` is not allowed here; {hint}use one of: {}",
                        clip(s),
                        choices.join(", ")
                    ),
                ));
            }
            other => out.push(Finding::error(
                at,
                Code::InvalidType,
                format!(
                    "expected one of {}, found {}",
                    choices.join(", "),
                    describe_value(other)
                ),
            )),
        }
    }
}

/// The allowed strings when every branch of a `oneOf` is a string constant or enum.
fn string_choices<'s>(walker: &Walker<'s>, branches: &'s [Value]) -> Option<Vec<&'s str>> {
    let mut choices = Vec::new();
    for branch in branches {
        let branch = walker.resolve(branch);
        if let Some(c) = branch.get("const") {
            choices.push(c.as_str()?);
        } else if let Some(e) = branch.get("enum").and_then(Value::as_array) {
            for c in e {
                choices.push(c.as_str()?);
            }
        } else {
            return None;
        }
    }
    Some(choices)
}

fn type_matches(value: &Value, types: &Value, schema: &Value) -> bool {
    let one = |t: &str| match t {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => match schema.get("format").and_then(Value::as_str) {
            Some("uint64") | Some("uint32") | Some("uint") => value.is_u64(),
            _ => value.is_i64() || value.is_u64(),
        },
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => false,
    };
    match types {
        Value::String(t) => one(t),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(one),
        _ => true,
    }
}

fn describe_types(types: &Value, schema: &Value) -> String {
    let one = |t: &str| match t {
        "string" => "a string".to_string(),
        "number" => "a number".to_string(),
        "integer" => match schema.get("format").and_then(Value::as_str) {
            Some(f) if f.starts_with("uint") => "a non-negative whole number".to_string(),
            _ => "a whole number".to_string(),
        },
        "boolean" => "true or false".to_string(),
        "array" => "an array".to_string(),
        "object" => "an object".to_string(),
        "null" => "null".to_string(),
        other => other.to_string(),
    };
    match types {
        Value::String(t) => one(t),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(one)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "a value".to_string(),
    }
}

fn describe_value(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) if n.is_i64() || n.is_u64() => format!("the number {n}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string \"{}\"", clip(s)),
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::json_schema;
    use serde_json::json;

    fn run(doc: Value) -> Vec<(String, Code, String)> {
        let schema = json_schema();
        let mut out = Vec::new();
        check(&doc, &schema, &mut out);
        out.into_iter()
            .map(|f| (f.pointer, f.code, f.message))
            .collect()
    }

    #[test]
    fn reports_every_unknown_and_missing_field_at_once() {
        let found = run(json!({
            "repo_context": {"platform": "github", "ecosystems": [], "default_branch": "main", "lockfiles": []},
            "actions": [
                {"type": "create_mr", "branch": "quartermaster/a", "title": "t", "description": "d",
                 "updates": [{"package": "p", "from": "1", "to": "2", "update_type": "patch", "ecosystem": "go"}],
                 "commands": [], "test_command": "go test", "labels": [],
                 "fallback_stratgy": "batch", "confidence": 1}
            ]
        }));
        let places: Vec<(&str, Code)> = found.iter().map(|(p, c, _)| (p.as_str(), *c)).collect();
        assert_eq!(
            places,
            vec![
                ("/repo_context/lockfiles", Code::UnknownField),
                ("/actions/0/updates/0/ecosystem", Code::UnknownField),
                ("/actions/0/fallback_stratgy", Code::UnknownField),
                ("/actions/0/fallback_strategy", Code::MissingField),
            ]
        );
        assert!(
            found[0].2.contains("did you mean `lock_files`?"),
            "{}",
            found[0].2
        );
        assert!(found[2].2.contains("did you mean `fallback_strategy`?"));
        assert!(found[3].2.contains("What to do when"), "{}", found[3].2);
    }

    #[test]
    fn wrong_types_are_named() {
        let found = run(json!({
            "repo_context": {"platform": "bitbucket", "ecosystems": "go", "default_branch": 1},
            "actions": [{"type": "comment_mr", "mr_id": -3, "body": ["x"], "confidence": "high"}]
        }));
        let places: Vec<(&str, Code)> = found.iter().map(|(p, c, _)| (p.as_str(), *c)).collect();
        assert_eq!(
            places,
            vec![
                ("/repo_context/platform", Code::InvalidType),
                ("/repo_context/ecosystems", Code::InvalidType),
                ("/repo_context/default_branch", Code::InvalidType),
                ("/actions/0/mr_id", Code::InvalidType),
                ("/actions/0/body", Code::InvalidType),
                ("/actions/0/confidence", Code::InvalidType),
            ]
        );
        assert!(found[0].2.contains("use one of: github, gitlab"));
        assert!(
            found[3].2.contains("non-negative whole number"),
            "{}",
            found[3].2
        );
    }

    #[test]
    fn unknown_action_type_suggests_the_closest() {
        let found = run(json!({
            "repo_context": {"platform": "github", "ecosystems": [], "default_branch": "main"},
            "actions": [{"type": "create_pr"}, {"type": 3}, {}, "skip"]
        }));
        let places: Vec<(&str, Code)> = found.iter().map(|(p, c, _)| (p.as_str(), *c)).collect();
        assert_eq!(
            places,
            vec![
                ("/actions/0/type", Code::UnknownActionType),
                ("/actions/1/type", Code::InvalidType),
                ("/actions/2/type", Code::MissingField),
                ("/actions/3", Code::InvalidType),
            ]
        );
        assert!(
            found[0].2.contains("did you mean `create_mr`?"),
            "{}",
            found[0].2
        );
    }

    #[test]
    fn nullable_optionals_and_string_enums_are_accepted() {
        let found = run(json!({
            "repo_context": {"platform": "gitlab", "ecosystems": [], "default_branch": "main", "test_command": null},
            "actions": [{"type": "skip", "package": "p", "reason": "r", "reason_type": "pinned", "confidence": 1},
                        {"type": "update_mr", "mr_id": 1, "branch": "b", "updates": [{"package": "p", "from": "1", "to": "2", "update_type": "lock_file_maintenance"}],
                         "commands": [], "test_command": "t", "confidence": 0.5, "labels": null}]
        }));
        assert!(found.is_empty(), "{found:?}");
    }
}
