//! Live progress while a plan runs: one line per step, and the end of the output of whatever
//! failed. Child output and plan text are untrusted: they are only ever shown, indented, after the
//! child has finished. On GitHub Actions each action is a collapsible `::group::`, and everything
//! inside it runs under `::stop-commands::<random>`, so no output can issue workflow commands.

use super::github::{escape_data, random_token};
use crate::report::{ActionReport, Status};
use std::io::Write;

pub struct Progress {
    sink: Box<dyn Fn(&str) + Send + Sync>,
    /// The `::stop-commands::` token, on GitHub Actions.
    github: Option<String>,
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
            github: None,
        }
    }

    /// Progress for GitHub Actions: on standard output, where the runner reads workflow commands.
    pub fn github_actions() -> Self {
        Self {
            sink: Box::new(|line| {
                let _ = writeln!(std::io::stdout().lock(), "{line}");
            }),
            github: Some(random_token()),
        }
    }

    /// Progress lines handed to `sink` (tests, embedding).
    pub fn to(sink: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Self {
            sink: Box::new(sink),
            github: None,
        }
    }

    pub fn is_github(&self) -> bool {
        self.github.is_some()
    }

    pub fn line(&self, text: &str) {
        (self.sink)(text);
    }

    /// A workflow command (GitHub Actions only; ignored elsewhere).
    pub fn command(&self, text: &str) {
        if self.is_github() {
            self.line(text);
        }
    }

    /// Lines that may hold untrusted text, shown so that they cannot act as workflow commands.
    pub fn quoted(&self, text: &str) {
        if text.is_empty() {
            return;
        }
        match &self.github {
            Some(token) => {
                self.line(&format!("::stop-commands::{token}"));
                for line in text.lines() {
                    self.line(line);
                }
                self.line(&format!("::{token}::"));
            }
            None => {
                for line in text.lines() {
                    self.line(line);
                }
            }
        }
    }

    pub fn begin_action(&self, index: usize, total: usize, what: &str) {
        let title = format!("[{}/{total}] {what}", index + 1);
        match &self.github {
            Some(token) => {
                self.line(&format!("::group::{}", escape_data(&title)));
                self.line(&format!("::stop-commands::{token}"));
            }
            None => self.line(&title),
        }
    }

    pub fn step(&self, text: &str) {
        self.line(&format!("      {text}"));
    }

    /// Shows the tail of a failed child's output, with control characters and escape sequences
    /// made visible (`\x1b`) so that the output cannot move the cursor, retitle the terminal or
    /// hide lines of the job log.
    pub fn failure_output(&self, tail: &str) {
        let lines: Vec<&str> = tail.lines().collect();
        for line in &lines[lines.len().saturating_sub(20)..] {
            self.line(&format!("      | {}", visible(line)));
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
        if let Some(token) = &self.github {
            self.line(&format!("::{token}::"));
            self.line("::endgroup::");
        }
    }
}

/// `text` with every control character but the tab written as an escape (`\x1b`).
fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\t' {
            out.push_str(&format!("\\x{:02x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

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
    fn plain_progress_has_no_workflow_commands() {
        let (p, lines) = captured(false);
        p.command("::add-mask::x");
        p.quoted("a\nb");
        p.begin_action(1, 2, "skip x");
        assert_eq!(*lines.lock().unwrap(), vec!["a", "b", "[2/2] skip x"]);
    }
}
