//! The Markdown summary: what a reviewer wants at a glance, one row per action, the fate of every
//! update, and the output of whatever failed.

use super::{ActionReport, RunReport, Status, UpdateReport, Verdict};
use crate::markdown::{cell, cell_code};
use crate::sink::summary_block;

impl RunReport {
    pub fn to_markdown(&self) -> String {
        let s = &self.summary;
        let mut out = format!(
            "## Quartermaster: {} done, {} failed, {} skipped, {} denied\n\n",
            s.done, s.failed, s.skipped, s.denied
        );
        if self.dry_run {
            out.push_str("**Dry run**: nothing was pushed, opened or closed.\n\n");
        }
        if let Some(only) = &self.only {
            out.push_str(&shard_line(only, self.plan_actions));
        }
        if !self.validation.valid {
            out.push_str(&self.invalid_plan());
            return out;
        }
        if let Some(error) = &self.error {
            out.push_str(&format!(
                "Quartermaster could not start; nothing ran.\n\n> {}\n",
                cell(error)
            ));
            return out;
        }
        out.push_str(&self.actions_table());
        out.push_str(&self.updates_table());
        out.push_str(&self.toolchain_mismatches());
        out.push_str(&self.failures());
        out
    }

    fn invalid_plan(&self) -> String {
        let mut out =
            "The plan is invalid; nothing ran.\n\n| Where | Code | Problem |\n|---|---|---|\n"
                .to_string();
        for f in &self.validation.errors {
            out.push_str(&format!(
                "| {} | {} | {} |\n",
                cell_code(if f.pointer.is_empty() {
                    "/"
                } else {
                    &f.pointer
                }),
                cell_code(f.code.as_str()),
                cell(&f.message)
            ));
        }
        out
    }

    fn actions_table(&self) -> String {
        let mut out = "| # | Action | Status | Result |\n|---:|---|---|---|\n".to_string();
        for a in &self.actions {
            let what = match &a.branch {
                Some(b) => format!("{} {}", a.kind, cell_code(b)),
                None => a.kind.to_string(),
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                a.index,
                what,
                status_badge(a.status),
                cell(&result_text(a))
            ));
        }
        out
    }

    fn updates_table(&self) -> String {
        let updates: Vec<(&ActionReport, &UpdateReport)> = self
            .actions
            .iter()
            .flat_map(|a| a.updates.iter().map(move |u| (a, u)))
            .collect();
        if updates.is_empty() {
            return String::new();
        }
        let mut out = "\n### Updates\n\n| # | Package | From | To | Test | Landed |\n|---:|---|---|---|---|---|\n".to_string();
        for (a, u) in updates {
            let landed = match (u.landed, u.pull_request) {
                (true, Some(n)) => format!("PR #{n}"),
                (true, None) => "yes".to_string(),
                (false, _) => "no".to_string(),
            };
            let test = match u.test {
                Verdict::Passed => "passed",
                Verdict::Failed => "failed",
                Verdict::NotRun => "not run",
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | {test} | {landed} |\n",
                a.index,
                cell_code(&u.package),
                cell_code(&u.from),
                cell_code(&u.to)
            ));
        }
        out
    }

    /// Every declared toolchain that differs from the one the commands found.
    fn toolchain_mismatches(&self) -> String {
        let lines: Vec<String> = self
            .actions
            .iter()
            .flat_map(|a| a.toolchains.iter().map(move |c| (a, c)))
            .filter(|(_, c)| c.verdict == crate::toolchain::Verdict::Mismatch)
            .map(|(a, c)| {
                format!(
                    "- #{} {}: {}\n",
                    a.index,
                    cell_code(&c.branch),
                    cell(&c.describe())
                )
            })
            .collect();
        if lines.is_empty() {
            return String::new();
        }
        format!("\n### Toolchain mismatches\n\n{}", lines.concat())
    }

    /// The end of the output of every command and test run that failed.
    fn failures(&self) -> String {
        let failures: Vec<(&ActionReport, String, &str)> = self
            .actions
            .iter()
            .flat_map(|a| {
                let commands = a.commands.iter().filter(|c| !c.ok).filter_map(move |c| {
                    c.process
                        .output_tail
                        .as_deref()
                        .map(|t| (a, c.command.clone(), t))
                });
                let tests = a
                    .test
                    .iter()
                    .flat_map(|t| t.runs.iter().map(move |r| (t, r)))
                    .filter(|(_, r)| !r.passed)
                    .filter_map(move |(t, r)| {
                        r.process
                            .output_tail
                            .as_deref()
                            .map(|tail| (a, format!("{} on {}", t.command, r.branch), tail))
                    });
                commands.chain(tests)
            })
            .collect();
        if failures.is_empty() {
            return String::new();
        }
        let mut out = "\n### Failures\n".to_string();
        for (a, what, tail) in failures {
            out.push_str(&format!(
                "\n<details><summary>#{}: {}</summary>\n\n{}\n</details>\n",
                a.index,
                cell(&what),
                summary_block(&last_lines(tail, 40))
            ));
        }
        out
    }
}

fn status_badge(status: Status) -> &'static str {
    match status {
        Status::Done => "✅ done",
        Status::Failed => "❌ failed",
        Status::Skipped => "⏭️ skipped",
        Status::Denied => "⛔ denied",
    }
}

fn result_text(a: &ActionReport) -> String {
    if !a.reason.is_empty() {
        return a.reason.clone();
    }
    a.pull_requests
        .iter()
        .map(|p| format!("PR #{} {}", p.number, p.operation.as_str()))
        .chain(
            a.issues
                .iter()
                .map(|i| format!("issue #{} {}", i.number, i.operation.as_str())),
        )
        .collect::<Vec<_>>()
        .join("; ")
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Which actions a shard's report covers: the others were not in it, which is not skipping them.
fn shard_line(only: &[usize], plan_actions: usize) -> String {
    let indices: Vec<String> = only.iter().map(usize::to_string).collect();
    format!(
        "**Shard**: actions {} of the plan's {plan_actions} are in this report; the others are not in this shard.\n\n",
        indices.join(", ")
    )
}
