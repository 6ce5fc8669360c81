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
