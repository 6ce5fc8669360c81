//! Update commands: an exact match of one of the mission's patterns, with `<pkg>` a declared
//! package of the action and `<ver>` its declared target.

use super::pattern::{self, Mismatch, Placeholders, Refusal};
use super::{EcosystemRules, Mission, UpdateCommand, grammar};
use crate::finding::{Code, clip};
use crate::plan::{Update, UpdateType};

impl Mission {
    /// Checks an update command of an action against the allowlist: exact pattern match, `<pkg>`
    /// valid and declared, `<ver>` valid and equal to its `to`, ecosystem declared in the plan.
    /// The argv is the command's words, or the matched entry's `runs` filled with what it bound.
    pub fn check_update_command(
        &self,
        command: &str,
        declared_ecosystems: &[String],
        updates: &[Update],
    ) -> Result<CommandMatch, Refusal> {
        let words = pattern::split(command)?;
        let program = words[0].as_str();
        let candidates: Vec<(&String, &EcosystemRules, &UpdateCommand)> = self
            .ecosystems
            .iter()
            .flat_map(|(name, eco)| {
                eco.commands
                    .iter()
                    .filter(move |p| p.program() == program)
                    .map(move |p| (name, eco, p))
            })
            .collect();
        if candidates.is_empty() {
            return Err(self.program_not_allowed(program));
        }
        let mut best: Option<Mismatch> = None;
        for (eco_name, eco, pattern) in &candidates {
            let check = PlaceholderCheck {
                ecosystem: eco_name,
                eco,
                updates,
            };
            match pattern.form.match_update(&words, &check) {
                Ok(bound) => {
                    ecosystem_declared(eco_name, pattern, declared_ecosystems)?;
                    let argv = pattern
                        .argv(words, &bound)
                        .ok_or_else(|| unfillable(pattern))?;
                    let package = if pattern.maintenance {
                        Some(self.maintained_lock(eco_name, pattern, updates)?)
                    } else {
                        bound.package
                    };
                    return Ok(CommandMatch {
                        text: command.to_string(),
                        ecosystem: (*eco_name).clone(),
                        package,
                        refreshes_lock: pattern.maintenance,
                        pattern: pattern.source().to_string(),
                        argv,
                    });
                }
                Err(m) => Mismatch::keep_deepest(&mut best, m),
            }
        }
        let forms: Vec<&str> = candidates.iter().map(|(_, _, p)| p.source()).collect();
        Err(Mismatch::explain(
            best,
            Code::CommandNotAllowlisted,
            "no allowlisted pattern matches",
            program,
            &forms,
        ))
    }

    /// The lock file a lock-maintenance command refreshes: the package of the action's
    /// `lock_file_maintenance` update that names one of the ecosystem's files. The command is
    /// bound to that update, so that a split runs it in that update's unit alone.
    fn maintained_lock(
        &self,
        eco_name: &str,
        pattern: &UpdateCommand,
        updates: &[Update],
    ) -> Result<String, Refusal> {
        updates
            .iter()
            .filter(|u| u.update_type == UpdateType::LockFileMaintenance)
            .find(|u| self.files.owns(std::iter::once(eco_name), &u.package))
            .map(|u| u.package.clone())
            .ok_or_else(|| {
                Refusal::new(
                    Code::CommandNeedsLockMaintenance,
                    format!(
                        "`{}` refreshes every package of the {eco_name} lock file, and no update of this action declares that: only an update with update_type `lock_file_maintenance` whose package names the lock file ({}) allows it",
                        pattern.source(),
                        self.files.describe(std::iter::once(eco_name))
                    ),
                )
            })
    }

    fn program_not_allowed(&self, program: &str) -> Refusal {
        let programs: Vec<&str> = self.update_programs().into_iter().collect();
        let allowed = if programs.is_empty() {
            format!("the {} mission allows no update commands", self.name)
        } else {
            format!("update commands may start with: {}", programs.join(", "))
        };
        Refusal::new(
            Code::CommandProgramNotAllowed,
            format!(
                "`{}` is not an allowlisted program; {allowed}",
                clip(program)
            ),
        )
    }
}

/// A `runs` form that needs a value its form did not bind: ruled out when the mission loads, and
/// refused rather than run if it ever happened.
fn unfillable(command: &UpdateCommand) -> Refusal {
    Refusal::new(
        Code::CommandNotAllowlisted,
        format!(
            "the mission runs `{}` as `{}`, which needs a value the command did not give",
            command.source(),
            command.executed().source()
        ),
    )
}

/// A command may only use an ecosystem the plan declares.
fn ecosystem_declared(
    eco_name: &str,
    pattern: &UpdateCommand,
    declared: &[String],
) -> Result<(), Refusal> {
    if declared.iter().any(|e| e == eco_name) {
        return Ok(());
    }
    Err(Refusal::new(
        Code::CommandEcosystemNotDeclared,
        format!(
            "`{}` belongs to the {eco_name} ecosystem, which repo_context.ecosystems does not declare (it declares: {}); add it there or drop the command",
            pattern.source(),
            if declared.is_empty() {
                "none".to_string()
            } else {
                declared.join(", ")
            }
        ),
    ))
}

