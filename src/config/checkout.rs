//! Which checkout a run works on: the one named, the CI job's, or the repository the current
//! directory is in, found upward as git finds it.

use super::{CiEnv, ConfigError, Inputs};
use std::path::{Path, PathBuf};

/// The checkout: `--checkout`/`QM_CHECKOUT`, else the CI job's workspace, else the work tree of the
/// repository `cwd` is in (a run from `src/` works on the whole clone), else `cwd`.
pub(crate) fn checkout(inputs: &Inputs, ci: &CiEnv, cwd: PathBuf) -> PathBuf {
    inputs
        .checkout
        .clone()
        .or_else(|| ci.github_workspace.clone().map(PathBuf::from))
        .or_else(|| ci.ci_project_dir.clone().map(PathBuf::from))
        .unwrap_or_else(|| work_tree(&cwd).unwrap_or(cwd))
}

/// The work tree of the repository `dir` is in.
fn work_tree(dir: &Path) -> Option<PathBuf> {
    let repo = git2::Repository::discover(dir).ok()?;
    // git2 ends the work tree's path with a separator; the components drop it.
    repo.workdir().map(|tree| tree.components().collect())
}

/// Refuses a checkout that is not a git repository, where the run needs one (the local forge
/// pushes to the checkout's remote).
pub(crate) fn require_repository(checkout: &Path) -> Result<(), ConfigError> {
    if git2::Repository::open(checkout).is_ok() {
        return Ok(());
    }
    Err(match work_tree(checkout) {
        Some(tree) => ConfigError::with_hint(
            format!(
                "{} is inside the clone {}, not its top",
                checkout.display(),
                tree.display()
            ),
            format!("pass --checkout {} (QM_CHECKOUT)", tree.display()),
        ),
        None => ConfigError::with_hint(
            format!(
                "{} is not a git repository, nor inside one",
                checkout.display()
            ),
            "run quartermaster from the clone of the repository to update (any directory of it), or name the clone with --checkout DIR (QM_CHECKOUT)",
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subdirectory_of_a_clone_means_the_clone() {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        let sub = dir.path().join("src/deep");
        std::fs::create_dir_all(&sub).unwrap();
        let found = checkout(&Inputs::default(), &CiEnv::default(), sub.clone());
        assert_eq!(found, dir.path());
        require_repository(&found).unwrap();
        let named = Inputs {
            checkout: Some(sub.clone()),
            ..Inputs::default()
        };
        assert_eq!(checkout(&named, &CiEnv::default(), dir.path().into()), sub);
        let refused = require_repository(&sub).unwrap_err();
        insta::assert_snapshot!(
            crate::hint::render(&refused).replace(&dir.path().display().to_string(), "DIR")
        );
    }

    #[test]
    fn outside_any_repository_the_advice_names_checkout() {
        let dir = tempfile::tempdir().unwrap();
        let found = checkout(&Inputs::default(), &CiEnv::default(), dir.path().into());
        assert_eq!(found, dir.path());
        let refused = require_repository(&found).unwrap_err();
        insta::assert_snapshot!(
            crate::hint::render(&refused).replace(&dir.path().display().to_string(), "DIR")
        );
    }
}
