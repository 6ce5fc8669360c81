//! Rules for the actions that run commands (`create_mr`, `update_mr`): updates, commands, the test
//! command, the working directory. What matched is kept: it is what the engine runs.

use super::text::relative_path;
use super::view::View;
use super::{MAX_COMMANDS, MAX_UPDATE_FIELD, MAX_UPDATES};
use crate::finding::{Code, Finding, Pointer, clip};
use crate::mission::{CommandMatch, Mission, TestCommand};
use crate::plan::{Update, UpdateType};
use std::collections::HashMap;

/// The commands and the test command of one action, as the mission matched them; `None` where a
/// command or the test command was refused.
pub(crate) struct Matched {
    pub commands: Option<Vec<CommandMatch>>,
    pub test: Option<TestCommand>,
}

pub(super) fn check(
    view: &View,
    mission: &Mission,
    declared: &[String],
    at: &Pointer,
    out: &mut Vec<Finding>,
) -> Matched {
    let updates = &view.updates;
    if view.complete && updates.is_empty() {
        out.push(Finding::error(
            at.key("updates"),
            Code::UpdatesEmpty,
            "no updates: declare each dependency this action updates (package, from, to, update_type), or, to refresh a whole lock file, one `lock_file_maintenance` update naming it; Quartermaster publishes only changes it can check against what was declared",
        ));
    }
    if updates.len() > MAX_UPDATES {
        out.push(Finding::error(
            at.key("updates"),
            Code::TooMany,
            format!(
                "{} updates; at most {MAX_UPDATES} per action: split them across actions",
                updates.len()
            ),
        ));
    }
    if view.complete {
        for (j, u) in updates.iter().enumerate() {
            update(u, &at.key("updates").index(j), out);
        }
    }
    let commands = view
        .commands
        .as_ref()
        .and_then(|c| commands(c, mission, declared, updates, at, out));
    if view.complete {
        unapplied(view, mission, commands.as_deref(), at, out);
    }
    let test = view.test_command.as_ref().and_then(|test| {
        mission
            .check_test_command(test)
            .map_err(|r| out.push(Finding::error(at.key("test_command"), r.code, r.message)))
            .ok()
    });
    if let Some(dir) = &view.working_dir {
        relative_path(dir, &at.key("working_dir"), out);
    }
    Matched { commands, test }
}

/// Matches every command; `None` when one was refused.
fn commands(
    commands: &[String],
    mission: &Mission,
    declared: &[String],
    updates: &[Update],
    at: &Pointer,
    out: &mut Vec<Finding>,
) -> Option<Vec<CommandMatch>> {
    if commands.is_empty() {
        out.push(Finding::error(
            at.key("commands"),
            Code::CommandsEmpty,
            "no commands: list the allowlisted update commands that make this change",
        ));
    } else if commands.len() > MAX_COMMANDS {
        out.push(Finding::error(
            at.key("commands"),
            Code::TooMany,
            format!(
                "{} commands; at most {MAX_COMMANDS} per action",
                commands.len()
            ),
        ));
    }
    let mut matched = Vec::with_capacity(commands.len());
    let mut all = true;
    for (k, command) in commands.iter().enumerate() {
        match mission.check_update_command(command, declared, updates) {
            Ok(m) => {
                if let Some(why) = m.changes_no_file() {
                    out.push(Finding::warning(
                        at.key("commands").index(k),
                        Code::CommandChangesNoFile,
                        why,
                    ));
                }
                matched.push(m);
            }
            Err(r) => {
                all = false;
                out.push(Finding::error(
                    at.key("commands").index(k),
                    r.code,
                    r.message,
                ));
            }
        }
    }
    all.then_some(matched)
}

/// Each declared update needs a command that applies it, with a version of that ecosystem.
fn unapplied(
    view: &View,
    mission: &Mission,
    matched: Option<&[CommandMatch]>,
    at: &Pointer,
    out: &mut Vec<Finding>,
) {
    // A refused command may have been the one meant to apply an update: say nothing more then.
    let Some(matched) = matched.filter(|_| view.commands.is_some()) else {
        return;
    };
    // package -> the ecosystem of the first command that applied it
    let mut applied: HashMap<&str, &str> = HashMap::new();
    for m in matched {
        if let Some(p) = &m.package {
            applied.entry(p).or_insert(&m.ecosystem);
        }
    }
    for (j, u) in view.updates.iter().enumerate() {
        match applied.get(u.package.as_str()) {
            Some(eco_name) => {
                // A lock refresh's `from` and `to` are labels, not versions.
                if u.update_type != UpdateType::LockFileMaintenance
                    && let Some(eco) = mission.ecosystems.get(*eco_name)
                    && let Err(why) = eco.versions.check(&u.to)
                {
                    out.push(Finding::error(
                        at.key("updates").index(j).key("to"),
                        Code::UpdateInvalidVersion,
                        format!("`{}` is not a {eco_name} version: {why}", clip(&u.to)),
                    ));
                }
            }
            None => out.push(Finding::warning(
                at.key("updates").index(j),
                Code::UpdateUnused,
                if u.update_type == UpdateType::LockFileMaintenance {
                    format!(
                        "no lock-maintenance command refreshes `{}`; add one (`cargo update`, `npm update`, ...) or drop the update",
                        clip(&u.package)
                    )
                } else {
                    format!(
                        "no command names `{}`; add its update command or drop the update",
                        clip(&u.package)
                    )
                },
            )),
        }
    }
}

fn update(u: &Update, at: &Pointer, out: &mut Vec<Finding>) {
    let field_problem = |value: &str, what: &str| -> Option<String> {
        if value.trim().is_empty() {
            Some(format!("the {what} is empty"))
        } else if value.chars().count() > MAX_UPDATE_FIELD {
            Some(format!(
                "the {what} is longer than {MAX_UPDATE_FIELD} characters"
            ))
        } else if value.chars().any(char::is_control) {
            Some(format!("the {what} contains control characters"))
        } else {
            None
        }
    };
    if let Some(p) = field_problem(&u.package, "package name") {
        out.push(Finding::error(
            at.key("package"),
            Code::UpdateInvalidPackage,
            p,
        ));
    } else if u.package.starts_with('-') || u.package.contains(char::is_whitespace) {
        out.push(Finding::error(
            at.key("package"),
            Code::UpdateInvalidPackage,
            format!(
                "`{}` is not a package name (no leading `-`, no spaces)",
                clip(&u.package)
            ),
        ));
    }
    for (field, value) in [("from", &u.from), ("to", &u.to)] {
        if let Some(p) = field_problem(value, "version") {
            out.push(Finding::error(at.key(field), Code::UpdateInvalidVersion, p));
        }
    }
    let same_is_normal = matches!(
        u.update_type,
        UpdateType::Digest
            | UpdateType::PinDigest
            | UpdateType::Pin
            | UpdateType::LockFileMaintenance
    );
    if u.from == u.to && !same_is_normal {
        out.push(Finding::warning(
            at.key("to"),
            Code::UpdateSameVersion,
            format!(
                "`from` and `to` are both `{}`; a {:?} update changes the version",
                clip(&u.to),
                u.update_type
            ),
        ));
    }
}
