//! The test-runner policy: the test command's program must be an allowed runner, and its
//! arguments may not smuggle code in. It fails closed.

use super::pattern::{
    self, FlagSpec, Mismatch, Pattern, PatternError, PatternKind, Positionals, Refusal,
    TestPattern, ValueKind,
};
use super::{Mission, PathArg, PositionalKind, PositionalsFile, TestRunnersFile, paths};
use crate::finding::{Code, clip};
use std::collections::BTreeMap;

impl Mission {
    /// Checks a test command against the test-runner policy. Fails closed: anything not
    /// explicitly allowed is refused, with the most specific reason found.
    pub fn check_test_command(&self, command: &str) -> Result<TestCommand, Refusal> {
        let words = pattern::split(command)?;
        if let Some(refusal) = known_abuse(&words) {
            return Err(refusal);
        }
        let program = words[0].as_str();
        let candidates: Vec<&TestPattern> = self
            .tests
            .iter()
            .filter(|t| t.pattern.program() == program)
            .collect();
        if let Some(refusal) = unlisted_npx(&words, &candidates) {
            return Err(refusal);
        }
        if candidates.is_empty() {
            let runners: Vec<&str> = self.test_runners().into_iter().collect();
            return Err(Refusal::new(
                Code::TestRunnerNotAllowed,
                format!(
                    "`{}` is not an allowed test runner; use one of: {}",
                    clip(program),
                    runners.join(", ")
                ),
            ));
        }
        let mut best: Option<Mismatch> = None;
        for candidate in &candidates {
            match candidate.matches(&words) {
                Ok(args) => {
                    let resolved = paths::check(&words, &args)?;
                    let (argv, moved) = candidate.executed(&words);
                    let paths = resolved
                        .paths
                        .into_iter()
                        .map(|p| PathArg {
                            word: p.word + moved,
                            ..p
                        })
                        .collect();
                    return Ok(TestCommand {
                        text: command.to_string(),
                        script: candidate.script_word(&words),
                        argv,
                        paths,
                        cargo_packages: resolved.cargo_packages,
                    });
                }
                Err(m) => Mismatch::keep_deepest(&mut best, m),
            }
        }
        let forms: Vec<&str> = candidates.iter().map(|t| t.pattern.source()).collect();
        Err(Mismatch::explain(
            best,
            Code::TestNotAllowlisted,
            "no allowed test pattern matches",
            program,
            &forms,
        ))
    }
}

/// A test command the policy allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCommand {
    /// The command as the plan wrote it, for messages and reports.
    pub text: String,
    /// The program and its arguments, exactly as they will be executed: the words of the
    /// command, or its form's `runs` filled with them.
    pub argv: Vec<String>,
    /// What its pattern's `<script>` matched (`npm run <script>`), if it has one.
    pub script: Option<String>,
    /// The arguments that name files in the checkout; validation checked them as text, and
    /// [`super::check_test_paths`] resolves them in the workspace before the command runs.
    pub paths: Vec<PathArg>,
    /// Packages named by cargo's `-p`: [`super::check_test_paths`] confirms each is a workspace
    /// member (cargo would otherwise build and run a dependency's tests).
    pub(crate) cargo_packages: Vec<String>,
}

/// Programs that fetch and run packages (`npx` runs only the test runners the policy names, see
/// [`unlisted_npx`]).
const EXECUTORS: &[&str] = &["pnpx", "bunx", "pipx", "uvx", "dlx"];
/// Options of `uv run` and `poetry run` that bring in, or run, code the lock does not name.
const OUTSIDE_THE_LOCK: &[&str] = &[
    "--with",
    "--with-editable",
    "--with-requirements",
    "--isolated",
    "--script",
    "--gui-script",
    "--from",
    "--python",
    "-p",
    "--index",
    "--default-index",
    "--index-url",
    "--extra-index-url",
    "--find-links",
    "-f",
];
/// Programs that run code given on their command line (with the right flag), or run another
/// program.
const INTERPRETERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "pwsh",
    "powershell",
    "node",
    "deno",
    "perl",
    "php",
    "lua",
    "tclsh",
    "osascript",
    "env",
    "sudo",
    "xargs",
    "nohup",
    "timeout",
    "nice",
    "busybox",
    "eval",
    "exec",
    "awk",
];

fn executor(what: &str) -> Option<Refusal> {
    Some(Refusal::new(
        Code::TestPackageExecutor,
        format!(
            "{what} downloads or runs arbitrary packages; test commands may only run the repository's own tests"
        ),
    ))
}

fn install(what: &str) -> Option<Refusal> {
    Some(Refusal::new(
        Code::TestInstall,
        format!("{what} installs software; test commands may only run tests"),
    ))
}

