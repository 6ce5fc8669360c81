//! Every rule a plan must satisfy before anything runs.
//!
//! The seed schema's rules (branch prefix, allowlisted commands, test runners, confidence, at most
//! 20 actions, relative `working_dir`, duplicate-package warnings) plus ours (DESIGN.md §3): valid
//! and unique git branch names, normalised paths that stay inside the checkout, label and text
//! limits the forges enforce, and the mission's allowed action types. All findings are reported
//! together so an agent can fix its plan in one round.

use crate::finding::{Code, Finding, Pointer, clip, closest};
use crate::mission::Mission;
use crate::plan::{self, ActionType, FallbackStrategy, Parsed, Plan, Update, UpdateType};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// The seed's limit on actions per plan.
pub const MAX_ACTIONS: usize = 20;
/// Commands per action; more is a sign of a confused plan, and each one is a process.
pub const MAX_COMMANDS: usize = 20;
/// Updates per action; a PR body lists them all.
pub const MAX_UPDATES: usize = 50;
/// Labels per action.
pub const MAX_LABELS: usize = 20;
/// GitHub's limit on label names.
pub const MAX_LABEL_CHARS: usize = 50;
/// GitLab's limit on titles (GitHub allows 256).
pub const MAX_TITLE_CHARS: usize = 255;
/// GitHub limits bodies and comments to 65,536 characters; the rest is kept for Quartermaster's
/// hidden marker and footer.
pub const MAX_BODY_CHARS: usize = 60_000;
/// Branch names are bounded so that split branches (`<branch>--<package>`) stay within git's and
/// the forges' limits.
pub const MAX_BRANCH_BYTES: usize = 200;
/// Every branch Quartermaster writes lives under this prefix.
pub const BRANCH_PREFIX: &str = "quartermaster/";
/// Longest package name or version string in `updates`.
const MAX_UPDATE_FIELD: usize = 214;
/// Ecosystems a plan may mention even if the active mission has no commands for them.
pub const KNOWN_ECOSYSTEMS: &[&str] = &[
    "go", "npm", "yarn", "pnpm", "bun", "pip", "poetry", "bundle", "cargo",
];

/// The outcome of validating a plan.
#[derive(Debug, Clone)]
pub struct Validation {
    pub findings: Vec<Finding>,
    /// The plan, when it has no errors.
    pub plan: Option<Plan>,
}

impl Validation {
    pub fn is_valid(&self) -> bool {
        self.plan.is_some()
    }

    pub fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.is_error())
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| !f.is_error())
    }
}

/// Parses and validates plan bytes against a mission.
pub fn validate(bytes: &[u8], mission: &Mission) -> Validation {
    let (parsed, mut findings) = plan::parse(bytes);
    findings.extend(check(&parsed, mission));
    // Structural findings come first within each part; a stable sort by part keeps that order.
    findings.sort_by_key(|f| document_order(&f.pointer));
    let plan = if findings.iter().any(Finding::is_error) {
        None
    } else {
        parsed.into_plan()
    };
    Validation { findings, plan }
}

/// Orders pointers by the part of the plan they are in: the document itself, `repo_context`, then
/// each action by index.
fn document_order(pointer: &str) -> (u8, usize) {
    let mut parts = pointer.split('/').skip(1);
    match (parts.next(), parts.next().and_then(|i| i.parse().ok())) {
        (None, _) => (0, 0),
        (Some("repo_context"), _) => (1, 0),
        (Some("actions"), None) => (2, 0),
        (Some("actions"), Some(i)) => (3, i),
        (Some(_), _) => (0, 0),
    }
}

