//! The files of a commit Quartermaster made, read back from it: what a forge is handed to make
//! the same commit itself (signed commits), byte for byte what was verified.

use super::{NewCommit, Result, Workspace, git};

/// One file a commit changed against its base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChangedFile {
    pub path: String,
    /// Git's file mode (`0o100644`, `0o100755`, `0o120000`).
    pub mode: u32,
    /// The bytes as committed; `None` when the commit deletes the file.
    pub content: Option<Vec<u8>>,
    /// Whether the base has the file.
    pub in_base: bool,
}

impl Workspace {
    /// The files `commit` changed against its base, as it holds them.
    pub(crate) fn changed_files(&self, commit: &NewCommit) -> Result<Vec<ChangedFile>> {
        let tree = |id| {
            self.repo
                .find_commit(id)
                .and_then(|c| c.tree())
                .map_err(git("reading a commit's tree"))
        };
        let (base, new) = (tree(commit.base)?, tree(commit.id)?);
        let diff = self
            .repo
            .diff_tree_to_tree(Some(&base), Some(&new), None)
            .map_err(git("comparing the commit with its base"))?;
        let mut files = Vec::new();
        for delta in diff.deltas() {
            let deleted = delta.status() == git2::Delta::Deleted;
            let side = if deleted {
                delta.old_file()
            } else {
                delta.new_file()
            };
            let Some(path) = side.path() else { continue };
            let content = if deleted {
                None
            } else {
                let blob = self
                    .repo
                    .find_blob(side.id())
                    .map_err(git(format!("reading {}", path.display())))?;
                Some(blob.content().to_vec())
            };
            files.push(ChangedFile {
                path: path.to_string_lossy().into_owned(),
                mode: u32::from(side.mode()),
                content,
                in_base: delta.status() != git2::Delta::Added,
            });
        }
        Ok(files)
    }

    /// The message of a commit made in this workspace.
    pub(crate) fn message_of(&self, commit: &NewCommit) -> Result<String> {
        let c = self
            .repo
            .find_commit(commit.id)
            .map_err(git("reading the commit"))?;
        Ok(String::from_utf8_lossy(c.message_bytes()).into_owned())
    }
}
