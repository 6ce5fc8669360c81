//! A plan that passed every rule, with what its commands matched: the engine's only input.

use super::changes::Matched;
use crate::mission::{CommandMatch, FilePolicy, InstallCommand, Mission, TestCommand};
use crate::plan::{
    Action, CloseMr, CommentIssue, CommentMr, CreateIssue, CreateMr, Plan, Skip, UpdateMr,
};
use std::collections::{BTreeMap, BTreeSet};

/// What a `create_mr` or `update_mr` runs: its update commands and its test command, each as the
/// exact argv that matched the mission's allowlist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipe {
    pub commands: Vec<CommandMatch>,
    pub test: TestCommand,
}

impl Recipe {
    pub(super) fn from_matched(matched: Matched) -> Option<Self> {
        Some(Self {
            commands: matched.commands?,
            test: matched.test?,
        })
    }
}

/// One action of a valid plan, with its recipe where it runs commands.
#[derive(Debug, Clone, Copy)]
pub enum Step<'p> {
    CreateMr(&'p CreateMr, &'p Recipe),
    UpdateMr(&'p UpdateMr, &'p Recipe),
    CreateIssue(&'p CreateIssue),
    CommentMr(&'p CommentMr),
    CommentIssue(&'p CommentIssue),
    CloseMr(&'p CloseMr),
    Skip(&'p Skip),
}

/// A plan with no errors.
#[derive(Debug, Clone)]
pub struct ValidatedPlan {
    plan: Plan,
    recipes: BTreeMap<usize, Recipe>,
    files: FilePolicy,
    /// Each ecosystem's frozen install.
    installs: BTreeMap<String, Vec<InstallCommand>>,
    /// Each ecosystem's compile-only build of the tests, for the warm-up.
    prebuilds: BTreeMap<String, Vec<InstallCommand>>,
    mission: String,
}

impl ValidatedPlan {
    /// `None` unless every action that runs commands has its recipe (true of a plan without
    /// errors).
    pub(super) fn new(
        plan: Plan,
        recipes: BTreeMap<usize, Recipe>,
        mission: &Mission,
    ) -> Option<Self> {
        let complete = plan.actions.iter().enumerate().all(|(i, a)| {
            !matches!(a, Action::CreateMr(_) | Action::UpdateMr(_)) || recipes.contains_key(&i)
        });
        complete.then(|| Self {
            plan,
            recipes,
            files: mission.file_policy(),
            installs: mission
                .ecosystems
                .iter()
                .map(|(name, eco)| (name.clone(), eco.install.clone()))
                .collect(),
            prebuilds: mission
                .ecosystems
                .iter()
                .map(|(name, eco)| (name.clone(), eco.prebuild.clone()))
                .collect(),
            mission: mission.name.clone(),
        })
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The name of the mission it was validated against.
    pub fn mission(&self) -> &str {
        &self.mission
    }

    /// The files each ecosystem's commands may change.
    pub fn files(&self) -> &FilePolicy {
        &self.files
    }

    /// The frozen install of `ecosystem`: what builds a unit's test environment from its
    /// committed files.
    pub fn install(&self, ecosystem: &str) -> &[InstallCommand] {
        self.installs.get(ecosystem).map_or(&[], Vec::as_slice)
    }

    /// What the warm-up runs after `ecosystem`'s frozen install to build the tests.
    pub(crate) fn prebuild(&self, ecosystem: &str) -> &[InstallCommand] {
        self.prebuilds.get(ecosystem).map_or(&[], Vec::as_slice)
    }

    /// Each ecosystem the plan's units update, with the working directories they update it in.
    pub(crate) fn ecosystem_dirs(&self) -> BTreeSet<(&str, Option<&str>)> {
        self.recipes
            .iter()
            .flat_map(|(index, recipe)| {
                let dir = match self.plan.actions.get(*index) {
                    Some(Action::CreateMr(a)) => a.working_dir.as_deref(),
                    Some(Action::UpdateMr(a)) => a.working_dir.as_deref(),
                    _ => None,
                };
                recipe
                    .commands
                    .iter()
                    .map(move |c| (c.ecosystem.as_str(), dir))
            })
            .collect()
    }

    /// The programs the plan's commands and tests start, each once.
    pub fn programs(&self) -> Vec<String> {
        let mut programs: Vec<String> = self
            .recipes
            .values()
            .flat_map(|r| r.commands.iter().map(|c| &c.argv).chain([&r.test.argv]))
            .filter_map(|argv| argv.first().cloned())
            .collect();
        programs.sort();
        programs.dedup();
        programs
    }

    /// The actions in plan order.
    /// The action at `index`, with what validation made of it (`None` past the last).
    pub fn step(&self, index: usize) -> Option<Step<'_>> {
        let action = self.plan.actions.get(index)?;
        Some(self.make_step(index, action))
    }

    fn make_step<'p>(&'p self, index: usize, action: &'p Action) -> Step<'p> {
        // `new` checked that every action running commands has its recipe.
        let recipe = || &self.recipes[&index];
        match action {
            Action::CreateMr(a) => Step::CreateMr(a, recipe()),
            Action::UpdateMr(a) => Step::UpdateMr(a, recipe()),
            Action::CreateIssue(a) => Step::CreateIssue(a),
            Action::CommentMr(a) => Step::CommentMr(a),
            Action::CommentIssue(a) => Step::CommentIssue(a),
            Action::CloseMr(a) => Step::CloseMr(a),
            Action::Skip(a) => Step::Skip(a),
        }
    }
}
