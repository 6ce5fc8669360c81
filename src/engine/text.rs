//! The text Quartermaster writes: PR bodies, commit messages, progress headings. Pure functions of
//! the plan and what happened.

use super::unit::{BranchUnit, Split};
use crate::changes::{ChangeFact, FormatChange, UpdateFact, Verdict};
use crate::markdown::{self, MAX_POSTED_BODY, cell_code, code};
use crate::plan::{Action, Skip, UpdateType};
use crate::report::{ActionReport, Warned};
use crate::sink;
use crate::toolchain::{Check, ToolchainVerdict};

/// What a PR says: the agent's description (neutralised and capped), then the facts as the lock
/// files show them: a table of the declared updates, the lock files rewritten in another format,
/// the transitive changes folded away, the test that passed, and the hidden marker of its branch.
pub(crate) struct PrBody<'a> {
    pub description: &'a str,
    pub facts: &'a Verdict,
    pub test_command: &'a str,
    pub working_dir: Option<&'a str>,
    pub branch: &'a str,
    pub allow_mentions: bool,
    /// The toolchains the repository declares, as checked for this branch's build.
    pub toolchains: &'a [Check],
    /// What the supply-chain gates add: fixed advisories, the checks, release notes.
    pub supply: &'a str,
    /// For a PR split off a batch, what it says instead of the agent's description, which
    /// speaks of the whole batch.
    pub split: Option<SplitNote<'a>>,
    /// The frozen install that built the tests' environment from the committed files, as it ran.
    pub installs: &'a [String],
    /// What the package managers' resolvers warned about while building the branch.
    pub warnings: &'a [Warned],
}

/// Where a split PR comes from and what became of the updates it was split from.
pub(crate) struct SplitNote<'a> {
    pub split: &'a Split,
    /// The plan's title of the whole action.
    pub title: &'a str,
    /// The action's other updates, each with what became of it on its own branch.
    pub(crate) siblings: &'a [(String, String)],
}

impl SplitNote<'_> {
    fn render(&self, facts: &Verdict, allow_mentions: bool) -> String {
        let said = |text: &str| sink::body_line(text, allow_mentions);
        let mut out: String = facts
            .updates
            .iter()
            .map(|u| format!("{}.\n\n", sentence(u)))
            .collect();
        out.push_str(&format!(
            "Split off {} (“{}”): {}.\n",
            code(&self.split.batch),
            said(self.title),
            said(&split_reason(self.split))
        ));
        if !self.siblings.is_empty() {
            out.push_str("\nThe action's other updates, each on a branch of its own:\n");
            for (package, fate) in self.siblings {
                out.push_str(&format!("- {}: {}\n", code(package), said(fate)));
            }
        }
        out
    }
}

/// Why a unit was split off its action.
fn split_reason(split: &Split) -> String {
    match &split.batch_failed {
        Some(failed) => format!("{failed}, so each update was tried on a branch of its own"),
        None => "the action's fallback strategy `individual` gives each update a branch of its own"
            .to_string(),
    }
}

/// One update as a title says it: `update anyhow from 1.0.99 to 1.0.100`, with the versions the
/// lock files show.
pub(crate) fn update_line(u: &UpdateFact) -> String {
    if u.update_type == UpdateType::LockFileMaintenance {
        return format!("refresh {}", u.package);
    }
    match (&u.from, &u.to) {
        (Some(from), Some(to)) => format!("update {} from {from} to {to}", u.package),
        (None, Some(to)) => format!("update {} to {to}", u.package),
        (Some(from), None) => format!("remove {} {from}", u.package),
        (None, None) => format!("update {}", u.package),
    }
}

/// One update as a PR's first sentence says it, in code spans.
fn sentence(u: &UpdateFact) -> String {
    let p = code(&u.package);
    if u.update_type == UpdateType::LockFileMaintenance {
        return format!("Refreshes {p}");
    }
    match (&u.from, &u.to) {
        (Some(from), Some(to)) => format!("Updates {p} from {} to {}", code(from), code(to)),
        (None, Some(to)) => format!("Updates {p} to {}", code(to)),
        (Some(from), None) => format!("Removes {p} {}", code(from)),
        (None, None) => format!("Updates {p}"),
    }
}

/// Where the facts of a PR body start: everything before is the description.
const FACTS_START: &str = "\n\n| Package | Change | Type |\n|---|---|---|\n";