fn inline(what: &str) -> Option<Refusal> {
    Some(Refusal::new(
        Code::TestInlineCode,
        format!(
            "{what} runs code written in the plan; run the repository's tests instead (e.g. `python -m pytest`)"
        ),
    ))
}

/// Specific diagnoses for the classic ways a test command smuggles code, so the refusal names the
/// abuse rather than just "not allowed".
fn known_abuse(words: &[String]) -> Option<Refusal> {
    let w = |i: usize| words.get(i).map(String::as_str).unwrap_or_default();
    let program = w(0);
    if EXECUTORS.contains(&program) {
        return executor(&format!("`{program}`"));
    }
    if program == "npx" && w(1).starts_with('-') {
        return executor(&format!("`npx {}`", clip(w(1))));
    }
    if let Some(refusal) = wrapped_abuse(words) {
        return Some(refusal);
    }
    if INTERPRETERS.contains(&program) {
        return inline_flag(program, &words[1..], &format!("`{program}"));
    }
    match (program, w(1)) {
        ("npm" | "pnpm" | "yarn" | "bun", "exec" | "x" | "dlx") => {
            executor(&format!("`{program} {}`", w(1)))
        }
        ("go" | "cargo", "run") => executor(&format!("`{program} run`")),
        ("npm", "install" | "i" | "ci" | "add")
        | ("yarn" | "pnpm" | "bun", "add" | "install" | "i")
        | ("pip" | "pip3" | "gem" | "cargo" | "go" | "poetry", "install")
        | ("go" | "poetry", "get" | "add")
        | ("bundle", "install" | "add")
        | ("dotnet", "add" | "tool") => install(&format!("`{program} {}`", w(1))),
        ("python" | "python3", "-m") if matches!(w(2), "pip" | "ensurepip") => {
            install(&format!("`{program} -m {}`", w(2)))
        }
        ("python" | "python3", first) if first == "-" || first.starts_with("-c") => {
            inline(&format!("`{program} {}`", clip(first)))
        }
        ("ruby", _) => words
            .iter()
            .skip(1)
            .find(|a| a.starts_with("-e") || a.as_str() == "-")
            .and_then(|a| inline(&format!("`ruby {}`", clip(a)))),
        ("bundle", "exec")
            if matches!(w(2), "ruby" | "node" | "sh" | "bash" | "python" | "python3") =>
        {
            inline_flag(w(2), &words[3..], &format!("`bundle exec {}", w(2)))
        }
        ("make", _) => words
            .iter()
            .skip(1)
            .find(|a| a.starts_with("--eval") || a.starts_with("-E"))
            .and_then(|a| inline(&format!("`make {}`", clip(a)))),
        _ => None,
    }
}

/// `uv run` and `poetry run` run a command in the project's environment: an option that brings
/// in packages the lock does not name is refused, and so is whatever the command itself would be
/// refused for (`uv run python -c ...`). `uv tool run` fetches and runs a tool.
fn wrapped_abuse(words: &[String]) -> Option<Refusal> {
    let w = |i: usize| words.get(i).map(String::as_str).unwrap_or_default();
    match (w(0), w(1)) {
        ("uv", "tool") => executor("`uv tool`"),
        ("uv" | "poetry", "run") => {
            let option = words[2..]
                .iter()
                .take_while(|a| a.starts_with('-'))
                .find(|a| OUTSIDE_THE_LOCK.contains(&a.split('=').next().unwrap_or_default()));
            if let Some(option) = option {
                return executor(&format!("`{} run {}`", w(0), clip(option)));
            }
            let inner = &words[2..];
            (!inner.is_empty() && !inner[0].starts_with('-'))
                .then(|| known_abuse(inner))
                .flatten()
        }
        _ => None,
    }
}

/// `npx NAME` runs NAME from the project's `node_modules/.bin`, or downloads it: only the test
/// runners the policy names for `npx` are allowed, and the run itself never downloads.
fn unlisted_npx(words: &[String], candidates: &[&TestPattern]) -> Option<Refusal> {
    let name = words.get(1).map(String::as_str)?;
    if words[0] != "npx"
        || candidates
            .iter()
            .any(|t| t.pattern.literal(1) == Some(name))
    {
        return None;
    }
    let mut listed: Vec<&str> = candidates
        .iter()
        .filter_map(|t| t.pattern.literal(1))
        .collect();
    listed.dedup();
    if listed.is_empty() {
        return executor("`npx`");
    }
    Some(Refusal::new(
        Code::TestPackageExecutor,
        format!(
            "`npx {name}` downloads and runs `{name}` unless the project installs it; with `npx`, a test command may only run a test runner the policy names ({}), from the project's own node_modules",
            listed.join(", "),
            name = clip(name),
        ),
    ))
}

