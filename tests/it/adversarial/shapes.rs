//! Wrong types, missing fields, and values past their limits.

use super::{Case, case, remove, set};
use serde_json::json;

pub(super) const CASES: &[Case] = &[
    // --- wrong types and missing fields --------------------------------------------------------
    case(
        "confidence-string",
        |p| set(p, "/actions/0/confidence", json!("high")),
        &[("/actions/0/confidence", "schema.invalid_type")],
    ),
    case(
        "mr-id-string",
        |p| set(p, "/actions/4/mr_id", json!("42")),
        &[("/actions/4/mr_id", "schema.invalid_type")],
    ),
    case(
        "mr-id-negative",
        |p| set(p, "/actions/6/mr_id", json!(-1)),
        &[("/actions/6/mr_id", "schema.invalid_type")],
    ),
    case(
        "mr-id-float",
        |p| set(p, "/actions/2/mr_id", json!(42.5)),
        &[("/actions/2/mr_id", "schema.invalid_type")],
    ),
    case(
        "missing-test-command",
        |p| remove(p, "/actions/0/test_command"),
        &[("/actions/0/test_command", "schema.missing_field")],
    ),
    case(
        "typo-field",
        |p| {
            let v = p.pointer("/actions/0/fallback_strategy").unwrap().clone();
            remove(p, "/actions/0/fallback_strategy");
            p["actions"][0]["fallback_stratgy"] = v;
        },
        &[
            ("/actions/0/fallback_stratgy", "schema.unknown_field"),
            ("/actions/0/fallback_strategy", "schema.missing_field"),
        ],
    ),
    case(
        "bad-strategy",
        |p| set(p, "/actions/0/fallback_strategy", json!("yolo")),
        &[("/actions/0/fallback_strategy", "schema.invalid_type")],
    ),
    case(
        "bad-update-type",
        |p| set(p, "/actions/0/updates/0/update_type", json!("huge")),
        &[("/actions/0/updates/0/update_type", "schema.invalid_type")],
    ),
    case(
        "unknown-action",
        |p| set(p, "/actions/4/type", json!("merge_mr")),
        &[("/actions/4/type", "schema.unknown_action_type")],
    ),
    case(
        "actions-not-array",
        |p| set(p, "/actions", json!({"0": {}})),
        &[("/actions", "schema.invalid_type")],
    ),
    case(
        "missing-context",
        |p| remove(p, "/repo_context"),
        &[("/repo_context", "schema.missing_field")],
    ),
    case(
        "extra-top-level",
        |p| p["run_as_root"] = json!(true),
        &[("/run_as_root", "schema.unknown_field")],
    ),
    case(
        "labels-not-strings",
        |p| set(p, "/actions/0/labels/0", json!(1)),
        &[("/actions/0/labels/0", "schema.invalid_type")],
    ),
    case(
        "platform-unknown",
        |p| set(p, "/repo_context/platform", json!("bitbucket")),
        &[("/repo_context/platform", "schema.invalid_type")],
    ),
    case(
        "update-unknown-field",
        |p| p["actions"][0]["updates"][0]["registry"] = json!("http://evil"),
        &[("/actions/0/updates/0/registry", "schema.unknown_field")],
    ),
    // --- limits and values -------------------------------------------------------------------------
    case(
        "too-many-actions",
        |p| {
            let skip = p["actions"][7].clone();
            let actions = p["actions"].as_array_mut().unwrap();
            while actions.len() < 21 {
                actions.push(skip.clone());
            }
        },
        &[("/actions", "plan.too_many_actions")],
    ),
    case(
        "confidence-high",
        |p| set(p, "/actions/0/confidence", json!(1.5)),
        &[("/actions/0/confidence", "confidence.out_of_range")],
    ),
    case(
        "confidence-negative",
        |p| set(p, "/actions/7/confidence", json!(-0.1)),
        &[("/actions/7/confidence", "confidence.out_of_range")],
    ),
    case(
        "id-zero",
        |p| set(p, "/actions/5/issue_id", json!(0)),
        &[("/actions/5/issue_id", "id.not_positive")],
    ),
    case(
        "label-comma",
        |p| set(p, "/actions/0/labels/0", json!("deps,security")),
        &[("/actions/0/labels/0", "label.comma")],
    ),
    case(
        "label-long",
        |p| set(p, "/actions/3/labels/0", json!("x".repeat(51))),
        &[("/actions/3/labels/0", "label.too_long")],
    ),
    case(
        "label-space",
        |p| set(p, "/actions/0/labels/0", json!(" deps")),
        &[("/actions/0/labels/0", "label.whitespace")],
    ),
    case(
        "label-empty",
        |p| set(p, "/actions/2/labels/0", json!("")),
        &[("/actions/2/labels/0", "label.empty")],
    ),
    case(
        "title-empty",
        |p| set(p, "/actions/0/title", json!("  ")),
        &[("/actions/0/title", "title.empty")],
    ),
    case(
        "title-newline",
        |p| set(p, "/actions/3/title", json!("fix\n/close")),
        &[("/actions/3/title", "title.control_char")],
    ),
    case(
        "title-long",
        |p| set(p, "/actions/0/title", json!("t".repeat(256))),
        &[("/actions/0/title", "title.too_long")],
    ),
    case(
        "body-long",
        |p| set(p, "/actions/3/body", json!("b".repeat(60_001))),
        &[("/actions/3/body", "body.too_long")],
    ),
    case(
        "comment-empty",
        |p| set(p, "/actions/4/body", json!("")),
        &[("/actions/4/body", "text.empty")],
    ),
    case(
        "skip-reason-empty",
        |p| set(p, "/actions/7/reason", json!(" ")),
        &[("/actions/7/reason", "text.empty")],
    ),
    case(
        "no-commands",
        |p| set(p, "/actions/1/commands", json!([])),
        &[("/actions/1/commands", "commands.empty")],
    ),
    case(
        "too-many-commands",
        |p| set(p, "/actions/0/commands", json!(vec!["go mod tidy"; 21])),
        &[("/actions/0/commands", "limit.too_many")],
    ),
    case(
        "command-too-long",
        |p| {
            set(
                p,
                "/actions/0/commands/1",
                json!(format!("go mod tidy {}", "x".repeat(1100))),
            )
        },
        &[("/actions/0/commands/1", "limit.too_long")],
    ),
    case(
        "update-package-option",
        |p| set(p, "/actions/1/updates/0/package", json!("-rf")),
        &[
            ("/actions/1/updates/0/package", "update.invalid_package"),
            ("/actions/1/commands/0", "command.undeclared_package"),
        ],
    ),
    case(
        "update-to-empty",
        |p| set(p, "/actions/2/updates/0/to", json!("")),
        &[
            ("/actions/2/updates/0/to", "update.invalid_version"),
            ("/actions/2/commands/0", "command.version_mismatch"),
        ],
    ),
];
