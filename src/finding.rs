//! Findings: what parsing and validation say about a plan.
//!
//! Every finding names the exact place in the plan (an RFC 6901 JSON Pointer), a stable
//! machine-readable code and a message that tells the agent what to change. Codes are part of the
//! public contract (agents and tests match on them); messages may be reworded.

pub mod explain;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// How bad a finding is: any error makes the plan invalid; warnings are shown but do not block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

macro_rules! codes {
    ($($(#[doc = $doc:literal])* $variant:ident => $text:literal,)*) => {
        /// Stable identifiers of every rule. The text form (`Code::as_str`) is what JSON output
        /// carries.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The code as it appears in JSON output, e.g. `command.option_injection`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $text,)*
                }
            }
        }
    };
}

codes! {
    /// The input is not well-formed JSON.
    JsonSyntax => "json.syntax",
    /// The JSON nests deeper than any plan can.
    JsonTooDeep => "json.too_deep",
    /// The input is larger than the plan size limit.
    PlanTooLarge => "plan.too_large",
    /// More actions than a plan may hold.
    PlanTooManyActions => "plan.too_many_actions",
    /// A field the schema does not define (often a typo).
    UnknownField => "schema.unknown_field",
    /// A required field is absent.
    MissingField => "schema.missing_field",
    /// A field has the wrong JSON type or a value outside its closed set.
    InvalidType => "schema.invalid_type",
    /// An action's `type` is not one of the known action types.
    UnknownActionType => "schema.unknown_action_type",
    /// A list holds more items than allowed.
    TooMany => "limit.too_many",
    /// A string is longer than allowed.
    TooLong => "limit.too_long",
    /// The active mission does not allow this action type.
    ActionNotAllowed => "mission.action_not_allowed",
    /// An ecosystem the mission does not know.
    UnknownEcosystem => "ecosystem.unknown",
    /// A branch outside `quartermaster/`.
    BranchPrefix => "branch.prefix",
    /// A branch name git would refuse.
    BranchInvalidRef => "branch.invalid_ref",
    /// The same branch used by two actions.
    BranchDuplicate => "branch.duplicate",
    /// A branch nested under another action's branch (git cannot hold both).
    BranchConflict => "branch.conflict",
    /// `repo_context.default_branch` is not a valid branch name.
    DefaultBranchInvalid => "default_branch.invalid_ref",
    /// An absolute path where a relative one is required.
    PathAbsolute => "path.absolute",
    /// A path that climbs out with `..`.
    PathParent => "path.parent",
    /// A path that is not in normal form (`.`, empty components, trailing `/`, backslashes).
    PathNotNormalized => "path.not_normalized",
    /// A path into the `.git` directory.
    PathGitDir => "path.git_dir",
    /// A path with control or otherwise unusable characters.
    PathInvalidChar => "path.invalid_char",
    /// A `lock_files` entry that no declared ecosystem may change (a warning).
    LockFileNotCommitted => "lock_files.not_committed",
    /// An empty label.
    LabelEmpty => "label.empty",
    /// A label longer than 50 characters.
    LabelTooLong => "label.too_long",
    /// A label containing a comma (GitLab splits label lists on commas).
    LabelComma => "label.comma",
    /// A label with leading or trailing white space.
    LabelWhitespace => "label.whitespace",
    /// A label with control characters.
    LabelControlChar => "label.control_char",
    /// The same label twice in one action.
    LabelDuplicate => "label.duplicate",
    /// A PR/MR or issue id that is not a positive integer.
    IdNotPositive => "id.not_positive",
    /// An empty (or blank) title.
    TitleEmpty => "title.empty",
    /// A title longer than the forges accept.
    TitleTooLong => "title.too_long",
    /// A title with line breaks or other control characters.
    TitleControlChar => "title.control_char",
    /// A required text (body, description, reason, ...) that is empty.
    TextEmpty => "text.empty",
    /// A body longer than GitHub's limit once Quartermaster's marker is added.
    BodyTooLong => "body.too_long",
    /// A confidence outside 0..=1.
    ConfidenceOutOfRange => "confidence.out_of_range",
    /// An action that changes files but declares no command.
    CommandsEmpty => "commands.empty",
    /// An empty command string.
    CommandEmpty => "command.empty",
    /// A command that cannot be split into words (unbalanced quotes).
    CommandUnparseable => "command.unparseable",
    /// Shell syntax (`;`, `|`, `&`, `$`, backticks, redirections, line breaks...). Nothing runs
    /// through a shell.
    CommandShellSyntax => "command.shell_syntax",
    /// A leading `NAME=value` environment assignment.
    CommandEnvAssignment => "command.env_assignment",
    /// The program is given as a path instead of a bare name.
    CommandProgramPath => "command.program_path",
    /// The program is not in the mission's allowlist at all.
    CommandProgramNotAllowed => "command.program_not_allowed",
    /// The command belongs to an ecosystem the plan's `repo_context.ecosystems` does not declare.
    CommandEcosystemNotDeclared => "command.ecosystem_not_declared",
    /// An option (`-x`, `--x`) where the allowlisted pattern has none.
    CommandOptionInjection => "command.option_injection",
    /// The command matches no allowlisted pattern of its program.
    CommandNotAllowlisted => "command.not_allowlisted",
    /// A package given as a URL, `file:`/`git+` spec, path or alias instead of a registry name.
    CommandPackageSpec => "command.package_spec",
    /// A package name that is not valid for the ecosystem.
    CommandInvalidPackage => "command.invalid_package",
    /// A package the action does not declare in `updates`.
    CommandUndeclaredPackage => "command.undeclared_package",
    /// A version that is not valid for the ecosystem.
    CommandInvalidVersion => "command.invalid_version",
    /// A version that differs from the declared update's `to`.
    CommandVersionMismatch => "command.version_mismatch",
    /// A `<from>` version (`cargo update -p <pkg>@<from>`) that differs from the declared `from`.
    CommandFromMismatch => "command.from_mismatch",
    /// A package a lock file holds in several versions, named without the one to update (run
    /// time, or `validate` given the checkout).
    CommandAmbiguousPackage => "command.ambiguous_package",
    /// A lock-maintenance command (`cargo update`) in an action that declares no
    /// `lock_file_maintenance` update of that ecosystem's lock file.
    CommandNeedsLockMaintenance => "command.needs_lock_maintenance",
    /// A file argument that is not a relative path to a file the command form names.
    CommandInvalidFile => "command.invalid_file",
    /// A command that installs into an environment and changes no file of the repository.
    CommandChangesNoFile => "command.changes_no_file",
    /// The test command's program is not an allowed test runner.
    TestRunnerNotAllowed => "test_command.runner_not_allowed",
    /// The test command would run inline code (`python -c`, `node -e`, ...).
    TestInlineCode => "test_command.inline_code",
    /// The test command fetches and runs a package (`npx`, `npm exec`, `go run`, ...).
    TestPackageExecutor => "test_command.package_executor",
    /// The test command installs software (`pip install`, `cargo install`, ...).
    TestInstall => "test_command.install",
    /// The test command matches no allowed test pattern of its runner.
    TestNotAllowlisted => "test_command.not_allowlisted",
    /// An option the test runner's policy does not allow.
    TestOptionNotAllowed => "test_command.option_not_allowed",
    /// An argument or option value the test runner's policy does not accept.
    TestInvalidArgument => "test_command.invalid_argument",
    /// A go package argument that is not a `./` pattern inside the module (an import path, `all`).
    TestGoPackage => "test_command.go_package",
    /// A go `-mod` mode other than `readonly` or `vendor`.
    TestGoModMode => "test_command.go_mod_mode",
    /// A unittest argument that names a module or callable instead of a test file.
    TestUnittestName => "test_command.unittest_name",
    /// An `@file` argument that makes the runner read more arguments from a file.
    TestResponseFile => "test_command.response_file",
    /// A cargo `--target` that is a target specification file rather than a built-in triple.
    TestTargetSpec => "test_command.target_spec",
    /// A cargo `-p` that is not a plain name of a workspace member.
    TestCargoPackage => "test_command.cargo_package",
    /// A second directory change (`make -C a -C b`).
    TestDirectoryRepeated => "test_command.directory_repeated",
    /// A path into a dependency or build directory (`node_modules`, `vendor`, `.venv`, `target`).
    TestDependencyDir => "test_command.dependency_dir",
    /// A path that leads outside the checkout through a symbolic link (checked in the workspace).
    TestPathOutside => "test_command.path_outside",
    /// A path the repository ignores: generated or downloaded files (checked in the workspace).
    TestPathIgnored => "test_command.path_ignored",
    /// A path that does not exist, or is not the directory or file it must be (checked in the
    /// workspace).
    TestPathMissing => "test_command.path_missing",
    /// An update whose package name is unusable.
    UpdateInvalidPackage => "update.invalid_package",
    /// An update whose version is unusable.
    UpdateInvalidVersion => "update.invalid_version",
    /// An update whose `from` equals its `to`.
    UpdateSameVersion => "update.same_version",
    /// The same package updated twice in one working directory.
    UpdateDuplicatePackage => "update.duplicate_package",
    /// A declared update that no command applies.
    UpdateUnused => "update.unused",
    /// A `create_mr`/`update_mr` that declares no update.
    UpdatesEmpty => "updates.empty",
    /// A version-changing update whose package did not end at its declared `to` (run time).
    UpdateNotReached => "update.not_reached",
    /// A declared `from` that is not what the base locked; the real value is published (run time).
    UpdateFromMismatch => "update.from_mismatch",
    /// A direct dependency outside the declared updates was added, removed or changed (run time).
    ChangeUndeclaredDependency => "change.undeclared_dependency",
    /// A manifest field other than a dependency entry changed (run time).
    ChangeManifestField => "change.manifest_field",
    /// A changed lock entry resolves from a host the base did not use (run time).
    ChangeNewSource => "change.new_source",
    /// A version locked before and after now has another integrity (run time).
    ChangeIntegrity => "change.integrity",
    /// The lock files or manifests could not be read to verify the change (run time).
    ChangeUnreadable => "change.unreadable",
    /// A changed manifest or lock file that no reader verified, or another dependency file in a
    /// directory no reader looked at (run time).
    ChangeUnverifiedFile => "change.unverified_file",
    /// A command wrote, changed or removed one of git's own files (run time).
    ChangeGitFile => "change.git_file",
    /// The commands' ecosystem lacks its lock file where another ecosystem's is (run time).
    EcosystemMismatch => "ecosystem.mismatch",
    /// A lock file or manifest beyond its size cap or a parser budget (nesting, values, YAML
    /// aliases): refused unparsed (run time).
    ChangeOverLimit => "change.over_limit",
    /// A toolchain the repository declares differs from the one the commands get (run time).
    ToolchainMismatch => "toolchain.mismatch",
    /// A newly resolved version was published more recently than the policy's minimum release
    /// age (run time).
    PolicyReleaseTooNew => "policy.release_too_new",
    /// The publish time of a newly resolved version could not be learned (run time).
    PolicyReleaseAgeUnknown => "policy.release_age_unknown",
    /// A newly resolved version has a known advisory (run time).
    PolicyVulnerable => "policy.vulnerable",
    /// The advisory database could not be asked, and the policy fails closed (run time).
    PolicyAdvisoriesUnavailable => "policy.advisories_unavailable",
    /// A newly resolved version is deprecated or yanked by its registry (run time).
    PolicyDeprecated => "policy.deprecated",
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Code {
    /// The code of its text form, as reports carry it.
    pub fn from_name(name: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == name)
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Reads a code from its text form, so that reports can be read back (`report merge`).
impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Code::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown finding code `{name}`")))
    }
}