impl PrBody<'_> {
    pub(crate) fn render(&self) -> String {
        let head = match &self.split {
            Some(note) => note.render(self.facts, self.allow_mentions),
            None => sink::body(self.description, self.allow_mentions),
        };
        self.with_head(head)
    }

    /// The body with the facts of this build and the description of `old` (a body Quartermaster
    /// wrote, kept as it stands: it was neutralised then).
    pub(super) fn refresh(&self, old: &str) -> String {
        let head = old.rfind(FACTS_START).map_or(old, |at| &old[..at]);
        self.with_head(head.to_string())
    }

    fn with_head(&self, head: String) -> String {
        let mut tail = String::from(FACTS_START);
        for u in &self.facts.updates {
            tail.push_str(&update_row(u));
        }
        for c in self.facts.refreshed() {
            tail.push_str(&format!(
                "| {} | {} | lock_file_maintenance |\n",
                package_cell(&c.name, c.link.as_deref()),
                change_cell(c)
            ));
        }
        tail.push_str(&formats(&self.facts.formats));
        tail.push_str(&transitive(&self.facts.transitive));
        tail.push_str(&super::warnings::section(self.warnings));
        tail.push_str(self.supply);
        tail.push_str(&toolchains(self.toolchains));
        tail.push_str(&format!(
            "\nTests passed: {}{}{}.\n\n---\n<sub>Opened by Quartermaster from an agent's plan; versions are read from the lock files. A commit by anyone else on this branch stops Quartermaster from updating it.</sub>\n{}",
            code(self.test_command),
            self.working_dir
                .map(|d| format!(" in {}", code(d)))
                .unwrap_or_default(),
            installed(self.installs),
            markdown::marker("pr", self.branch)
        ));
        let mut head = head.trim_end().to_string();
        let room = MAX_POSTED_BODY.saturating_sub(tail.chars().count() + 20);
        if head.chars().count() > room {
            head = head.chars().take(room).collect::<String>() + "… (truncated)";
        }
        head + &tail
    }
}

/// A declared update as the lock files show it. What the plan claimed stays in the report: a PR
/// states facts only.
fn update_row(u: &UpdateFact) -> String {
    if u.update_type == UpdateType::LockFileMaintenance {
        return format!(
            "| {} | refreshed | lock_file_maintenance |\n",
            cell_code(&u.package)
        );
    }
    let from = u.from.as_deref().unwrap_or("none");
    let to = u.to.as_deref().unwrap_or("none");
    format!(
        "| {} | {} → {} | {} |\n",
        package_cell(&u.package, u.link.as_deref()),
        cell_code(from),
        cell_code(to),
        u.update_type.as_str()
    )
}

/// The lock files whose format changed: a sign that another version of the tool wrote them than
/// the one that wrote the base.
fn formats(changes: &[FormatChange]) -> String {
    changes
        .iter()
        .map(|c| {
            format!(
                "\nLock format: {} {} → {} (written by another tool version than before).\n",
                code(&c.lock_file),
                code(&c.from),
                code(&c.to)
            )
        })
        .collect()
}

/// The transitive changes, folded, with their count.
fn transitive(changes: &[ChangeFact]) -> String {
    if changes.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n<details><summary>{} transitive change{}</summary>\n\n| Package | Change |\n|---|---|\n",
        changes.len(),
        if changes.len() == 1 { "" } else { "s" }
    );
    for c in changes.iter().take(MAX_TRANSITIVE_ROWS) {
        out.push_str(&format!(
            "| {} | {} |\n",
            package_cell(&c.name, c.link.as_deref()),
            change_cell(c)
        ));
    }
    if changes.len() > MAX_TRANSITIVE_ROWS {
        out.push_str(&format!(
            "| … | and {} more |\n",
            changes.len() - MAX_TRANSITIVE_ROWS
        ));
    }
    out.push_str("\n</details>\n");
    out
}

fn change_cell(c: &ChangeFact) -> String {
    match (&c.from, &c.to) {
        (Some(f), Some(t)) => format!("{} → {}", cell_code(f), cell_code(t)),
        (None, Some(t)) => format!("added {}", cell_code(t)),
        (Some(f), None) => format!("removed {}", cell_code(f)),
        (None, None) => "changed".to_string(),
    }
}

/// What a PR of `branch` says about how it was tested: the frozen install's commands, and the
/// resolver warnings of its build.
pub(crate) fn tested_with(report: &ActionReport, branch: &str) -> (Vec<String>, Vec<Warned>) {
    let installs = report
        .installs_of(branch)
        .into_iter()
        .map(|i| i.command.clone())
        .collect();
    (installs, report.warnings_of(branch))
}

/// How the tested environment was built: from the committed files alone, by the frozen install.
fn installed(installs: &[String]) -> String {
    if installs.is_empty() {
        return String::new();
    }
    let commands: Vec<String> = installs.iter().map(|c| code(c)).collect();
    format!(
        ", on an environment built from the committed files alone ({})",
        commands.join(", ")
    )
}

