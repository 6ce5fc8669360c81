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
pub(crate) fn render(error: &dyn Hint) -> String {
    format!("error: {}", with_hint(error))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::SetupError;
    use crate::config::ConfigError;
    use crate::forge::ForgeError;
    use crate::named_plan::PlanName;
    use crate::policy::PolicyError;
    use crate::scale::Only;
    use crate::scale::merge::{self, MergeError};

    #[test]
    fn errors_show_their_hint_on_a_line_of_its_own() {
        let only = Only::parse("0,4").unwrap().unwrap().fits(3).unwrap_err();
        let errors: Vec<Box<dyn Hint>> = vec![
            Box::new(ConfigError::ResultPlan(
                PlanName::parse("../x").unwrap_err(),
            )),
            Box::new(SetupError::from(only)),
            Box::new(SetupError::from(PolicyError::UnknownKey {
                origin: ".quartermaster.toml at main".into(),
                key: "relase_age".into(),
                suggestion: " (did you mean `release_age`?)".into(),
                allowed: "release_age, advisories, deprecated".into(),
            })),
            Box::new(SetupError::NoDefaultBranch {
                branch: "master".into(),
                branches: "its branches are `main`, `next`".into(),
            }),
            Box::new(SetupError::from(ForgeError::Transport(
                "connection refused".into(),
            ))),
            Box::new(merge::merge(Vec::new()).unwrap_err()),
        ];
        let shown: Vec<String> = errors.iter().map(|e| render(e.as_ref())).collect();
        insta::assert_snapshot!(shown.join("\n\n"));
    }

    #[test]
    fn the_source_is_kept_apart_from_the_hint() {
        let e = SetupError::from(ForgeError::Transport("connection refused".into()));
        assert_eq!(e.hint(), None);
        let forge = Error::source(&e).expect("the forge error's own source");
        assert_eq!(forge.to_string(), "connection refused");
        let e = SetupError::from(ConfigError::NamedPlan(PlanName::parse("A").unwrap_err()));
        assert!(matches!(e, SetupError::Config(ConfigError::NamedPlan(_))));
        assert!(with_hint(&e).contains("\nhint: use lower-case letters"));
        let e = MergeError::NoReports;
        assert_eq!(with_hint(&e).lines().count(), 2);
    }
}
