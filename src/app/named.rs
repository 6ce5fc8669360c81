//! A docker-agent named plan around a run: claimed before it (`ready` becomes `in-progress`),
//! answered after it (the result plan, then the status `done`, `failed` or `invalid`), and still
//! answered `failed` when a signal stops the run in between.

use super::SetupError;
use crate::ci::progress::Progress;
use crate::config::NamedPlanConfig;
use crate::harden::lock;
use crate::named_plan::{
    Claim, PlanName, PlanStatus, PlanStore, StoreError, plan_json, result_content,
};
use crate::report::RunReport;
use std::sync::{Arc, Mutex};

/// A claimed plan and the plan JSON its content holds. Whoever takes the claim out of its slot
/// answers it: the run when it ends, or the signal handler; the slot's lock makes that exactly one.
pub(crate) struct Claimed {
    slot: Arc<Mutex<Option<Pending>>>,
    plan: Vec<u8>,
}

/// A claim not answered yet.
struct Pending {
    store: PlanStore,
    claim: Claim,
    result: PlanName,
}

/// Claims the named plan: it must have the status asked for and still be at the revision just
/// read. Nothing is written on a refusal. From the claim on, a signal answers the plan `failed`.
pub(crate) fn claim(config: &NamedPlanConfig, progress: &Progress) -> Result<Claimed, SetupError> {
    let slot: Arc<Mutex<Option<Pending>>> = Arc::default();
    let answer = slot.clone();
    crate::harden::on_signal(Box::new(move |signal| {
        if let Some(pending) = lock(&answer).take() {
            for e in pending.interrupted(signal) {
                eprintln!("{}", crate::sink::terminal(&crate::hint::render(&e)));
            }
        }
    }))?;
    let store = PlanStore::new(&config.dir);
    let read = store.read(&config.name)?;
    // Held while claiming, so that a signal arriving meanwhile finds the claim once it is made.
    let mut pending = lock(&slot);
    let claim = store.claim(&config.name, Some(read.revision()), &config.claim_status)?;
    progress.line(&format!(
        "quartermaster: claimed plan {} at revision {} in {}",
        config.name,
        claim.revision(),
        config.dir.display()
    ));
    let plan = plan_json(claim.plan().content()).into_owned().into_bytes();
    *pending = Some(Pending {
        store,
        claim,
        result: config.result.clone(),
    });
    drop(pending);
    Ok(Claimed { slot, plan })
}

impl Claimed {
    /// The plan JSON to validate and run: the content, or its first fenced `json` block.
    pub(crate) fn plan(&self) -> &[u8] {
        &self.plan
    }

    /// Answers the plan from the run's report: the result plan first, so that it is in place when
    /// the status says the run ended. Every write is attempted; what failed is returned.
    pub(crate) fn finish(self, report: &RunReport, progress: &Progress) -> Vec<StoreError> {
        let Some(pending) = lock(&self.slot).take() else {
            return Vec::new();
        };
        let outcome = PlanStatus::from_run(report.validation.valid, report.exit_code);
        let content = result_content(&report.to_markdown(), &report.to_json());
        let errors = pending.answer(outcome, &content);
        if errors.is_empty() {
            progress.line(&format!(
                "quartermaster: plan {} is {outcome}; the result is in plan {}",
                pending.claim.name(),
                pending.result
            ));
        }
        errors
    }
}

impl Pending {
    fn answer(&self, outcome: PlanStatus, content: &str) -> Vec<StoreError> {
        let result = self.store.write_result(&self.result, outcome, content);
        let status = self.store.finish(&self.claim, outcome);
        [result.err(), status.err()].into_iter().flatten().collect()
    }

    /// Answers a run a signal stopped: no report exists, so the result says what is known.
    fn interrupted(&self, signal: i32) -> Vec<StoreError> {
        let content = format!(
            "## Quartermaster\n\nThe run was interrupted by signal {signal} before it finished, so \
             no report was written. Actions it had started may be partly done: check the \
             repository's branches and pull requests before planning them again.\n"
        );
        self.answer(PlanStatus::Failed, &content)
    }
}
