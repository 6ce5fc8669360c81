//! The plan's rules, part by part: the repository context, each action, and across actions.

use super::changes::{self, Matched};
use super::text::{body, id, labels, relative_path, title, too_long};
use super::view::{ContextView, View};
use super::{KNOWN_ECOSYSTEMS, MAX_UPDATE_FIELD};
use crate::finding::{Code, Finding, Pointer, clip, closest};
use crate::mission::Mission;
use crate::plan::{self, branch};
use std::collections::BTreeMap;

/// Rules for `repo_context`.
pub(super) fn repo_context(
    ctx: &ContextView,
    mission: &Mission,
    at: &Pointer,
    out: &mut Vec<Finding>,
) {
    let known: Vec<&str> = KNOWN_ECOSYSTEMS
        .iter()
        .copied()
        .chain(mission.ecosystems.keys().map(String::as_str))
        .collect();
    let ecosystems = &ctx.ecosystems;
    for (i, eco) in ecosystems.iter().enumerate() {
        if !known.contains(&eco.as_str()) {
            let mut sorted = known.clone();
            sorted.sort_unstable();
            sorted.dedup();
            let hint = closest(eco, &sorted)
                .map(|n| format!("did you mean `{n}`? "))
                .unwrap_or_default();
            out.push(Finding::error(
                at.key("ecosystems").index(i),
                Code::UnknownEcosystem,
                format!(
                    "unknown ecosystem `{}`; {hint}known: {}",
                    clip(eco),
                    sorted.join(", ")
                ),
            ));
        }
    }
    if let Some(test) = &ctx.test_command
        && let Err(r) = mission.check_test_command(test)
    {
        out.push(Finding::error(at.key("test_command"), r.code, r.message));
    }
    if let Some(default_branch) = &ctx.default_branch
        && let Some(problem) = branch::ref_problem(default_branch)
    {
        out.push(Finding::error(
            at.key("default_branch"),
            Code::DefaultBranchInvalid,
            format!(
                "`{}` is not a valid branch name: {problem}",
                clip(default_branch)
            ),
        ));
    }
    for (i, file) in ctx.lock_files.iter().enumerate() {
        let at = at.key("lock_files").index(i);
        let before = out.len();
        relative_path(file, &at, out);
        if out.len() == before && !mission.owns_file(ecosystems.iter().map(String::as_str), file) {
            out.push(Finding::warning(
                at,
                Code::LockFileNotCommitted,
                format!(
                    "`{}` is not a dependency file of the declared ecosystems, so Quartermaster would refuse a branch that changes it; the files it commits: {}",
                    clip(file),
                    mission.files_of(ecosystems.iter().map(String::as_str))
                ),
            ));
        }
    }
}

/// Rules for one action; for those that run commands, what their commands matched.
pub(crate) fn action_rules(
    view: &View,
    mission: &Mission,
    declared: &[String],
    at: &Pointer,
    out: &mut Vec<Finding>,
) -> Option<Matched> {
    let kind = view.kind();
    if !mission.action_types.contains(&kind) {
        let allowed: Vec<&str> = mission.action_types.iter().map(|t| t.as_str()).collect();
        out.push(Finding::error(
            at.key("type"),
            Code::ActionNotAllowed,
            format!(
                "the {} mission does not allow {kind} actions; it allows: {}",
                mission.name,
                allowed.join(", ")
            ),
        ));
    }
    if let Some(confidence) = view.confidence
        && !(0.0..=1.0).contains(&confidence)
    {
        out.push(Finding::error(
            at.key("confidence"),
            Code::ConfidenceOutOfRange,
            format!("confidence must be between 0 and 1, found {confidence}"),
        ));
    }
    for (name, value) in &view.ids {
        id(*value, &at.key(name), out);
    }
    if let Some(b) = &view.branch {
        branch::check(b, &at.key("branch"), out);
    }
    if let Some(t) = &view.title {
        title(t, &at.key("title"), out);
    }
    for (name, text, required) in &view.texts {
        body(text, &at.key(name), *required, out);
    }
    if let Some(l) = &view.labels {
        labels(l, &at.key("labels"), out);
    }
    if let Some(p) = &view.skipped_package {
        if p.trim().is_empty() {
            out.push(Finding::error(
                at.key("package"),
                Code::TextEmpty,
                "name the package (or other item) being skipped",
            ));
        } else if p.chars().count() > MAX_UPDATE_FIELD {
            out.push(too_long(at.key("package"), MAX_UPDATE_FIELD));
        }
    }
    view.changes_files()
        .then(|| changes::check(view, mission, declared, at, out))
}

/// Rules across actions: branches that collide, packages updated twice in one directory.
pub(crate) fn cross_action_rules(views: &[(usize, View)], out: &mut Vec<Finding>) {
    let root = Pointer::root();
    // Every branch an action may push: its own, and for split strategies one per update.
    let mut taken: Vec<(usize, String, String)> = Vec::new();
    let mut packages: BTreeMap<(&str, &str), Pointer> = BTreeMap::new();
    for (index, view) in views.iter().filter(|(_, v)| v.changes_files()) {
        let at = root.key("actions").index(*index);
        if let Some(branch) = view.branch.as_deref() {
            let mut mine = vec![(branch.to_string(), "branch".to_string())];
            if view.splits {
                let packages = view.updates.iter().map(|u| u.package.as_str());
                for (u, name) in view
                    .updates
                    .iter()
                    .zip(plan::split_branches(branch, packages))
                {
                    mine.push((name, format!("split branch for `{}`", clip(&u.package))));
                }
            }
            for (name, what) in &mine {
                for (earlier, other, other_what) in &taken {
                    if other == name {
                        out.push(Finding::error(
                            at.key("branch"),
                            Code::BranchDuplicate,
                            format!(
                                "{what} `{}` is also the {other_what} of /actions/{earlier}; each action needs its own branches",
                                clip(name)
                            ),
                        ));
                    } else if branch::nests(other, name) || branch::nests(name, other) {
                        out.push(Finding::error(
                            at.key("branch"),
                            Code::BranchConflict,
                            format!(
                                "{what} `{}` and the {other_what} `{}` of /actions/{earlier} cannot both exist: git stores `a/b` as a directory, so `a` and `a/b` clash; rename one",
                                clip(name),
                                clip(other)
                            ),
                        ));
                    }
                }
            }
            taken.extend(mine.into_iter().map(|(n, w)| (*index, n, w)));
        }
        if !view.complete {
            continue;
        }
        let dir = view.working_dir.as_deref().unwrap_or("");
        for (j, u) in view.updates.iter().enumerate() {
            let here = at.key("updates").index(j).key("package");
            match packages.get(&(dir, u.package.as_str())) {
                Some(first) => out.push(Finding::warning(
                    here,
                    Code::UpdateDuplicatePackage,
                    format!(
                        "`{}` is also updated at {} in the same working directory; the two changes may conflict",
                        clip(&u.package),
                        first.as_str()
                    ),
                )),
                None => {
                    packages.insert((dir, u.package.as_str()), here);
                }
            }
        }
    }
}
