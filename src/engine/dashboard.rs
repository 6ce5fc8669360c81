//! The dependency dashboard: one open issue with the bot label, titled "Dependency dashboard",
//! created on the first run and edited on every later one, never duplicated. It lists every open
//! PR of Quartermaster's and everything the latest run could not do, and its checkboxes are how
//! the team asks for more: a ticked box beside a PR asks the next run to rebuild it on the
//! default branch; a ticked box beside an update that failed or was refused asks the next run to
//! retry it from the build recorded in that line (validated against the mission like a plan).

use super::RunReports;
use super::ownership;
use super::record::Record;
use super::unit::BranchUnit;
use super::upkeep;
use super::upkeep::rebuild;
use super::upkeep::{Upkeep, quoted};
use super::{RunContext, WorkerSlot};
use crate::forge::{Issue, NewIssue, PullRequest};
use crate::markdown::code;
use crate::mission::Mission;
use crate::plan::{CreateMr, UpdateMr};
use crate::validate::Step;

/// A plan action that builds a branch.
enum Planned<'p> {
    Create(&'p CreateMr),
    Update(&'p UpdateMr),
}
use crate::report::{ActionReport, IssueRef, Operation, Status, UpkeepAction, UpkeepReport};
use std::collections::BTreeSet;
use std::time::{Duration, SystemTime};

pub(crate) const TITLE: &str = "Dependency dashboard";
/// Marks the issue as Quartermaster's dashboard.
const MARKER: &str = "<!-- quartermaster:dashboard -->";
/// Marks a PR's rebuild box: `<!-- quartermaster:rebuild:12 -->`.
const REBUILD: &str = "<!-- quartermaster:rebuild:";

/// What the dashboard's ticked boxes ask of this run.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Asked {
    pub rebuild: BTreeSet<u64>,
    pub retry: Vec<Record>,
}

/// The ticked boxes of a dashboard's body.
pub(super) fn asked(body: &str) -> Asked {
    let mut asked = Asked::default();
    for line in body.lines().map(str::trim_start) {
        if !(line.starts_with("- [x]") || line.starts_with("- [X]")) {
            continue;
        }
        let rebuild = line.find(REBUILD).and_then(|at| {
            let rest = &line[at + REBUILD.len()..];
            rest[..rest.find(" -->")?].parse::<u64>().ok()
        });
        match rebuild {
            Some(n) => {
                asked.rebuild.insert(n);
            }
            None => asked.retry.extend(Record::read(line)),
        }
    }
    asked
}

/// Everything the dashboard shows.
pub(crate) struct DashboardView<'v> {
    pub open: &'v [PullRequest],
    pub actions: &'v [ActionReport],
    /// The records of the actions that may be retried, by action index.
    pub records: &'v [(usize, Record)],
    pub upkeep: &'v [UpkeepReport],
    pub default_branch: &'v str,
    pub now: SystemTime,
}

