//! The typed command pattern language and its matcher.
//!
//! A pattern such as `go get <pkg>@<ver>` is a list of words; each word is literal text and typed
//! placeholders. A command matches only if it splits (shell words) into exactly the pattern's words:
//! no prefix matching, so `go get -toolexec=/tmp/x mod@v1` can never pass as `go get <pkg>@<ver>`.
//!
//! Placeholders:
//! - `<pkg>` a package name of the ecosystem, declared in the action's `updates` (update commands);
//! - `<ver>` a version equal to that package's declared `to` (update commands);
//! - `<from>` a version equal to that package's declared `from`: the copy to move where a lock
//!   holds several versions of one name, as in cargo's `-p <pkg>@<from>` (update commands);
//! - `<file:GLOB>` a file the command reads, a whole word: a relative path inside the working
//!   directory whose name matches GLOB (`*` within a name), e.g. `<file:requirements*.in>`
//!   (update commands);
//! - `<script>` an npm-style script name, letters, digits and `_.:-` (test commands);
//! - `<args>` any number of test arguments: options from the pattern's flag sets and positionals of
//!   the pattern's positional kind (test commands; at most one per pattern).
//!
//! Flag specs (in the test-runner policy) are `-v` (no value) or `-count <n>` (a value of kind
//! `<n>`, `<word>`, `<path>` or `<expr>`), given as `-count 3`, `-count=3`, or for one-letter
//! options glued, `-j4`. A value never starts with `-`.

use crate::finding::{Code, clip};
use regex::Regex;
use std::sync::LazyLock;

/// Why a command was refused: the finding code and a message that says what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: Code,
    pub message: String,
}

impl Refusal {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// One piece of a pattern word.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Lit(String),
    Pkg,
    Ver,
    From,
    /// A relative path whose file name matches the glob.
    File(String),
    Script,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(Vec<Part>),
    Args,
}

/// What a pattern is for: update patterns take `<pkg>`/`<ver>`, test patterns `<script>`/`<args>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternKind {
    Update,
    Test,
}

/// A parsed command pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    source: String,
    tokens: Vec<Token>,
}

impl Pattern {
    /// Parses a pattern, refusing forms the matcher could not apply safely.
    pub fn parse(source: &str, kind: PatternKind) -> Result<Self, PatternError> {
        let words: Vec<&str> = source.split_whitespace().collect();
        let Some(program) = words.first() else {
            return Err(PatternError::Empty);
        };
        if !PROGRAM.is_match(program) {
            return Err(PatternError::NotAProgram(program.to_string()));
        }
        let mut tokens = Vec::new();
        let (mut pkgs, mut vers, mut args, mut files, mut froms) = (0, 0, 0, 0, 0);
        for word in &words {
            if *word == "<args>" {
                if kind != PatternKind::Test {
                    return Err(PatternError::ArgsOutsideTests);
                }
                args += 1;
                tokens.push(Token::Args);
                continue;
            }
            let parts = parse_parts(word)?;
            for part in &parts {
                match (part, kind) {
                    (Part::Pkg, PatternKind::Update) => pkgs += 1,
                    (Part::Ver, PatternKind::Update) => vers += 1,
                    (Part::From, PatternKind::Update) => froms += 1,
                    (Part::File(_), PatternKind::Update) if parts.len() == 1 => files += 1,
                    (Part::File(_), PatternKind::Update) => {
                        return Err(PatternError::FileInWord(word.to_string()));
                    }
                    (Part::Script, PatternKind::Test) => {}
                    (Part::Lit(_), _) => {}
                    (p, _) => {
                        return Err(PatternError::NotAllowed {
                            placeholder: format!("{p:?}"),
                            kind,
                        });
                    }
                }
            }
            if kind == PatternKind::Test && parts.len() > 1 {
                return Err(PatternError::MixedTestWord(word.to_string()));
            }
            tokens.push(Token::Word(parts));
        }
        if matches!(tokens.first(), Some(Token::Word(p)) if !matches!(p.as_slice(), [Part::Lit(_)]))
        {
            return Err(PatternError::FirstNotProgram);
        }
        let script_at = tokens
            .iter()
            .position(|t| matches!(t, Token::Word(parts) if parts.contains(&Part::Script)));
        let args_at = tokens.iter().position(|t| *t == Token::Args);
        if let (Some(script), Some(args)) = (script_at, args_at)
            && script > args
        {
            return Err(PatternError::ScriptAfterArgs);
        }
        if pkgs > 1 || vers > 1 || args > 1 || files > 1 || froms > 1 {
            return Err(PatternError::Repeated);
        }
        for (count, name) in [(vers, "<ver>"), (froms, "<from>")] {
            if count == 1 && pkgs == 0 {
                return Err(PatternError::NeedsPackage(name));
            }
        }
        Ok(Self {
            source: words.join(" "),
            tokens,
        })
    }

