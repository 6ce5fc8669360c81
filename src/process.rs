//! Running one program without a shell.
//!
//! Every child Quartermaster starts gets an argv built from validated values, a working directory
//! inside its workspace, a scrubbed environment (never a forge token), its own process group (so a
//! timeout kills the whole tree, not just the direct child), and a size-capped, secret-redacted tail
//! of its combined output. The output is untrusted: it is kept for the report and shown on failure,
//! never interpreted.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How much of a child's output is kept (the end of it, where test runners put their verdict).
pub const OUTPUT_TAIL_BYTES: usize = 16 * 1024;
/// After the direct child exits, how long descendants that escaped the process group may keep the
/// output pipe open before Quartermaster stops waiting for them.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// Environment variables children inherit. Everything else is dropped: tokens, CI metadata, and
/// tool configuration an attacker could use (`GOFLAGS`, `npm_config_*`, `RUSTFLAGS`, ...). Operators
/// add more with the extra-env input.
pub const INHERITED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "CI",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "GOROOT",
    "GOPATH",
    "GOCACHE",
    "GOMODCACHE",
    "GOTOOLCHAIN",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "JAVA_HOME",
    "MAVEN_HOME",
    "GRADLE_HOME",
    "GRADLE_USER_HOME",
    "GEM_HOME",
    "GEM_PATH",
    "BUNDLE_PATH",
    "DOTNET_ROOT",
    "NUGET_PACKAGES",
    "PNPM_HOME",
    "BUN_INSTALL",
    "PYENV_ROOT",
    "VIRTUAL_ENV",
    "POETRY_HOME",
];

/// Settings every child gets unless the operator passes the same variable with extra-env: package
/// managers must not run install scripts or build source distributions (arbitrary code from the
/// registry) while Quartermaster updates lock files. Renovate and Dependabot do the same.
pub const SAFE_DEFAULTS: &[(&str, &str)] = &[
    ("npm_config_ignore_scripts", "true"),
    ("YARN_IGNORE_SCRIPTS", "true"),
    ("YARN_ENABLE_SCRIPTS", "false"),
    ("PIP_ONLY_BINARY", ":all:"),
];

/// Set once the process is a child subreaper (see [`become_subreaper`]).
static SUBREAPER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The process group of the command running now (0: none), for [`interrupt`].
static RUNNING_GROUP: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
/// Set by [`interrupt`]: no command starts any more.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// For a run being interrupted: no further command starts, and the one running now is killed with
/// its whole process group and any orphan it left.
pub fn interrupt() {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
    let group = RUNNING_GROUP.swap(0, std::sync::atomic::Ordering::SeqCst);
    if group > 0 {
        kill_group(Some(group));
    }
    if SUBREAPER.load(std::sync::atomic::Ordering::SeqCst) {
        reap_orphans();
    }
}

/// Makes orphaned descendants of our children (daemons that called `setsid` to leave their
/// process group) our children, so that [`run`] can kill them when their command is over.
pub fn become_subreaper() -> nix::Result<()> {
    nix::sys::prctl::set_child_subreaper(true)?;
    SUBREAPER.store(true, std::sync::atomic::Ordering::SeqCst);
    Ok(())
}

/// How a child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// Exited with this code.
    Code(i32),
    /// Killed by this signal (not by Quartermaster).
    Signal(i32),
    /// Ran past its timeout; Quartermaster killed its process group.
    TimedOut(Duration),
    /// Could not be started (program missing, directory gone, ...).
    SpawnFailed(String),
}

impl Exit {
    pub fn success(&self) -> bool {
        *self == Exit::Code(0)
    }

    /// The exit code, when there is one.
    pub fn code(&self) -> Option<i32> {
        match self {
            Exit::Code(c) => Some(*c),
            _ => None,
        }
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit code {c}"),
            Exit::Signal(s) => write!(f, "killed by signal {s}"),
            Exit::TimedOut(t) => write!(f, "timed out after {}s", t.as_secs()),
            Exit::SpawnFailed(why) => write!(f, "could not start: {why}"),
        }
    }
}

