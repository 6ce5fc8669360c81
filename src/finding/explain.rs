//! What each finding code means and how to fix it, for agents (the MCP `explain_code` tool) and
//! people. The `match` in [`explain`] is exhaustive: a new code does not compile until it is
//! explained here. Codes marked "At run time" come from the report, not from validation.

use super::Code;
use serde::Serialize;

/// A finding code explained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Explanation {
    pub code: &'static str,
    /// What the rule refuses, and why.
    pub meaning: &'static str,
    /// What to change in the plan.
    pub fix: &'static str,
}

/// Explains a finding code.
pub fn explain(code: Code) -> Explanation {
    let (meaning, fix) = texts(code);
    Explanation {
        code: code.as_str(),
        meaning,
        fix,
    }
}

fn texts(code: Code) -> Text {
    match code {
        Code::JsonSyntax => JSON_SYNTAX,
        Code::JsonTooDeep => JSON_TOO_DEEP,
        Code::PlanTooLarge => PLAN_TOO_LARGE,
        Code::PlanTooManyActions => PLAN_TOO_MANY_ACTIONS,
        Code::UnknownField => UNKNOWN_FIELD,
        Code::MissingField => MISSING_FIELD,
        Code::InvalidType => INVALID_TYPE,
        Code::UnknownActionType => UNKNOWN_ACTION_TYPE,
        Code::TooMany => TOO_MANY,
        Code::TooLong => TOO_LONG,
        Code::ActionNotAllowed => ACTION_NOT_ALLOWED,
        Code::UnknownEcosystem => UNKNOWN_ECOSYSTEM,
        Code::BranchPrefix => BRANCH_PREFIX,
        Code::BranchInvalidRef => BRANCH_INVALID_REF,
        Code::BranchDuplicate => BRANCH_DUPLICATE,
        Code::BranchConflict => BRANCH_CONFLICT,
        Code::DefaultBranchInvalid => DEFAULT_BRANCH_INVALID,
        Code::PathAbsolute => PATH_ABSOLUTE,
        Code::PathParent => PATH_PARENT,
        Code::PathNotNormalized => PATH_NOT_NORMALIZED,
        Code::PathGitDir => PATH_GIT_DIR,
        Code::PathInvalidChar => PATH_INVALID_CHAR,
        Code::LockFileNotCommitted => LOCK_FILE_NOT_COMMITTED,
        Code::LabelEmpty => LABEL_EMPTY,
        Code::LabelTooLong => LABEL_TOO_LONG,
        Code::LabelComma => LABEL_COMMA,
        Code::LabelWhitespace => LABEL_WHITESPACE,
        Code::LabelControlChar => LABEL_CONTROL_CHAR,
        Code::LabelDuplicate => LABEL_DUPLICATE,
        Code::IdNotPositive => ID_NOT_POSITIVE,
        Code::TitleEmpty => TITLE_EMPTY,
        Code::TitleTooLong => TITLE_TOO_LONG,
        Code::TitleControlChar => TITLE_CONTROL_CHAR,
        Code::TextEmpty => TEXT_EMPTY,
        Code::BodyTooLong => BODY_TOO_LONG,
        Code::ConfidenceOutOfRange => CONFIDENCE_OUT_OF_RANGE,
        Code::CommandsEmpty => COMMANDS_EMPTY,
        Code::CommandEmpty => COMMAND_EMPTY,
        Code::CommandUnparseable => COMMAND_UNPARSEABLE,
        Code::CommandShellSyntax => COMMAND_SHELL_SYNTAX,
        Code::CommandEnvAssignment => COMMAND_ENV_ASSIGNMENT,
        Code::CommandProgramPath => COMMAND_PROGRAM_PATH,
        Code::CommandProgramNotAllowed => COMMAND_PROGRAM_NOT_ALLOWED,
        Code::CommandEcosystemNotDeclared => COMMAND_ECOSYSTEM_NOT_DECLARED,
        Code::CommandOptionInjection => COMMAND_OPTION_INJECTION,
        Code::CommandNotAllowlisted => COMMAND_NOT_ALLOWLISTED,
        Code::CommandPackageSpec => COMMAND_PACKAGE_SPEC,
        Code::CommandInvalidPackage => COMMAND_INVALID_PACKAGE,
        Code::CommandUndeclaredPackage => COMMAND_UNDECLARED_PACKAGE,
        Code::CommandInvalidVersion => COMMAND_INVALID_VERSION,
        Code::CommandVersionMismatch => COMMAND_VERSION_MISMATCH,
        Code::TestRunnerNotAllowed => TEST_RUNNER_NOT_ALLOWED,
        Code::TestInlineCode => TEST_INLINE_CODE,
        Code::TestPackageExecutor => TEST_PACKAGE_EXECUTOR,
        Code::TestInstall => TEST_INSTALL,
        Code::TestNotAllowlisted => TEST_NOT_ALLOWLISTED,
        Code::TestOptionNotAllowed => TEST_OPTION_NOT_ALLOWED,
        Code::TestInvalidArgument => TEST_INVALID_ARGUMENT,
        Code::UpdateInvalidPackage => UPDATE_INVALID_PACKAGE,
        Code::UpdateInvalidVersion => UPDATE_INVALID_VERSION,
        Code::UpdateSameVersion => UPDATE_SAME_VERSION,
        Code::UpdateDuplicatePackage => UPDATE_DUPLICATE_PACKAGE,
        Code::UpdateUnused => UPDATE_UNUSED,
        Code::UpdatesEmpty => UPDATES_EMPTY,
        Code::UpdateNotReached => UPDATE_NOT_REACHED,
        Code::UpdateFromMismatch => UPDATE_FROM_MISMATCH,
        Code::ChangeUndeclaredDependency => CHANGE_UNDECLARED_DEPENDENCY,
        Code::ChangeManifestField => CHANGE_MANIFEST_FIELD,
        Code::ChangeNewSource => CHANGE_NEW_SOURCE,
        Code::ChangeIntegrity => CHANGE_INTEGRITY,
        Code::ChangeUnreadable => CHANGE_UNREADABLE,
    }
}

