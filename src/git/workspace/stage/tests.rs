use super::*;
use crate::git::reset::tests::{mirror_of, sh};

/// A repository whose own `.gitattributes` asks for `ident` and CRLF line ends, with a file in
/// which both would show; a workspace of it in `root/work`.
fn workspace(root: &Path) -> Workspace {
    let seed = root.join("seed");
    std::fs::create_dir(&seed).unwrap();
    sh(
        &seed,
        "git init -q -b main . && git config user.name t && git config user.email t@t
         git config core.safecrlf false
         printf '* ident\\n*.txt text eol=crlf\\n' > .gitattributes
         printf 'id: $Id$\\nline\\n' > a.txt && mkdir sub && echo b > sub/b.txt
         git add -A && git commit -qm base",
    );
    let mirror = mirror_of(root, &seed, &["main"]);
    let base = mirror.tip("main").unwrap();
    let tree = root.join("work");
    std::fs::create_dir(&tree).unwrap();
    Workspace::create(&mirror.source(), base, &tree).unwrap()
}

/// The bytes `tree` holds at `path`.
fn blob(ws: &Workspace, tree: git2::Oid, path: &str) -> Vec<u8> {
    let tree = ws.repo.find_tree(tree).unwrap();
    let entry = tree.get_path(Path::new(path)).unwrap();
    ws.repo.find_blob(entry.id()).unwrap().content().to_vec()
}

/// What a hostile command leaves: a self-ignoring `.gitignore` beside a `.gitattributes` whose
/// `ident` would cut what lies between `$Id:` and the next `$` out of the staged file.
const PLANTED: &str =
    "# $Id: planted\n[[tool.uv.index]]\nurl = \"https://private.example/simple\"\n# $\n";

fn plant(dir: &Path) {
    std::fs::write(dir.join("sub/.gitignore"), ".gitignore\n.gitattributes\n").unwrap();
    std::fs::write(dir.join("sub/.gitattributes"), "* ident\n").unwrap();
    std::fs::write(dir.join("sub/pyproject.toml"), PLANTED).unwrap();
}

#[test]
fn the_checkout_holds_the_blobs_as_they_are() {
    let root = tempfile::tempdir().unwrap();
    let ws = workspace(root.path());
    assert_eq!(
        std::fs::read(ws.root().join("a.txt")).unwrap(),
        b"id: $Id$\nline\n",
        "no ident expansion and no CRLF from the repository's own attributes"
    );
}

#[test]
fn planted_attributes_change_nothing_that_is_staged() {
    let root = tempfile::tempdir().unwrap();
    let ws = workspace(root.path());
    plant(ws.root());
    std::fs::write(ws.root().join("a.txt"), "id: $Id: kept $\r\nline\r\n").unwrap();
    let changes = ws.changes().unwrap();
    assert_eq!(
        changes.paths,
        [
            ("a.txt".to_string(), false),
            ("sub/pyproject.toml".into(), false)
        ]
    );
    assert_eq!(changes.ignored, ["sub/.gitattributes", "sub/.gitignore"]);
    let staged = ws.stage(&changes, &Verified::new()).unwrap().unwrap();
    assert_eq!(staged.files, ["a.txt", "sub/pyproject.toml"]);
    assert_eq!(
        blob(&ws, staged.tree, "sub/pyproject.toml"),
        PLANTED.as_bytes()
    );
    assert_eq!(
        blob(&ws, staged.tree, "a.txt"),
        b"id: $Id: kept $\r\nline\r\n"
    );
}

/// The control: libgit2 staging the same files in a repository of its own, without the
/// workspace's override, applies the planted `ident` and cuts the index block out.
#[test]
fn without_the_override_the_planted_attributes_would_apply() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    std::fs::create_dir(dir.join("sub")).unwrap();
    plant(dir);
    let repo = git2::Repository::init(dir).unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new("sub/pyproject.toml")).unwrap();
    let entry = index.get_path(Path::new("sub/pyproject.toml"), 0).unwrap();
    let staged = repo.find_blob(entry.id).unwrap().content().to_vec();
    assert_eq!(staged, b"# $Id$\n");
}

#[test]
fn verified_files_are_staged_from_the_verified_bytes() {
    let root = tempfile::tempdir().unwrap();
    let ws = workspace(root.path());
    std::fs::write(ws.root().join("a.txt"), "on disk\n").unwrap();
    std::fs::write(ws.root().join("new.lock"), "written\n").unwrap();
    let changes = ws.changes().unwrap();
    let verified: Verified = [
        ("a.txt".to_string(), Some(b"as verified\n".to_vec())),
        ("new.lock".into(), Some(b"written\n".to_vec())),
        ("sub/b.txt".into(), None),
        ("absent.lock".into(), None),
    ]
    .into();
    let staged = ws.stage(&changes, &verified).unwrap().unwrap();
    assert_eq!(blob(&ws, staged.tree, "a.txt"), b"as verified\n");
    assert_eq!(blob(&ws, staged.tree, "new.lock"), b"written\n");
    let tree = ws.repo.find_tree(staged.tree).unwrap();
    assert!(tree.get_path(Path::new("sub/b.txt")).is_err());
    assert_eq!(staged.files, ["a.txt", "new.lock", "sub/b.txt"]);
}

#[test]
fn a_tree_without_the_verified_bytes_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let ws = workspace(root.path());
    let base = ws.repo.find_commit(ws.base()).unwrap().tree_id();
    let other: Verified = [("a.txt".to_string(), Some(b"other\n".to_vec()))].into();
    let e = confirm(&ws.repo, base, &other).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the tree to commit holds other content at `a.txt` than the verifier read; nothing was committed"
    );
    let absent: Verified = [("a.txt".to_string(), None)].into();
    assert!(confirm(&ws.repo, base, &absent).is_err());
    let same: Verified = [("a.txt".to_string(), Some(b"id: $Id$\nline\n".to_vec()))].into();
    confirm(&ws.repo, base, &same).unwrap();
}