    /// The pattern as written, for messages and documentation.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The program this pattern runs.
    pub fn program(&self) -> &str {
        match self.tokens.first() {
            Some(Token::Word(parts)) => match parts.as_slice() {
                [Part::Lit(p)] => p,
                _ => "",
            },
            _ => "",
        }
    }

    /// The `i`th word, when it is literal text.
    pub fn literal(&self, i: usize) -> Option<&str> {
        match self.tokens.get(i) {
            Some(Token::Word(parts)) => match parts.as_slice() {
                [Part::Lit(text)] => Some(text),
                _ => None,
            },
            _ => None,
        }
    }
}

fn parse_parts(word: &str) -> Result<Vec<Part>, PatternError> {
    let mut parts = Vec::new();
    let mut rest = word;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('<') {
            let (name, tail) = after
                .split_once('>')
                .ok_or_else(|| PatternError::Unclosed(word.to_string()))?;
            let part = match name {
                "pkg" => Part::Pkg,
                "ver" => Part::Ver,
                "from" => Part::From,
                "script" => Part::Script,
                other => match other.strip_prefix("file:") {
                    Some(glob) => Part::File(file::parse_glob(glob)?),
                    None => return Err(PatternError::UnknownPlaceholder(other.to_string())),
                },
            };
            if matches!(
                parts.last(),
                Some(Part::Pkg | Part::Ver | Part::From | Part::File(_) | Part::Script)
            ) {
                return Err(PatternError::Adjacent(word.to_string()));
            }
            parts.push(part);
            rest = tail;
        } else {
            let end = rest.find('<').unwrap_or(rest.len());
            let literal = &rest[..end];
            if literal.contains('>') {
                return Err(PatternError::StrayClose(word.to_string()));
            }
            parts.push(Part::Lit(literal.to_string()));
            rest = &rest[end..];
        }
    }
    Ok(parts)
}

/// Checks the values bound to `<pkg>` and `<ver>`; supplied by the mission, which knows the
/// ecosystem's grammars and the action's declared updates.
pub(crate) trait Placeholders {
    fn package(&self, name: &str) -> Result<(), Refusal>;
    fn version(&self, package: &str, version: &str) -> Result<(), Refusal>;
    /// `version` must be the package's declared `from`.
    fn declared_from(&self, package: &str, version: &str) -> Result<(), Refusal>;
}

/// What an update command bound.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bound {
    pub package: Option<String>,
    pub version: Option<String>,
    /// The version bound to `<from>`.
    pub from: Option<String>,
    /// The path bound to `<file:…>`.
    pub file: Option<String>,
}

/// A failed match, with how far it got: the deepest failure across a program's patterns is the
/// one worth reporting (it names the word that is actually wrong).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub depth: usize,
    pub refusal: Refusal,
}

impl Mismatch {
    fn at_word(word: usize, placeholder: bool, refusal: Refusal) -> Self {
        Self {
            depth: word * 2 + usize::from(placeholder),
            refusal,
        }
    }

    /// Keeps in `best` whichever of it and `m` got further.
    pub(crate) fn keep_deepest(best: &mut Option<Mismatch>, m: Mismatch) {
        if best.as_ref().is_none_or(|b| m.depth > b.depth) {
            *best = Some(m);
        }
    }

    /// The refusal for a command none of `program`'s patterns (`forms`) matched: the deepest
    /// mismatch's, and when that is a plain "not allowlisted", the forms that are.
    pub fn explain(
        best: Option<Mismatch>,
        not_allowlisted: Code,
        fallback: &str,
        program: &str,
        forms: &[&str],
    ) -> Refusal {
        let mut refusal = best
            .map(|m| m.refusal)
            .unwrap_or_else(|| Refusal::new(not_allowlisted, fallback));
        if refusal.code == not_allowlisted {
            refusal.message = format!(
                "{}; allowed forms for `{program}`: {}",
                refusal
                    .message
                    .split("; the allowed form")
                    .next()
                    .unwrap_or_default(),
                forms.join(", ")
            );
        }
        refusal
    }
}

