//! What each finding code means and how to fix it, for agents (the MCP `explain_code` tool) and
//! people. The table below becomes one exhaustive `match`: a new code does not compile until it
//! is explained here. Codes marked "At run time" come from the report, not from validation.

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

type Text = (&'static str, &'static str);

/// Writes the table as one `match` over every code, so that none can be left out.
macro_rules! explanations {
    ($($variant:ident => ($meaning:literal, $fix:literal $(,)?),)*) => {
        fn texts(code: Code) -> Text {
            match code {
                $(Code::$variant => ($meaning, $fix),)*
            }
        }
    };
}

explanations! {
    JsonSyntax => (
        "The plan is not well-formed JSON, or not JSON at all (an empty file, YAML); the message gives the line and column where parsing stopped.",
        "Emit exactly one JSON object: check quotes, commas and brackets at the position given, send no prose or code fences around it, and convert a YAML plan to JSON.",
    ),
    JsonTooDeep => (
        "The JSON nests deeper than 128 levels; no plan needs more than a handful.",
        "Write the plan with the flat shape the schema describes (get_schema).",
    ),
    PlanTooLarge => (
        "The plan is larger than 10 MiB, the limit that bounds memory for hostile input.",
        "Remove what does not belong in a plan (changelogs, logs); real plans are a few kilobytes.",
    ),
    PlanTooManyActions => (
        "The plan has more than 20 actions.",
        "Keep the 20 most important actions and leave the rest for the next run, or split the work into several plans.",
    ),
    UnknownField => (
        "A field the schema does not define, often a typo; it is refused rather than ignored so that a misspelt setting never silently falls back to a default.",
        "Rename the field to the one the message suggests, or remove it.",
    ),
    MissingField => (
        "A field the action type requires is absent.",
        "Add the field named in the message; get_schema lists the required fields of each action type.",
    ),
    InvalidType => (
        "A field has the wrong JSON type, or a value outside its closed set (an unknown update_type, fallback_strategy, reason_type or platform).",
        "Use the type and one of the values the schema gives for that field.",
    ),
    UnknownActionType => (
        "An action's `type` is not one of create_mr, update_mr, create_issue, comment_mr, comment_issue, close_mr or skip.",
        "Use one of those types (describe_mission says which ones the mission allows).",
    ),
    TooMany => (
        "A list is too long: more than 20 commands, 50 updates or 20 labels in an action, or more than 64 words in a command.",
        "Split the action into several, or drop entries that do nothing.",
    ),
    TooLong => (
        "A value is too long: a command over 1024 bytes, a branch over 200 bytes, a path over 4096 bytes, or a skipped package name over 214 characters.",
        "Shorten the value named in the message.",
    ),
    ActionNotAllowed => (
        "The mission does not allow this action type (the docs-drift mission, for example, allows no merge requests).",
        "Use only the action types describe_mission lists for this mission, or ask the operator for another mission.",
    ),
    UnknownEcosystem => (
        "repo_context.ecosystems names an ecosystem Quartermaster does not know.",
        "Use go, npm, yarn, pnpm, bun, pip, poetry, bundle or cargo.",
    ),
    BranchPrefix => (
        "Quartermaster only writes branches under `quartermaster/`, so that it never touches a branch a person owns.",
        "Start the branch name with `quartermaster/`, e.g. `quartermaster/deps-weekly`.",
    ),
    BranchInvalidRef => (
        "git would refuse the branch name (git check-ref-format rules: no spaces, `..`, `~`, `^`, `:`, `?`, `*`, `[`, `@{`, no trailing `.lock` or `/`).",
        "Use lower-case words separated by `-` and `/` after `quartermaster/`.",
    ),
    BranchDuplicate => (
        "Two actions use the same branch; the second would overwrite the first.",
        "Give each create_mr or update_mr its own branch, or merge the two actions.",
    ),
    BranchConflict => (
        "One branch nests under another (`a` and `a/b`); git cannot hold both.",
        "Rename one of the branches so that neither is a prefix directory of the other.",
    ),
    DefaultBranchInvalid => (
        "repo_context.default_branch is not a valid git branch name.",
        "Use the repository's real default branch, such as `main` or `master`.",
    ),
    PathAbsolute => (
        "working_dir or a lock_files entry is an absolute path; paths must stay inside the checkout.",
        "Write the path relative to the repository root, e.g. `services/api`.",
    ),
    PathParent => (
        "The path climbs out with `..`.",
        "Write the path from the repository root downwards, without `..`.",
    ),
    PathNotNormalized => (
        "The path is not in normal form: `.` components, empty components (`a//b`), a trailing `/` or backslashes.",
        "Write it as plain `/`-separated names, e.g. `frontend/app`.",
    ),
    PathGitDir => (
        "The path leads into `.git`, which commands must never touch.",
        "Point at the project directory instead.",
    ),
    PathInvalidChar => (
        "The path holds control characters or other characters a path should not.",
        "Use the directory's real name.",
    ),
    LockFileNotCommitted => (
        "Warning: a lock_files entry is not among the files the declared ecosystems may change, so a branch that changed it would be refused.",
        "Check the entry against the files describe_mission lists per ecosystem, or declare the ecosystem that owns it.",
    ),
    LabelEmpty => (
        "A label is empty.",
        "Remove it, or give it a name.",
    ),
    LabelTooLong => (
        "A label is longer than 50 characters, GitHub's limit.",
        "Shorten the label.",
    ),
    LabelComma => (
        "A label holds a comma; GitLab splits label lists on commas, so it would become two labels.",
        "Remove the comma or split it into two labels.",
    ),
    LabelWhitespace => (
        "A label starts or ends with white space.",
        "Trim the label.",
    ),
    LabelControlChar => (
        "A label holds control characters.",
        "Use printable text only.",
    ),
    LabelDuplicate => (
        "Warning: the same label appears twice in one action.",
        "List each label once.",
    ),
    IdNotPositive => (
        "An mr_id or issue_id is 0 or negative; forge numbers start at 1.",
        "Use the number of an existing Quartermaster PR, MR or issue.",
    ),
    TitleEmpty => (
        "A title is empty or blank.",
        "Write a short title that says what the PR or issue does.",
    ),
    TitleTooLong => (
        "A title is longer than 255 characters, GitLab's limit.",
        "Shorten the title and move details into the description.",
    ),
    TitleControlChar => (
        "A title holds a line break or another control character; titles are one line.",
        "Put everything after the first line into the description or body.",
    ),
    TextEmpty => (
        "A comment, close comment or skip reason is empty.",
        "Say something: why the item is skipped, or what the comment is about.",
    ),
    BodyTooLong => (
        "A body is longer than 60,000 characters (GitHub allows 65,536; the rest is kept for Quartermaster's marker).",
        "Shorten the body: link to changelogs instead of quoting them.",
    ),
    ConfidenceOutOfRange => (
        "confidence is outside 0..1.",
        "Give a number between 0 and 1; actions below the operator's threshold (default 0.5) are skipped.",
    ),
    CommandsEmpty => (
        "A create_mr or update_mr has no commands, so it would change nothing.",
        "Add the update commands (describe_mission lists the allowed forms), or use create_issue or skip instead.",
    ),
    CommandEmpty => (
        "A command is an empty string.",
        "Remove it, or write the command.",
    ),
    CommandUnparseable => (
        "A command cannot be split into words, usually because of an unbalanced quote.",
        "Balance the quotes, or better, write the command without quotes.",
    ),
    CommandShellSyntax => (
        "A command holds shell syntax (`;`, `|`, `&`, `$`, backticks, redirections, line breaks, `\\`, `#`); nothing runs through a shell.",
        "Write one program and its arguments per command, and one command per list entry.",
    ),
    CommandEnvAssignment => (
        "A command starts with `NAME=value`; commands cannot set environment variables.",
        "Remove the assignment; the operator passes variables with --extra-env if they are needed.",
    ),
    CommandProgramPath => (
        "The program is given as a path (`./gradlew`, `/usr/bin/go`) instead of a bare name.",
        "Use the program's bare name, e.g. `go`.",
    ),
    CommandProgramNotAllowed => (
        "The program is not in the mission's allowlist at all.",
        "Use one of the programs describe_mission lists under the ecosystems' commands.",
    ),
    CommandEcosystemNotDeclared => (
        "The command belongs to an ecosystem that repo_context.ecosystems does not declare.",
        "Add the ecosystem to repo_context.ecosystems, or drop the command.",
    ),
    CommandOptionInjection => (
        "The command carries an option where the allowed pattern has none (`go get -toolexec=... pkg@v1`); options can make a tool run arbitrary code.",
        "Write the command exactly in an allowed form, e.g. `go get <pkg>@<ver>`, with no extra options.",
    ),
    CommandNotAllowlisted => (
        "No allowed pattern of the program matches the command; matching is exact, word for word, never by prefix.",
        "Use one of the allowed forms the message lists for the program.",
    ),
    CommandPackageSpec => (
        "The package is a source (URL, `file:`, `git+`, `npm:` alias, `user/repo`, path or archive) rather than a registry name.",
        "Name the package as the registry knows it, e.g. `lodash`, and the version separately.",
    ),
    CommandInvalidPackage => (
        "The package name is not valid in the ecosystem's grammar.",
        "Spell the name exactly as the registry does.",
    ),
    CommandUndeclaredPackage => (
        "The command updates a package that the action's `updates` does not declare.",
        "Add the package to `updates` with its from, to and update_type, or drop the command.",
    ),
    CommandInvalidVersion => (
        "The version is not valid in the ecosystem's grammar (Go versions start with `v`; semver has no `v`).",
        "Write the exact version the registry publishes.",
    ),
    CommandVersionMismatch => (
        "The command asks for a version other than the update's declared `to`.",
        "Make the command's version and the update's `to` the same.",
    ),
    CommandFromMismatch => (
        "The version after `@` in `cargo update -p <pkg>@<from>` names the locked copy to move, and it differs from the update's declared `from`.",
        "Write the update's `from` after the `@`, as the lock file has it (`cargo update -p regex-syntax@0.8.8 --precise 0.8.12` for `from` 0.8.8).",
    ),
    CommandAmbiguousPackage => (
        "The lock file holds several versions of the package the command names, so the command cannot tell which one to update (cargo refuses `-p regex-syntax` when both 0.6.29 and 0.8.8 are locked). Found by `validate` when it can read the checkout's lock files, else before the unit's commands run.",
        "Name the copy to update as cargo asks: `cargo update -p <pkg>@<from> --precise <ver>`, with the update's `from` the locked version to move.",
    ),
    CommandNeedsLockMaintenance => (
        "The command refreshes every package of a lock file (`cargo update`, `npm update`), which only a lock-maintenance action may do.",
        "Declare one update `{\"package\": \"Cargo.lock\", \"from\": ..., \"to\": ..., \"update_type\": \"lock_file_maintenance\"}` naming the lock file, in an action of its own; or update named packages with `cargo update -p <pkg>`.",
    ),
    CommandInvalidFile => (
        "The file the command reads is not a relative path inside the working directory, or not of the kind its form names (`<file:requirements*.in>`).",
        "Give the path of that file relative to the working directory, without `..`, e.g. `requirements.in`.",
    ),
    CommandChangesNoFile => (
        "`pip install` installs into an environment: it changes no requirements or lock file, so the action can produce no PR.",
        "Use `pip-compile --upgrade-package <pkg>==<ver>` (requirements.txt from requirements.in) or `uv lock --upgrade-package <pkg>==<ver>` (uv.lock).",
    ),
    TestRunnerNotAllowed => (
        "The test command's program is not an allowed test runner.",
        "Use the repository's test runner among those describe_mission lists (go, npm, yarn, pnpm, bun, make, cargo, pytest, python, python3, ruby, bundle, mvn, gradle, dotnet).",
    ),
    TestInlineCode => (
        "The test command would run code written in the plan (`python -c`, `node -e`, `ruby -e`, `sh -c`, `make --eval`).",
        "Run the repository's own tests instead, e.g. `python -m pytest`.",
    ),
    TestPackageExecutor => (
        "The test command would fetch and run a package (`npx`, `npm exec`, `yarn dlx`, `go run`).",
        "Run the tests through the repository's own test script or runner, e.g. `npm test`.",
    ),
    TestInstall => (
        "The test command would install software (`pip install`, `npm ci`, `cargo install`).",
        "Use a command that only runs the tests; installing is the update commands' job.",
    ),
    TestNotAllowlisted => (
        "The test command matches no allowed form of its runner.",
        "Use one of the forms the message lists, e.g. `go test ./...` or `cargo test`.",
    ),
    TestOptionNotAllowed => (
        "The test command uses an option the runner's policy does not allow (some load or run outside code: `-exec`, `--config`, `-p`).",
        "Drop the option; describe_mission lists the options each runner accepts.",
    ),
    TestInvalidArgument => (
        "An argument or option value is not of the accepted kind (a number, a plain word, a relative path inside the checkout, a filter expression).",
        "Use a value of the kind the message names; values never start with `-`.",
    ),
    TestGoPackage => (
        "A go package argument is not a `./` pattern inside the module: an import path or `all` would build and test code from the module cache.",
        "Use `.`, `./...`, `./pkg` or `./pkg/...`.",
    ),
    TestGoModMode => (
        "A go `-mod` mode other than `readonly` or `vendor`: `-mod=mod` lets the test change go.mod and go.sum after the update was verified.",
        "Use `-mod=readonly`, `-mod=vendor`, or leave `-mod` out.",
    ),
    TestUnittestName => (
        "A unittest argument names a module or callable (`pkg.tests`), which imports whatever that name resolves to, inside or outside the checkout.",
        "Name test files instead, e.g. `python -m unittest tests/test_x.py`.",
    ),
    TestResponseFile => (
        "An `@file` argument makes the runner read more arguments from a file, past every check on the command line.",
        "Write the arguments themselves on the command line.",
    ),
    TestTargetSpec => (
        "A cargo `--target` names a target specification file, which can point the build at any linker.",
        "Use a built-in target triple such as `x86_64-unknown-linux-gnu`, or leave `--target` out.",
    ),
    TestCargoPackage => (
        "A cargo `-p` that is not the plain name of a workspace member (a spec with a version or URL).",
        "Name a workspace member, e.g. `-p my-crate`.",
    ),
    TestDirectoryRepeated => (
        "A second directory change (`make -C a -C b`): the tool resolves the second from the first, so it can leave the checkout.",
        "Change directory once.",
    ),
    TestDependencyDir => (
        "A path into a dependency or build directory (`node_modules`, `vendor`, `.venv`, `target`): those files are the dependencies' code, not the repository's tests.",
        "Point at the repository's own tests.",
    ),
    TestPathOutside => (
        "At run time: a path of the test command leads outside the checkout through a symbolic link.",
        "Point at a path whose every component stays inside the checkout.",
    ),
    TestPathIgnored => (
        "At run time: a path of the test command is ignored by the repository (generated or downloaded files), so an update could have written it.",
        "Point at tracked test files.",
    ),
    TestPathMissing => (
        "At run time: a path of the test command does not exist after the update, or is not the directory or file the option needs.",
        "Check the path against the repository's tree at the base branch.",
    ),
    UpdateInvalidPackage => (
        "An update's package name is unusable: empty, longer than 214 characters, with control characters or spaces, or starting with `-`.",
        "Spell the package as its registry does.",
    ),
    UpdateInvalidVersion => (
        "An update's from or to version is unusable: empty, too long, with control characters, or not a version of the ecosystem that applies it.",
        "Give the exact versions, as the registry publishes them.",
    ),
    UpdateSameVersion => (
        "Warning: from equals to for an update type that changes the version.",
        "Fix the versions, or use update_type `digest`, `pin` or `lock_file_maintenance` if that is what it is.",
    ),
    UpdateDuplicatePackage => (
        "Warning: the same package is updated twice in one working_dir.",
        "Keep one update per package and directory.",
    ),
    UpdateUnused => (
        "Warning: an update that no command applies.",
        "Add the command that applies it, or remove the update.",
    ),
    UpdatesEmpty => (
        "A `create_mr` or `update_mr` declares no update; Quartermaster publishes only declared updates, checked against the lock files.",
        "Declare each package the commands update in `updates`, with from, to and update_type. To refresh a whole lock file, declare one update with update_type `lock_file_maintenance` whose package is the lock file.",
    ),
    UpdateNotReached => (
        "At run time: after the commands, the lock files show a version-changing update that did not end at its declared `to` (unchanged, or another version); the branch is not published.",
        "Check that `to` exists in the registry and that nothing holds it back (a manifest constraint; `cargo update -p <pkg> --precise <ver>` pins it). With `individual_on_failure` each update is tried alone.",
    ),
    UpdateFromMismatch => (
        "At run time: the declared `from` is not what the base's lock files held; the real version is published, and the report keeps the plan's claim.",
        "Read `from` from the default branch's lock file, not from memory.",
    ),
    ChangeUndeclaredDependency => (
        "At run time: the commands added, removed or changed a direct dependency outside the declared updates; the branch is denied.",
        "Declare every direct dependency the commands change in `updates`, or use commands that touch only the declared packages.",
    ),
    ChangeManifestField => (
        "At run time: a manifest changed outside its dependency entries (`scripts`, `bin`, `[patch]`, `replace`, `source`, build-system); the branch is denied.",
        "Use update commands that change dependency entries only; a command that rewrites other manifest fields cannot be published.",
    ),
    ChangeNewSource => (
        "At run time: a changed lock entry resolves from a registry host the base lock files did not use; the branch is denied.",
        "Update from the registries the repository already uses; the operator can allow another host with --registry-host.",
    ),
    ChangeIntegrity => (
        "At run time: a version locked before and after the commands has another integrity hash; the same version must be the same bytes, so the branch is denied.",
        "Leave the action out and tell a person: a registry that serves other bytes under a published version needs looking into.",
    ),
    ChangeUnreadable => (
        "At run time: a lock file or manifest could not be read to verify the change (or is missing where the ecosystem needs one; `bun.lockb` cannot be verified); the action fails.",
        "Make sure working_dir holds the ecosystem's manifest and a text lock file (`bun.lock`, not only `bun.lockb`), and that the commands leave them well-formed.",
    ),
    ChangeUnverifiedFile => (
        "At run time: the commands changed a manifest or lock file that no reader verified (one outside what `working_dir` and its lock file govern, such as another directory's `Cargo.toml`), or another dependency file in a directory where no manifest or lock file was read; what is published must be what was verified, so the branch is denied.",
        "Give each directory its own action with `working_dir` set to it, and use commands that change only that directory's dependency files.",
    ),
    ChangeGitFile => (
        "At run time: a command wrote, changed or removed one of git's own files (`.gitattributes`, `.gitignore`, `.gitmodules`, `.mailmap`, `.lfsconfig`, anything in a `.git` directory), ignored ones included; they change what git commits and checks out, and no update needs them, so the branch is denied.",
        "Leave the action out and tell a person: a dependency's code that writes git's files while it is updated needs looking into.",
    ),
    EcosystemMismatch => (
        "At run time: the working directory has no lock file of the commands' ecosystem, but another ecosystem's lock file is there (npm commands in a pnpm project); nothing ran.",
        "Write the commands for the ecosystem whose lock file the repository commits (`pnpm update <pkg>` for `pnpm-lock.yaml`) and declare it in repo_context.ecosystems.",
    ),
    ChangeOverLimit => (
        "At run time: a lock file or manifest is larger than its format's cap, nests deeper than 64 levels, holds more than 8 million values, or (pnpm-lock.yaml) uses a YAML alias; it is refused unparsed, so a hostile lock file cannot exhaust memory, and the action fails.",
        "Look at the file the message names: real lock files stay far below the caps and pnpm never writes aliases, so a command or a registry wrote something that is not a lock file.",
    ),
    ToolchainMismatch => (
        "At run time, with `--toolchain-policy fail`: a toolchain the repository declares (go.mod, `.nvmrc`, package.json `engines` or `packageManager`, rust-toolchain.toml, `.python-version`, `requires-python`, `.ruby-version`, `BUNDLED WITH`, `.tool-versions`) differs from the one its commands would run with, and a lock file written by another toolchain is wrong even when its tests pass; the unit fails before any command runs.",
        "Nothing to change in the plan: install the declared version where Quartermaster runs, pass `--toolchain-install` to let Go, rustup and corepack fetch it, or update the declaration in the repository; `--toolchain-policy warn` records the mismatch and goes on.",
    ),
    PolicyReleaseTooNew => (
        "At run time: a version the unit's lock files newly resolve (directly or transitively) was published more recently than the repository's minimum release age (`.quartermaster.toml` `[release-age] minimum`, 3 days by default); fresh releases are how compromised packages spread, so the unit is refused before its tests and nothing is pushed. A version that fixes a known advisory of the one it replaces is exempt.",
        "Propose the update again once the version is old enough (check_update gives its age), pick an older version, or ask the maintainers to exempt the package with `[release-age] exclude`.",
    ),
    PolicyReleaseAgeUnknown => (
        "At run time: the registry the unit's configuration points at did not say when a newly resolved version was published (it could not be reached, or does not record publish times), and the policy refuses versions of unknown age.",
        "Retry when the registry answers; a repository whose registry records no publish times can set `[release-age] unknown-publish-time = \"allow\"`.",
    ),
    PolicyVulnerable => (
        "At run time: a version the unit's lock files newly resolve has a known advisory in OSV; the unit is refused and nothing is pushed.",
        "Choose a version that fixes the advisory (check_update lists the advisories of a candidate version); the maintainers can accept an advisory with `[advisories] ignore`.",
    ),
    PolicyAdvisoriesUnavailable => (
        "At run time: the advisory database (OSV, `--osv-url`) could not be asked after retries, and the policy fails closed (`[advisories] block = true`): no unit is published without its advisories checked.",
        "Nothing to change in the plan: run again when OSV answers, point `--osv-url` at a reachable mirror, or have the maintainers set `[advisories] block = false`.",
    ),
    PolicyDeprecated => (
        "At run time: a version the unit's lock files newly resolve is deprecated (npm) or yanked (PyPI, crates, RubyGems) by its registry; the unit is refused and nothing is pushed.",
        "Choose another version (check_update says whether a candidate is deprecated); the maintainers can allow them with `[deprecated] block = false`.",
    ),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_a_meaning_and_a_fix() {
        for code in Code::ALL {
            let e = explain(*code);
            assert_eq!(e.code, code.as_str());
            assert!(!e.meaning.is_empty() && !e.fix.is_empty(), "{code}");
        }
    }
}
