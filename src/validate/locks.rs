//! A rule only the repository can decide, applied when `validate` can read the checkout: a cargo
//! command naming a package its `Cargo.lock` holds in several versions, without the one to
//! update, is refused with the form to use (cargo would refuse it as it ran). Without a checkout
//! the run refuses it before the unit's commands run.

use super::{Step, Validation, document_order};
use crate::changes::{self, Ecosystem};
use crate::finding::{Finding, Pointer};
use std::path::Path;

/// `validation` with the findings the lock files of `checkout` add; a plan they find errors in
/// is no longer valid. A lock file that cannot be read adds nothing: the run reads it again.
pub(crate) fn against_checkout(mut validation: Validation, checkout: &Path) -> Validation {
    let Some(plan) = &validation.plan else {
        return validation;
    };
    let Ok(root) = checkout.canonicalize() else {
        return validation;
    };
    let mut found = Vec::new();
    for index in 0..plan.plan().actions.len() {
        let (updates, working_dir, recipe) = match plan.step(index) {
            Some(Step::CreateMr(a, r)) => (&a.updates, a.working_dir.as_deref(), r),
            Some(Step::UpdateMr(a, r)) => (&a.updates, a.working_dir.as_deref(), r),
            _ => continue,
        };
        if !recipe.commands.iter().any(|c| c.ecosystem == "cargo") {
            continue;
        }
        let dir = working_dir.map_or_else(|| root.clone(), |d| root.join(d));
        let Ok(snapshot) = changes::snapshot(&root, &dir, &["cargo"]) else {
            continue;
        };
        for (k, matched) in recipe.commands.iter().enumerate() {
            let Some(package) = &matched.package else {
                continue;
            };
            let (versions, lock_file) = snapshot.locked_versions(Ecosystem::Cargo, package);
            let from = updates
                .iter()
                .find(|u| u.package == *package)
                .map_or("", |u| u.from.as_str());
            if let Some(refusal) = matched.ambiguity(&versions, from, lock_file) {
                let at = Pointer::root()
                    .key("actions")
                    .index(index)
                    .key("commands")
                    .index(k);
                found.push(Finding::error(at, refusal.code, refusal.message));
            }
        }
    }
    if found.is_empty() {
        return validation;
    }
    validation.findings.extend(found);
    validation
        .findings
        .sort_by_key(|f| document_order(&f.pointer));
    validation.plan = None;
    validation
}
