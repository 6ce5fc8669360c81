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
/// from `source` (normally the process environment).
pub fn child_env(
    source: impl IntoIterator<Item = (OsString, OsString)>,
    extra: &[String],
) -> BTreeMap<OsString, OsString> {
    source
        .into_iter()
        .filter(|(name, _)| {
            let name = name.to_string_lossy();
            INHERITED_ENV.contains(&name.as_ref()) || extra.iter().any(|e| *e == name)
        })
        .collect()
}

/// Runs `spec` to completion or timeout. Never panics on the child's behaviour.
pub fn run(spec: &Spec<'_>) -> Outcome {
    let started = Instant::now();
    let Some((program, args)) = spec.argv.split_first() else {
        return spawn_failed(started, "empty command".into());
    };
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
    // Descendants left behind in the group (daemons, watchers) go with it.
    kill_group(group);
    let (tail, total) = done_rx.recv_timeout(DRAIN_GRACE).unwrap_or_else(|_| {
        (
            b"[output incomplete: a descendant process kept the pipe open]".to_vec(),
            0,
        )
    });
    Outcome {
        exit,
        duration: started.elapsed(),
        output_tail: redact(&String::from_utf8_lossy(&tail), spec.secrets),
        output_bytes: total,
    }
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

/// Reads everything, keeping only the last `OUTPUT_TAIL_BYTES`.
fn read_tail(mut reader: impl Read) -> (Vec<u8>, u64) {
    let mut tail: Vec<u8> = Vec::with_capacity(OUTPUT_TAIL_BYTES);
    let mut total = 0u64;
    let mut chunk = [0u8; 8192];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                total += n as u64;
                tail.extend_from_slice(&chunk[..n]);
                if tail.len() > OUTPUT_TAIL_BYTES * 2 {
                    tail.drain(..tail.len() - OUTPUT_TAIL_BYTES);
                }
            }
        }
    }
    if tail.len() > OUTPUT_TAIL_BYTES {
        tail.drain(..tail.len() - OUTPUT_TAIL_BYTES);
    }
    (tail, total)
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
            .collect();
        assert_eq!(names, vec!["GOPROXY", "PATH"]);
    }
}