/// What a child did.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub exit: Exit,
    pub duration: Duration,
    /// The last `OUTPUT_TAIL_BYTES` of stdout and stderr, interleaved as written, secrets redacted.
    pub output_tail: String,
    /// Total bytes the child wrote.
    pub output_bytes: u64,
}

/// One program to run.
pub struct Spec<'a> {
    pub argv: &'a [String],
    pub cwd: &'a Path,
    pub env: &'a BTreeMap<OsString, OsString>,
    pub timeout: Duration,
    /// Strings that must never appear in captured output.
    pub secrets: &'a [String],
}

/// Builds a child environment: the inherited allowlist plus the operator's `extra` names, taken
/// from `source` (normally the process environment), over [`SAFE_DEFAULTS`].
pub fn child_env(
    source: impl IntoIterator<Item = (OsString, OsString)>,
    extra: &[String],
) -> BTreeMap<OsString, OsString> {
    let mut env: BTreeMap<OsString, OsString> = SAFE_DEFAULTS
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect();
    env.extend(source.into_iter().filter(|(name, _)| {
        let name = name.to_string_lossy();
        INHERITED_ENV.contains(&name.as_ref()) || extra.iter().any(|e| *e == name)
    }));
    env
}

/// Runs `spec` to completion or timeout. Never panics on the child's behaviour.
pub fn run(spec: &Spec<'_>) -> Outcome {
    let started = Instant::now();
    let Some((program, args)) = spec.argv.split_first() else {
        return spawn_failed(started, "empty command".into());
    };
    if INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
        return spawn_failed(started, "the run is being interrupted".into());
    }
    let (reader, writer) = match std::io::pipe() {
        Ok(p) => p,
        Err(e) => return spawn_failed(started, format!("cannot create a pipe: {e}")),
    };
    let writer2 = match writer.try_clone() {
        Ok(w) => w,
        Err(e) => return spawn_failed(started, format!("cannot create a pipe: {e}")),
    };
    let expression = duct::cmd(program, args)
        .dir(spec.cwd)
        .full_env(spec.env)
        .stdin_null()
        .stdout_file(writer)
        .stderr_file(writer2)
        .unchecked()
        .before_spawn(|command| {
            // Its own process group, so that a timeout can kill every descendant at once.
            command.process_group(0);
            Ok(())
        });
    let started_handle = expression.start();
    // Our copies of the pipe's write end live in the expression: close them, or the reader never
    // sees end-of-file.
    drop(expression);
    let handle = match started_handle {
        Ok(h) => h,
        Err(e) => return spawn_failed(started, e.to_string()),
    };
    let group = handle.pids().first().map(|pid| *pid as i32);
    RUNNING_GROUP.store(group.unwrap_or(0), std::sync::atomic::Ordering::SeqCst);
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(read_tail(reader));
    });

    let deadline = started + spec.timeout;
    let exit = match handle.wait_deadline(deadline) {
        Ok(Some(output)) => status_exit(&output.status),
        Ok(None) => {
            kill_group(group);
            let _ = handle.wait();
            Exit::TimedOut(spec.timeout)
        }
        Err(e) => {
            kill_group(group);
            Exit::SpawnFailed(e.to_string())
        }
    };
    // Descendants left behind in the group (daemons, watchers) go with it, and so do those that
    // left the group.
    RUNNING_GROUP.store(0, std::sync::atomic::Ordering::SeqCst);
    kill_group(group);
    if SUBREAPER.load(std::sync::atomic::Ordering::SeqCst) {
        reap_orphans();
    }
    let (tail, total) = done_rx.recv_timeout(DRAIN_GRACE).unwrap_or_else(|_| {
        (
            b"[output incomplete: a descendant process kept the pipe open]".to_vec(),
            0,
        )
    });
    Outcome {
        exit,
        duration: started.elapsed(),
        output_tail: redacted_tail(&String::from_utf8_lossy(&tail), spec.secrets),
        output_bytes: total,
    }
}