impl DashboardView<'_> {
    pub(crate) fn render(&self) -> String {
        let mut out = format!(
            "Quartermaster keeps this issue up to date on every run: its open pull requests, and what its latest run could not do.\n\n## Open pull requests\n\nTick a box to have the next run rebuild that pull request on {}.\n\n",
            code(self.default_branch)
        );
        if self.open.is_empty() {
            out.push_str("None.\n");
        }
        for pr in self.open {
            out.push_str(&self.pr_line(pr));
        }
        out.push_str("\n## The latest run\n\n");
        let lines = self.trouble();
        if lines.is_empty() {
            out.push_str("Nothing failed, was refused or was skipped.\n");
        } else {
            out.push_str("Tick a box to have the next run retry that update from the build recorded beside it.\n\n");
            out.push_str(&lines.concat());
        }
        // No time of the run: a run that changes nothing leaves the dashboard as it was.
        out.push_str(&format!(
            "\n---\n<sub>Quartermaster rewrites this issue on every run; ticked boxes are acted on by the next one.</sub>\n{MARKER}"
        ));
        out
    }

    /// One open PR: its box, `#N`, what it updates, its tests and its age.
    fn pr_line(&self, pr: &PullRequest) -> String {
        let what = match Record::read(&pr.body) {
            Some(r) => {
                let updates: Vec<String> = r
                    .updates
                    .iter()
                    .map(|u| {
                        format!(
                            "{} {} → {} ({})",
                            quoted(&u.package),
                            quoted(&u.from),
                            quoted(&u.to),
                            u.update_type.as_str()
                        )
                    })
                    .collect();
                format!("{}; tests passed: {}", updates.join(", "), quoted(&r.test))
            }
            None => "no build record".to_string(),
        };
        let upkept = self
            .upkeep
            .iter()
            .find(|u| u.pull_request == Some(pr.number))
            .map(|u| match (u.action, u.status) {
                (UpkeepAction::Rebuild, Status::Done) => "; rebuilt by the latest run",
                (UpkeepAction::Rebuild, _) => "; the latest run could not rebuild it (below)",
                (UpkeepAction::LeaveAlone, _) => "; someone else committed to it: left alone",
                _ => "",
            })
            .unwrap_or_default();
        format!(
            "- [ ] #{} {what}; {}{upkept} {REBUILD}{} -->\n",
            pr.number,
            age(pr.created_at.as_deref(), self.now),
            pr.number
        )
    }

    /// What failed, was refused or was skipped: the actions, then the upkeep.
    fn trouble(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for a in self.actions.iter().filter(|a| a.status != Status::Done) {
            let what = match &a.branch {
                Some(branch) => format!(
                    "action {}, {} on {}",
                    a.index,
                    a.kind.as_str(),
                    quoted(branch)
                ),
                None => format!("action {}, {}", a.index, a.kind.as_str()),
            };
            let said = format!(
                "**{}**: {}",
                status_word(a.status),
                crate::sink::body_line(&a.reason, false)
            );
            let record = self.records.iter().find(|(i, _)| *i == a.index);
            lines.push(match record.and_then(|(_, r)| r.marker()) {
                Some(marker) => format!("- [ ] Retry {what}: {said} {marker}\n"),
                None => format!("- {what}: {said}\n"),
            });
        }
        for u in self
            .upkeep
            .iter()
            .filter(|u| matches!(u.status, Status::Failed | Status::Denied))
        {
            let on = u
                .pull_request
                .map_or_else(|| "upkeep".to_string(), |n| format!("upkeep of #{n}"));
            lines.push(format!(
                "- {on} ({}): **{}**: {}\n",
                u.action.as_str(),
                status_word(u.status),
                crate::sink::body_line(&u.reason, false)
            ));
        }
        lines
    }
}

fn status_word(status: Status) -> &'static str {
    match status {
        Status::Done => "done",
        Status::Failed => "failed",
        Status::Skipped => "skipped",
        Status::Denied => "denied",
        Status::Partial => "partial",
        Status::Cancelled => "cancelled",
    }
}

/// How long ago a PR was opened, in days.
fn age(created_at: Option<&str>, now: SystemTime) -> String {
    let Some(opened) = created_at.and_then(|t| humantime::parse_rfc3339_weak(t).ok()) else {
        return "opened at a time the forge did not say".to_string();
    };
    let days = now
        .duration_since(opened)
        .unwrap_or(Duration::ZERO)
        .as_secs()
        / 86_400;
    match days {
        0 => "opened today".to_string(),
        1 => "opened 1 day ago".to_string(),
        n => format!("opened {n} days ago"),
    }
}

/// After the plan's actions: reads what the dashboard asks, looks after the open PRs, retries
/// what was asked, and writes the dashboard.
pub(super) async fn look_after(
    run: &RunContext<'_>,
    slot: &mut WorkerSlot,
    mission: &Mission,
    everything: bool,
    ran: &mut RunReports,
) {
    let cancelled = || crate::harden::cancelled().is_some();
    if cancelled() {
        return;
    }
    let found = if everything {
        find_dashboard(run).await
    } else {
        Ok(None)
    };
    let issue = match found {
        Ok(issue) => issue,
        Err(stop) => {
            ran.upkeep.push(dashboard_failure(&stop.reason));
            None
        }
    };
    let wish = issue.as_ref().map(|i| asked(&i.body)).unwrap_or_default();
    let upkeep = Upkeep {
        mission,
        actions: &ran.actions,
        rebuild: wish.rebuild,
        everything,
    };
    let (mut reports, open) = upkeep::upkeep(run, slot, &upkeep).await;
    for record in &wish.retry {
        if cancelled() {
            break;
        }
        reports.push(rebuild::retry(run, slot, record, mission).await);
    }
    // The PRs listed before upkeep are still the open ones, unless it closed or opened some.
    let changed = reports.iter().any(|r| {
        r.status == Status::Done
            && matches!(
                r.action,
                UpkeepAction::Close | UpkeepAction::Supersede | UpkeepAction::Retry
            )
    });
    let open = open.filter(|_| !changed);
    ran.upkeep.extend(reports);
    if everything && !cancelled() {
        match write_dashboard(run, issue, open, ran).await {
            Ok(written) => ran.dashboard = written,
            Err(stop) => ran.upkeep.push(dashboard_failure(&stop.reason)),
        }
    }
}

