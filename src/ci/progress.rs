//! Live progress while a plan runs: one line per step, and the end of the output of whatever
//! failed. Child output and plan text are untrusted: they are only ever shown, indented, after the
//! child has finished, and every line goes through [`crate::sink::log`]. On GitHub Actions each
//! action is a collapsible `::group::`, and everything inside it runs under
//! `::stop-commands::<random>`, so no output can issue workflow commands.

use super::github::{escape_data, random_token};
use crate::report::{ActionReport, Status};
use crate::sink::log::{github_quoted, terminal, visible};
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

pub struct Progress {
    sink: Sink,
    /// The `::stop-commands::` token, on GitHub Actions.
    github: Option<String>,
    /// Held while lines are written that must stay together (a held group).
    writing: Arc<Mutex<()>>,
    /// On a worker's progress while actions run at once (see [`Progress::scoped`]).
    parallel: Option<Parallel>,
}

type Sink = Arc<dyn Fn(&str) + Send + Sync>;

/// A worker's progress among others: plain lines carry the action's `[i/n]`; on GitHub an
/// action's lines are held and written as one group when it finishes.
struct Parallel {
    prefix: Mutex<String>,
    held: Mutex<Vec<String>>,
}

impl Default for Progress {
    fn default() -> Self {
        Self::stderr()
    }
}

impl Progress {
    fn with(sink: Sink, github: Option<String>) -> Self {
        Self {
            sink,
            github,
            writing: Arc::default(),
            parallel: None,
        }
    }

    /// Progress lines on standard error.
    pub fn stderr() -> Self {
        Self::with(
            Arc::new(|line| {
                let _ = writeln!(std::io::stderr().lock(), "{line}");
            }),
            None,
        )
    }

    /// Progress for GitHub Actions: on standard output, where the runner reads workflow commands.
    pub(crate) fn github_actions() -> Self {
        Self::with(
            Arc::new(|line| {
                let _ = writeln!(std::io::stdout().lock(), "{line}");
            }),
            Some(random_token()),
        )
    }

    /// Progress lines handed to `sink` (tests, embedding).
    pub fn to(sink: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Self::with(Arc::new(sink), None)
    }

    /// A worker's progress, writing where this one does; `parallel` when other workers write at
    /// the same time, so that each action's lines stay readable.
    pub(crate) fn scoped(&self, parallel: bool) -> Self {
        Self {
            sink: self.sink.clone(),
            github: self.github.clone(),
            writing: self.writing.clone(),
            parallel: parallel.then(|| Parallel {
                prefix: Mutex::default(),
                held: Mutex::default(),
            }),
        }
    }

    pub(crate) fn is_github(&self) -> bool {
        self.github.is_some()
    }

    /// A line of the log, from text Quartermaster does not fully control: see
    /// [`crate::sink::log::terminal`].
    pub fn line(&self, text: &str) {
        self.emit(&terminal(text));
    }

    /// A line as it is: Quartermaster's own workflow commands and markers.
    fn emit(&self, text: &str) {
        match &self.parallel {
            Some(p) if self.github.is_some() => lock(&p.held).push(text.to_string()),
            Some(p) => (self.sink)(&format!("{}{text}", lock(&p.prefix))),
            None => (self.sink)(text),
        }
    }

    /// Writes the lines held for a group, together.
    fn release(&self) {
        if let Some(p) = &self.parallel {
            let held = std::mem::take(&mut *lock(&p.held));
            let _writing = lock(&self.writing);
            for line in held {
                (self.sink)(&line);
            }
        }
    }

    /// A workflow command (GitHub Actions only; ignored elsewhere).
    pub fn command(&self, text: &str) {
        if self.is_github() {
            self.emit(text);
        }
    }

    /// Lines that may hold untrusted text, shown so that they cannot act as workflow commands.
    pub fn quoted(&self, text: &str) {
        if text.is_empty() {
            return;
        }
        match &self.github {
            Some(token) => {
                for line in github_quoted(token, text) {
                    self.emit(&line);
                }
            }
            None => {
                for line in text.lines() {
                    self.line(line);
                }
            }
        }
    }

    /// The run's Markdown summary on standard output, where CI shows it: on GitHub Actions with
    /// workflow commands suspended, as every untrusted text is.
    pub fn summary(&self, markdown: &str) {
        match &self.github {
            Some(token) => {
                let mut out = std::io::stdout().lock();
                for line in github_quoted(token, markdown) {
                    let _ = writeln!(out, "{line}");
                }
            }
            None => {
                let _ = std::io::stdout().write_all(terminal(markdown).as_bytes());
            }
        }
    }

