//! Which working directories share lock files.
//!
//! Two different `working_dir`s can change the same lock file. In an npm, yarn, bun or pnpm
//! workspace, `npm install x@1` run in `packages/a` rewrites the root's `package-lock.json`; every
//! member of a Cargo workspace shares the root's `Cargo.lock`; a `go.work` makes its modules share
//! `go.work.sum`. Actions in such directories must hold one `workdir:` key, the workspace root's, or
//! two of them would change one lock file at once. The root is found in the checkout: the
//! outermost directory, at or above a working directory, that declares a workspace. Outermost
//! because a nested declaration may itself be a member of an outer one; taking the outer one can
//! only serialise more, never less.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;

/// Manifests larger than this are not read: real ones are kilobytes, and the checkout is hostile.
const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// The workspace roots of a checkout, as repository-relative directories (`.` for the root).
/// The default knows none: every working directory owns its lock files, right for a plan read
/// without its checkout and for repositories without workspaces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct WorkspaceRoots {
    roots: BTreeSet<String>,
}

impl WorkspaceRoots {
    /// The roots among `dirs` and their ancestors, read from the checkout. Symbolic links are not
    /// followed (a link could point anywhere on the machine), and unreadable or malformed
    /// manifests declare nothing.
    pub(crate) fn discover<'a>(checkout: &Path, dirs: impl IntoIterator<Item = &'a str>) -> Self {
        let mut candidates = BTreeSet::new();
        for dir in dirs {
            candidates.extend(ancestors(dir));
        }
        let roots = candidates
            .into_iter()
            .filter(|dir| reachable(checkout, dir) && declares_workspace(&checkout.join(dir)))
            .collect();
        Self { roots }
    }

    /// The directory whose lock files an action in `dir` changes: the outermost workspace root
    /// at or above `dir`, else `dir` itself.
    pub(crate) fn lock_owner(&self, dir: &str) -> String {
        ancestors(dir)
            .into_iter()
            .find(|d| self.roots.contains(d))
            .unwrap_or_else(|| dir.to_string())
    }
}

/// `.`, then each prefix of `dir`, outermost first: `a/b` gives `.`, `a`, `a/b`.
fn ancestors(dir: &str) -> Vec<String> {
    let mut out = vec![".".to_string()];
    if dir == "." {
        return out;
    }
    let mut prefix = String::new();
    for component in dir.split('/') {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(component);
        out.push(prefix.clone());
    }
    out
}

/// Whether `dir` is a real directory of the checkout, with no symbolic link on the way to it.
fn reachable(checkout: &Path, dir: &str) -> bool {
    if dir == "." {
        return true;
    }
    let mut path = checkout.to_path_buf();
    dir.split('/').all(|component| {
        path.push(component);
        std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir())
    })
}

fn declares_workspace(dir: &Path) -> bool {
    let cargo = read_small(&dir.join("Cargo.toml"))
        .and_then(|text| text.parse::<toml::Table>().ok())
        .is_some_and(|manifest| manifest.contains_key("workspace"));
    let node = read_small(&dir.join("package.json"))
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|manifest| manifest.get("workspaces").is_some());
    cargo || node || is_file(&dir.join("pnpm-workspace.yaml")) || is_file(&dir.join("go.work"))
}

fn is_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

fn read_small(path: &Path) -> Option<String> {
    if !is_file(path) {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_MANIFEST_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn checkout(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn members_of_a_workspace_share_its_root() {
        let repo = checkout(&[
            ("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n"),
            ("crates/a/Cargo.toml", "[package]\nname = \"a\"\n"),
            ("web/package.json", r#"{"workspaces": ["packages/*"]}"#),
            ("web/packages/ui/package.json", r#"{"name": "ui"}"#),
            ("tools/package.json", r#"{"name": "tools"}"#),
        ]);
        let dirs = ["crates/a", "web/packages/ui", "tools"];
        let roots = WorkspaceRoots::discover(repo.path(), dirs);
        assert_eq!(roots.lock_owner("crates/a"), ".");
        assert_eq!(roots.lock_owner("web/packages/ui"), ".");
        assert_eq!(roots.lock_owner("tools"), ".");
        assert_eq!(roots.lock_owner("."), ".");
    }

    #[test]
    fn independent_projects_keep_their_own_directory() {
        let repo = checkout(&[
            ("Cargo.toml", "[package]\nname = \"top\"\n"),
            ("web/package.json", r#"{"workspaces": ["packages/*"]}"#),
            ("go/a/go.mod", "module a\n"),
            ("go/b/go.mod", "module b\n"),
            ("py/pnpm-workspace.yaml", "packages: []\n"),
            ("svc/go.work", "go 1.22\n"),
        ]);
        let dirs = ["web/packages/ui", "go/a", "go/b", "py/x", "svc/api", "."];
        let roots = WorkspaceRoots::discover(repo.path(), dirs);
        assert_eq!(roots.lock_owner("web/packages/ui"), "web");
        assert_eq!(roots.lock_owner("go/a"), "go/a");
        assert_eq!(roots.lock_owner("go/b"), "go/b");
        assert_eq!(roots.lock_owner("py/x"), "py");
        assert_eq!(roots.lock_owner("svc/api"), "svc");
        assert_eq!(roots.lock_owner("."), ".");
    }

    #[test]
    fn malformed_or_linked_manifests_declare_nothing() {
        let repo = checkout(&[
            ("Cargo.toml", "[workspace\n"),
            ("real/package.json", r#"{"workspaces": []}"#),
        ]);
        let root = repo.path();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        fs::create_dir(root.join("a")).unwrap();
        std::os::unix::fs::symlink(root.join("real/package.json"), root.join("a/package.json"))
            .unwrap();
        let roots = WorkspaceRoots::discover(repo.path(), ["link/x", "a/x", "real/x"]);
        assert_eq!(roots.lock_owner("link/x"), "link/x");
        assert_eq!(roots.lock_owner("a/x"), "a/x");
        assert_eq!(roots.lock_owner("real/x"), "real");
    }

    #[test]
    fn without_a_checkout_every_directory_is_its_own() {
        // No workspace known: every working directory owns its lock files.
        assert_eq!(WorkspaceRoots::default().lock_owner("a/b"), "a/b");
        assert_eq!(ancestors("a/b"), vec![".", "a", "a/b"]);
    }
}
