//! The cgroup path's decisions, on a directory that stands in for the cgroup file system (this
//! machine delegates no controller to cgroup v2, so the kernel's side is not exercised here).

use super::*;

const MOUNTINFO: &str = "\
22 1 0:21 / / rw,relatime - ext4 /dev/sda1 rw
35 22 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate
36 22 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
";

#[test]
fn the_own_cgroup_is_found_under_the_cgroup2_mount() {
    assert_eq!(
        own_dir("0::/system.slice/runner.service\n", MOUNTINFO).unwrap(),
        PathBuf::from("/sys/fs/cgroup/system.slice/runner.service")
    );
    // cgroup v1 only (this machine's controllers): no v2 line, no v2 mount.
    assert_eq!(
        own_dir("12:memory:/x\n", MOUNTINFO)
            .unwrap_err()
            .to_string(),
        "this process is in no cgroup v2 hierarchy"
    );
    let v1_only = MOUNTINFO
        .lines()
        .filter(|l| !l.contains("cgroup2"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        own_dir("0::/\n", &v1_only).unwrap_err().to_string(),
        "no cgroup v2 file system is mounted"
    );
}

/// A stand-in for a delegated cgroup holding only this process.
fn delegated(controllers: &str, procs: &str) -> tempfile::TempDir {
    let own = tempfile::tempdir().unwrap();
    std::fs::write(own.path().join("cgroup.controllers"), controllers).unwrap();
    std::fs::write(own.path().join("cgroup.procs"), procs).unwrap();
    own
}

#[test]
fn a_cgroup_without_the_controllers_or_shared_with_others_is_not_used() {
    let own = delegated("cpu io\n", "42\n");
    let e = Cgroups::setup(own.path(), 42).unwrap_err().to_string();
    assert!(
        e.starts_with("the runner delegates no `memory` controller to "),
        "{e}"
    );
    let own = delegated("cpu memory pids\n", "42\n7\n");
    let e = Cgroups::setup(own.path(), 42).unwrap_err().to_string();
    assert!(
        e.starts_with("other processes share Quartermaster's cgroup "),
        "{e}"
    );
    assert!(e.ends_with("(pid 7)"), "{e}");
}

#[test]
fn units_get_their_limits_and_quartermaster_a_leaf() {
    let own = delegated("cpuset cpu io memory pids\n", "42\n");
    let tree = Cgroups::setup(own.path(), 42).unwrap();
    let read = |rel: &str| std::fs::read_to_string(own.path().join(rel)).unwrap();
    assert_eq!(read("quartermaster-42/main/cgroup.procs"), "42");
    assert_eq!(read("cgroup.subtree_control"), "+memory +pids +cpu");
    assert_eq!(
        read("quartermaster-42/cgroup.subtree_control"),
        "+memory +pids +cpu"
    );
    let limits = Limits {
        processes: Some(200),
        memory: Some(4 << 30),
        cpu_weight: Some(50),
        ..Limits::default()
    };
    let unit = tree.unit("unit-0", &limits).unwrap();
    assert_eq!(unit, own.path().join("quartermaster-42/unit-0"));
    assert_eq!(read("quartermaster-42/unit-0/pids.max"), "200");
    assert_eq!(read("quartermaster-42/unit-0/memory.max"), "4294967296");
    // Not accounted here (no `memory.swap.max` offered): nothing written.
    assert!(!unit.join("memory.swap.max").exists());
    assert_eq!(read("quartermaster-42/unit-0/cpu.weight"), "50");
    let open = Limits {
        processes: None,
        ..limits
    };
    let unit = tree.unit("unit-1", &open).unwrap();
    assert_eq!(
        std::fs::read_to_string(unit.join("pids.max")).unwrap(),
        "max"
    );
}

#[test]
fn the_kernel_s_counters_name_the_limit_that_bit() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        memory: Some(4 << 30),
        processes: Some(200),
        ..Limits::default()
    };
    assert_eq!(bitten(dir.path(), &limits), None);
    std::fs::write(dir.path().join("pids.events"), "max 3\n").unwrap();
    assert_eq!(
        bitten(dir.path(), &limits).unwrap(),
        "limit reached: 200 processes"
    );
    std::fs::write(
        dir.path().join("memory.events"),
        "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n",
    )
    .unwrap();
    assert_eq!(
        bitten(dir.path(), &limits).unwrap(),
        "killed: memory limit 4 GiB"
    );
}