/// Kills and reaps our remaining children. Between commands Quartermaster has no child of its
/// own, so any child is a descendant of the last command that was reparented to us.
fn reap_orphans() {
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    let me = std::process::id() as i32;
    for _ in 0..10 {
        let orphans = children_of(me);
        if orphans.is_empty() {
            return;
        }
        for pid in orphans {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        while let Ok(status) = waitpid(nix::unistd::Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
            if status == WaitStatus::StillAlive {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Process ids whose parent is `parent`, from `/proc/<pid>/stat`.
fn children_of(parent: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    .and_then(|ppid| ppid.parse::<i32>().ok())
                    == Some(parent)
            })
        })
        .collect()
}

fn spawn_failed(started: Instant, why: String) -> Outcome {
    Outcome {
        exit: Exit::SpawnFailed(why),
        duration: started.elapsed(),
        output_tail: String::new(),
        output_bytes: 0,
    }
}

fn status_exit(status: &std::process::ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        (None, None) => Exit::Code(-1),
    }
}

fn kill_group(group: Option<i32>) {
    if let Some(pgid) = group {
        // ESRCH (the group is already gone) is the normal case after a clean exit.
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pgid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// Bytes kept beyond the tail, so that a secret straddling the cut is still whole when redacted.
const REDACTION_MARGIN: usize = 4096;

/// Reads everything, keeping only the last `OUTPUT_TAIL_BYTES` plus the redaction margin.
fn read_tail(mut reader: impl Read) -> (Vec<u8>, u64) {
    const KEEP: usize = OUTPUT_TAIL_BYTES + REDACTION_MARGIN;
    let mut tail: Vec<u8> = Vec::with_capacity(OUTPUT_TAIL_BYTES);
    let mut total = 0u64;
    let mut chunk = [0u8; 8192];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                total += n as u64;
                tail.extend_from_slice(&chunk[..n]);
                if tail.len() > KEEP * 2 {
                    tail.drain(..tail.len() - KEEP);
                }
            }
        }
    }
    if tail.len() > KEEP {
        tail.drain(..tail.len() - KEEP);
    }
    (tail, total)
}

/// Redacts, then cuts to the last `OUTPUT_TAIL_BYTES` (on a character boundary); a secret's end
/// left at the start of the cut is masked too.
fn redacted_tail(text: &str, secrets: &[String]) -> String {
    let redacted = redact(text, secrets);
    let mut start = redacted.len().saturating_sub(OUTPUT_TAIL_BYTES);
    while !redacted.is_char_boundary(start) {
        start += 1;
    }
    let mut tail = redacted[start..].to_string();
    for secret in secrets.iter().filter(|s| s.len() >= 4) {
        if let Some(k) = (4..secret.len()).rev().find(|k| {
            secret.is_char_boundary(secret.len() - k)
                && tail.starts_with(&secret[secret.len() - k..])
        }) {
            tail.replace_range(..k, "***");
        }
    }
    tail
}

