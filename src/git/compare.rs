//! How a branch built on an older base stands against the default branch's new tip: what the
//! default branch changed since, and whether the branch's changes still apply on top of it.

use super::{Mirror, Result, git};
use std::collections::BTreeSet;

/// A branch's commit against a newer tip of the branch it was built on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Comparison {
    /// Paths the newer tip changed since the base.
    pub(crate) changed_since: Vec<String>,
    /// Paths where the branch's changes and the newer tip's conflict.
    pub conflicts: Vec<String>,
}

impl Mirror {
    /// Compares the change from `base` to `tip` with the default branch moved from `base` to
    /// `onto` (every commit must have been fetched).
    pub(crate) fn compare(
        &self,
        base: git2::Oid,
        onto: git2::Oid,
        tip: git2::Oid,
    ) -> Result<Comparison> {
        let repo = &self.repo;
        let tree = |id: git2::Oid| -> Result<git2::Tree<'_>> {
            repo.find_commit(id)
                .and_then(|c| c.tree())
                .map_err(git(format!("reading commit {id}")))
        };
        let (base_tree, onto_tree, tip_tree) = (tree(base)?, tree(onto)?, tree(tip)?);
        let diff = repo
            .diff_tree_to_tree(Some(&base_tree), Some(&onto_tree), None)
            .map_err(git("comparing the default branch with the base"))?;
        let changed_since: BTreeSet<String> = diff
            .deltas()
            .flat_map(|d| [d.old_file().path(), d.new_file().path()])
            .flatten()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let index = repo
            .merge_trees(&base_tree, &onto_tree, &tip_tree, None)
            .map_err(git("merging the branch onto the default branch"))?;
        let conflicts: BTreeSet<String> = index
            .conflicts()
            .map_err(git("reading the merge's conflicts"))?
            .flatten()
            .filter_map(|c| c.our.or(c.their).or(c.ancestor))
            .map(|e| String::from_utf8_lossy(&e.path).into_owned())
            .collect();
        Ok(Comparison {
            changed_since: changed_since.into_iter().collect(),
            conflicts: conflicts.into_iter().collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::{RemoteSpec, RemoteUrl};

    fn commit(
        repo: &git2::Repository,
        parent: Option<git2::Oid>,
        files: &[(&str, &str)],
    ) -> git2::Oid {
        let mut builder = repo.treebuilder(None).unwrap();
        for (name, content) in files {
            let blob = repo.blob(content.as_bytes()).unwrap();
            builder.insert(name, blob, 0o100644).unwrap();
        }
        let tree = repo.find_tree(builder.write().unwrap()).unwrap();
        let who = git2::Signature::now("t", "t@example.com").unwrap();
        let parents: Vec<git2::Commit<'_>> = parent
            .map(|p| repo.find_commit(p).unwrap())
            .into_iter()
            .collect();
        let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
        repo.commit(None, &who, &who, "c", &tree, &parents).unwrap()
    }

    #[test]
    fn a_branch_is_compared_with_the_moved_default_branch() {
        let dir = tempfile::tempdir().unwrap();
        let spec = RemoteSpec {
            url: RemoteUrl::new(dir.path().display().to_string()),
            username: None,
            token: None,
        };
        let mirror = Mirror::new(spec, dir.path()).unwrap();
        let repo = &mirror.repo;
        let lock = "a 1\nb 1\nc 1\n";
        let base = commit(repo, None, &[("Cargo.lock", lock), ("README", "hi\n")]);
        let tip = commit(
            repo,
            Some(base),
            &[("Cargo.lock", "a 1\nb 2\nc 1\n"), ("README", "hi\n")],
        );
        let readme = commit(
            repo,
            Some(base),
            &[("Cargo.lock", lock), ("README", "hello\n")],
        );
        let clash = commit(
            repo,
            Some(base),
            &[("Cargo.lock", "a 1\nb 3\nc 1\n"), ("README", "hi\n")],
        );
        let moved = mirror.compare(base, readme, tip).unwrap();
        assert_eq!(
            (moved.changed_since, moved.conflicts),
            (vec!["README".to_string()], vec![])
        );
        let clashed = mirror.compare(base, clash, tip).unwrap();
        assert_eq!(clashed.changed_since, ["Cargo.lock"]);
        assert_eq!(clashed.conflicts, ["Cargo.lock"]);
    }
}
