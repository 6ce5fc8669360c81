//! `run --only I,J,...`: the actions one shard runs.

use std::collections::BTreeSet;

/// Why a `--only` value is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OnlyError {
    #[error("--only: `{0}` is not an action index")]
    NotAnIndex(String),
    #[error("--only: action {0} is named twice")]
    Duplicate(usize),
    #[error("--only: there is no action {index}; the plan has {count}")]
    OutOfRange { index: usize, count: usize },
}

impl crate::hint::Hint for OnlyError {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some(match self {
            OnlyError::NotAnIndex(_) => {
                "give action indices separated by commas, such as 0,3,5 (`quartermaster shards` prints them)"
            }
            OnlyError::Duplicate(_) => "name each action once",
            OnlyError::OutOfRange { .. } => {
                "indices start at 0; cut the shards from the plan this run executes"
            }
        }.into())
    }
}

/// The action indices a run is limited to, ascending and distinct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Only(BTreeSet<usize>);

impl Only {
    /// Parses `I,J,...`. An empty value is no limit (`None`): that is how an unset `QM_ONLY`
    /// arrives from a CI input, and how a shard job runs a plan that makes a single shard.
    pub fn parse(value: &str) -> Result<Option<Self>, OnlyError> {
        if value.trim().is_empty() {
            return Ok(None);
        }
        let mut seen = BTreeSet::new();
        for part in value.split(',') {
            let part = part.trim();
            let index: usize = part
                .parse()
                .map_err(|_| OnlyError::NotAnIndex(part.chars().take(40).collect()))?;
            if !seen.insert(index) {
                return Err(OnlyError::Duplicate(index));
            }
        }
        Ok(Some(Self(seen)))
    }

    /// Refuses an index beyond a plan of `count` actions.
    pub fn fits(&self, count: usize) -> Result<(), OnlyError> {
        match self.0.iter().find(|&&i| i >= count) {
            Some(&index) => Err(OnlyError::OutOfRange { index, count }),
            None => Ok(()),
        }
    }

    pub fn contains(&self, index: usize) -> bool {
        self.0.contains(&index)
    }

    /// The indices, ascending.
    pub fn indices(&self) -> Vec<usize> {
        self.0.iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hint::Hint;

    fn err(value: &str) -> String {
        Only::parse(value).unwrap_err().to_string()
    }

    #[test]
    fn only_is_parsed_strictly() {
        assert_eq!(Only::parse(""), Ok(None));
        assert_eq!(Only::parse(" "), Ok(None));
        let only = Only::parse("2, 0").unwrap().unwrap();
        assert_eq!(only.indices(), vec![0, 2]);
        assert!(only.contains(2) && !only.contains(1));
        assert_eq!(err("1,x"), "--only: `x` is not an action index");
        assert_eq!(err("-1"), "--only: `-1` is not an action index");
        assert_eq!(err("1,"), "--only: `` is not an action index");
        assert_eq!(err("1,1"), "--only: action 1 is named twice");
        assert_eq!(
            Only::parse("1,x").unwrap_err().hint().unwrap(),
            "give action indices separated by commas, such as 0,3,5 (`quartermaster shards` prints them)"
        );
    }

    #[test]
    fn indices_must_be_in_the_plan() {
        let only = Only::parse("0,3").unwrap().unwrap();
        assert_eq!(only.fits(4), Ok(()));
        let e = only.fits(3).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--only: there is no action 3; the plan has 3"
        );
        assert_eq!(
            e.hint().unwrap(),
            "indices start at 0; cut the shards from the plan this run executes"
        );
    }
}