/// Applies every rule to what parsing recovered.
pub fn check(parsed: &Parsed, mission: &Mission) -> Vec<Finding> {
    let mut out = Vec::new();
    let root = Pointer::root();
    let context = match (&parsed.repo_context, &parsed.raw_repo_context) {
        (Some(ctx), _) => Some(serde_json::to_value(ctx).expect("a plan type serialises")),
        (None, Some(raw)) => Some(raw.clone()),
        (None, None) => None,
    };
    let declared: Vec<String> = match &context {
        Some(ctx) => {
            repo_context(ctx, mission, &root.key("repo_context"), &mut out);
            field(ctx, "ecosystems").unwrap_or_default()
        }
        // Without a readable context, do not pile "ecosystem not declared" on every command.
        None => mission.ecosystems.keys().cloned().collect(),
    };
    if parsed.action_count > MAX_ACTIONS {
        out.push(Finding::error(
            root.key("actions"),
            Code::PlanTooManyActions,
            format!(
                "the plan has {} actions; at most {MAX_ACTIONS} are allowed: split it into several plans",
                parsed.action_count
            ),
        ));
    }
    let mut views: Vec<(usize, View)> = parsed
        .actions
        .iter()
        .map(|(i, a)| {
            let value = serde_json::to_value(a).expect("a plan type serialises");
            (*i, View::new(a.action_type(), &value, true))
        })
        .chain(
            parsed
                .raw_actions
                .iter()
                .map(|(i, kind, value)| (*i, View::new(*kind, value, false))),
        )
        .collect();
    views.sort_by_key(|(i, _)| *i);
    for (index, view) in &views {
        let at = root.key("actions").index(*index);
        action_rules(view, mission, &declared, &at, &mut out);
    }
    cross_action_rules(&views, &mut out);
    out
}