/// Replaces every occurrence of each secret with `***`.
pub fn redact(text: &str, secrets: &[String]) -> String {
    secrets
        .iter()
        .filter(|s| s.len() >= 4)
        .fold(text.to_string(), |acc, s| acc.replace(s.as_str(), "***"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> BTreeMap<OsString, OsString> {
        child_env(std::env::vars_os(), &[])
    }

    fn sh(script: &str, timeout: Duration) -> Outcome {
        let argv = vec!["sh".to_string(), "-c".to_string(), script.to_string()];
        let dir = std::env::temp_dir();
        run(&Spec {
            argv: &argv,
            cwd: &dir,
            env: &env(),
            timeout,
            secrets: &["s3cr3t-value".to_string()],
        })
    }

    #[test]
    fn captures_exit_code_and_interleaved_output() {
        let out = sh("echo out; echo err >&2; exit 3", Duration::from_secs(10));
        assert_eq!(out.exit, Exit::Code(3));
        assert_eq!(out.output_tail, "out\nerr\n");
        assert_eq!(out.output_bytes, 8);
    }

    #[test]
    fn timeout_kills_the_whole_process_group() {
        let started = Instant::now();
        // The grandchild holds the pipe open; only killing the group ends it.
        let out = sh(
            "sleep 30 & sleep 30; echo never",
            Duration::from_millis(300),
        );
        assert_eq!(out.exit, Exit::TimedOut(Duration::from_millis(300)));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert!(!out.output_tail.contains("never"));
    }

    #[test]
    fn leftover_descendants_are_killed_after_exit() {
        let started = Instant::now();
        let out = sh("(sleep 30 &) ; echo done", Duration::from_secs(10));
        assert_eq!(out.exit, Exit::Code(0));
        assert!(out.output_tail.starts_with("done"));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn output_is_capped_to_its_tail_and_redacted() {
        let out = sh(
            "head -c 100000 /dev/zero | tr '\\0' a; echo; echo token=s3cr3t-value",
            Duration::from_secs(10),
        );
        assert_eq!(out.exit, Exit::Code(0));
        assert!(out.output_bytes > 100_000);
        assert!(out.output_tail.len() <= OUTPUT_TAIL_BYTES);
        assert!(
            out.output_tail.ends_with("token=***\n"),
            "{}",
            &out.output_tail[out.output_tail.len() - 30..]
        );
    }

    #[test]
    fn a_secret_cut_in_half_by_the_tail_is_still_masked() {
        let secret = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcd".to_string();
        // 34 + 40 + (16384 - 30) bytes: the last 16 KiB start 10 bytes into the secret.
        let text = format!(
            "{}{secret}{}",
            "x".repeat(34),
            "y".repeat(OUTPUT_TAIL_BYTES - 30)
        );
        let tail = redacted_tail(&text, std::slice::from_ref(&secret));
        assert!(!tail.contains("KLMNOPQRSTUVWXYZ"), "{}", &tail[..40]);
        assert!(tail.len() <= OUTPUT_TAIL_BYTES);
        let partial = format!("{}rest", &secret[20..]);
        assert!(redacted_tail(&partial, &[secret]).starts_with("***rest"));
    }

    #[test]
    fn missing_program_is_a_spawn_failure() {
        let argv = vec!["quartermaster-no-such-program".to_string()];
        let out = run(&Spec {
            argv: &argv,
            cwd: &std::env::temp_dir(),
            env: &env(),
            timeout: Duration::from_secs(5),
            secrets: &[],
        });
        assert!(matches!(out.exit, Exit::SpawnFailed(_)), "{:?}", out.exit);
    }

    #[test]
    fn environment_is_an_allowlist() {
        let source = vec![
            (OsString::from("PATH"), OsString::from("/bin")),
            (OsString::from("GITHUB_TOKEN"), OsString::from("t")),
            (OsString::from("GOFLAGS"), OsString::from("-toolexec=x")),
            (OsString::from("GOPROXY"), OsString::from("https://proxy")),
        ];
        let env = child_env(source, &["GOPROXY".to_string()]);
        let names: Vec<String> = env
            .keys()
            .map(|k| k.to_string_lossy().into_owned())
            .filter(|k| !SAFE_DEFAULTS.iter().any(|(d, _)| d == k))
            .collect();
        assert_eq!(names, vec!["GOPROXY", "PATH"]);
        assert_eq!(env[&OsString::from("npm_config_ignore_scripts")], "true");
        let opted_in = child_env(
            vec![(
                OsString::from("npm_config_ignore_scripts"),
                OsString::from("false"),
            )],
            &["npm_config_ignore_scripts".to_string()],
        );
        assert_eq!(
            opted_in[&OsString::from("npm_config_ignore_scripts")],
            "false"
        );
    }
}