impl Pattern {
    /// Matches an update command's words against this pattern.
    pub(crate) fn match_update(
        &self,
        words: &[String],
        check: &dyn Placeholders,
    ) -> Result<Bound, Mismatch> {
        let mut bound = Bound::default();
        for (i, token) in self.tokens.iter().enumerate() {
            let Token::Word(parts) = token else {
                unreachable!("update patterns have no <args>")
            };
            let Some(word) = words.get(i) else {
                return Err(Mismatch::at_word(
                    i,
                    false,
                    Refusal::new(
                        Code::CommandNotAllowlisted,
                        format!(
                            "the command is incomplete; the allowed form is `{}`",
                            self.source
                        ),
                    ),
                ));
            };
            let literal_here = matches!(parts.as_slice(), [Part::Lit(l)] if l == word);
            if word.starts_with('-') && !literal_here {
                let expected = match parts.as_slice() {
                    [Part::Lit(l)] if l.starts_with('-') => Some(l.as_str()),
                    _ => None,
                };
                return Err(Mismatch::at_word(
                    i,
                    false,
                    option_refusal(word, &self.source, expected),
                ));
            }
            match_word(parts, word, &mut bound, check).map_err(|(placeholder, refusal)| {
                let refusal = refusal.unwrap_or_else(|| {
                    Refusal::new(
                        Code::CommandNotAllowlisted,
                        format!(
                            "`{}` does not fit `{}`; the allowed form is `{}`",
                            clip(word),
                            render(parts),
                            self.source
                        ),
                    )
                });
                Mismatch::at_word(i, placeholder, refusal)
            })?;
        }
        if let Some(extra) = words.get(self.tokens.len()) {
            let refusal = if extra.starts_with('-') {
                option_refusal(extra, &self.source, None)
            } else {
                Refusal::new(
                    Code::CommandNotAllowlisted,
                    format!(
                        "unexpected argument `{}`; the allowed form is `{}`",
                        clip(extra),
                        self.source
                    ),
                )
            };
            return Err(Mismatch::at_word(self.tokens.len(), false, refusal));
        }
        Ok(bound)
    }
}

/// Options that are another spelling of one an allowed form writes.
const SPELLINGS: &[(&str, &str)] = &[("--package", "-p"), ("-P", "--upgrade-package")];

/// Refuses an option where the form has none, or another one (`expected`), naming the one to write.
fn option_refusal(word: &str, form: &str, expected: Option<&str>) -> Refusal {
    let word = clip(word);
    let (option, _) = word.split_once('=').unwrap_or((&word, ""));
    let message = match expected {
        Some(expected) if SPELLINGS.contains(&(option, expected)) => format!(
            "`{option}` is written `{expected}` in the allowed form `{form}`; write `{expected}`"
        ),
        Some(expected) => format!(
            "`{word}` is an option the allowed form `{form}` does not take; it takes `{expected}` here"
        ),
        None => format!(
            "`{word}` is an option, and the allowed form `{form}` takes none here; remove it"
        ),
    };
    Refusal::new(Code::CommandOptionInjection, message)
}

fn render(parts: &[Part]) -> String {
    parts
        .iter()
        .map(|p| match p {
            Part::Lit(l) => l.clone(),
            Part::Pkg => "<pkg>".into(),
            Part::Ver => "<ver>".into(),
            Part::From => "<from>".into(),
            Part::File(glob) => format!("<file:{glob}>"),
            Part::Script => "<script>".into(),
        })
        .collect()
}

/// Matches one word against its parts, trying every way the literals can split it; the rightmost
/// split is tried first (`@scope/name@1.0.0` splits at the last `@`) and its failure is the one
/// reported. `Err((placeholder_failed, refusal))`; `None` refusal means the literals did not fit.
fn match_word(
    parts: &[Part],
    word: &str,
    bound: &mut Bound,
    check: &dyn Placeholders,
) -> Result<(), (bool, Option<Refusal>)> {
    let splits = split_points(parts, word);
    if splits.is_empty() {
        if parts.contains(&Part::Pkg)
            && let Some(kind) = super::grammar::package_spec_kind(word)
        {
            return Err((
                true,
                Some(Refusal::new(
                    Code::CommandPackageSpec,
                    format!(
                        "`{}` is {kind}; only registry package names declared in `updates` are allowed",
                        clip(word)
                    ),
                )),
            ));
        }
        return Err((false, None));
    }
    let mut first_failure = None;
    for values in splits {
        let mut attempt = bound.clone();
        match bind(parts, &values, &mut attempt, check) {
            Ok(()) => {
                *bound = attempt;
                return Ok(());
            }
            Err(refusal) => {
                first_failure.get_or_insert(refusal);
            }
        }
    }
    Err((true, first_failure))
}

