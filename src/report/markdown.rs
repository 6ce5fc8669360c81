//! The Markdown summary: what a reviewer wants at a glance, one row per action, the fate of every
//! update, and the output of whatever failed.

use super::{ActionReport, RunReport, Status, TestVerdict, UpdateReport};
use crate::markdown::{cell, cell_code};
use crate::sink::summary_block;

impl RunReport {
    pub(crate) fn to_markdown(&self) -> String {
        let s = &self.summary;
        let mut out = format!(
            "## Quartermaster: {} done, {} failed, {} skipped, {} denied",
            s.done, s.failed, s.skipped, s.denied
        );
        for (count, word) in [(s.partial, "partial"), (s.cancelled, "cancelled")] {
            if count > 0 {
                out.push_str(&format!(", {count} {word}"));
            }
        }
        out.push_str("\n\n");
        if self.dry_run {
            out.push_str("**Dry run**: nothing was pushed, opened or closed.\n\n");
        }
        if let Some(signal) = self.signal {
            out.push_str(&format!(
                "**Cancelled**: the run was stopped by signal {signal} (a cancelled job); what had finished is as it was, the rest is `cancelled`.\n\n"
            ));
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
        out.push_str(&self.upkeep_table());
        out.push_str(&self.updates_table());
        out.push_str(&self.toolchain_mismatches());
        out.push_str(&self.resolver_warnings());
        out.push_str(&self.failures());
        out
    }

    /// What the package managers' resolvers warned about, per branch and command.
    fn resolver_warnings(&self) -> String {
        let mut out = String::new();
        for a in &self.actions {
            let mut branches: Vec<&str> = a.commands.iter().map(|c| c.branch.as_str()).collect();
            branches.dedup();
            for branch in branches {
                for w in a.warnings_of(branch) {
                    out.push_str(&format!(
                        "\n<details><summary>#{} {}: {}</summary>\n\n{}\n</details>\n",
                        a.index,
                        cell_code(branch),
                        cell_code(&w.command),
                        summary_block(&w.warnings.join("\n"))
                    ));
                }
            }
        }
        if out.is_empty() {
            return out;
        }
        format!("\n### Resolver warnings\n{out}")
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
        let mut out =
            "| # | Action | Subject | Status | Result |\n|---:|---|---|---|---|\n".to_string();
        for a in &self.actions {
            let what = match &a.branch {
                Some(b) => format!("{} {}", a.kind, cell_code(b)),
                None => a.kind.to_string(),
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                a.index,
                what,
                cell(&a.subject),
                status_badge(a.status),
                result_text(a)
            ));
        }
        out
    }

    /// What the run did to Quartermaster's open PRs, and the dependency dashboard.
    fn upkeep_table(&self) -> String {
        let mut out = String::new();
        if !self.upkeep.is_empty() {
            out.push_str("\n### Upkeep\n\n| PR | Branch | Upkeep | Status | Result |\n|---:|---|---|---|---|\n");
        }
        for u in &self.upkeep {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                u.pull_request.map_or_else(String::new, |n| format!("#{n}")),
                cell_code(&u.branch),
                u.action.as_str(),
                status_badge(u.status),
                cell(&u.reason)
            ));
        }
        if let Some(d) = &self.dashboard {
            out.push_str(&format!(
                "\nDependency dashboard: issue #{} ({}).\n",
                d.number,
                d.operation.as_str()
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
                TestVerdict::Passed => "passed",
                TestVerdict::Failed => "failed",
                TestVerdict::NotRun => "not run",
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
            .filter(|(_, c)| c.verdict == crate::toolchain::ToolchainVerdict::Mismatch)
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
                let installs = a.installs.iter().filter(|i| !i.ok).filter_map(move |i| {
                    i.process
                        .output_tail
                        .as_deref()
                        .map(|t| (a, format!("{} on {}", i.command, i.branch), t))
                });
                commands.chain(installs).chain(tests)
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
        Status::Partial => "🟡 partial",
        Status::Cancelled => "🛑 cancelled",
    }
}

/// The reason the action ended as it did, else what it touched: each PR (with its branch where the
/// action split into several) and issue, and where each comment went.
fn result_text(a: &ActionReport) -> String {
    if !a.reason.is_empty() {
        return cell(&a.reason);
    }
    let pulls = a.pull_requests.iter().map(|p| {
        let branch = if a.branch.as_deref() == Some(p.branch.as_str()) {
            String::new()
        } else {
            format!(" on {}", cell_code(&p.branch))
        };
        format!("PR #{} {}{branch}", p.number, p.operation.as_str())
    });
    let issues = a
        .issues
        .iter()
        .map(|i| format!("issue #{} {}", i.number, i.operation.as_str()));
    let comments = a.comments.iter().map(|c| {
        let on = if c.on == "issue" { "issue" } else { "PR" };
        format!("comment {} on {on} #{}", c.operation.as_str(), c.number)
    });
    pulls
        .chain(issues)
        .chain(comments)
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

#[cfg(test)]
mod tests {
    use super::super::tests::report;
    use super::super::{CommentRef, IssueRef, Operation, PullRequestRef};
    use super::*;
    use crate::plan::ActionType;

    fn pull(number: u64, branch: &str) -> PullRequestRef {
        PullRequestRef {
            number,
            url: format!("https://forge.example/pulls/{number}"),
            branch: branch.into(),
            operation: Operation::Created,
            reused: None,
            auto_merge: false,
            notes: vec![],
        }
    }

    /// Each row names what its action is about, as the plan does, and what it touched.
    #[test]
    fn every_row_names_its_subject() {
        let mut split = ActionReport::new(0, ActionType::CreateMr);
        split.branch = Some("quartermaster/cargo".into());
        split.subject = "chore(deps): update cargo | patch".into();
        split.pull_requests = vec![
            pull(1, "quartermaster/cargo--greeting"),
            pull(2, "quartermaster/cargo--farewell"),
        ];
        let mut issue = ActionReport::new(1, ActionType::CreateIssue);
        issue.subject = "farewell 2.0.1 changes bye()".into();
        issue.issues.push(IssueRef {
            number: 3,
            url: "https://forge.example/issues/3".into(),
            operation: Operation::Created,
        });
        let mut comment = ActionReport::new(2, ActionType::CommentMr);
        comment.subject = "on PR #1".into();
        comment.comments.push(CommentRef {
            on: "pull_request".into(),
            number: 1,
            url: "https://forge.example/pulls/1#comment".into(),
            operation: Operation::Updated,
        });
        let mut update = ActionReport::new(3, ActionType::UpdateMr);
        update.branch = Some("quartermaster/npm".into());
        update.subject = "PR #4".into();
        update.pull_requests = vec![pull(4, "quartermaster/npm")];
        let mut skip = ActionReport::new(4, ActionType::Skip);
        skip.subject = "serde".into();
        skip.finish(Status::Skipped, "Held by a maintainer");
        let md = report(vec![split, issue, comment, update, skip]).to_markdown();
        insta::assert_snapshot!(md);
    }
}
