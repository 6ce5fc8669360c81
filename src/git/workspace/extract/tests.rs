//! The base checkout is written by hand from a tree the remote sent, so it must refuse what git's
//! checkout refuses and write what git's checkout writes.

use super::*;
use crate::git::reset::tests::sh;

/// A raw tree object of `entries` (mode, name, id), written without the checks libgit2's tree
/// builder makes: what a hostile remote can send.
fn raw_tree(odb: &git2::Odb<'_>, entries: &[(&str, &[u8], git2::Oid)]) -> git2::Oid {
    let mut bytes = Vec::new();
    for (mode, name, id) in entries {
        bytes.extend_from_slice(format!("{mode} ").as_bytes());
        bytes.extend_from_slice(name);
        bytes.push(0);
        bytes.extend_from_slice(id.as_bytes());
    }
    odb.write(git2::ObjectType::Tree, &bytes).unwrap()
}

/// A bare repository whose one commit has the root tree `entries` makes, given the object
/// database (for more objects), the blob `escaped` and the tree `{escaped}`.
fn repository(
    root: &Path,
    entries: impl Fn(&git2::Odb<'_>, git2::Oid, git2::Oid) -> Vec<(&'static str, Vec<u8>, git2::Oid)>,
) -> (PathBuf, git2::Oid) {
    let path = root.join("repo.git");
    let repo = git2::Repository::init_bare(&path).unwrap();
    let odb = repo.odb().unwrap();
    let blob = odb.write(git2::ObjectType::Blob, b"escaped\n").unwrap();
    let inner = raw_tree(&odb, &[("100644", b"escaped", blob)]);
    let listed = entries(&odb, blob, inner);
    let listed: Vec<(&str, &[u8], git2::Oid)> = listed
        .iter()
        .map(|(m, n, i)| (*m, n.as_slice(), *i))
        .collect();
    let tree = repo.find_tree(raw_tree(&odb, &listed)).unwrap();
    let who = git2::Signature::now("t", "t@t").unwrap();
    let commit = repo
        .commit(None, &who, &who, "hostile", &tree, &[])
        .unwrap();
    (path, commit)
}

#[test]
fn a_tree_naming_a_path_out_of_the_checkout_is_refused() {
    for name in ["..", ".", ".git", ".GIT", "git~1", "a/b"] {
        let root = tempfile::tempdir().unwrap();
        let (repo, commit) = repository(root.path(), |_, _, inner| {
            vec![("40000", name.into(), inner)]
        });
        // Control: the tree as stored names the entry, so a writer that trusted it would join it.
        let opened = git2::Repository::open_bare(&repo).unwrap();
        let tree = opened.find_commit(commit).unwrap().tree().unwrap();
        assert_eq!(tree.iter().next().unwrap().name_bytes(), name.as_bytes());
        let dir = root.path().join("base/files");
        std::fs::create_dir_all(&dir).unwrap();
        let refused = extract(&repo, commit, &dir).unwrap_err();
        assert!(
            matches!(refused, GitError::UnsafePath { .. }),
            "{name}: {refused}"
        );
        assert!(!root.path().join("base/escaped").exists(), "{name}");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "{name}");
    }
    let root = tempfile::tempdir().unwrap();
    let (repo, commit) = repository(root.path(), |_, _, inner| {
        vec![("40000", b"..".to_vec(), inner)]
    });
    let dir = root.path().join("files");
    std::fs::create_dir(&dir).unwrap();
    insta::assert_snapshot!(extract(&repo, commit, &dir).unwrap_err().to_string());
}

#[test]
fn a_tree_naming_a_link_and_a_file_alike_writes_nothing_through_the_link() {
    let root = tempfile::tempdir().unwrap();
    let outside = root.path().join("outside.txt");
    std::fs::write(&outside, "kept\n").unwrap();
    let target = outside.display().to_string().into_bytes();
    let (repo, commit) = repository(root.path(), |odb, blob, _| {
        let link = odb.write(git2::ObjectType::Blob, &target).unwrap();
        // Four more files, so that however many writers share six entries, the first one
        // writes both of these, the link first.
        let mut entries = vec![
            ("120000", b"b".to_vec(), link),
            ("100644", b"b".to_vec(), blob),
        ];
        entries.extend([b"c", b"d", b"e", b"f"].map(|n| ("100644", n.to_vec(), blob)));
        entries
    });
    let dir = root.path().join("files");
    std::fs::create_dir(&dir).unwrap();
    assert!(extract(&repo, commit, &dir).is_err());
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "kept\n");
    // Control: the link was made, and a plain write through it reaches outside.
    assert!(dir.join("b").is_symlink());
    std::fs::write(dir.join("b"), "changed\n").unwrap();
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "changed\n");
}

#[test]
fn the_files_are_what_a_checkout_writes() {
    let root = tempfile::tempdir().unwrap();
    let seed = root.path().join("seed");
    std::fs::create_dir(&seed).unwrap();
    sh(
        &seed,
        "git init -q -b main . && git config user.name t && git config user.email t@t
         mkdir -p a/b/c && echo x > a/b/c/x.txt && printf '#!/bin/sh\\n' > run && chmod 755 run
         ln -s a/b link && echo lf > w.txt && echo '* text=auto eol=crlf' > .gitattributes
         git add -A && git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,sub
         git commit -qm base",
    );
    let repo = git2::Repository::open(&seed).unwrap();
    let commit = repo.head().unwrap().target().unwrap();
    let dir = root.path().join("files");
    std::fs::create_dir(&dir).unwrap();
    extract(&seed.join(".git"), commit, &dir).unwrap();
    let mode = |p: &str| {
        std::fs::symlink_metadata(dir.join(p))
            .unwrap()
            .permissions()
            .mode()
    };
    assert_eq!(std::fs::read(dir.join("a/b/c/x.txt")).unwrap(), b"x\n");
    assert_eq!(
        std::fs::read(dir.join("w.txt")).unwrap(),
        b"lf\n",
        "no attribute applies"
    );
    assert_eq!(mode("run") & 0o777, 0o755);
    assert_eq!(mode("a/b/c/x.txt") & 0o777, 0o644);
    assert_eq!(mode("a/b") & 0o777, 0o755);
    assert_eq!(
        std::fs::read_link(dir.join("link")).unwrap(),
        Path::new("a/b")
    );
    assert_eq!(
        std::fs::read_dir(dir.join("sub")).unwrap().count(),
        0,
        "a submodule's empty directory"
    );
}

#[test]
fn a_layer_is_seeded_only_at_paths_git_checks_out() {
    for refused in ["a/../b", "..", "a/.git/config", "./a", "a//b"] {
        assert!(
            safe_path(Path::new(refused), 0o100644).is_err(),
            "{refused}"
        );
    }
    assert!(safe_path(Path::new("a/.gitmodules"), 0o120000).is_err());
    for kept in ["a/b", "a/.gitmodules", ".github/x", "a..b/c"] {
        safe_path(Path::new(kept), 0o100644).unwrap();
    }
}
