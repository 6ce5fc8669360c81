//! Rebuilding a PR from its record, and retrying an update the dependency dashboard asks for.
//! A record is untrusted text: it becomes a one-action plan (`update_mr` on the PR, or
//! `create_mr`), validated against the mission like any plan, and run by the code that runs a
//! plan's action, so a rebuild is re-verified and re-tested exactly like a new unit.

use super::super::comment;
use super::super::git_state;
use super::super::record::Record;
use super::super::stop::Stop;
use super::super::{RunContext, WorkerSlot, create_mr, update_mr};
use super::quoted;
use crate::forge::{PullRequest, Target};
use crate::markdown::code;
use crate::mission::Mission;
use crate::plan::{ActionType, Plan};
use crate::report::{ActionReport, Status, UpkeepAction, UpkeepReport};
use crate::validate::{self, Step, ValidatedPlan};
use serde_json::{Value, json};

/// The description a retried update's PR gets (the plan's is not recorded).
const RETRIED: &str =
    "Retried from the dependency dashboard, from the build Quartermaster recorded when it failed.";

/// Why the PR must be rebuilt on the default branch's tip, if it must: it conflicts with
/// it, or the default branch changed the dependency files of its ecosystems since its base.
pub(in crate::engine) fn stale(
    run: &RunContext<'_>,
    pr: &PullRequest,
    record: &Record,
) -> Result<Option<String>, Stop> {
    let default = code(&run.plan.plan().repo_context.default_branch);
    let git = git_state::lock(run)?;
    let tip = *git
        .heads
        .get(&pr.head)
        .ok_or_else(|| Stop::failed(format!("its branch {} no longer exists", pr.head)))?;
    let base = match git.mirror.commit_info(tip)?.parents.as_slice() {
        [base] => *base,
        _ => return Ok(Some(format!("its branch is not one commit on {default}"))),
    };
    if base == git.default_tip {
        return Ok(None);
    }
    // The base's tree is needed too, where history is fetched shallow.
    git.mirror.fetch_deep(&[pr.head.as_str()], 2)?;
    let compared = git.mirror.compare(base, git.default_tip, tip)?;
    drop(git);
    let list = |files: &[String]| files.iter().map(|f| code(f)).collect::<Vec<_>>().join(", ");
    if !compared.conflicts.is_empty() {
        return Ok(Some(format!(
            "it conflicts with {default} in {}",
            list(&compared.conflicts)
        )));
    }
    let ecosystems = || record.ecosystems.iter().map(String::as_str);
    let changed: Vec<String> = compared
        .changed_since
        .into_iter()
        .filter(|f| run.plan.files().owns(ecosystems(), f))
        .collect();
    Ok((!changed.is_empty()).then(|| {
        format!(
            "{default} changed {} since it was built, so its lock no longer applies",
            list(&changed)
        )
    }))
}

/// Rebuilds the PR on the default branch's tip from its record; a failure is said on the PR,
/// which stays as it was.
pub(in crate::engine) async fn rebuild(
    run: &RunContext<'_>,
    slot: &mut WorkerSlot,
    pr: PullRequest,
    record: &Record,
    why: &str,
    mission: &Mission,
) -> UpkeepReport {
    let mut report = UpkeepReport::new(Some(pr.number), &pr.head, UpkeepAction::Rebuild);
    let plan = match validated(&rebuild_plan(run.plan.plan(), &pr, record), record, mission) {
        Ok(plan) => plan,
        Err(stop) => return report.finish(stop.status, format!("{why}, but {}", stop.reason)),
    };
    let Some(Step::UpdateMr(a, recipe)) = plan.step(0) else {
        return report.finish(Status::Failed, "the rebuild plan holds no update_mr");
    };
    let mut scratch = ActionReport::new(0, ActionType::UpdateMr);
    let (lent, mut lent_slot) = lend(run, slot, &plan);
    let done = update_mr::update_mr(&lent, &mut lent_slot, a, recipe, &mut scratch).await;
    slot.workspace = lent_slot.workspace.take();
    report.commands = std::mem::take(&mut scratch.commands);
    report.test = scratch.test.take();
    let default = code(&run.plan.plan().repo_context.default_branch);
    match done {
        Ok((status, reason)) => {
            report.comments = scratch.comments;
            report.finish(status, format!("{why}; rebuilt on {default}: {reason}"))
        }
        Err(stop) => {
            if stop.status == Status::Failed && !run.settings.dry_run {
                let left = format!("; PR #{} was left as it was", pr.number);
                let text = format!(
                    "Quartermaster could not rebuild this PR on {default} ({why}): {}. The PR was left as it was.",
                    crate::sink::body_line(stop.reason.trim_end_matches(&left), false)
                );
                let tip = git_state::lock(run)
                    .map(|g| g.default_tip.to_string())
                    .unwrap_or_default();
                let key = format!("upkeep-rebuild-failed\n{tip}\n{}", stop.reason);
                let target = Target::PullRequest(pr.number);
                if let Err(e) = comment::own_comment(run, target, &text, &key, &mut scratch).await {
                    tracing::warn!("commenting on PR #{}: {}", pr.number, e.reason);
                }
            }
            report.comments = scratch.comments;
            report.finish(
                stop.status,
                format!("{why}; the rebuild failed: {}", stop.reason),
            )
        }
    }
}

