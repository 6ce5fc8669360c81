//! Plan names, checked with docker-agent's rule so a name maps to exactly one file.

use super::error::StoreError;
use crate::finding::clip;
use std::fmt;

/// A valid plan name: `^[a-z0-9][a-z0-9_-]*$`. It can neither leave the plans directory nor name
/// the lock file, and two different names never share a file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlanName(String);

impl PlanName {
    pub fn parse(name: &str) -> Result<Self, StoreError> {
        let mut bytes = name.bytes();
        let first_ok = bytes
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        let rest_ok =
            bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if first_ok && rest_ok {
            Ok(Self(name.to_string()))
        } else {
            Err(StoreError::InvalidName(clip(name)))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The sibling plan that carries a run's result: `<name>-result`.
    pub fn result(&self) -> PlanName {
        Self(format!("{}-result", self.0))
    }

    pub(crate) fn file_name(&self) -> String {
        format!("{}.json", self.0)
    }
}

impl fmt::Display for PlanName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
