//! Advice kept apart from an error's message: the message says what went wrong, the hint what to
//! do about it. The command line shows both where it ends (`error:` then `hint:`); the JSON report
//! and the MCP tools carry them in fields of their own.

use std::borrow::Cow;
use std::error::Error;

/// An error that may say what to do about it.
pub trait Hint: Error {
    /// What to do, when there is more to say than the message.
    fn hint(&self) -> Option<Cow<'_, str>>;
}

/// The message, then the hint on a line of its own: as an agent or a log reads it.
pub fn with_hint(error: &dyn Hint) -> String {
    match error.hint() {
        Some(hint) => format!("{error}\nhint: {hint}"),
        None => error.to_string(),
    }
}

/// `error: <message>`, then `hint: <advice>`: as the command line shows an error.
pub fn render(error: &dyn Hint) -> String {
    format!("error: {}", with_hint(error))
}
