//! Live progress on standard error while a plan runs: one line per step, and the end of the
//! output of whatever failed. Child output is untrusted and only ever shown, indented, after the
//! child has finished.

use crate::report::{ActionReport, Status};
use std::io::Write;

pub struct Progress {
    sink: Box<dyn Fn(&str) + Send + Sync>,
}

impl Default for Progress {
    fn default() -> Self {
        Self::stderr()
    }
}

impl Progress {
    /// Progress lines on standard error.
    pub fn stderr() -> Self {
        Self {
            sink: Box::new(|line| {
                let _ = writeln!(std::io::stderr().lock(), "{line}");
            }),
        }
    }

    /// Progress lines handed to `sink` (tests, embedding).
    pub fn to(sink: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Self {
            sink: Box::new(sink),
        }
    }

    pub fn line(&self, text: &str) {
        (self.sink)(text);
    }

    pub fn begin_action(&self, index: usize, total: usize, what: &str) {
        self.line(&format!("[{}/{total}] {what}", index + 1));
    }

    pub fn step(&self, text: &str) {
        self.line(&format!("      {text}"));
    }

    /// Shows the tail of a failed child's output.
    pub fn failure_output(&self, tail: &str) {
        let lines: Vec<&str> = tail.lines().collect();
        for line in &lines[lines.len().saturating_sub(20)..] {
            self.line(&format!("      | {line}"));
        }
    }

    pub fn end_action(&self, report: &ActionReport) {
        let word = match report.status {
            Status::Done => "done",
            Status::Failed => "FAILED",
            Status::Skipped => "skipped",
            Status::Denied => "DENIED",
        };
        self.line(&format!("      => {word}: {}", report.reason));
    }
}
