//! The repository's policy on a unit's newly resolved versions, checked once the lock files are
//! verified and before the tests run: release age, known advisories, deprecations. A refusal
//! stops the unit (nothing is pushed); what passed is recorded for the report and the PR.

use super::RunContext;
use super::stop::Stop;
use super::unit::BranchUnit;
use crate::changes::Diff;
use crate::finding::Code;
use crate::report::{ActionReport, FindingRecord, ScreeningRecord};
use crate::supply::{self, judge::describe_advisory};

/// Applies the policy to what `diff` newly resolves; the refusal, if any.
pub(super) fn screen(
    run: &RunContext<'_>,
    unit: &BranchUnit<'_>,
    diff: &Diff,
    report: &mut ActionReport,
) -> Option<Stop> {
    let candidates = supply::newly_resolved(diff);
    if candidates.is_empty() {
        return None;
    }
    run.progress.step(&format!(
        "checking {} newly resolved version{} against the policy",
        candidates.len(),
        if candidates.len() == 1 { "" } else { "s" }
    ));
    let (screening, notes) = run.settings.screener.screen(candidates);
    for fix in &screening.fixes {
        run.progress.step(&format!(
            "security fix: {} {} → {} fixes {}",
            fix.package,
            fix.from,
            fix.to,
            describe_advisory(&fix.advisory)
        ));
    }
    if let Some(why) = &screening.advisories_unchecked {
        run.progress.step(&format!(
            "advisories not checked ({why}); the policy allows it (advisories.block = false)"
        ));
    }
    let refusals = screening.refusals.clone();
    if let Some(record) = report
        .changes
        .iter_mut()
        .rev()
        .find(|c| c.branch == unit.branch)
    {
        record
            .findings
            .extend(refusals.iter().map(|r| FindingRecord {
                code: r.code,
                package: (!r.package.is_empty()).then(|| r.package.clone()),
                message: r.message.clone(),
                blocking: true,
            }));
    }
    report.screening.push(ScreeningRecord {
        branch: unit.branch.clone(),
        screening,
        notes,
    });
    if refusals.is_empty() {
        return None;
    }
    let reason = refusals
        .iter()
        .map(|r| format!("[{}] {}", r.code, r.message))
        .collect::<Vec<_>>()
        .join("; ");
    let policy = refusals.iter().any(|r| {
        matches!(
            r.code,
            Code::PolicyReleaseTooNew | Code::PolicyVulnerable | Code::PolicyDeprecated
        )
    });
    let reason = format!("{reason}; no test ran and nothing was pushed");
    Some(if policy {
        Stop::denied(reason)
    } else {
        Stop::failed(reason)
    })
}

/// Whether the gates noted anything about `branch` that a reviewer should weigh (an
/// advisory or a withdrawal reported without refusing, advisories that were not checked, a
/// publish time that could not be learned): such a PR is never merged automatically.
pub(super) fn flagged(branch: &str, report: &ActionReport) -> bool {
    report
        .screening
        .iter()
        .filter(|r| r.branch == branch)
        .any(|r| {
            let s = &r.screening;
            !s.refusals.is_empty()
                || s.advisories_unchecked.is_some()
                || s.checked.iter().any(|c| {
                    !c.advisories.is_empty()
                        || c.withdrawn.is_some()
                        || c.age.starts_with("unknown age")
                })
        })
}

/// The PR text the gates add for `branch`: fixed advisories, what was checked, release
/// notes; and whether the update is a security fix.
pub(super) fn screening_text(
    run: &RunContext<'_>,
    branch: &str,
    report: &ActionReport,
) -> (String, bool) {
    let Some(record) = report.screening.iter().rev().find(|r| r.branch == branch) else {
        return (String::new(), false);
    };
    let text = supply::text::sections(
        &record.screening,
        &record.notes,
        &run.settings.screener.policy,
        run.settings.allow_mentions,
    );
    (text, record.screening.is_security_fix())
}