/// The fields of one action that the rules look at, read from its JSON. For an action that did
/// not parse, each field is read on its own: a field that is itself broken stays `None` (the
/// structural check already reported it) and every other field is still checked.
struct View {
    kind: ActionType,
    /// Every field parsed: rules that compare fields with each other may run.
    complete: bool,
    branch: Option<String>,
    title: Option<String>,
    /// Free texts: field name, text, whether it must be non-empty.
    texts: Vec<(&'static str, String, bool)>,
    updates: Vec<Update>,
    commands: Option<Vec<String>>,
    test_command: Option<String>,
    labels: Option<Vec<String>>,
    working_dir: Option<String>,
    ids: Vec<(&'static str, u64)>,
    confidence: Option<f64>,
    skipped_package: Option<String>,
    /// `create_mr` only: whether the action may split into one branch per update.
    splits: bool,
}

impl View {
    fn new(kind: ActionType, value: &Value, complete: bool) -> Self {
        let text = |name: &'static str, required: bool| {
            field::<String>(value, name).map(|t| (name, t, required))
        };
        let texts = [
            text("description", false),
            text(
                "body",
                matches!(kind, ActionType::CommentMr | ActionType::CommentIssue),
            ),
            text("comment", true),
            text("reason", true),
        ]
        .into_iter()
        .flatten()
        .collect();
        let ids = ["mr_id", "issue_id"]
            .into_iter()
            .filter_map(|name| field::<u64>(value, name).map(|id| (name, id)))
            .collect();
        // Commands are matched against the declared updates even when an update is malformed:
        // whatever package and target it names still counts as declared.
        let updates = value
            .get("updates")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .map(|u| {
                        serde_json::from_value(u.clone()).unwrap_or_else(|_| Update {
                            package: field(u, "package").unwrap_or_default(),
                            from: field(u, "from").unwrap_or_default(),
                            to: field(u, "to").unwrap_or_default(),
                            update_type: UpdateType::Patch,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            kind,
            complete,
            branch: field(value, "branch"),
            title: field(value, "title"),
            texts,
            updates,
            commands: field(value, "commands"),
            test_command: field(value, "test_command"),
            labels: field(value, "labels"),
            working_dir: field(value, "working_dir"),
            ids,
            confidence: field(value, "confidence"),
            skipped_package: (kind == ActionType::Skip)
                .then(|| field(value, "package"))
                .flatten(),
            splits: kind == ActionType::CreateMr
                && matches!(
                    field(value, "fallback_strategy"),
                    Some(FallbackStrategy::Individual | FallbackStrategy::IndividualOnFailure)
                ),
        }
    }

    /// Whether the action runs commands (and so has updates, commands and a test command).
    fn changes_files(&self) -> bool {
        matches!(self.kind, ActionType::CreateMr | ActionType::UpdateMr)
    }
}

fn field<T: serde::de::DeserializeOwned>(value: &Value, name: &str) -> Option<T> {
    value
        .get(name)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}

fn repo_context(ctx: &Value, mission: &Mission, at: &Pointer, out: &mut Vec<Finding>) {
    let known: Vec<&str> = KNOWN_ECOSYSTEMS
        .iter()
        .copied()
        .chain(mission.ecosystems.keys().map(String::as_str))
        .collect();
    let ecosystems: Vec<String> = field(ctx, "ecosystems").unwrap_or_default();
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
    if let Some(test) = field::<String>(ctx, "test_command")
        && let Err(r) = mission.check_test_command(&test)
    {
        out.push(Finding::error(at.key("test_command"), r.code, r.message));
    }
    if let Some(default_branch) = field::<String>(ctx, "default_branch")
        && let Some(problem) = ref_problem(&default_branch)
    {
        out.push(Finding::error(
            at.key("default_branch"),
            Code::DefaultBranchInvalid,
            format!(
                "`{}` is not a valid branch name: {problem}",
                clip(&default_branch)
            ),
        ));
    }
    let lock_files: Vec<String> = field(ctx, "lock_files").unwrap_or_default();
    for (i, file) in lock_files.iter().enumerate() {
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

fn action_rules(
    view: &View,
    mission: &Mission,
    declared: &[String],
    at: &Pointer,
    out: &mut Vec<Finding>,
) {
    let kind = view.kind;
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
        branch(b, &at.key("branch"), out);
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
    if view.changes_files() {
        changes(view, mission, declared, at, out);
    }
}

/// Rules for the actions that run commands: updates, commands, test command, working directory.
fn changes(
    view: &View,
    mission: &Mission,
    declared: &[String],
    at: &Pointer,
    out: &mut Vec<Finding>,
) {
    let updates = &view.updates;
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
    // package -> the ecosystem of the first command that applied it
    let mut applied: HashMap<String, String> = HashMap::new();
    let mut all_matched = view.commands.is_some();
    if let Some(commands) = &view.commands {
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
        for (k, command) in commands.iter().enumerate() {
            match mission.check_update_command(command, declared, updates) {
                Ok(m) => {
                    if let Some(p) = m.package {
                        applied.entry(p).or_insert(m.ecosystem);
                    }
                }
                Err(r) => {
                    all_matched = false;
                    out.push(Finding::error(
                        at.key("commands").index(k),
                        r.code,
                        r.message,
                    ));
                }
            }
        }
    }
    if view.complete {
        for (j, u) in updates.iter().enumerate() {
            match applied.get(&u.package) {
                Some(eco_name) => {
                    if let Some(eco) = mission.ecosystems.get(eco_name)
                        && let Err(why) = eco.versions.check(&u.to)
                    {
                        out.push(Finding::error(
                            at.key("updates").index(j).key("to"),
                            Code::UpdateInvalidVersion,
                            format!("`{}` is not a {eco_name} version: {why}", clip(&u.to)),
                        ));
                    }
                }
                // A refused command may have been the one meant to apply it: say nothing more.
                None if !all_matched => {}
                None => out.push(Finding::warning(
                    at.key("updates").index(j),
                    Code::UpdateUnused,
                    format!(
                        "no command names `{}`; add its update command or drop the update",
                        clip(&u.package)
                    ),
                )),
            }
        }
    }
    if let Some(test) = &view.test_command
        && let Err(r) = mission.check_test_command(test)
    {
        out.push(Finding::error(at.key("test_command"), r.code, r.message));
    }
    if let Some(dir) = &view.working_dir {
        relative_path(dir, &at.key("working_dir"), out);
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

fn cross_action_rules(views: &[(usize, View)], out: &mut Vec<Finding>) {
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
                    } else if nests(other, name) || nests(name, other) {
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

fn nests(parent: &str, child: &str) -> bool {
    child
        .strip_prefix(parent)
        .is_some_and(|rest| rest.starts_with('/'))
}

fn branch(name: &str, at: &Pointer, out: &mut Vec<Finding>) {
    if !name.starts_with(BRANCH_PREFIX) || name.len() == BRANCH_PREFIX.len() {
        out.push(Finding::error(
            at,
            Code::BranchPrefix,
            format!(
                "branch `{}` must start with `{BRANCH_PREFIX}` followed by a name, e.g. `{BRANCH_PREFIX}go-patch-updates`",
                clip(name)
            ),
        ));
        return;
    }
    if let Some(problem) = ref_problem(name) {
        out.push(Finding::error(
            at,
            Code::BranchInvalidRef,
            format!("`{}` is not a valid git branch name: {problem}", clip(name)),
        ));
    } else if name.len() > MAX_BRANCH_BYTES {
        out.push(Finding::error(
            at,
            Code::TooLong,
            format!(
                "the branch name is {} bytes; at most {MAX_BRANCH_BYTES}",
                name.len()
            ),
        ));
    }
}

/// Why git would refuse `name` as a branch, or `None`. gix-validate applies git's ref-name rules
/// (as `git check-ref-format` does; libgit2 would too, but initialising it costs tens of
/// milliseconds of OpenSSL set-up that `validate` has no use for); `git branch` additionally
/// refuses `@` and a leading `-`.
pub fn ref_problem(name: &str) -> Option<String> {
    use gix_validate::reference::name::Error;
    if name == "@" {
        return Some("`@` alone means HEAD, not a branch".into());
    }
    if name.starts_with('-') {
        return Some("it starts with `-`".into());
    }
    let full = format!("refs/heads/{name}");
    let error = gix_validate::reference::branch_name(full.as_bytes().into()).err()?;
    Some(match error {
        Error::InvalidByte { byte } => format!("it contains {byte:?}"),
        Error::StartsWithSlash | Error::RepeatedSlash | Error::EndsWithSlash => {
            "it has an empty path component (leading, trailing or double `/`)".into()
        }
        Error::RepeatedDot => "it contains `..`".into(),
        Error::LockFileSuffix => "a component ends with `.lock`".into(),
        Error::ReflogPortion => "it contains `@{`".into(),
        Error::Asterisk => "it contains `*`".into(),
        Error::StartsWithDot => "a component starts with `.`".into(),
        Error::EndsWithDot => "it ends with `.`".into(),
        Error::Empty => "it is empty".into(),
        Error::Reserved { .. } => "`HEAD` is reserved".into(),
        _ => "git refuses it (see `git check-ref-format`)".into(),
    })
}

/// A path relative to the checkout, in normal form, outside `.git`.
fn relative_path(path: &str, at: &Pointer, out: &mut Vec<Finding>) {
    let mut fail = |code: Code, why: &str| {
        out.push(Finding::error(at, code, format!("`{}` {why}", clip(path))));
    };
    if path.is_empty() {
        return fail(
            Code::PathNotNormalized,
            "is empty; omit the field for the repository root",
        );
    }
    if path.len() > 4096 {
        return fail(Code::TooLong, "is longer than 4096 bytes");
    }
    if path.chars().any(char::is_control) {
        return fail(Code::PathInvalidChar, "contains control characters");
    }
    let bytes = path.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if path.starts_with('/') || path.starts_with('\\') || drive {
        return fail(
            Code::PathAbsolute,
            "is absolute; give a path relative to the repository root",
        );
    }
    if path.contains('\\') {
        return fail(
            Code::PathNotNormalized,
            "uses `\\`; separate components with `/`",
        );
    }
    let components: Vec<&str> = path.split('/').collect();
    if components.contains(&"..") {
        return fail(
            Code::PathParent,
            "climbs out with `..`; paths must stay inside the repository",
        );
    }
    if components.iter().any(|c| c.eq_ignore_ascii_case(".git")) {
        return fail(
            Code::PathGitDir,
            "points into `.git`; commands never run there",
        );
    }
    if components.iter().any(|c| c.is_empty() || *c == ".") {
        fail(
            Code::PathNotNormalized,
            "is not in normal form: no `.` components, no empty components, no trailing `/` (omit the field for the repository root)",
        );
    }
}

fn id(value: u64, at: &Pointer, out: &mut Vec<Finding>) {
    if value == 0 {
        out.push(Finding::error(
            at,
            Code::IdNotPositive,
            "ids start at 1: give the PR/MR or issue number",
        ));
    }
}

fn title(text: &str, at: &Pointer, out: &mut Vec<Finding>) {
    if text.trim().is_empty() {
        out.push(Finding::error(at, Code::TitleEmpty, "the title is empty"));
    } else if text.chars().count() > MAX_TITLE_CHARS {
        out.push(Finding::error(
            at,
            Code::TitleTooLong,
            format!(
                "the title has {} characters; the forges accept at most {MAX_TITLE_CHARS}",
                text.chars().count()
            ),
        ));
    } else if text.chars().any(char::is_control) {
        out.push(Finding::error(
            at,
            Code::TitleControlChar,
            "the title contains a line break or control character; titles are one line",
        ));
    }
}

fn body(text: &str, at: &Pointer, required: bool, out: &mut Vec<Finding>) {
    let chars = text.chars().count();
    if required && text.trim().is_empty() {
        out.push(Finding::error(at, Code::TextEmpty, "the text is empty"));
    } else if chars > MAX_BODY_CHARS {
        out.push(Finding::error(
            at,
            Code::BodyTooLong,
            format!(
                "{chars} characters; at most {MAX_BODY_CHARS} (GitHub's 65,536 less room for Quartermaster's marker): shorten it or link to details"
            ),
        ));
    }
}

fn labels(list: &[String], at: &Pointer, out: &mut Vec<Finding>) {
    if list.len() > MAX_LABELS {
        out.push(Finding::error(
            at,
            Code::TooMany,
            format!("{} labels; at most {MAX_LABELS}", list.len()),
        ));
    }
    for (i, label) in list.iter().enumerate() {
        let here = at.index(i);
        let problem = if label.is_empty() {
            Some((Code::LabelEmpty, "the label is empty".to_string()))
        } else if label.chars().count() > MAX_LABEL_CHARS {
            Some((
                Code::LabelTooLong,
                format!("labels are at most {MAX_LABEL_CHARS} characters"),
            ))
        } else if label.chars().any(char::is_control) {
            Some((
                Code::LabelControlChar,
                "the label contains control characters".to_string(),
            ))
        } else if label.contains(',') {
            Some((
                Code::LabelComma,
                "labels cannot contain `,` (GitLab splits label lists on commas): give each label separately".to_string(),
            ))
        } else if label.trim() != label {
            Some((
                Code::LabelWhitespace,
                "remove the leading or trailing white space".to_string(),
            ))
        } else {
            None
        };
        match problem {
            Some((code, why)) => out.push(Finding::error(
                here,
                code,
                format!("label `{}`: {why}", clip(label)),
            )),
            None => {
                if list[..i].contains(label) {
                    out.push(Finding::warning(
                        here,
                        Code::LabelDuplicate,
                        format!("label `{}` is listed twice", clip(label)),
                    ));
                }
            }
        }
    }
}

fn too_long(at: Pointer, max: usize) -> Finding {
    Finding::error(at, Code::TooLong, format!("longer than {max} characters"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ref_problems_are_explained() {
        assert_eq!(ref_problem("main"), None);
        assert_eq!(ref_problem("quartermaster/go-1.2"), None);
        for (name, why) in [
            ("", "empty"),
            ("a b", "\" \""),
            ("a~b", "\"~\""),
            ("a..b", "`..`"),
            ("a@{b", "`@{`"),
            ("a//b", "empty path component"),
            ("a/", "empty path component"),
            ("a*", "`*`"),
            ("a.", "ends with `.`"),
            ("a/.b", "starts with `.`"),
            ("a/b.lock", "`.lock`"),
            ("@", "`@` alone"),
            ("HEAD", "`HEAD` is reserved"),
            ("-x", "starts with `-`"),
        ] {
            let got = ref_problem(name).unwrap_or_default();
            assert!(got.contains(why), "{name:?}: {got}");
        }
    }

    /// The verdicts agree with git itself (where git is installed, as on every CI machine here).
    #[test]
    fn ref_verdicts_match_git_check_ref_format() {
        let names = [
            "main",
            "quartermaster/go-1.2",
            "release/v1",
            "a b",
            "a~b",
            "a^b",
            "a:b",
            "a?b",
            "a*b",
            "a[b",
            "a\\b",
            "a..b",
            "a@{b",
            "a@b",
            "a//b",
            "/a",
            "a/",
            "a.",
            "a/.b",
            ".a",
            "a/b.lock",
            "a.lock/b",
            "a\tb",
            "\u{7f}",
            "é/ü",
            "a/b/c",
            "x.y",
            "-x",
            "@",
        ];
        let Ok(git) = std::process::Command::new("git").arg("--version").output() else {
            return;
        };
        assert!(git.status.success());
        for name in names {
            let git_ok = std::process::Command::new("git")
                .args(["check-ref-format", &format!("refs/heads/{name}")])
                .status()
                .unwrap()
                .success();
            let ours = ref_problem(name).is_none();
            // `-x` and `@` are valid refs but `git branch` refuses them, and so do we.
            if name == "-x" || name == "@" {
                assert!(git_ok && !ours, "{name}");
            } else {
                assert_eq!(ours, git_ok, "{name:?}: {:?}", ref_problem(name));
            }
        }
    }

    #[test]
    fn branch_nesting() {
        assert!(nests("quartermaster/a", "quartermaster/a/b"));
        assert!(!nests("quartermaster/a", "quartermaster/ab"));
    }
}
