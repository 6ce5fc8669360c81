//! Every refusal a user can hit while a snapshot is taken, with its message.

use super::{copy, edit, fixture, read};
use crate::changes::{ChangesError, snapshot};

fn message(result: Result<crate::changes::Snapshot, ChangesError>) -> String {
    result.expect_err("the snapshot must fail").to_string()
}

#[test]
fn bun_lockb_is_refused() {
    let dir = copy("bun/hono");
    std::fs::remove_file(dir.path().join("bun.lock")).unwrap();
    std::fs::write(dir.path().join("bun.lockb"), b"\0binary").unwrap();
    assert_eq!(
        message(read(dir.path(), ".", "bun")),
        "bun.lockb is bun's binary lock file, which cannot be verified; commit the text lock file bun.lock instead (bun 1.2 writes it by default, older versions with `bun install --save-text-lockfile`) and delete bun.lockb"
    );
}

#[test]
fn missing_lock_is_reported() {
    let dir = copy("npm/winston");
    std::fs::remove_file(dir.path().join("package-lock.json")).unwrap();
    assert_eq!(
        message(read(dir.path(), ".", "npm")),
        "npm: no package-lock.json in . or a parent directory up to the repository root; commit the lock file so that changes can be verified"
    );
}

#[test]
fn missing_manifest_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        message(read(dir.path(), ".", "pip")),
        "pip: no requirements*.txt in ."
    );
    assert_eq!(
        message(read(dir.path(), ".", "cargo")),
        "cargo: no Cargo.toml in ."
    );
}

#[test]
fn broken_cargo_lock_names_file_and_line() {
    let dir = copy("cargo/hexyl");
    edit(
        dir.path(),
        "Cargo.lock",
        "name = \"anyhow\"",
        "name = anyhow\"",
    );
    let text = message(read(dir.path(), ".", "cargo"));
    assert!(
        text.starts_with("cannot parse Cargo.lock at line 64: "),
        "{text}"
    );
}

#[test]
fn broken_package_lock_names_file_and_line() {
    let dir = copy("npm/winston");
    edit(
        dir.path(),
        "package-lock.json",
        "\"lockfileVersion\": 3,",
        "\"lockfileVersion\": 3",
    );
    assert!(
        message(read(dir.path(), ".", "npm"))
            .starts_with("cannot parse package-lock.json at line 5: expected `,`")
    );
}

#[test]
fn broken_yaml_names_file_and_line() {
    let dir = copy("pnpm/vue-core");
    edit(dir.path(), "pnpm-lock.yaml", "settings:\n", "settings: [\n");
    let text = message(read(dir.path(), "packages/compiler-sfc", "pnpm"));
    assert!(
        text.starts_with("cannot parse pnpm-lock.yaml at line "),
        "{text}"
    );
}

#[test]
fn broken_yarn_lock_names_the_line() {
    let dir = copy("yarn-v1/hyper");
    edit(dir.path(), "yarn.lock", "  version \"5.3.0\"\n", "");
    let text = message(read(dir.path(), ".", "yarn"));
    assert!(
        text.starts_with("cannot parse yarn.lock at line "),
        "{text}"
    );
}

#[test]
fn broken_requirement_names_the_line() {
    let dir = copy("pip/sigstore");
    edit(dir.path(), "requirements.txt", "idna==3.18", "idna===");
    assert!(
        message(read(dir.path(), ".", "pip"))
            .starts_with("cannot parse requirements.txt at line 27: ")
    );
}

#[test]
fn broken_gemfile_lock_names_the_line() {
    let dir = copy("bundle/rubygems.org");
    edit(
        dir.path(),
        "Gemfile.lock",
        "    rack (3.2.6)",
        "    rack 3.2.6",
    );
    assert_eq!(
        message(read(dir.path(), ".", "bundle")),
        "cannot parse Gemfile.lock at line 53: unexpected line in GEM"
    );
}

#[test]
fn broken_go_sum_names_the_line() {
    let dir = copy("go/docker-agent");
    std::fs::write(dir.path().join("go.sum"), "charm.land/bubbles/v2 v2.0.0\n").unwrap();
    assert_eq!(
        message(read(dir.path(), ".", "go")),
        "cannot parse go.sum at line 1: expected `module version hash`"
    );
}

#[test]
fn symlinked_lock_is_refused() {
    let dir = copy("npm/winston");
    let lock = dir.path().join("package-lock.json");
    std::fs::remove_file(&lock).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", &lock).unwrap();
    assert_eq!(
        message(read(dir.path(), ".", "npm")),
        "package-lock.json is a symbolic link, or lies behind one; lock files and manifests must be regular files"
    );
}

#[test]
fn unknown_ecosystem_and_outside_root() {
    let root = fixture("npm/winston");
    assert_eq!(
        message(read(&root, ".", "maven")),
        "unknown ecosystem `maven`"
    );
    let outside = root.join("../winston-update");
    assert!(message(snapshot(&root, &outside, &["npm"])).starts_with("the working directory "));
}

#[test]
fn oversized_and_unreadable_locks_are_refused() {
    let dir = copy("npm/winston");
    let lock = std::fs::File::options()
        .write(true)
        .open(dir.path().join("package-lock.json"))
        .unwrap();
    lock.set_len(129 * 1024 * 1024).unwrap();
    assert_eq!(
        message(read(dir.path(), ".", "npm")),
        "package-lock.json is larger than 134217728 bytes; refusing to parse it"
    );
    std::fs::remove_file(dir.path().join("package-lock.json")).unwrap();
    std::fs::create_dir(dir.path().join("package-lock.json")).unwrap();
    assert_eq!(
        message(read(dir.path(), ".", "npm")),
        "package-lock.json is a directory; lock files and manifests must be regular files"
    );
}