fn bind(
    parts: &[Part],
    values: &[&str],
    bound: &mut Bound,
    check: &dyn Placeholders,
) -> Result<(), Refusal> {
    for (part, value) in parts.iter().zip(values) {
        match part {
            Part::Pkg => {
                check.package(value)?;
                bound.package = Some((*value).to_string());
            }
            Part::Ver => {
                let package = bound.package.as_deref().unwrap_or_default();
                check.version(package, value)?;
                bound.version = Some((*value).to_string());
            }
            Part::From => {
                let package = bound.package.as_deref().unwrap_or_default();
                check.declared_from(package, value)?;
                bound.from = Some((*value).to_string());
            }
            Part::File(glob) => {
                file::check(glob, value)?;
                bound.file = Some((*value).to_string());
            }
            Part::Lit(_) | Part::Script => {}
        }
    }
    Ok(())
}

/// Every assignment of `word` to `parts` consistent with the literal parts, rightmost literal
/// occurrences first. Placeholders get the text between literals. Words are short (bounded by
/// `MAX_COMMAND_LEN`) and patterns have one or two literals, so enumeration is cheap.
fn split_points<'w>(parts: &[Part], word: &'w str) -> Vec<Vec<&'w str>> {
    fn go<'w>(parts: &[Part], rest: &'w str, acc: &mut Vec<&'w str>, out: &mut Vec<Vec<&'w str>>) {
        match parts {
            [] => {
                if rest.is_empty() {
                    out.push(acc.clone());
                }
            }
            [Part::Lit(lit), tail @ ..] => {
                if let Some(after) = rest.strip_prefix(lit.as_str()) {
                    acc.push(&rest[..lit.len()]);
                    go(tail, after, acc, out);
                    acc.pop();
                }
            }
            [_placeholder] => {
                acc.push(rest);
                go(&[], "", acc, out);
                acc.pop();
            }
            [_placeholder, Part::Lit(lit), tail @ ..] => {
                let positions: Vec<usize> =
                    rest.match_indices(lit.as_str()).map(|(i, _)| i).collect();
                for at in positions.into_iter().rev() {
                    acc.push(&rest[..at]);
                    acc.push(&rest[at..at + lit.len()]);
                    go(tail, &rest[at + lit.len()..], acc, out);
                    acc.pop();
                    acc.pop();
                }
            }
            [_, _, ..] => {}
        }
    }
    let mut out = Vec::new();
    go(parts, word, &mut Vec::new(), &mut out);
    out
}

static PROGRAM: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z0-9][a-z0-9._-]*$").expect("valid regex"));
static FLAG_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^--?[A-Za-z0-9][A-Za-z0-9._-]*$|^--$").expect("valid regex"));
static NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[0-9]{1,6}$").expect("valid regex"));
static WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[A-Za-z0-9_.,:+@%^*][A-Za-z0-9_.,:/+@%^*-]{0,199}$").expect("valid regex")
});
static NPM_SCOPED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^@[a-z0-9][a-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$").expect("valid regex")
});
static EXPR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[A-Za-z0-9_.,:=!()~*][A-Za-z0-9_.,:=!()~* -]{0,199}$").expect("valid regex")
});
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[A-Za-z0-9_.][A-Za-z0-9_.,:/+@-]{0,255}$").expect("valid regex")
});
static TARGET: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$").expect("valid regex"));
static SCRIPT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$").expect("valid regex"));

mod error;
mod file;
mod fill;
mod split;
mod test_args;
mod test_runs;

pub use error::PatternError;
pub use split::{MAX_COMMAND_LEN, MAX_WORDS, split, splits_on_this_thread};

pub use test_args::{Arg, FlagSpec, Positionals, TestPattern, ValueKind};
pub(crate) use test_runs::check_runs as check_test_runs;

#[cfg(test)]
mod tests;
