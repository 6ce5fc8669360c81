//! Why a run could not be configured: the message, and apart from it the advice (shown on a
//! `hint:` line), so that reports and logs can carry each where it belongs.

/// A configuration problem the operator can fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ConfigError {
    pub message: String,
    /// What to do about it, when there is more to say than the message.
    pub hint: Option<String>,
}

impl ConfigError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: Some(hint.into()),
        }
    }

    /// The message and the hint as the command line shows them.
    pub fn render(&self) -> String {
        match &self.hint {
            Some(hint) => format!("error: {}\nhint: {hint}", self.message),
            None => format!("error: {}", self.message),
        }
    }
}

impl From<String> for ConfigError {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_is_a_line_of_its_own() {
        let e = ConfigError::with_hint("no token", "set QM_TOKEN");
        assert_eq!(e.to_string(), "no token");
        assert_eq!(e.render(), "error: no token\nhint: set QM_TOKEN");
        assert_eq!(ConfigError::new("bad").render(), "error: bad");
    }
}
