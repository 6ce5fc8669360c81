//! A test that runs nothing says so: it prints why and leaves a record, one file per skipped test
//! under `target/tmp/skipped/`, which `.ci/test` lists by name after the run. `cargo test` alone
//! would count such a test as passed.

use std::path::PathBuf;

/// Where the records go: cleared by `.ci/test` before each run.
pub(crate) fn dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_TARGET_TMPDIR"), "/skipped"))
}

/// Records that the running test skips, and why. The test is named by its thread, as the test
/// harness names it (`python::uv_lock_moves_the_package`).
pub(crate) fn skipped(reason: &str) {
    eprintln!("skipped: {reason}");
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("unnamed test");
    let dir = dir();
    // A record that cannot be written costs the list one name, not the test its result.
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join(name.replace('/', "_")), format!("{reason}\n"));
    }
}
