//! How a sandboxed command ended, and the redacted tail of its output (as `process::run` has
//! always reported them).

use std::io::Read;
use std::time::Duration;

/// How much of a child's output is kept (the end of it, where test runners put their verdict).
pub const OUTPUT_TAIL_BYTES: usize = 16 * 1024;

/// How a child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// Exited with this code.
    Code(i32),
    /// Killed by this signal (not by Quartermaster).
    Signal(i32),
    /// Ran past its timeout; everything it started was killed.
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
pub struct ProcessOutcome {
    pub exit: Exit,
    pub duration: Duration,
    /// The last `OUTPUT_TAIL_BYTES` of stdout and stderr, interleaved as written, secrets redacted.
    pub output_tail: String,
    /// The resource limit that stopped it, when one did: `killed: memory limit 4 GiB`.
    pub limit: Option<String>,
}

impl ProcessOutcome {
    /// How it ended, and the resource limit that stopped it when one did: `exit code 2; killed:
    /// memory limit 4 GiB`.
    pub fn result(&self) -> String {
        match &self.limit {
            Some(limit) => format!("{}; {limit}", self.exit),
            None => self.exit.to_string(),
        }
    }
}

/// Bytes kept beyond the tail, so that a secret straddling the cut is still whole when redacted.
const REDACTION_MARGIN: usize = 4096;

/// How much of a child's output a kept log holds at most.
pub(crate) const LOG_BYTES: u64 = 8 * 1024 * 1024;

/// Reads everything, keeping only the last `OUTPUT_TAIL_BYTES` plus the redaction margin, and the
/// first [`LOG_BYTES`] in `tee` (a private file, redacted into the kept log afterwards).
pub(crate) fn read_tail(mut reader: impl Read, mut tee: Option<std::fs::File>) -> (Vec<u8>, u64) {
    const KEEP: usize = OUTPUT_TAIL_BYTES + REDACTION_MARGIN;
    let mut tail: Vec<u8> = Vec::with_capacity(OUTPUT_TAIL_BYTES);
    let mut total = 0u64;
    let mut chunk = [0u8; 8192];
    loop {
        match reader.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if let Some(file) = tee.as_mut().filter(|_| total < LOG_BYTES) {
                    let room = usize::try_from(LOG_BYTES - total).unwrap_or(usize::MAX);
                    let _ = std::io::Write::write_all(file, &chunk[..n.min(room)]);
                }
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
pub(crate) fn redacted_tail(text: &str, secrets: &[String]) -> String {
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

/// Appends the output kept in `tee` to the log at `path`, line by line with the secrets redacted
/// (no secret spans lines), and says where it was cut.
pub(crate) fn append_log(
    tee: &mut std::fs::File,
    total: u64,
    header: &str,
    path: &std::path::Path,
    secrets: &[String],
) -> std::io::Result<()> {
    use std::io::{BufRead, Seek, Write};
    tee.seek(std::io::SeekFrom::Start(0))?;
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    writeln!(log, "{header}")?;
    for line in std::io::BufReader::new(&*tee).split(b'\n') {
        let line = String::from_utf8_lossy(&line?).into_owned();
        writeln!(log, "{}", redact(&line, secrets))?;
    }
    if total > LOG_BYTES {
        writeln!(log, "[log cut after {LOG_BYTES} of {total} bytes]")?;
    }
    writeln!(log)
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

    #[test]
    fn output_is_capped_to_its_tail_and_redacted() {
        let text = format!("{}token=s3cr3t-value\n", "a".repeat(100_000));
        let (tail, total) = read_tail(text.as_bytes(), None);
        assert_eq!(total, text.len() as u64);
        let tail = redacted_tail(&String::from_utf8_lossy(&tail), &["s3cr3t-value".into()]);
        assert!(tail.len() <= OUTPUT_TAIL_BYTES);
        assert!(
            tail.ends_with("token=***\n"),
            "{}",
            &tail[tail.len() - 30..]
        );
    }

    /// A kept log holds the whole output, secrets redacted, and says where it was cut.
    #[test]
    fn a_kept_log_is_redacted_and_appended() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("unit.log");
        let secret = "s3cr3t-value".to_string();
        let mut tee = tempfile::tempfile().unwrap();
        let (_, total) = read_tail(
            "running 1 test\ntoken=s3cr3t-value ok\n".as_bytes(),
            Some(tee.try_clone().unwrap()),
        );
        append_log(
            &mut tee,
            total,
            "$ cargo test  (exit code 0)",
            &log,
            std::slice::from_ref(&secret),
        )
        .unwrap();
        let mut again = tempfile::tempfile().unwrap();
        again.write_all(b"second").unwrap();
        append_log(&mut again, LOG_BYTES + 1, "$ make check", &log, &[secret]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            format!(
                "$ cargo test  (exit code 0)\nrunning 1 test\ntoken=*** ok\n\n$ make check\nsecond\n[log cut after {LOG_BYTES} of {} bytes]\n\n",
                LOG_BYTES + 1
            )
        );
    }

    #[test]
    fn a_secret_cut_in_half_by_the_tail_is_still_masked() {
        let secret = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcd".to_string();
        let text = format!(
            "{}{secret}{}",
            "x".repeat(34),
            "y".repeat(OUTPUT_TAIL_BYTES - 30)
        );
        let tail = redacted_tail(&text, std::slice::from_ref(&secret));
        assert!(!tail.contains("KLMNOPQRSTUVWXYZ"), "{}", &tail[..40]);
        let partial = format!("{}rest", &secret[20..]);
        assert!(redacted_tail(&partial, &[secret]).starts_with("***rest"));
    }
}