    pub(crate) fn begin_action(&self, index: usize, total: usize, what: &str) {
        let title = format!("[{}/{total}] {what}", index + 1);
        match &self.github {
            Some(token) => {
                self.emit(&format!("::group::{}", escape_data(&visible(&title))));
                self.emit(&format!("::stop-commands::{token}"));
            }
            None => {
                self.line(&title);
                if let Some(p) = &self.parallel {
                    *lock(&p.prefix) = format!("[{}/{total}]", index + 1);
                }
            }
        }
    }

    pub fn step(&self, text: &str) {
        self.line(&format!("      {text}"));
    }

    /// Shows the tail of a failed child's output, with control characters and escape sequences
    /// made visible (`\x1b`) so that the output cannot move the cursor, retitle the terminal or
    /// hide lines of the job log.
    pub(crate) fn failure_output(&self, tail: &str) {
        let lines: Vec<&str> = tail.lines().collect();
        for line in &lines[lines.len().saturating_sub(20)..] {
            self.line(&format!("      | {line}"));
        }
    }

    pub(crate) fn end_action(&self, report: &ActionReport) {
        let word = match report.status {
            Status::Done => "done",
            Status::Failed => "FAILED",
            Status::Skipped => "skipped",
            Status::Denied => "DENIED",
            Status::Partial => "PARTIAL",
            Status::Cancelled => "CANCELLED",
        };
        self.line(&format!("      => {word}: {}", report.reason));
        if let Some(token) = &self.github {
            self.emit(&format!("::{token}::"));
            self.emit("::endgroup::");
        }
        self.release();
        if let Some(p) = &self.parallel {
            lock(&p.prefix).clear();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(github: bool) -> (Progress, Arc<Mutex<Vec<String>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let mut p = Progress::to(move |l| sink.lock().unwrap().push(l.to_string()));
        if github {
            p.github = Some("TOKEN".into());
        }
        (p, lines)
    }

    #[test]
    fn github_groups_actions_and_stops_commands_inside() {
        let (p, lines) = captured(true);
        p.begin_action(0, 2, "create_mr quartermaster/x");
        p.failure_output("::set-output name=x::pwned\n::add-mask::x");
        let mut report = ActionReport::new(0, crate::plan::ActionType::CreateMr);
        report.finish(Status::Failed, "tests failed");
        p.end_action(&report);
        assert_eq!(
            *lines.lock().unwrap(),
            vec![
                "::group::[1/2] create_mr quartermaster/x",
                "::stop-commands::TOKEN",
                "      | ::set-output name=x::pwned",
                "      | ::add-mask::x",
                "      => FAILED: tests failed",
                "::TOKEN::",
                "::endgroup::",
            ]
        );
    }

    #[test]
    fn child_output_cannot_steer_the_terminal() {
        let (progress, lines) = captured(false);
        progress.failure_output("\u{1b}[2J\u{1b}]0;pwned\u{7}ok\r\tdone");
        assert_eq!(
            lines.lock().unwrap().as_slice(),
            ["      | \\x1b[2J\\x1b]0;pwned\\x07ok\\x0d\tdone"]
        );
    }

    #[test]
    fn actions_at_once_keep_their_lines_apart() {
        let report = |status| {
            let mut r = ActionReport::new(0, crate::plan::ActionType::CreateMr);
            r.finish(status, "ok");
            r
        };
        let (parent, lines) = captured(true);
        let (a, b) = (parent.scoped(true), parent.scoped(true));
        a.begin_action(0, 2, "create_mr a");
        b.begin_action(1, 2, "create_mr b");
        a.step("a: one");
        b.step("b: one");
        b.end_action(&report(Status::Done));
        a.step("a: two");
        a.end_action(&report(Status::Failed));
        let lines = lines.lock().unwrap();
        let groups: Vec<&str> = lines
            .iter()
            .filter(|l| l.starts_with("::group::"))
            .map(String::as_str)
            .collect();
        assert_eq!(
            groups,
            ["::group::[2/2] create_mr b", "::group::[1/2] create_mr a"]
        );
        let a_lines = lines.iter().position(|l| l == "      a: one").unwrap();
        assert_eq!(lines[a_lines + 1], "      a: two", "{lines:?}");

        let (parent, lines) = captured(false);
        let a = parent.scoped(true);
        a.begin_action(2, 3, "skip x");
        a.step("held");
        assert_eq!(
            *lines.lock().unwrap(),
            vec!["[3/3] skip x", "[3/3]      held"]
        );
    }

    #[test]
    fn plain_progress_has_no_workflow_commands() {
        let (p, lines) = captured(false);
        p.command("::add-mask::x");
        p.quoted("a\nb");
        p.begin_action(1, 2, "skip x");
        assert_eq!(*lines.lock().unwrap(), vec!["a", "b", "[2/2] skip x"]);
    }
}
