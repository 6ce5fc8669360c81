//! Why a run could not be configured: the message, and apart from it the advice (its
//! [`Hint`], shown on a `hint:` line), so that reports and logs can carry each where it belongs.

use crate::hint::Hint;
use crate::mission::MissionError;
use crate::named_plan::StoreError;
use crate::sandbox::SandboxError;
use crate::scale::only::OnlyError;
use std::borrow::Cow;
use std::path::PathBuf;

/// A configuration problem the operator can fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A setting refused here, with what to do about it when there is more to say.
    #[error("{message}")]
    Invalid {
        message: String,
        hint: Option<String>,
    },
    /// `--only` is not a list of action indices.
    #[error(transparent)]
    Only(#[from] OnlyError),
    /// `--plan docker-agent:<name>` names no plan that can be read.
    #[error(transparent)]
    NamedPlan(#[from] StoreError),
    /// `--result-plan` is not a valid plan name.
    #[error("--result-plan: {0}")]
    ResultPlan(#[source] StoreError),
    /// A sandbox setting (isolation, limits, `--tool-config`) that does not parse.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// A `QM_*` variable of the wrong shape.
    #[error("QM_* environment: {0}")]
    Environment(#[from] envy::Error),
    /// The token variables could not be taken out of the environment.
    #[error("token hygiene: {0}")]
    TokenHygiene(#[source] SandboxError),
    /// `--mission` names no mission that can be loaded.
    #[error("mission: {0}")]
    Mission(#[from] MissionError),
    /// The plan file (or standard input) could not be read.
    #[error("cannot read plan {}: {source}", .path.display())]
    PlanUnreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ConfigError {
    pub fn new(message: impl Into<String>) -> Self {
        Self::Invalid {
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self::Invalid {
            message: message.into(),
            hint: Some(hint.into()),
        }
    }
}

impl Hint for ConfigError {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            Self::Invalid { hint, .. } => hint.as_deref().map(Cow::Borrowed),
            Self::Only(e) => e.hint(),
            Self::NamedPlan(e) | Self::ResultPlan(e) => e.hint(),
            Self::Sandbox(_)
            | Self::Environment(_)
            | Self::TokenHygiene(_)
            | Self::Mission(_)
            | Self::PlanUnreadable { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hint::render;

    #[test]
    fn the_hint_is_a_line_of_its_own() {
        let e = ConfigError::with_hint("no token", "set QM_TOKEN");
        assert_eq!(e.to_string(), "no token");
        assert_eq!(render(&e), "error: no token\nhint: set QM_TOKEN");
        assert_eq!(render(&ConfigError::new("bad")), "error: bad");
    }
}
