//! The files each ecosystem's commands may change: globs (`*` within a name) that match the end of
//! a path, so `go.sum` matches `go.sum` and `providers/s3/go.sum`.

use std::collections::{BTreeMap, BTreeSet};

/// Per ecosystem, the files its commands may change. A change to any other file refuses the branch.
/// Why an ecosystem's `files` were refused.
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    #[error("`{0}` must be a relative file pattern")]
    NotRelative(String),
    #[error("`{file}`: {source}")]
    Glob {
        file: String,
        #[source]
        source: globset::Error,
    },
    #[error("{0}")]
    Set(#[source] globset::Error),
}

#[derive(Debug, Clone, Default)]
pub struct FilePolicy {
    rules: BTreeMap<String, FileRule>,
}

#[derive(Debug, Clone)]
struct FileRule {
    patterns: Vec<String>,
    set: globset::GlobSet,
}

impl FilePolicy {
    /// Adds `ecosystem`'s file patterns, checking them.
    pub(super) fn insert(
        &mut self,
        ecosystem: &str,
        patterns: &[String],
    ) -> Result<(), FilesError> {
        let mut set = globset::GlobSetBuilder::new();
        for file in patterns {
            if file.is_empty() || file.starts_with('/') || file.split('/').any(|c| c == "..") {
                return Err(FilesError::NotRelative(file.clone()));
            }
            // A leading `**/` matches any number of directories, none included.
            set.add(
                globset::GlobBuilder::new(&format!("**/{file}"))
                    .literal_separator(true)
                    .build()
                    .map_err(|source| FilesError::Glob {
                        file: file.clone(),
                        source,
                    })?,
            );
        }
        let set = set.build().map_err(FilesError::Set)?;
        self.rules.insert(
            ecosystem.to_string(),
            FileRule {
                patterns: patterns.to_vec(),
                set,
            },
        );
        Ok(())
    }

    /// Whether some ecosystem in `ecosystems` owns `path` (relative to the repository root,
    /// `/`-separated).
    pub fn owns<'e>(&self, mut ecosystems: impl Iterator<Item = &'e str>, path: &str) -> bool {
        ecosystems.any(|e| self.rules.get(e).is_some_and(|r| r.set.is_match(path)))
    }

    /// The file patterns of `ecosystems`, joined for messages (`none` when there are none).
    pub(crate) fn describe<'e>(&self, ecosystems: impl Iterator<Item = &'e str>) -> String {
        let files: BTreeSet<&str> = ecosystems
            .filter_map(|e| self.rules.get(e))
            .flat_map(|r| r.patterns.iter().map(String::as_str))
            .collect();
        if files.is_empty() {
            "none".to_string()
        } else {
            files.into_iter().collect::<Vec<_>>().join(", ")
        }
    }

    /// The patterns of one ecosystem.
    pub fn patterns(&self, ecosystem: &str) -> &[String] {
        self.rules
            .get(ecosystem)
            .map_or(&[], |r| r.patterns.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_the_end_of_a_path() {
        let mut policy = FilePolicy::default();
        policy
            .insert("go", &["go.mod".into(), "go.sum".into()])
            .unwrap();
        policy.insert("pip", &["requirements*.txt".into()]).unwrap();
        let go = || ["go"].into_iter();
        assert!(policy.owns(go(), "go.sum"));
        assert!(policy.owns(go(), "providers/s3/go.sum"));
        assert!(!policy.owns(go(), "xgo.sum"));
        assert!(!policy.owns(go(), ".github/workflows/go.yml"));
        assert!(policy.owns(["pip"].into_iter(), "requirements-dev.txt"));
        assert!(!policy.owns(["pip"].into_iter(), "a/requirements/x.txt"));
        assert_eq!(
            policy.describe(["go", "pip"].into_iter()),
            "go.mod, go.sum, requirements*.txt"
        );
        assert_eq!(policy.describe(["npm"].into_iter()), "none");
        let err = policy.insert("x", &["../a".into()]).unwrap_err();
        assert_eq!(err.to_string(), "`../a` must be a relative file pattern");
    }
}