/// The declared toolchains and the versions the commands ran with.
fn toolchains(checks: &[Check]) -> String {
    if checks.is_empty() {
        return String::new();
    }
    let mut out =
        "\n**Toolchains**\n\n| Tool | Declared in | Declared | Found | |\n|---|---|---|---|---|\n"
            .to_string();
    for c in checks {
        let verdict = match c.verdict {
            ToolchainVerdict::Match => "match",
            ToolchainVerdict::Mismatch => "⚠️ mismatch",
            ToolchainVerdict::Unchecked => "unchecked",
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {verdict} |\n",
            c.tool,
            cell_code(&c.file),
            cell_code(&c.declared),
            c.found
                .as_deref()
                .map_or("not found".to_string(), cell_code),
        ));
    }
    out
}

/// Transitive rows listed at most; a lock-file refresh can change hundreds.
const MAX_TRANSITIVE_ROWS: usize = 200;

fn package_cell(name: &str, link: Option<&str>) -> String {
    match link {
        Some(url) => markdown::link(&cell_code(name), url),
        None => cell_code(name),
    }
}

/// The commit message of a unit: its title, then one line per update as the lock files show it.
/// Every line goes through [`sink::line`]: plan text and lock-file text close no issue and skip
/// no CI.
pub(super) fn commit_message(
    unit: &BranchUnit<'_>,
    facts: &Verdict,
    allow_mentions: bool,
) -> String {
    let mut lines = commit_lines(unit, facts).into_iter();
    let title = lines.next().unwrap_or_default();
    let mut message = format!("{}\n\n", sink::line(&title, allow_mentions));
    if let Some(split) = &unit.split {
        let line = format!(
            "Split off {} ({}): {}.",
            split.batch,
            unit.title,
            split_reason(split)
        );
        message.push_str(&sink::line(&line, allow_mentions));
        message.push_str("\n\n");
    }
    for line in lines {
        message.push_str(&sink::line(&line, allow_mentions));
        message.push('\n');
    }
    message.push_str("\nGenerated by Quartermaster from an agent's plan.\n");
    message
}

/// The commit message's lines, as said: the title, then the updates.
fn commit_lines(unit: &BranchUnit<'_>, facts: &Verdict) -> Vec<String> {
    let mut message = vec![unit.title_from(facts)];
    for u in &facts.updates {
        if u.update_type == UpdateType::LockFileMaintenance {
            message.push(format!("- {}: refreshed", u.package));
            continue;
        }
        message.push(moved(&u.package, u.from.as_deref(), u.to.as_deref()));
    }
    for c in facts.refreshed() {
        message.push(moved(&c.name, c.from.as_deref(), c.to.as_deref()));
    }
    if !facts.transitive.is_empty() {
        message.push(format!(
            "- and {} transitive change{}",
            facts.transitive.len(),
            if facts.transitive.len() == 1 { "" } else { "s" }
        ));
    }
    for c in &facts.formats {
        message.push(format!("- {} format: {} -> {}", c.lock_file, c.from, c.to));
    }
    message
}

/// A commit message line: where a package was and where it ended.
fn moved(package: &str, from: Option<&str>, to: Option<&str>) -> String {
    format!(
        "- {package}: {} -> {}",
        from.unwrap_or("none"),
        to.unwrap_or("none")
    )
}

/// The reason a `skip` action gives.
pub(crate) fn skip_reason(a: &Skip) -> String {
    let kind = serde_json::to_value(a.reason_type)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    format!("{} ({kind}): {}", a.package, a.reason)
}

/// The heading of an action in the progress log.
pub(crate) fn describe(action: &Action) -> String {
    match action {
        Action::CreateMr(a) => format!("create_mr {}", a.branch),
        Action::UpdateMr(a) => format!("update_mr #{} {}", a.mr_id, a.branch),
        Action::CreateIssue(a) => format!("create_issue {:?}", sink::line(&a.title, true)),
        Action::CommentMr(a) => format!("comment_mr #{}", a.mr_id),
        Action::CommentIssue(a) => format!("comment_issue #{}", a.issue_id),
        Action::CloseMr(a) => format!("close_mr #{}", a.mr_id),
        Action::Skip(a) => format!("skip {}", a.package),
    }
}

/// The labels to apply: the bot label first, then the plan's, each once.
pub(crate) fn with_bot_label(labels: &[String], bot: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in std::iter::once(bot).chain(labels.iter().map(String::as_str)) {
        if !out.iter().any(|x| x == l) {
            out.push(l.to_string());
        }
    }
    out
}

/// A commit id as shown in progress lines.
pub(super) fn short(id: git2::Oid) -> String {
    id.to_string()[..8].to_string()
}

#[cfg(test)]
mod tests;
