//! A layered workspace must read as a checkout would: the same changes, the same staged tree,
//! the same files after a reset, whatever a command did. Root only: the layers are mounted, in
//! a mount namespace of the test's own thread.

use super::*;
use crate::git::Mirror;
use crate::git::reset::tests::{mirror_of, sh};
use crate::git::workspace::stage::{Changes, Verified};
use crate::sandbox::workspaces::SlotMounter;
use std::collections::BTreeMap;

/// Runs `f` on a thread with a mount namespace of its own, whose mounts go nowhere else.
fn in_own_mounts(f: impl FnOnce() + Send) {
    std::thread::scope(|s| {
        s.spawn(|| {
            nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNS).unwrap();
            crate::sandbox::mounts::make_private().unwrap();
            f();
        })
        .join()
        .unwrap();
    });
}

/// The remote: `base`, and `next` (a file changed, one deleted, a file made a directory, a new
/// executable).
fn mirror(root: &Path) -> (Mirror, git2::Oid, git2::Oid) {
    let seed = root.join("seed");
    std::fs::create_dir(&seed).unwrap();
    sh(
        &seed,
        "git init -q -b main . && git config user.name t && git config user.email t@t
         printf 'target/\\nnode_modules/\\n*.log\\n' > .gitignore
         echo '[package]' > Cargo.toml && echo 'v1' > Cargo.lock
         mkdir -p src sub/deep && echo 'fn a() {}' > src/lib.rs && echo b > sub/deep/b.txt
         printf '#!/bin/sh\\n' > script.sh && chmod +x script.sh && ln -s Cargo.toml link
         git add -A && git commit -qm base && git branch base
         echo 'v2' > Cargo.lock && git rm -q sub/deep/b.txt && git rm -q script.sh
         mkdir script.sh && echo inner > script.sh/inner && printf 'x' > run.sh && chmod +x run.sh
         git add -A && git commit -qm next",
    );
    let mirror = mirror_of(root, &seed, &["main", "base"]);
    let (base, next) = (mirror.tip("base").unwrap(), mirror.tip("main").unwrap());
    (mirror, base, next)
}

/// A checkout and a layered workspace of `base`, side by side.
fn both(root: &Path, mirror: &Mirror, base: git2::Oid) -> (Workspace, Workspace) {
    let source = mirror.source();
    let tree = root.join("checkout");
    std::fs::create_dir(&tree).unwrap();
    let checkout = Workspace::create(&source, base, &tree).unwrap();
    let view = root.join("view");
    std::fs::create_dir(&view).unwrap();
    let spec = LayerSpec {
        base: Arc::new(BaseCheckout::create(&source, base, &root.join("bases/base")).unwrap()),
        view,
        dir: root.join("layer"),
        mounter: Box::new(SlotMounter::new(60_990)),
    };
    (checkout, Workspace::layered(&source, base, spec).unwrap())
}

/// What a unit's commands might do: change, rewrite unchanged, re-mode, delete, ignore, add,
/// re-link, and put a directory where a file was.
const LITTER: &str = "echo changed >> Cargo.lock && cp Cargo.toml t && mv t Cargo.toml
    chmod +x src/lib.rs && rm -r sub && mkdir -p node_modules/x target && echo 1 > node_modules/x/i.js
    echo log > debug.log && echo new > new.txt && rm link && ln -s src/lib.rs link
    rm script.sh && mkdir script.sh && echo x > script.sh/inner && touch target/t";

/// Every file below `dir` with its bytes (a link: its target), every directory as itself.
fn files(dir: &Path) -> BTreeMap<String, String> {
    let mut all = BTreeMap::new();
    list(dir, dir, &mut all);
    all
}

