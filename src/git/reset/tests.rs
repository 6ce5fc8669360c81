use crate::git::{Mirror, RemoteSpec, RemoteUrl, Workspace};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

/// A mirror of the repository `seed`, made in `root/scratch`, with `branches` fetched.
pub(crate) fn mirror_of(root: &Path, seed: &Path, branches: &[&str]) -> Mirror {
    let spec = RemoteSpec {
        url: RemoteUrl::new(seed.display().to_string()),
        username: None,
        token: None,
    };
    let scratch = root.join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let mirror = Mirror::new(spec, &scratch).unwrap();
    mirror.list().unwrap();
    mirror.fetch(branches).unwrap();
    mirror
}

pub(crate) fn sh(dir: &Path, script: &str) {
    let status = Command::new("sh")
        .args(["-ec", script])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "{script}");
}

/// A repository with a file, an executable, a link, a nested directory and an ignore rule;
/// `base` and `next` are its two commits.
fn remote(root: &Path) -> (std::path::PathBuf, git2::Oid, git2::Oid) {
    let seed = root.join("seed");
    std::fs::create_dir(&seed).unwrap();
    sh(
        &seed,
        "git init -q -b main . && git config user.name t && git config user.email t@t
         mkdir -p bin dir/sub && echo a > a.txt && printf '#!/bin/sh\\n' > bin/run && chmod 755 bin/run
         echo b > dir/sub/b.txt && ln -s a.txt link && echo 'ignored/' > .gitignore
         git add -A && git commit -qm base
         echo a2 > a.txt && git commit -qam next",
    );
    let repo = git2::Repository::open(&seed).unwrap();
    let next = repo.head().unwrap().peel_to_commit().unwrap();
    let base = next.parent_id(0).unwrap();
    (seed, base, next.id())
}

/// The root's own mode and owner.
fn root_line(root: &Path) -> String {
    let meta = std::fs::metadata(root).unwrap();
    format!(". {:o} {}:{}", meta.mode() & 0o7777, meta.uid(), meta.gid())
}

/// The root's mode and owner, then every entry under it with its kind, mode and content (the
/// file system's own view).
fn listing(root: &Path) -> Vec<String> {
    let mut out = vec![root_line(root)];
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let what = if meta.is_symlink() {
                format!("-> {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                stack.push(path.clone());
                String::from("dir")
            } else {
                std::fs::read_to_string(&path).unwrap_or_default()
            };
            out.push(format!("{rel} {:o} {}", meta.mode() & 0o7777, what.trim()));
        }
    }
    out.sort();
    out
}

#[test]
fn a_reset_undoes_files_modes_links_and_leftovers() {
    let root = tempfile::tempdir().unwrap();
    let (seed, base, next) = remote(root.path());
    let mirror = mirror_of(root.path(), &seed, &["main"]);
    let tree = root.path().join("work");
    std::fs::create_dir(&tree).unwrap();
    let mut ws = Workspace::create(&mirror.source(), base, &tree).unwrap();
    ws.reset(base).unwrap();
    let clean = listing(&tree);
    let outside = root.path().join("outside.txt");
    std::fs::write(&outside, "outside").unwrap();
    let elsewhere = root.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    // What a hostile unit might leave: content re-dated to look untouched, a link where a
    // directory was, a hard link to a file outside, taken permissions, a setuid bit, new files
    // (ignored and not), a `.git`, and a fifo.
    let script = format!(
        "echo evil > a.txt && touch -r bin/run a.txt
         rm -r dir && ln -s {} dir
         chmod 4755 bin/run && chmod 000 .gitignore
         rm link && echo x > link
         mkdir -p ignored/deep && echo i > ignored/deep/f && chmod 000 ignored/deep
         mkdir .git && echo '[core]' > .git/config && echo new > new.txt && mkfifo pipe",
        elsewhere.display()
    );
    sh(&tree, &script);
    std::fs::remove_file(tree.join("bin/run")).unwrap();
    std::fs::hard_link(&outside, tree.join("bin/run")).unwrap();
    std::fs::set_permissions(tree.join("bin/run"), std::fs::Permissions::from_mode(0o755)).unwrap();
    // The root itself: group-writable and setgid, and (as root) handed to another user.
    std::fs::set_permissions(&tree, std::fs::Permissions::from_mode(0o2775)).unwrap();
    if nix::unistd::geteuid().is_root() {
        std::os::unix::fs::chown(&tree, Some(61_999), Some(61_999)).unwrap();
        std::fs::set_permissions(&tree, std::fs::Permissions::from_mode(0o2775)).unwrap();
    }
    assert_ne!(root_line(&tree), clean[0]);
    ws.reset(base).unwrap();
    assert_eq!(listing(&tree), clean);
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    // Moving to another base follows the tree, and back again.
    ws.reset(next).unwrap();
    assert_eq!(std::fs::read_to_string(tree.join("a.txt")).unwrap(), "a2\n");
    ws.reset(base).unwrap();
    assert_eq!(listing(&tree), clean);
    assert_eq!(ws.base(), base);
    let changes = ws.changes().unwrap();
    assert_eq!(
        changes,
        Default::default(),
        "a reset workspace has no changes"
    );
    assert!(ws.stage(&changes, &Default::default()).unwrap().is_none());
}