async fn find_dashboard(run: &RunContext<'_>) -> Result<Option<Issue>, super::stop::Stop> {
    Ok(run
        .forge
        .find_open_issue(TITLE, &run.settings.bot_label, MARKER)
        .await?)
}

/// Writes the dashboard (not in a dry run): creates it, or edits the open one.
async fn write_dashboard(
    run: &RunContext<'_>,
    issue: Option<Issue>,
    open: Option<Vec<PullRequest>>,
    ran: &RunReports,
) -> Result<Option<IssueRef>, super::stop::Stop> {
    let open = match open {
        Some(open) => open,
        None => {
            run.forge
                .open_pull_requests(&run.settings.bot_label)
                .await?
        }
    };
    let open: Vec<PullRequest> = open
        .into_iter()
        .filter(|pr| ownership::check_owned(run, pr).is_ok())
        .collect();
    let records = retry_records(run, &ran.actions);
    let body = DashboardView {
        open: &open,
        actions: &ran.actions,
        records: &records,
        upkeep: &ran.upkeep,
        default_branch: &run.plan.plan().repo_context.default_branch,
        now: SystemTime::now(),
    }
    .render();
    if run.settings.dry_run {
        run.progress
            .line("upkeep: dry run: the dependency dashboard was not written");
        return Ok(None);
    }
    let (issue, operation) = match issue {
        Some(issue) if issue.body == body => (issue, Operation::Unchanged),
        Some(issue) => (
            run.forge.update_issue_body(issue.number, &body).await?,
            Operation::Updated,
        ),
        None => {
            let new = NewIssue {
                title: TITLE.to_string(),
                body,
                labels: vec![run.settings.bot_label.clone()],
            };
            (run.forge.create_issue(&new).await?, Operation::Created)
        }
    };
    run.progress.line(&format!(
        "upkeep: dependency dashboard #{} {}",
        issue.number,
        operation.as_str()
    ));
    Ok(Some(IssueRef {
        number: issue.number,
        url: issue.url,
        operation,
    }))
}

/// The records of this run's `create_mr` and `update_mr` actions that did not land whole:
/// the updates that did not land, and the commands that apply them.
fn retry_records(run: &RunContext<'_>, actions: &[ActionReport]) -> Vec<(usize, Record)> {
    let failed =
        |a: &&ActionReport| matches!(a.status, Status::Failed | Status::Denied | Status::Partial);
    let mut out = Vec::new();
    for a in actions.iter().filter(failed) {
        let (action, recipe) = match run.plan.step(a.index) {
            Some(Step::CreateMr(c, recipe)) => (Planned::Create(c), recipe),
            Some(Step::UpdateMr(u, recipe)) => (Planned::Update(u), recipe),
            _ => continue,
        };
        let landed: BTreeSet<&str> = a
            .updates
            .iter()
            .filter(|u| u.landed)
            .map(|u| u.package.as_str())
            .collect();
        let (branch, title, working_dir, labels, updates) = match action {
            Planned::Create(c) => (
                &c.branch,
                c.title.clone(),
                &c.working_dir,
                c.labels.clone(),
                &c.updates,
            ),
            Planned::Update(u) => (
                &u.branch,
                format!("Update {}", u.branch),
                &u.working_dir,
                u.labels.clone().unwrap_or_default(),
                &u.updates,
            ),
        };
        let updates: Vec<_> = updates
            .iter()
            .filter(|u| !landed.contains(u.package.as_str()))
            .collect();
        let unit = BranchUnit {
            branch: branch.clone(),
            title,
            split: None,
            commands: recipe
                .commands
                .iter()
                .filter(|c| {
                    c.package
                        .as_ref()
                        .is_none_or(|p| updates.iter().any(|u| u.package == *p))
                })
                .collect(),
            updates,
        };
        let built = super::record::RecordSource {
            unit: &unit,
            mission: run.plan.mission(),
            test: &recipe.test.text,
            working_dir: working_dir.as_deref(),
            labels: &labels,
        };
        out.push((a.index, Record::of(&built, None)));
    }
    out
}

fn dashboard_failure(reason: &str) -> UpkeepReport {
    UpkeepReport::new(None, "", UpkeepAction::Dashboard).finish(
        Status::Failed,
        format!("the dependency dashboard: {reason}"),
    )
}

#[cfg(test)]
mod tests;