/// Builds again an update that failed, from the record the dashboard kept of it.
pub(in crate::engine) async fn retry(
    run: &RunContext<'_>,
    slot: &mut WorkerSlot,
    record: &Record,
    mission: &Mission,
) -> UpkeepReport {
    let report = |pr| UpkeepReport::new(pr, &record.branch, UpkeepAction::Retry);
    let plan = match validated(&retry_plan(run.plan.plan(), record), record, mission) {
        Ok(plan) => plan,
        Err(stop) => return report(None).finish(stop.status, stop.reason),
    };
    let Some(Step::CreateMr(a, recipe)) = plan.step(0) else {
        return report(None).finish(Status::Failed, "the retry plan holds no create_mr");
    };
    let mut scratch = ActionReport::new(0, ActionType::CreateMr);
    let (lent, mut lent_slot) = lend(run, slot, &plan);
    let done = create_mr::create_mr(&lent, &mut lent_slot, a, recipe, &mut scratch).await;
    slot.workspace = lent_slot.workspace.take();
    let mut out = report(scratch.pull_requests.first().map(|p| p.number));
    out.commands = scratch.commands;
    out.test = scratch.test;
    let (status, reason) = done.unwrap_or_else(|stop| (stop.status, stop.reason));
    out.finish(
        status,
        format!("retried as the dependency dashboard asked: {reason}"),
    )
}