/// A matched update command: what to run and what it touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandMatch {
    /// The command as the plan wrote it, for messages and reports.
    pub text: String,
    /// The program and its arguments, exactly as they will be executed: the plan's words, or,
    /// when the matched allowlist entry has a `runs` form (`bundle update <pkg>` runs as
    /// `bundle lock --update <pkg>`), that form filled with what the plan's words bound.
    pub argv: Vec<String>,
    pub ecosystem: String,
    /// The declared package the command updates; `None` for commands such as `go mod tidy`; for
    /// a lock refresh, the lock file its `lock_file_maintenance` update names.
    pub package: Option<String>,
    /// A lock refresh (`cargo update`): it names no dependency.
    pub(crate) refreshes_lock: bool,
    /// The allowlist pattern it matched: the form the plan wrote (`argv` follows the entry's
    /// `runs` form when it has one).
    pub pattern: String,
}

/// Why `pip install` can never make a PR: said when validating and when a unit changed nothing.
const PIP_INSTALL_CHANGES_NO_FILE: &str = "pip install changes no file of the repository; use `pip-compile --upgrade-package <pkg>==<ver>` (requirements.txt) or `uv lock --upgrade-package <pkg>==<ver>` (uv.lock)";

impl CommandMatch {
    /// A cargo command whose `-p` names a package without the version to move, while the lock
    /// file (`lock_file`) holds it at `versions` (sorted, several): cargo refuses such a spec,
    /// so this is the refusal, with the form cargo asks for. `from` is the update's declared
    /// `from`, the copy to name when the lock holds it.
    pub(crate) fn ambiguity(
        &self,
        versions: &[String],
        from: &str,
        lock_file: &str,
    ) -> Option<Refusal> {
        if self.ecosystem != "cargo" || versions.len() < 2 {
            return None;
        }
        let spec = self.argv.iter().skip_while(|w| *w != "-p").nth(1)?;
        if spec.contains('@') {
            return None;
        }
        let copy = if versions.iter().any(|v| v == from) {
            from
        } else {
            "<from>"
        };
        let suggested = self
            .text
            .replacen(&format!("-p {spec}"), &format!("-p {spec}@{copy}"), 1);
        Some(Refusal::new(
            Code::CommandAmbiguousPackage,
            format!(
                "`{spec}` is locked at {} versions in {lock_file} ({}), so `{}` cannot tell which one to update: name the copy as cargo asks, `{suggested}`, with the update's `from` the locked version to move",
                versions.len(),
                versions.join(", "),
                self.text
            ),
        ))
    }

    /// Why the command cannot change a file of the repository, when it cannot: `pip install`
    /// installs into an environment, and a PR needs a changed requirements or lock file.
    pub fn changes_no_file(&self) -> Option<&'static str> {
        (self.argv.first().is_some_and(|p| p == "pip")
            && self.argv.get(1).is_some_and(|w| w == "install"))
        .then_some(PIP_INSTALL_CHANGES_NO_FILE)
    }
}

struct PlaceholderCheck<'a> {
    ecosystem: &'a str,
    eco: &'a EcosystemRules,
    updates: &'a [Update],
}

impl Placeholders for PlaceholderCheck<'_> {
    fn package(&self, name: &str) -> Result<(), Refusal> {
        if let Err(why) = self.eco.packages.check(name) {
            let code = if grammar::package_spec_kind(name).is_some() {
                Code::CommandPackageSpec
            } else if name.starts_with('-') {
                Code::CommandOptionInjection
            } else {
                Code::CommandInvalidPackage
            };
            return Err(Refusal::new(
                code,
                format!(
                    "`{}` is not a {} package: {why}",
                    clip(name),
                    self.ecosystem
                ),
            ));
        }
        if self.updates.iter().any(|u| u.package == name) {
            return Ok(());
        }
        let declared: Vec<&str> = self.updates.iter().map(|u| u.package.as_str()).collect();
        Err(Refusal::new(
            Code::CommandUndeclaredPackage,
            format!(
                "package `{}` is not declared in this action's `updates` (declared: {}); declare it or drop the command",
                clip(name),
                if declared.is_empty() {
                    "none".to_string()
                } else {
                    declared.join(", ")
                }
            ),
        ))
    }

    fn version(&self, package: &str, version: &str) -> Result<(), Refusal> {
        let to = self.declared(package, version, |u| &u.to)?;
        if to.contains(&version) {
            Ok(())
        } else {
            Err(Refusal::new(
                Code::CommandVersionMismatch,
                format!(
                    "version `{}` differs from the declared update of `{package}` (to: {}); the command must install exactly the declared version",
                    clip(version),
                    to.join(", ")
                ),
            ))
        }
    }

    fn declared_from(&self, package: &str, version: &str) -> Result<(), Refusal> {
        let from = self.declared(package, version, |u| &u.from)?;
        if from.contains(&version) {
            return Ok(());
        }
        Err(Refusal::new(
            Code::CommandFromMismatch,
            format!(
                "`{package}@{}` names the locked copy to update, which must be the update's declared `from` ({}); write `{package}@{}`",
                clip(version),
                from.join(", "),
                from.first().copied().unwrap_or_default()
            ),
        ))
    }
}

impl PlaceholderCheck<'_> {
    /// `field` (`to`, `from`) of each declared update of `package`, once `version` is known to
    /// be a valid version of the ecosystem.
    fn declared(
        &self,
        package: &str,
        version: &str,
        field: fn(&Update) -> &String,
    ) -> Result<Vec<&str>, Refusal> {
        if let Err(why) = self.eco.versions.check(version) {
            return Err(Refusal::new(
                Code::CommandInvalidVersion,
                format!(
                    "`{}` is not a {} version: {why}",
                    clip(version),
                    self.ecosystem
                ),
            ));
        }
        Ok(self
            .updates
            .iter()
            .filter(|u| u.package == package)
            .map(|u| field(u).as_str())
            .collect())
    }
}
