use super::*;

#[test]
fn a_trial_overlay_mounts_as_root() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let owner = SlotIdentity {
        uid: 60_990,
        gid: 60_990,
    };
    CacheLayers::prepare(root.path(), None, owner).unwrap();
}

/// The CI's cache restores files as its own user, with any mode: taken over, they are root's,
/// writable by root alone and readable by everyone, links untouched.
#[test]
fn the_cache_directory_is_taken_over() {
    use std::os::unix::fs::MetadataExt;
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("ci-cache");
    std::fs::create_dir_all(dir.join("npm")).unwrap();
    let file = dir.join("npm/index");
    std::fs::write(&file, "x").unwrap();
    std::fs::set_permissions(&file, PermissionsExt::from_mode(0o4662)).unwrap();
    std::os::unix::fs::lchown(&file, Some(1001), Some(1001)).unwrap();
    std::fs::set_permissions(dir.join("npm"), PermissionsExt::from_mode(0o777)).unwrap();
    std::os::unix::fs::symlink("index", dir.join("npm/link")).unwrap();
    seed_dir(&dir).unwrap();
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(
        (meta.uid(), meta.gid(), meta.mode() & 0o7777),
        (0, 0, 0o644)
    );
    let meta = std::fs::metadata(dir.join("npm")).unwrap();
    assert_eq!(meta.mode() & 0o7777, 0o755);
    assert_eq!(
        std::fs::read_link(dir.join("npm/link")).unwrap(),
        Path::new("index")
    );
}

/// A warm-up's upper layer merged into the cache directory: new files land, a whiteout deletes,
/// an opaque directory replaces what was there.
#[test]
fn a_warm_up_is_kept_in_the_cache_directory() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let seed = root.path().join("ci-cache");
    std::fs::create_dir_all(seed.join("old")).unwrap();
    std::fs::write(seed.join("old/stale"), "stale").unwrap();
    std::fs::write(seed.join("gone"), "gone").unwrap();
    let owner = SlotIdentity {
        uid: 60_991,
        gid: 60_991,
    };
    let layers = CacheLayers::prepare(root.path(), Some(&seed), owner).unwrap();
    let warm = layers.layer_dir("warm").unwrap();
    let upper = warm.join(UPPER);
    std::fs::write(upper.join("new"), "new").unwrap();
    std::fs::set_permissions(upper.join("new"), PermissionsExt::from_mode(0o600)).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        upper.join("gone"),
        rustix::fs::FileType::CharacterDevice,
        Mode::empty(),
        0,
    )
    .unwrap();
    std::fs::create_dir(upper.join("old")).unwrap();
    rustix::fs::lsetxattr(
        upper.join("old"),
        "trusted.overlay.opaque",
        b"y",
        rustix::fs::XattrFlags::empty(),
    )
    .unwrap();
    std::fs::write(upper.join("old/fresh"), "fresh").unwrap();
    layers.warmed(std::slice::from_ref(&warm)).unwrap();
    assert_eq!(std::fs::read_to_string(seed.join("new")).unwrap(), "new");
    let mode = std::os::unix::fs::MetadataExt::mode(&std::fs::metadata(seed.join("new")).unwrap());
    assert_eq!(
        mode & 0o7777,
        0o644,
        "what comes in is readable by the CI's cache step"
    );
    assert!(!seed.join("gone").exists());
    assert!(!seed.join("old/stale").exists());
    assert_eq!(
        std::fs::read_to_string(seed.join("old/fresh")).unwrap(),
        "fresh"
    );
    assert_eq!(layers.lowers(), vec![seed.canonicalize().unwrap()]);
}

/// Two places warmed in parallel, each in a layer of its own: stacked with the first on top, or
/// merged into the cache directory so that the first one's entry stays where both wrote one path.
#[test]
fn warm_layers_stack_in_the_warm_ups_order() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let owner = SlotIdentity {
        uid: 60_992,
        gid: 60_992,
    };
    for seeded in [false, true] {
        let root = tempfile::tempdir().unwrap();
        let seed = seeded.then(|| root.path().join("ci-cache"));
        let layers = CacheLayers::prepare(root.path(), seed.as_deref(), owner).unwrap();
        let warm: Vec<PathBuf> = ["warm-a", "warm-b"]
            .iter()
            .map(|name| layers.layer_dir(name).unwrap())
            .collect();
        for (layer, text) in warm.iter().zip(["first", "second"]) {
            std::fs::write(layer.join(UPPER).join("shared"), text).unwrap();
            std::fs::write(layer.join(UPPER).join(text), text).unwrap();
        }
        layers.warmed(&warm).unwrap();
        let lowers = layers.lowers();
        let read = |name: &str| {
            let found = lowers.iter().map(|l| l.join(name)).find(|p| p.exists());
            std::fs::read_to_string(found.unwrap()).unwrap()
        };
        assert_eq!(read("shared"), "first", "seeded: {seeded}");
        assert_eq!(
            (read("first"), read("second")),
            ("first".into(), "second".into())
        );
        assert_eq!(lowers.len(), if seeded { 1 } else { 2 });
    }
}

/// Overlays are volatile (no sync of the disk when one goes), and a layer mounts again after its
/// last mount ended, as a cell's next command needs.
#[test]
fn a_layer_mounts_again_after_its_last_volatile_mount_ended() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let (lower, layer) = (root.path().join("lower"), root.path().join("layer"));
    for dir in [&lower, &layer, &layer.join(UPPER), &layer.join(WORK)] {
        std::fs::create_dir(dir).unwrap();
    }
    let owner = SlotIdentity {
        uid: 60_990,
        gid: 60_990,
    };
    drop(overlay(std::slice::from_ref(&lower), &layer, owner).unwrap());
    let marker = layer.join(WORK).join("work/incompat/volatile");
    assert!(marker.exists(), "the overlay was volatile");
    overlay(&[lower], &layer, owner).unwrap();
}