/// The contexts of a one-action plan, on this worker's slot and workspace (given back after).
fn lend<'a, 'p>(
    run: &RunContext<'a>,
    slot: &mut WorkerSlot,
    plan: &'p ValidatedPlan,
) -> (RunContext<'p>, WorkerSlot)
where
    'a: 'p,
{
    (
        RunContext {
            plan,
            forge: run.forge,
            settings: run.settings,
            progress: run.progress.scoped(false),
            sandbox: run.sandbox,
            git: run.git,
            warm_up: run.warm_up,
            bases: run.bases,
        },
        WorkerSlot {
            number: slot.number,
            workspace: slot.workspace.take(),
            force_build: true,
        },
    )
}

/// The record's plan, if the mission allows it: the record comes back from text anyone with
/// write access can edit.
fn validated(json: &str, record: &Record, mission: &Mission) -> Result<ValidatedPlan, Stop> {
    if record.mission != mission.name {
        return Err(Stop::denied(format!(
            "it was built under the mission {}, and this run's is {}",
            quoted(&record.mission),
            code(&mission.name)
        )));
    }
    let validation = validate::validate(json.as_bytes(), mission);
    let refusals: Vec<String> = validation.errors().map(|f| f.to_string()).collect();
    validation.plan.ok_or_else(|| {
        Stop::denied(format!(
            "its recorded build is not allowed by the mission {}: {}",
            code(&mission.name),
            refusals.join("; ")
        ))
    })
}

fn repo_context(plan: &Plan, record: &Record) -> Value {
    json!({
        "platform": plan.repo_context.platform,
        "ecosystems": record.ecosystems,
        "default_branch": plan.repo_context.default_branch,
    })
}

fn updates(record: &Record) -> Value {
    record
        .updates
        .iter()
        .map(|u| json!({"package": u.package, "from": u.from, "to": u.to, "update_type": u.update_type}))
        .collect()
}

/// An `update_mr` of the PR, from the default branch's tip, with the recorded build.
fn rebuild_plan(plan: &Plan, pr: &PullRequest, record: &Record) -> String {
    let mut action = json!({
        "type": "update_mr", "mr_id": pr.number, "branch": pr.head, "rebase_first": true,
        "updates": updates(record), "commands": record.commands, "test_command": record.test,
        "confidence": 1.0,
    });
    if let Some(dir) = &record.working_dir {
        action["working_dir"] = json!(dir);
    }
    if !record.labels.is_empty() {
        action["labels"] = json!(record.labels);
    }
    json!({"repo_context": repo_context(plan, record), "actions": [action]}).to_string()
}

/// A `create_mr` of the recorded update, on its branch.
fn retry_plan(plan: &Plan, record: &Record) -> String {
    let mut action = json!({
        "type": "create_mr", "branch": record.branch, "title": record.title,
        "description": RETRIED, "updates": updates(record), "commands": record.commands,
        "test_command": record.test, "labels": record.labels, "fallback_strategy": "batch",
        "confidence": 1.0,
    });
    if let Some(dir) = &record.working_dir {
        action["working_dir"] = json!(dir);
    }
    json!({"repo_context": repo_context(plan, record), "actions": [action]}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::record::RecordedUpdate;
    use crate::plan::UpdateType;

    fn plan() -> Plan {
        serde_json::from_value(json!({
            "repo_context": {"platform": "github", "ecosystems": ["cargo"], "default_branch": "main"},
            "actions": [{"type": "skip", "package": "serde", "reason": "held",
                         "reason_type": "human_hold", "confidence": 1}]
        }))
        .unwrap()
    }

    fn record(commands: &[&str]) -> Record {
        Record {
            mission: "deps".into(),
            branch: "quartermaster/farewell".into(),
            title: "Bump farewell".into(),
            ecosystems: vec!["cargo".into()],
            working_dir: None,
            updates: vec![RecordedUpdate {
                package: "farewell".into(),
                ecosystem: Some("cargo".into()),
                from: "2.0.0".into(),
                to: "2.0.1".into(),
                update_type: UpdateType::Patch,
            }],
            commands: commands.iter().map(|c| c.to_string()).collect(),
            test: "cargo test".into(),
            labels: vec![],
            api_commit: None,
        }
    }

    /// A retry box's record is validated like a plan: a forged command, a foreign mission or a
    /// branch outside `quartermaster/` runs nothing. The control: the record as written.
    #[test]
    fn a_forged_retry_record_is_refused_by_the_mission() {
        let mission = crate::mission::load("deps", None).unwrap();
        let good = record(&["cargo update -p farewell --precise 2.0.1"]);
        let valid = validated(&retry_plan(&plan(), &good), &good, &mission).unwrap();
        assert!(matches!(valid.step(0), Some(Step::CreateMr(..))));
        let forged = record(&["cargo install cargo-pwn"]);
        let refused = validated(&retry_plan(&plan(), &forged), &forged, &mission).unwrap_err();
        assert_eq!(refused.status, Status::Denied);
        assert!(
            refused.reason.contains("[command.not_allowlisted]"),
            "{}",
            refused.reason
        );
        let mut elsewhere = good.clone();
        elsewhere.branch = "main".into();
        let refused = validated(&retry_plan(&plan(), &elsewhere), &elsewhere, &mission);
        assert!(refused.unwrap_err().reason.contains("[branch.prefix]"));
        let mut foreign = good;
        foreign.mission = "other".into();
        let refused = validated(&retry_plan(&plan(), &foreign), &foreign, &mission).unwrap_err();
        insta::assert_snapshot!(refused.reason);
    }
}
