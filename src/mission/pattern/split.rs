//! Splitting a command into words, refusing what only a shell would understand.

use super::Refusal;
use crate::finding::{Code, clip};
use regex::Regex;
use std::sync::LazyLock;

/// Longest command accepted, in bytes.
pub const MAX_COMMAND_LEN: usize = 1024;
/// Most words a command may split into.
pub const MAX_WORDS: usize = 64;

thread_local! {
    static SPLITS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many commands this thread has split so far: what proves that nothing after validation
/// reads a command string again (the engine runs the argv validation matched).
pub fn splits_on_this_thread() -> usize {
    SPLITS.with(std::cell::Cell::get)
}

/// Splits a command into words, refusing anything that only makes sense to a shell. Nothing
/// Quartermaster runs goes through a shell, so shell syntax in a plan is either a misunderstanding
/// or an attack, and in both cases the command must not run.
pub fn split(command: &str) -> Result<Vec<String>, Refusal> {
    SPLITS.with(|n| n.set(n.get() + 1));
    if command.trim().is_empty() {
        return Err(Refusal::new(Code::CommandEmpty, "the command is empty"));
    }
    if command.len() > MAX_COMMAND_LEN {
        return Err(Refusal::new(
            Code::TooLong,
            format!(
                "the command is {} bytes; commands are limited to {MAX_COMMAND_LEN}",
                command.len()
            ),
        ));
    }
    if let Some(c) = command.chars().find(|c| shell_meaning(*c).is_some()) {
        let meaning = shell_meaning(c).unwrap_or("a control character");
        return Err(Refusal::new(
            Code::CommandShellSyntax,
            format!(
                "{} ({meaning}) is shell syntax; commands run without a shell, one program per command: split it into separate commands or remove it",
                describe_char(c)
            ),
        ));
    }
    let words = shell_words::split(command).map_err(|_| {
        Refusal::new(
            Code::CommandUnparseable,
            "the command has an unbalanced quote; quote each argument completely",
        )
    })?;
    if words.len() > MAX_WORDS {
        return Err(Refusal::new(
            Code::TooMany,
            format!("the command has {} words; at most {MAX_WORDS}", words.len()),
        ));
    }
    let first = &words[0];
    if ENV_ASSIGNMENT.is_match(first) {
        return Err(Refusal::new(
            Code::CommandEnvAssignment,
            format!(
                "`{}` sets an environment variable; commands cannot change the environment (ask the operator to pass variables with the extra-env input)",
                clip(first)
            ),
        ));
    }
    if first.contains('/') || first.contains('\\') {
        let bare = first.rsplit(['/', '\\']).next().unwrap_or_default();
        return Err(Refusal::new(
            Code::CommandProgramPath,
            format!(
                "`{}` is a path; give the bare program name (`{}`), which is resolved on the trusted PATH",
                clip(first),
                clip(bare)
            ),
        ));
    }
    Ok(words)
}

fn shell_meaning(c: char) -> Option<&'static str> {
    Some(match c {
        ';' => "a command separator",
        '|' => "a pipe or `||`",
        '&' => "background or `&&`",
        '$' => "variable or command substitution",
        '`' => "command substitution",
        '<' | '>' => "a redirection",
        '\\' => "an escape",
        '#' => "a comment",
        '\n' | '\r' => "a line break",
        c if c.is_control() && c != '\t' => "a control character",
        _ => return None,
    })
}

fn describe_char(c: char) -> String {
    match c {
        '\n' => "a newline".into(),
        '\r' => "a carriage return".into(),
        c if c.is_control() => format!("U+{:04X}", c as u32),
        c => format!("`{c}`"),
    }
}

static ENV_ASSIGNMENT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*=").expect("valid regex"));
