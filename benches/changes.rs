//! Cost of verifying one unit on a large npm project: a generated 3,000-entry
//! `package-lock.json`, snapshotted before and after (30 versions moved), then diffed and
//! checked. Run with `cargo bench --bench changes`; prints the median of the runs, as wall time
//! and, on Linux, as the thread's on-CPU time (`/proc/thread-self/schedstat`), which a loaded
//! shared machine does not inflate.

use quartermaster::changes::{DeclaredUpdate, Trust, UpdateType, check, diff, snapshot};
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

const ENTRIES: usize = 3_000;
const RUNS: usize = 51;

/// A lockfile v3 with `ENTRIES` packages, 50 of them direct and every tenth one nested; the
/// first `moved` entries have their patch version raised.
fn lock(moved: usize) -> String {
    let mut packages =
        String::from(r#""": {"name": "bench", "version": "1.0.0", "dependencies": {}}"#);
    for i in 0..ENTRIES {
        let patch = if i < moved { 1 } else { 0 };
        let key = if i % 10 == 9 {
            format!("node_modules/pkg-{}/node_modules/pkg-{i}", i - 1)
        } else {
            format!("node_modules/pkg-{i}")
        };
        write!(
            packages,
            r#", "{key}": {{"version": "1.{i}.{patch}", "resolved": "https://registry.npmjs.org/pkg-{i}/-/pkg-{i}-1.{i}.{patch}.tgz", "integrity": "sha512-{i:0>64}{patch}", "dependencies": {{"dep-a": "^1.0.0", "dep-b": "^2.0.0"}}}}"#
        )
        .expect("write to string");
    }
    format!(
        r#"{{"name": "bench", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": {{{packages}}}}}"#
    )
}

fn project(dir: &Path, moved: usize) {
    let deps: Vec<String> = (0..50)
        .map(|i| format!(r#""pkg-{i}": "^1.{i}.0""#))
        .collect();
    let manifest = format!(
        r#"{{"name": "bench", "version": "1.0.0", "scripts": {{"test": "node t.js"}}, "dependencies": {{{}}}}}"#,
        deps.join(", ")
    );
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(dir.join("package.json"), manifest).expect("write package.json");
    std::fs::write(dir.join("package-lock.json"), lock(moved)).expect("write lock");
}

/// Nanoseconds this thread has run on a CPU, when the kernel says.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(Duration::from_nanos(
        stat.split_whitespace().next()?.parse().ok()?,
    ))
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let root = tempfile::tempdir().expect("temp dir");
    let (before_dir, after_dir) = (root.path().join("before"), root.path().join("after"));
    project(&before_dir, 0);
    project(&after_dir, 30);
    let declared: Vec<DeclaredUpdate> = (0..30)
        .map(|i| DeclaredUpdate {
            package: format!("pkg-{i}"),
            from: format!("1.{i}.0"),
            to: format!("1.{i}.1"),
            update_type: UpdateType::Patch,
        })
        .collect();
    let unit = || {
        let before = snapshot(&before_dir, &before_dir, &["npm"]).expect("before");
        let after = snapshot(&after_dir, &after_dir, &["npm"]).expect("after");
        check(&diff(&before, &after), &declared, &Trust::default())
    };
    let verdict = unit();
    assert!(!verdict.blocked(), "{:?}", verdict.findings);
    assert_eq!(verdict.direct.len() + verdict.transitive.len(), 30);
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let (started, cpu_started) = (Instant::now(), cpu_time());
        std::hint::black_box(unit());
        wall.push(started.elapsed());
        if let (Some(a), Some(b)) = (cpu_started, cpu_time()) {
            cpu.push(b - a);
        }
    }
    let size = std::fs::metadata(before_dir.join("package-lock.json"))
        .expect("lock")
        .len();
    let cpu = if cpu.is_empty() {
        "unavailable".to_string()
    } else {
        format!("{:?}", median(cpu))
    };
    println!(
        "changes: {ENTRIES}-entry package-lock.json ({} KiB), snapshot before + after + diff + check, {RUNS} runs: median wall {:?}, median on-CPU {cpu}",
        size / 1024,
        median(wall)
    );
}
