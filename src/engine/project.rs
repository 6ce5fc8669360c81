//! What the project must already have for a unit to run: every package its commands name declared
//! in the manifest, and the package.json script its test command runs.

use super::stop::Stop;
use super::unit::BranchUnit;
use crate::changes::{Ecosystem, Snapshot};
use crate::declarations;
use crate::mission::TestCommand;
use std::path::Path;

/// `before` is what the lock files held before any command ran, when they could be read.
pub(crate) fn check_project(
    unit: &BranchUnit<'_>,
    test: &TestCommand,
    (dir, working_dir): (&Path, Option<&str>),
    before: Option<&Snapshot>,
) -> Result<(), Stop> {
    let place = working_dir.unwrap_or("the repository root");
    for matched in &unit.commands {
        if let Some(package) = &matched.package
            && !matched.refreshes_lock
            && declarations::checks_declared(&matched.ecosystem, &matched.argv)
        {
            let locked = || {
                declarations::moves_locked(&matched.ecosystem, &matched.argv)
                    && before.is_some_and(|b| locks(b, &matched.ecosystem, package))
            };
            match declarations::declares_dependency(&matched.ecosystem, dir, package) {
                Ok(true) => {}
                Ok(false) if locked() => {}
                Ok(false) => {
                    let field = declarations::declared_where(&matched.ecosystem)
                        .map(|w| format!(" ({w})"))
                        .unwrap_or_default();
                    return Err(Stop::denied(format!(
                        "`{package}` is not a dependency the project declares in {place}{field}: Quartermaster updates dependencies, it does not add new ones"
                    )));
                }
                Err(why) => {
                    return Err(Stop::denied(format!(
                        "cannot confirm that `{package}` is a declared dependency: {why}"
                    )));
                }
            }
        }
    }
    match project_script(test) {
        Some(script) => match declarations::declares_script(dir, script) {
            Ok(true) => Ok(()),
            Ok(false) => Err(Stop::denied(format!(
                "`{}`: package.json in {place} has no script `{script}`; only the project's own scripts run",
                test.text
            ))),
            Err(why) => Err(Stop::denied(format!("`{}`: {why}", test.text))),
        },
        None => Ok(()),
    }
}

/// A cargo command naming a package the lock holds in several versions without the one to move
/// would fail; it is refused before anything runs, with the form to use.
pub(crate) fn check_specs(unit: &BranchUnit<'_>, before: &Snapshot) -> Result<(), Stop> {
    for matched in &unit.commands {
        let Some(package) = &matched.package else {
            continue;
        };
        let (versions, lock_file) = before.locked_versions(Ecosystem::Cargo, package);
        let from = unit
            .updates
            .iter()
            .find(|u| u.package == *package)
            .map_or("", |u| u.from.as_str());
        if let Some(refusal) = matched.ambiguity(&versions, from, lock_file) {
            return Err(Stop::failed(format!(
                "[{}] {}; nothing ran",
                refusal.code, refusal.message
            )));
        }
    }
    Ok(())
}

/// Whether `before`'s lock files of `ecosystem` hold `package`, as a transitive package or not.
fn locks(before: &Snapshot, ecosystem: &str, package: &str) -> bool {
    Ecosystem::from_name(ecosystem)
        .and_then(|e| before.ecosystems.get(&e).map(|s| (e, s)))
        .is_some_and(|(e, s)| {
            let name = e.normalize_name(package);
            s.packages.iter().any(|p| p.name == name)
        })
}

/// The package.json script a JavaScript test command runs: `npm run <script>`, or the implied
/// `test` of `npm test`, `yarn test`, `pnpm test`. (`bun test` is bun's own runner.)
fn project_script(test: &TestCommand) -> Option<&str> {
    let program = test.argv.first().map(String::as_str)?;
    if !matches!(program, "npm" | "yarn" | "pnpm" | "bun") {
        return None;
    }
    test.script.as_deref().or_else(|| {
        let subcommand = test.argv.iter().skip(1).find(|w| !w.starts_with('-'));
        (program != "bun" && subcommand.is_some_and(|w| w == "test")).then_some("test")
    })
}