/// The refusal for the first of `args` that makes `program` run inline code; `shown` is how the
/// command starts, for the message.
fn inline_flag(program: &str, args: &[String], shown: &str) -> Option<Refusal> {
    let flag = args.iter().find(|a| is_inline_flag(program, a))?;
    inline(&format!("{shown} {}`", clip(flag)))
}

fn is_inline_flag(program: &str, arg: &str) -> bool {
    match program {
        "node" | "deno" | "bun" => {
            matches!(arg, "-e" | "-p" | "--eval" | "--print" | "eval") || arg.starts_with("--eval=")
        }
        "perl" | "ruby" => arg.starts_with("-e") || arg.starts_with("-E"),
        "python" | "python3" => arg.starts_with("-c"),
        "awk" => true,
        _ => arg == "-c" || arg.starts_with("-c") && !arg.starts_with("--"),
    }
}

/// Why a mission's test-runner policy was refused.
#[derive(Debug, thiserror::Error)]
pub enum RunnersError {
    #[error("flag set `{name}`: {source}")]
    FlagSet {
        name: String,
        #[source]
        source: PatternError,
    },
    #[error("test pattern `{pattern}`: {source}")]
    Pattern {
        pattern: String,
        #[source]
        source: PatternError,
    },
    #[error("test pattern `{pattern}`, runs `{runs}`: {source}")]
    Runs {
        pattern: String,
        runs: String,
        #[source]
        source: PatternError,
    },
    #[error("test pattern `{pattern}` uses unknown flag set `{set}`")]
    UnknownFlagSet { pattern: String, set: String },
    #[error("test pattern `{pattern}`: bad positional `{positional}`")]
    Positional { pattern: String, positional: String },
}

/// Compiles the test-runner policy of a mission.
pub(super) fn compile(file: TestRunnersFile) -> Result<Vec<TestPattern>, RunnersError> {
    let mut sets: BTreeMap<&str, Vec<FlagSpec>> = BTreeMap::new();
    for (name, specs) in &file.flag_sets {
        let parsed = specs
            .iter()
            .map(|s| {
                FlagSpec::parse(s).map_err(|source| RunnersError::FlagSet {
                    name: name.clone(),
                    source,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        sets.insert(name, parsed);
    }
    file.commands
        .iter()
        .map(|c| {
            let pattern = Pattern::parse(&c.pattern, PatternKind::Test).map_err(|source| {
                RunnersError::Pattern {
                    pattern: c.pattern.clone(),
                    source,
                }
            })?;
            let runs = match &c.runs {
                Some(runs) => {
                    let runs = Pattern::parse(runs, PatternKind::Test)
                        .and_then(|r| pattern::check_test_runs(&pattern, &r).map(|()| r))
                        .map_err(|source| RunnersError::Runs {
                            pattern: c.pattern.clone(),
                            runs: runs.clone(),
                            source,
                        })?;
                    Some(runs)
                }
                None => None,
            };
            let mut flags = Vec::new();
            for set in &c.flags {
                let specs = sets
                    .get(set.as_str())
                    .ok_or_else(|| RunnersError::UnknownFlagSet {
                        pattern: c.pattern.clone(),
                        set: set.clone(),
                    })?;
                flags.extend(specs.iter().cloned());
            }
            let positionals = match &c.positionals {
                None => Positionals::Kind(ValueKind::Path),
                Some(PositionalsFile::Kind(kind)) => Positionals::Kind(positional_kind(kind)),
                Some(PositionalsFile::OneOf(choices)) => {
                    if let Some(bad) = choices.iter().find(|c| ValueKind::Target.check(c).is_err())
                    {
                        return Err(RunnersError::Positional {
                            pattern: c.pattern.clone(),
                            positional: bad.clone(),
                        });
                    }
                    Positionals::OneOf(choices.clone())
                }
            };
            Ok(TestPattern {
                pattern,
                runs,
                flags,
                positionals,
            })
        })
        .collect()
}

fn positional_kind(kind: &PositionalKind) -> ValueKind {
    match kind {
        PositionalKind::Path => ValueKind::Path,
        PositionalKind::Target => ValueKind::Target,
        PositionalKind::Word => ValueKind::Word,
        PositionalKind::Test => ValueKind::Test,
        PositionalKind::GoPackage => ValueKind::GoPackage,
        PositionalKind::PythonFile => ValueKind::PythonFile,
        PositionalKind::Filter => ValueKind::Filter,
    }
}

#[cfg(test)]
mod tests;