fn list(root: &Path, dir: &Path, all: &mut BTreeMap<String, String>) {
    use std::os::unix::fs::PermissionsExt;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let rel = path.strip_prefix(root).unwrap().display().to_string();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let what = if meta.is_symlink() {
            format!("-> {}", std::fs::read_link(&path).unwrap().display())
        } else if meta.is_dir() {
            list(root, &path, all);
            "dir".to_string()
        } else {
            let exec = meta.permissions().mode() & 0o100;
            format!("{exec:o} {}", std::fs::read_to_string(&path).unwrap())
        };
        all.insert(rel, what);
    }
}

#[test]
fn a_layered_workspace_finds_and_stages_what_a_checkout_does() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    in_own_mounts(|| {
        let root = tempfile::tempdir().unwrap();
        let (mirror, base, _) = mirror(root.path());
        let (checkout, layered) = both(root.path(), &mirror, base);
        assert_eq!(files(checkout.root()), files(layered.root()));
        sh(checkout.root(), LITTER);
        sh(layered.root(), LITTER);
        let (a, b) = (checkout.changes().unwrap(), layered.changes().unwrap());
        let sorted = |mut c: Changes| {
            c.paths.sort();
            c.ignored.sort();
            c
        };
        let (a, b) = (sorted(a), sorted(b));
        assert_eq!(a, b);
        assert!(b.paths.contains(&("sub/deep/b.txt".into(), true)), "{b:?}");
        assert!(!b.paths.iter().any(|(p, _)| p == "Cargo.toml"), "{b:?}");
        assert_eq!(b.ignored, ["debug.log", "node_modules/", "target/"]);
        let staged = |ws: &Workspace, c: &Changes| ws.stage(c, &Verified::new()).unwrap().unwrap();
        let (x, y) = (staged(&checkout, &a), staged(&layered, &b));
        assert_eq!((x.tree, x.files), (y.tree, y.files));
        // Without the file made a directory, the base's tree is updated in place.
        let mut plain = b.clone();
        plain.paths.retain(|(p, _)| !p.starts_with("script.sh"));
        let direct = layered.stage_on_base(&plain, &Verified::new()).unwrap();
        let via_index = layered
            .stage_in_index(&plain, &Verified::new(), true)
            .unwrap();
        assert_eq!(direct, via_index);
    });
}

#[test]
fn a_reset_drops_every_write_and_shows_the_commit_asked_for() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    in_own_mounts(|| {
        let root = tempfile::tempdir().unwrap();
        let (mirror, base, next) = mirror(root.path());
        let (mut checkout, mut layered) = both(root.path(), &mirror, base);
        let pristine = files(layered.root());
        sh(layered.root(), LITTER);
        layered.reset(base).unwrap();
        assert_eq!(files(layered.root()), pristine);
        assert!(layered.changes().unwrap().paths.is_empty());
        for ws in [&mut checkout, &mut layered] {
            sh(ws.root(), LITTER);
            ws.reset(next).unwrap();
        }
        assert_eq!(files(checkout.root()), files(layered.root()));
        let left = layered.changes().unwrap();
        assert_eq!(
            left,
            Changes::default(),
            "a commit other than the checkout's"
        );
    });
}

#[test]
fn a_base_checkout_that_does_not_fit_leaves_nothing() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    in_own_mounts(|| {
        let root = tempfile::tempdir().unwrap();
        let (mirror, base, _) = mirror(root.path());
        let small = root.path().join("small");
        std::fs::create_dir(&small).unwrap();
        let flags = nix::mount::MsFlags::empty();
        nix::mount::mount(
            Some("tmpfs"),
            &small,
            Some("tmpfs"),
            flags,
            Some("size=4k,nr_inodes=6"),
        )
        .unwrap();
        let at = small.join("base");
        assert!(BaseCheckout::create(&mirror.source(), base, &at).is_err());
        assert!(!at.exists(), "the failed checkout was removed");
        let fits = BaseCheckout::create(&mirror.source(), base, &root.path().join("disk")).unwrap();
        assert_eq!(fits.commit(), base);
        assert!(root.path().join("disk/Cargo.lock").is_file());
    });
}
