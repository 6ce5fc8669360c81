//! Hostile lock files and manifests: a FIFO, a path through a symbolic link, files beyond their
//! caps, and documents built to exhaust a parser (aliases, nesting, values). Each is a refusal
//! with a message and a code, never a hang, a crash or an exhausted memory.

use super::{copy, read};
use crate::changes::{ChangesError, Snapshot, snapshot};
use crate::finding::Code;
use std::path::Path;
use std::time::Duration;

fn refusal(result: Result<Snapshot, ChangesError>) -> ChangesError {
    result.expect_err("the snapshot must fail")
}

/// Reads `ecosystem` in `dir` on another thread: a read that blocks fails the test instead of
/// hanging it.
fn read_within(dir: &Path, ecosystem: &'static str) -> Result<Snapshot, ChangesError> {
    let dir = dir.to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(read(&dir, ".", ecosystem));
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("the read blocked")
}

#[test]
fn a_fifo_planted_as_a_lock_file_is_refused_at_once() {
    let dir = copy("npm/winston");
    let lock = dir.path().join("package-lock.json");
    std::fs::remove_file(&lock).unwrap();
    nix::unistd::mkfifo(&lock, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    let e = refusal(read_within(dir.path(), "npm"));
    assert_eq!(e.code(), Code::ChangeUnreadable);
    insta::assert_snapshot!(e.to_string());
    // As a manifest too.
    let dir = copy("cargo/hexyl");
    let manifest = dir.path().join("Cargo.toml");
    std::fs::remove_file(&manifest).unwrap();
    nix::unistd::mkfifo(&manifest, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    assert_eq!(
        refusal(read_within(dir.path(), "cargo")).to_string(),
        "Cargo.toml is a FIFO; lock files and manifests must be regular files"
    );
}

/// The lock in a parent directory reached through a symbolic link a command made.
#[test]
fn a_lock_behind_a_linked_directory_is_refused() {
    let dir = copy("npm/winston");
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("app")).unwrap();
    std::fs::rename(
        dir.path().join("package-lock.json"),
        elsewhere.path().join("package-lock.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("linked")).unwrap();
    let root = dir.path().canonicalize().unwrap();
    let e = refusal(snapshot(&root, &root.join("linked"), &["npm"]));
    assert_eq!(
        e.to_string(),
        "linked/package-lock.json is a symbolic link, or lies behind one; lock files and manifests must be regular files"
    );
}

#[test]
fn each_format_has_its_size_cap() {
    let dir = copy("pnpm/vue-core");
    let lock = std::fs::File::options()
        .write(true)
        .open(dir.path().join("pnpm-lock.yaml"))
        .unwrap();
    lock.set_len(65 * 1024 * 1024).unwrap();
    let e = refusal(read(dir.path(), "packages/compiler-sfc", "pnpm"));
    assert_eq!(e.code(), Code::ChangeOverLimit);
    insta::assert_snapshot!(e.to_string());
    let dir = copy("cargo/hexyl");
    let manifest = std::fs::File::options()
        .write(true)
        .open(dir.path().join("Cargo.toml"))
        .unwrap();
    manifest.set_len(5 * 1024 * 1024).unwrap();
    assert_eq!(
        refusal(read(dir.path(), ".", "cargo")).to_string(),
        "Cargo.toml is larger than 4194304 bytes; refusing to parse it"
    );
}

/// Nine lines that `yaml-rust2`'s own loader would expand into 10⁹ nodes.
#[test]
fn yaml_aliases_are_refused_before_any_expansion() {
    let dir = copy("pnpm/vue-core");
    let mut bomb = String::from("lockfileVersion: '9.0'\na: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (name, previous) in ["bcdefghi".chars().zip("abcdefgh".chars())]
        .into_iter()
        .flatten()
    {
        bomb.push_str(&format!(
            "{name}: &{name} [*{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}]\n"
        ));
    }
    std::fs::write(dir.path().join("pnpm-lock.yaml"), bomb).unwrap();
    let e = refusal(read(dir.path(), "packages/compiler-sfc", "pnpm"));
    assert_eq!(e.code(), Code::ChangeOverLimit);
    insta::assert_snapshot!(e.to_string());
}

#[test]
fn deep_nesting_is_refused_in_every_syntax() {
    let depth = 100_000;
    // YAML, block and flow.
    let dir = copy("pnpm/vue-core");
    let flow = format!(
        "lockfileVersion: '9.0'\npackages: {}{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    std::fs::write(dir.path().join("pnpm-lock.yaml"), flow).unwrap();
    let e = refusal(read(dir.path(), "packages/compiler-sfc", "pnpm"));
    insta::assert_snapshot!("yaml", e.to_string());
    let block: String = (0..200)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
        .collect();
    std::fs::write(dir.path().join("pnpm-lock.yaml"), block).unwrap();
    assert_eq!(
        refusal(read(dir.path(), "packages/compiler-sfc", "pnpm")).code(),
        Code::ChangeOverLimit
    );
    // JSON, and bun's JSONC.
    let dir = copy("npm/winston");
    let json = format!(
        "{{\"lockfileVersion\": 3, \"packages\": {}{}}}",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    std::fs::write(dir.path().join("package-lock.json"), json).unwrap();
    insta::assert_snapshot!("json", refusal(read(dir.path(), ".", "npm")).to_string());
    let dir = copy("bun/hono");
    let jsonc = format!(
        "// c\n{{\"packages\": {}{}}}",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    std::fs::write(dir.path().join("bun.lock"), jsonc).unwrap();
    assert_eq!(
        refusal(read(dir.path(), ".", "bun")).code(),
        Code::ChangeOverLimit
    );
    // TOML stops at its own recursion limit: a parse error, not a crash.
    let dir = copy("cargo/hexyl");
    let toml = format!(
        "version = 4\nx = {}{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    std::fs::write(dir.path().join("Cargo.lock"), toml).unwrap();
    assert!(
        refusal(read(dir.path(), ".", "cargo"))
            .to_string()
            .starts_with("cannot parse Cargo.lock")
    );
}

#[test]
fn too_many_values_are_refused() {
    let dir = copy("bun/hono");
    let many = format!(
        "{{\"packages\": [{}0]}}",
        "0,".repeat(crate::changes::budget::MAX_VALUES)
    );
    std::fs::write(dir.path().join("bun.lock"), many).unwrap();
    let e = refusal(read(dir.path(), ".", "bun"));
    assert_eq!(e.code(), Code::ChangeOverLimit);
    insta::assert_snapshot!(e.to_string());
}

/// What the fuzz target found: `cargo-lock` panics on a checksum with a character of two bytes;
/// the lock is refused before it is handed over.
#[test]
fn a_checksum_that_is_not_hex_is_a_parse_error() {
    let dir = copy("cargo/hexyl");
    let lock = std::fs::read_to_string(dir.path().join("Cargo.lock")).unwrap();
    let at = lock.find("checksum = \"").unwrap() + "checksum = \"".len() + 27;
    let hostile = format!("{}\u{2de}{}", &lock[..at], &lock[at + 2..]);
    std::fs::write(dir.path().join("Cargo.lock"), hostile).unwrap();
    let e = refusal(read(dir.path(), ".", "cargo"));
    assert!(
        e.to_string()
            .ends_with(": a checksum that is not hexadecimal"),
        "{e}"
    );
}

/// What the `lock_pip` fuzz target found: `pep508_rs` panics on this name; it is a parse error,
/// in a requirements file and in pyproject.toml.
#[test]
fn a_requirement_the_parser_panics_on_is_a_parse_error() {
    let dir = copy("pip/sigstore");
    std::fs::write(
        dir.path().join("requirements.txt"),
        "email-)alidator==2.3.0\n",
    )
    .unwrap();
    assert_eq!(
        refusal(read(dir.path(), ".", "pip")).to_string(),
        "cannot parse requirements.txt at line 1: not a requirement the parser can read"
    );
    let pyproject = "[project]\nname = \"x\"\ndependencies = [\"email-)alidator\"]\n";
    assert!(
        crate::changes::parse_text("pyproject.toml", pyproject)
            .unwrap_err()
            .to_string()
            .contains("not a requirement the parser can read")
    );
}