/// The code whose text form is `name` (`command.option_injection`).
pub fn code_named(name: &str) -> Option<Code> {
    Code::ALL.iter().copied().find(|c| c.as_str() == name)
}

type Text = (&'static str, &'static str);

const JSON_SYNTAX: Text = (
    "The plan is not well-formed JSON; the message gives the line and column where parsing stopped.",
    "Emit exactly one JSON object: check quotes, commas and brackets at the position given, and send no prose or code fences around it.",
);
const JSON_TOO_DEEP: Text = (
    "The JSON nests deeper than 128 levels; no plan needs more than a handful.",
    "Write the plan with the flat shape the schema describes (get_schema).",
);
const PLAN_TOO_LARGE: Text = (
    "The plan is larger than 10 MiB, the limit that bounds memory for hostile input.",
    "Remove what does not belong in a plan (changelogs, logs); real plans are a few kilobytes.",
);
const PLAN_TOO_MANY_ACTIONS: Text = (
    "The plan has more than 20 actions.",
    "Keep the 20 most important actions and leave the rest for the next run, or split the work into several plans.",
);
const UNKNOWN_FIELD: Text = (
    "A field the schema does not define, often a typo; it is refused rather than ignored so that a misspelt setting never silently falls back to a default.",
    "Rename the field to the one the message suggests, or remove it.",
);
const MISSING_FIELD: Text = (
    "A field the action type requires is absent.",
    "Add the field named in the message; get_schema lists the required fields of each action type.",
);
const INVALID_TYPE: Text = (
    "A field has the wrong JSON type, or a value outside its closed set (an unknown update_type, fallback_strategy, reason_type or platform).",
    "Use the type and one of the values the schema gives for that field.",
);
const UNKNOWN_ACTION_TYPE: Text = (
    "An action's `type` is not one of create_mr, update_mr, create_issue, comment_mr, comment_issue, close_mr or skip.",
    "Use one of those types (describe_mission says which ones the mission allows).",
);
const TOO_MANY: Text = (
    "A list is too long: more than 20 commands, 50 updates or 20 labels in an action, or more than 64 words in a command.",
    "Split the action into several, or drop entries that do nothing.",
);
const TOO_LONG: Text = (
    "A value is too long: a command over 1024 bytes, a branch over 200 bytes, a path over 4096 bytes, or a skipped package name over 214 characters.",
    "Shorten the value named in the message.",
);
const ACTION_NOT_ALLOWED: Text = (
    "The mission does not allow this action type (the docs-drift mission, for example, allows no merge requests).",
    "Use only the action types describe_mission lists for this mission, or ask the operator for another mission.",
);
const UNKNOWN_ECOSYSTEM: Text = (
    "repo_context.ecosystems names an ecosystem Quartermaster does not know.",
    "Use go, npm, yarn, pnpm, bun, pip, poetry, bundle or cargo.",
);
const BRANCH_PREFIX: Text = (
    "Quartermaster only writes branches under `quartermaster/`, so that it never touches a branch a person owns.",
    "Start the branch name with `quartermaster/`, e.g. `quartermaster/deps-weekly`.",
);
const BRANCH_INVALID_REF: Text = (
    "git would refuse the branch name (git check-ref-format rules: no spaces, `..`, `~`, `^`, `:`, `?`, `*`, `[`, `@{`, no trailing `.lock` or `/`).",
    "Use lower-case words separated by `-` and `/` after `quartermaster/`.",
);
const BRANCH_DUPLICATE: Text = (
    "Two actions use the same branch; the second would overwrite the first.",
    "Give each create_mr or update_mr its own branch, or merge the two actions.",
);
const BRANCH_CONFLICT: Text = (
    "One branch nests under another (`a` and `a/b`); git cannot hold both.",
    "Rename one of the branches so that neither is a prefix directory of the other.",
);
const DEFAULT_BRANCH_INVALID: Text = (
    "repo_context.default_branch is not a valid git branch name.",
    "Use the repository's real default branch, such as `main` or `master`.",
);
const PATH_ABSOLUTE: Text = (
    "working_dir or a lock_files entry is an absolute path; paths must stay inside the checkout.",
    "Write the path relative to the repository root, e.g. `services/api`.",
);
const PATH_PARENT: Text = (
    "The path climbs out with `..`.",
    "Write the path from the repository root downwards, without `..`.",
);
const PATH_NOT_NORMALIZED: Text = (
    "The path is not in normal form: `.` components, empty components (`a//b`), a trailing `/` or backslashes.",
    "Write it as plain `/`-separated names, e.g. `frontend/app`.",
);
const PATH_GIT_DIR: Text = (
    "The path leads into `.git`, which commands must never touch.",
    "Point at the project directory instead.",
);
const PATH_INVALID_CHAR: Text = (
    "The path holds control characters or other characters a path should not.",
    "Use the directory's real name.",
);
const LOCK_FILE_NOT_COMMITTED: Text = (
    "Warning: a lock_files entry is not among the files the declared ecosystems may change, so a branch that changed it would be refused.",
    "Check the entry against the files describe_mission lists per ecosystem, or declare the ecosystem that owns it.",
);
const LABEL_EMPTY: Text = ("A label is empty.", "Remove it, or give it a name.");
const LABEL_TOO_LONG: Text = (
    "A label is longer than 50 characters, GitHub's limit.",
    "Shorten the label.",
);
const LABEL_COMMA: Text = (
    "A label holds a comma; GitLab splits label lists on commas, so it would become two labels.",
    "Remove the comma or split it into two labels.",
);
const LABEL_WHITESPACE: Text = (
    "A label starts or ends with white space.",
    "Trim the label.",
);
const LABEL_CONTROL_CHAR: Text = (
    "A label holds control characters.",
    "Use printable text only.",
);
const LABEL_DUPLICATE: Text = (
    "Warning: the same label appears twice in one action.",
    "List each label once.",
);
const ID_NOT_POSITIVE: Text = (
    "An mr_id or issue_id is 0 or negative; forge numbers start at 1.",
    "Use the number of an existing Quartermaster PR, MR or issue.",
);
const TITLE_EMPTY: Text = (
    "A title is empty or blank.",
    "Write a short title that says what the PR or issue does.",
);
const TITLE_TOO_LONG: Text = (
    "A title is longer than 255 characters, GitLab's limit.",
    "Shorten the title and move details into the description.",
);
const TITLE_CONTROL_CHAR: Text = (
    "A title holds a line break or another control character; titles are one line.",
    "Put everything after the first line into the description or body.",
);
const TEXT_EMPTY: Text = (
    "A comment, close comment or skip reason is empty.",
    "Say something: why the item is skipped, or what the comment is about.",
);
const BODY_TOO_LONG: Text = (
    "A body is longer than 60,000 characters (GitHub allows 65,536; the rest is kept for Quartermaster's marker).",
    "Shorten the body: link to changelogs instead of quoting them.",
);
const CONFIDENCE_OUT_OF_RANGE: Text = (
    "confidence is outside 0..1.",
    "Give a number between 0 and 1; actions below the operator's threshold (default 0.5) are skipped.",
);
const COMMANDS_EMPTY: Text = (
    "A create_mr or update_mr has no commands, so it would change nothing.",
    "Add the update commands (describe_mission lists the allowed forms), or use create_issue or skip instead.",
);
const COMMAND_EMPTY: Text = (
    "A command is an empty string.",
    "Remove it, or write the command.",
);
const COMMAND_UNPARSEABLE: Text = (
    "A command cannot be split into words, usually because of an unbalanced quote.",
    "Balance the quotes, or better, write the command without quotes.",
);
const COMMAND_SHELL_SYNTAX: Text = (
    "A command holds shell syntax (`;`, `|`, `&`, `$`, backticks, redirections, line breaks, `\\`, `#`); nothing runs through a shell.",
    "Write one program and its arguments per command, and one command per list entry.",
);
const COMMAND_ENV_ASSIGNMENT: Text = (
    "A command starts with `NAME=value`; commands cannot set environment variables.",
    "Remove the assignment; the operator passes variables with --extra-env if they are needed.",
);
const COMMAND_PROGRAM_PATH: Text = (
    "The program is given as a path (`./gradlew`, `/usr/bin/go`) instead of a bare name.",
    "Use the program's bare name, e.g. `go`.",
);
const COMMAND_PROGRAM_NOT_ALLOWED: Text = (
    "The program is not in the mission's allowlist at all.",
    "Use one of the programs describe_mission lists under the ecosystems' commands.",
);
const COMMAND_ECOSYSTEM_NOT_DECLARED: Text = (
    "The command belongs to an ecosystem that repo_context.ecosystems does not declare.",
    "Add the ecosystem to repo_context.ecosystems, or drop the command.",
);
const COMMAND_OPTION_INJECTION: Text = (
    "The command carries an option where the allowed pattern has none (`go get -toolexec=... pkg@v1`); options can make a tool run arbitrary code.",
    "Write the command exactly in an allowed form, e.g. `go get <pkg>@<ver>`, with no extra options.",
);
const COMMAND_NOT_ALLOWLISTED: Text = (
    "No allowed pattern of the program matches the command; matching is exact, word for word, never by prefix.",
    "Use one of the allowed forms the message lists for the program.",
);
const COMMAND_PACKAGE_SPEC: Text = (
    "The package is a source (URL, `file:`, `git+`, `npm:` alias, `user/repo`, path or archive) rather than a registry name.",
    "Name the package as the registry knows it, e.g. `lodash`, and the version separately.",
);
const COMMAND_INVALID_PACKAGE: Text = (
    "The package name is not valid in the ecosystem's grammar.",
    "Spell the name exactly as the registry does.",
);
const COMMAND_UNDECLARED_PACKAGE: Text = (
    "The command updates a package that the action's `updates` does not declare.",
    "Add the package to `updates` with its from, to and update_type, or drop the command.",
);
const COMMAND_INVALID_VERSION: Text = (
    "The version is not valid in the ecosystem's grammar (Go versions start with `v`; semver has no `v`).",
    "Write the exact version the registry publishes.",
);
const COMMAND_VERSION_MISMATCH: Text = (
    "The command asks for a version other than the update's declared `to`.",
    "Make the command's version and the update's `to` the same.",
);
const TEST_RUNNER_NOT_ALLOWED: Text = (
    "The test command's program is not an allowed test runner.",
    "Use the repository's test runner among those describe_mission lists (go, npm, yarn, pnpm, bun, make, cargo, pytest, python, python3, ruby, bundle, mvn, gradle, dotnet).",
);
const TEST_INLINE_CODE: Text = (
    "The test command would run code written in the plan (`python -c`, `node -e`, `ruby -e`, `sh -c`, `make --eval`).",
    "Run the repository's own tests instead, e.g. `python -m pytest`.",
);
const TEST_PACKAGE_EXECUTOR: Text = (
    "The test command would fetch and run a package (`npx`, `npm exec`, `yarn dlx`, `go run`).",
    "Run the tests through the repository's own test script or runner, e.g. `npm test`.",
);
const TEST_INSTALL: Text = (
    "The test command would install software (`pip install`, `npm ci`, `cargo install`).",
    "Use a command that only runs the tests; installing is the update commands' job.",
);
const TEST_NOT_ALLOWLISTED: Text = (
    "The test command matches no allowed form of its runner.",
    "Use one of the forms the message lists, e.g. `go test ./...` or `cargo test`.",
);
const TEST_OPTION_NOT_ALLOWED: Text = (
    "The test command uses an option the runner's policy does not allow (some load or run outside code: `-exec`, `--config`, `-p`).",
    "Drop the option; describe_mission lists the options each runner accepts.",
);
const TEST_INVALID_ARGUMENT: Text = (
    "An argument or option value is not of the accepted kind (a number, a plain word, a relative path inside the checkout, a filter expression).",
    "Use a value of the kind the message names; values never start with `-`.",
);
const UPDATE_INVALID_PACKAGE: Text = (
    "An update's package name is unusable: empty, longer than 214 characters, with control characters or spaces, or starting with `-`.",
    "Spell the package as its registry does.",
);
const UPDATE_INVALID_VERSION: Text = (
    "An update's from or to version is unusable: empty, too long, with control characters, or not a version of the ecosystem that applies it.",
    "Give the exact versions, as the registry publishes them.",
);
const UPDATE_SAME_VERSION: Text = (
    "Warning: from equals to for an update type that changes the version.",
    "Fix the versions, or use update_type `digest`, `pin` or `lock_file_maintenance` if that is what it is.",
);
const UPDATE_DUPLICATE_PACKAGE: Text = (
    "Warning: the same package is updated twice in one working_dir.",
    "Keep one update per package and directory.",
);
const UPDATE_UNUSED: Text = (
    "Warning: an update that no command applies.",
    "Add the command that applies it, or remove the update.",
);
const UPDATES_EMPTY: Text = (
    "A `create_mr` or `update_mr` declares no update; Quartermaster publishes only declared updates, checked against the lock files.",
    "Declare each package the commands update in `updates`, with from, to and update_type.",
);
const UPDATE_NOT_REACHED: Text = (
    "At run time: after the commands, the lock files show a version-changing update that did not end at its declared `to` (unchanged, or another version); the branch is not published.",
    "Check that `to` exists in the registry and that nothing holds it back (a manifest constraint; `cargo update -p <pkg> --precise <ver>` pins it). With `individual_on_failure` each update is tried alone.",
);
const UPDATE_FROM_MISMATCH: Text = (
    "At run time: the declared `from` is not what the base's lock files held; the real version is published, and the report keeps the plan's claim.",
    "Read `from` from the default branch's lock file, not from memory.",
);
const CHANGE_UNDECLARED_DEPENDENCY: Text = (
    "At run time: the commands added, removed or changed a direct dependency outside the declared updates; the branch is denied.",
    "Declare every direct dependency the commands change in `updates`, or use commands that touch only the declared packages.",
);
const CHANGE_MANIFEST_FIELD: Text = (
    "At run time: a manifest changed outside its dependency entries (`scripts`, `bin`, `[patch]`, `replace`, `source`, build-system); the branch is denied.",
    "Use update commands that change dependency entries only; a command that rewrites other manifest fields cannot be published.",
);
const CHANGE_NEW_SOURCE: Text = (
    "At run time: a changed lock entry resolves from a registry host the base lock files did not use; the branch is denied.",
    "Update from the registries the repository already uses; the operator can allow another host with --registry-host.",
);
const CHANGE_INTEGRITY: Text = (
    "At run time: a version locked before and after the commands has another integrity hash; the same version must be the same bytes, so the branch is denied.",
    "Leave the action out and tell a person: a registry that serves other bytes under a published version needs looking into.",
);
const CHANGE_UNREADABLE: Text = (
    "At run time: a lock file or manifest could not be read to verify the change (or is missing where the ecosystem needs one; `bun.lockb` cannot be verified); the action fails.",
    "Make sure working_dir holds the ecosystem's manifest and a text lock file (`bun.lock`, not only `bun.lockb`), and that the commands leave them well-formed.",
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_found_by_name() {
        assert_eq!(code_named("branch.prefix"), Some(Code::BranchPrefix));
        assert_eq!(code_named("branch.prefx"), None);
    }
}