/// One thing parsing or validation has to say about a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// JSON Pointer (RFC 6901) to the offending value; `""` is the whole document.
    pub pointer: String,
    pub code: Code,
    pub severity: Severity,
    pub message: String,
}

impl Finding {
    pub fn error(pointer: impl Into<String>, code: Code, message: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            code,
            severity: Severity::Error,
            message: message.into(),
        }
    }

    pub fn warning(pointer: impl Into<String>, code: Code, message: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            code,
            severity: Severity::Warning,
            message: message.into(),
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let at = if self.pointer.is_empty() {
            "(plan)"
        } else {
            &self.pointer
        };
        write!(f, "{level}[{}] {at}: {}", self.code, self.message)
    }
}

/// Builds RFC 6901 JSON Pointers, escaping `~` and `/` inside keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Pointer(String);

impl Pointer {
    pub(crate) fn root() -> Self {
        Self(String::new())
    }

    pub(crate) fn key(&self, key: &str) -> Self {
        let escaped = key.replace('~', "~0").replace('/', "~1");
        Self(format!("{}/{escaped}", self.0))
    }

    pub(crate) fn index(&self, index: usize) -> Self {
        Self(format!("{}/{index}", self.0))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<Pointer> for String {
    fn from(p: Pointer) -> Self {
        p.0
    }
}

impl From<&Pointer> for String {
    fn from(p: &Pointer) -> Self {
        p.0.clone()
    }
}

/// Keeps hostile values from bloating messages: quoted input is cut to 60 characters.
pub(crate) fn clip(s: &str) -> String {
    const MAX: usize = 60;
    let cleaned: String = s
        .chars()
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .collect();
    if cleaned.chars().count() <= MAX {
        cleaned
    } else {
        let cut: String = cleaned.chars().take(MAX).collect();
        format!("{cut}…")
    }
}

/// The known name closest to a misspelt one, if it is plausibly a typo.
pub fn closest<'a>(input: &str, known: &[&'a str]) -> Option<&'a str> {
    if input.len() > 64 {
        return None;
    }
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(input, k), *k))
        .filter(|(d, k)| *d <= 3.max(k.len() / 4) && *d < k.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn pointer_escapes_per_rfc6901() {
        let p = Pointer::root().key("actions").index(3).key("a/b~c");
        assert_eq!(p.as_str(), "/actions/3/a~1b~0c");
    }

    #[test]
    fn codes_are_unique_and_namespaced() {
        let mut seen = HashSet::new();
        for code in Code::ALL {
            assert!(seen.insert(code.as_str()), "duplicate code {code}");
            assert!(code.as_str().contains('.'), "{code} lacks a namespace");
        }
    }

    #[test]
    fn codes_read_back_from_their_text() {
        for code in Code::ALL {
            let json = serde_json::to_string(code).unwrap();
            assert_eq!(serde_json::from_str::<Code>(&json).unwrap(), *code);
        }
        let e = serde_json::from_str::<Code>("\"branch.prefx\"").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("unknown finding code `branch.prefx`"),
            "{e}"
        );
    }

    #[test]
    fn display_names_level_code_and_place() {
        let f = Finding::error(
            "/actions/0/branch",
            Code::BranchPrefix,
            "use quartermaster/",
        );
        assert_eq!(
            f.to_string(),
            "error[branch.prefix] /actions/0/branch: use quartermaster/"
        );
        let w = Finding::warning("", Code::PlanTooManyActions, "x");
        assert_eq!(w.to_string(), "warning[plan.too_many_actions] (plan): x");
    }

    #[test]
    fn closest_only_suggests_plausible_typos() {
        assert_eq!(closest("brnach", &["branch", "title"]), Some("branch"));
        assert_eq!(closest("zzz", &["branch", "title"]), None);
        assert_eq!(closest(&"x".repeat(100), &["branch"]), None);
    }

    #[test]
    fn clip_cuts_and_neutralises_control_characters() {
        assert_eq!(clip("a\nb"), "a\u{FFFD}b");
        assert_eq!(clip(&"é".repeat(100)).chars().count(), 61);
    }
}
