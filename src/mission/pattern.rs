//! The typed command pattern language and its matcher.
//!
//! A pattern such as `go get <pkg>@<ver>` is a list of words; each word is literal text and typed
//! placeholders. A command matches only if it splits (shell words) into exactly the pattern's words:
//! no prefix matching, so `go get -toolexec=/tmp/x mod@v1` can never pass as `go get <pkg>@<ver>`.
//!
//! Placeholders:
//! - `<pkg>` a package name of the ecosystem, declared in the action's `updates` (update commands);
//! - `<ver>` a version equal to that package's declared `to` (update commands);
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

/// Longest command accepted, in bytes.
pub const MAX_COMMAND_LEN: usize = 1024;
/// Most words a command may split into.
pub const MAX_WORDS: usize = 64;

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

/// Splits a command into words, refusing anything that only makes sense to a shell. Nothing
/// Quartermaster runs goes through a shell, so shell syntax in a plan is either a misunderstanding
/// or an attack, and in both cases the command must not run.
pub fn split(command: &str) -> Result<Vec<String>, Refusal> {
    if command.trim().is_empty() {
        return Err(Refusal::new(Code::CommandEmpty, "the command is empty"));
    }
    if command.len() > MAX_COMMAND_LEN {
        return Err(Refusal::new(
            Code::TooLong,
            format!(
                "the command is {} bytes; commands are limited to {MAX_COMMAND_LEN}",
                command.len()
            ),
        ));
    }
    if let Some(c) = command.chars().find(|c| shell_meaning(*c).is_some()) {
        let meaning = shell_meaning(c).unwrap_or("a control character");
        return Err(Refusal::new(
            Code::CommandShellSyntax,
            format!(
                "{} ({meaning}) is shell syntax; commands run without a shell, one program per command: split it into separate commands or remove it",
                describe_char(c)
            ),
        ));
    }
    let words = shell_words::split(command).map_err(|_| {
        Refusal::new(
            Code::CommandUnparseable,
            "the command has an unbalanced quote; quote each argument completely",
        )
    })?;
    if words.len() > MAX_WORDS {
        return Err(Refusal::new(
            Code::TooMany,
            format!("the command has {} words; at most {MAX_WORDS}", words.len()),
        ));
    }
    let first = &words[0];
    if ENV_ASSIGNMENT.is_match(first) {
        return Err(Refusal::new(
            Code::CommandEnvAssignment,
            format!(
                "`{}` sets an environment variable; commands cannot change the environment (ask the operator to pass variables with the extra-env input)",
                clip(first)
            ),
        ));
    }
    if first.contains('/') || first.contains('\\') {
        let bare = first.rsplit(['/', '\\']).next().unwrap_or_default();
        return Err(Refusal::new(
            Code::CommandProgramPath,
            format!(
                "`{}` is a path; give the bare program name (`{}`), which is resolved on the trusted PATH",
                clip(first),
                clip(bare)
            ),
        ));
    }
    Ok(words)
}

fn shell_meaning(c: char) -> Option<&'static str> {
    Some(match c {
        ';' => "a command separator",
        '|' => "a pipe or `||`",
        '&' => "background or `&&`",
        '$' => "variable or command substitution",
        '`' => "command substitution",
        '<' | '>' => "a redirection",
        '\\' => "an escape",
        '#' => "a comment",
        '\n' | '\r' => "a line break",
        c if c.is_control() && c != '\t' => "a control character",
        _ => return None,
    })
}

fn describe_char(c: char) -> String {
    match c {
        '\n' => "a newline".into(),
        '\r' => "a carriage return".into(),
        c if c.is_control() => format!("U+{:04X}", c as u32),
        c => format!("`{c}`"),
    }
}

/// One piece of a pattern word.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Lit(String),
    Pkg,
    Ver,
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
    pub fn parse(source: &str, kind: PatternKind) -> Result<Self, String> {
        let words: Vec<&str> = source.split_whitespace().collect();
        let Some(program) = words.first() else {
            return Err("empty pattern".into());
        };
        if !PROGRAM.is_match(program) {
            return Err(format!("`{program}` is not a bare program name"));
        }
        let mut tokens = Vec::new();
        let (mut pkgs, mut vers, mut args) = (0, 0, 0);
        for word in &words {
            if *word == "<args>" {
                if kind != PatternKind::Test {
                    return Err("`<args>` is only for test commands".into());
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
                    (Part::Script, PatternKind::Test) => {}
                    (Part::Lit(_), _) => {}
                    (p, _) => {
                        return Err(format!(
                            "{p:?} placeholder not allowed in {kind:?} patterns"
                        ));
                    }
                }
            }
            if kind == PatternKind::Test && parts.len() > 1 {
                return Err(format!(
                    "test pattern word `{word}` mixes text and placeholders"
                ));
            }
            tokens.push(Token::Word(parts));
        }
        if matches!(tokens.first(), Some(Token::Word(p)) if !matches!(p.as_slice(), [Part::Lit(_)]))
        {
            return Err("the first word must be the program".into());
        }
        let script_at = tokens
            .iter()
            .position(|t| matches!(t, Token::Word(parts) if parts.contains(&Part::Script)));
        let args_at = tokens.iter().position(|t| *t == Token::Args);
        if let (Some(script), Some(args)) = (script_at, args_at)
            && script > args
        {
            return Err("`<script>` must come before `<args>`".into());
        }
        if pkgs > 1 || vers > 1 || args > 1 {
            return Err("at most one `<pkg>`, one `<ver>` and one `<args>` per pattern".into());
        }
        if vers == 1 && pkgs == 0 {
            return Err("`<ver>` needs a `<pkg>` to compare with".into());
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

    /// Whether the pattern names a package (`go get <pkg>@<ver>`) or not (`go mod tidy`).
    pub fn mentions_package(&self) -> bool {
        self.tokens
            .iter()
            .any(|t| matches!(t, Token::Word(parts) if parts.contains(&Part::Pkg)))
    }
}

fn parse_parts(word: &str) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let mut rest = word;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('<') {
            let (name, tail) = after
                .split_once('>')
                .ok_or_else(|| format!("unclosed placeholder in `{word}`"))?;
            let part = match name {
                "pkg" => Part::Pkg,
                "ver" => Part::Ver,
                "script" => Part::Script,
                other => return Err(format!("unknown placeholder `<{other}>`")),
            };
            if matches!(parts.last(), Some(Part::Pkg | Part::Ver | Part::Script)) {
                return Err(format!(
                    "placeholders in `{word}` must be separated by literal text"
                ));
            }
            parts.push(part);
            rest = tail;
        } else {
            let end = rest.find('<').unwrap_or(rest.len());
            let literal = &rest[..end];
            if literal.contains('>') {
                return Err(format!("stray `>` in `{word}`"));
            }
            parts.push(Part::Lit(literal.to_string()));
            rest = &rest[end..];
        }
    }
    Ok(parts)
}

/// Checks the values bound to `<pkg>` and `<ver>`; supplied by the mission, which knows the
/// ecosystem's grammars and the action's declared updates.
pub trait Placeholders {
    fn package(&self, name: &str) -> Result<(), Refusal>;
    fn version(&self, package: &str, version: &str) -> Result<(), Refusal>;
}

/// What an update command bound.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bound {
    pub package: Option<String>,
    pub version: Option<String>,
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
}

impl Pattern {
    /// Matches an update command's words against this pattern.
    pub fn match_update(
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
                return Err(Mismatch::at_word(
                    i,
                    false,
                    option_refusal(word, &self.source),
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
                option_refusal(extra, &self.source)
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

fn option_refusal(word: &str, form: &str) -> Refusal {
    Refusal::new(
        Code::CommandOptionInjection,
        format!(
            "`{}` is an option, and the allowed form `{form}` takes none here; remove it",
            clip(word)
        ),
    )
}

fn render(parts: &[Part]) -> String {
    parts
        .iter()
        .map(|p| match p {
            Part::Lit(l) => l.as_str(),
            Part::Pkg => "<pkg>",
            Part::Ver => "<ver>",
            Part::Script => "<script>",
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

/// The kind of a flag's value or of a positional argument in a test command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// `<n>`: a small non-negative number.
    Number,
    /// `<word>`: a name, pattern or list (letters, digits, `_.,:/+@%^*`), no `=`.
    Word,
    /// `<path>`: a relative path inside the checkout (no `..`, no `.git`).
    Path,
    /// `<expr>`: a filter expression (`not slow and not db`), letters, digits, spaces, `_.,:=!()~*`.
    Expr,
    /// A build target or task name: letters, digits, `_.:/-`, no `=`.
    Target,
}

impl ValueKind {
    fn from_placeholder(s: &str) -> Option<Self> {
        Some(match s {
            "<n>" => ValueKind::Number,
            "<word>" => ValueKind::Word,
            "<path>" => ValueKind::Path,
            "<expr>" => ValueKind::Expr,
            _ => return None,
        })
    }

    /// `Ok` when `value` is of this kind; otherwise what was expected.
    pub fn check(self, value: &str) -> Result<(), &'static str> {
        let ok = match self {
            ValueKind::Number => NUMBER.is_match(value),
            ValueKind::Word => {
                WORD.is_match(value)
                    && !value.contains("..")
                    && !value.contains(":/")
                    && !value.contains("//")
                    // `@scope/name` (npm workspaces) but never `@file` (response files).
                    && (!value.starts_with('@') || NPM_SCOPED.is_match(value))
            }
            ValueKind::Expr => EXPR.is_match(value),
            ValueKind::Target => TARGET.is_match(value) && !has_parent(value),
            ValueKind::Path => {
                PATH.is_match(value)
                    && !has_parent(value)
                    && !value.contains("://")
                    && !value.split('/').any(|c| c.eq_ignore_ascii_case(".git"))
            }
        };
        if ok {
            Ok(())
        } else {
            Err(match self {
                ValueKind::Number => "a number",
                ValueKind::Word => {
                    "a plain word (letters, digits, `_.,:/+@%^*`; no `=`, `..`, absolute path or `@file`)"
                }
                ValueKind::Expr => "a filter expression (letters, digits, spaces, `_.,:=!()~*`)",
                ValueKind::Target => "a target name (letters, digits, `_.:/-`; no `=` or `..`)",
                ValueKind::Path => "a relative path inside the checkout (no `..`, `.git` or URL)",
            })
        }
    }
}

fn has_parent(value: &str) -> bool {
    value.split('/').any(|c| c == "..")
}

/// An option a test pattern accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagSpec {
    pub name: String,
    pub value: Option<ValueKind>,
    /// The value must be attached (`-Dtest=X`): for options whose tool reads a separate word as
    /// something else (Maven reads `-Dtest deploy` as the property `test` and the goal `deploy`).
    pub glued: bool,
}

impl FlagSpec {
    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut words = spec.split_whitespace();
        let first = words.next().ok_or("empty flag spec")?;
        let (name, glued_kind) = match first.split_once("=<") {
            Some((name, kind)) => (name, Some(format!("<{kind}"))),
            None => (first, None),
        };
        if !name.starts_with('-') || !FLAG_NAME.is_match(name) {
            return Err(format!("`{name}` is not an option name"));
        }
        let kind_of = |kind: &str| {
            ValueKind::from_placeholder(kind)
                .ok_or_else(|| format!("unknown value kind `{kind}` in `{spec}`"))
        };
        let glued = glued_kind.is_some();
        let value = match (glued_kind, words.next()) {
            (Some(kind), None) => Some(kind_of(&kind)?),
            (Some(_), Some(_)) => return Err(format!("flag spec `{spec}` has two values")),
            (None, None) => None,
            (None, Some(kind)) => Some(kind_of(kind)?),
        };
        if words.next().is_some() {
            return Err(format!(
                "flag spec `{spec}` has more than a name and a value"
            ));
        }
        Ok(Self {
            name: name.to_string(),
            value,
            glued,
        })
    }

    fn render(&self) -> String {
        if self.glued {
            return self.render_spaced().replacen(' ', "=", 1);
        }
        self.render_spaced()
    }

    fn render_spaced(&self) -> String {
        match self.value {
            None => self.name.clone(),
            Some(ValueKind::Number) => format!("{} <n>", self.name),
            Some(ValueKind::Word) | Some(ValueKind::Target) => format!("{} <word>", self.name),
            Some(ValueKind::Path) => format!("{} <path>", self.name),
            Some(ValueKind::Expr) => format!("{} <expr>", self.name),
        }
    }
}

/// Which positional arguments a test pattern's `<args>` accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Positionals {
    Kind(ValueKind),
    OneOf(Vec<String>),
}

/// A test command pattern with the options and positionals its `<args>` accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestPattern {
    pub pattern: Pattern,
    pub flags: Vec<FlagSpec>,
    pub positionals: Positionals,
}

impl TestPattern {
    /// Matches a test command's words.
    pub fn matches(&self, words: &[String]) -> Result<(), Mismatch> {
        let tokens = &self.pattern.tokens;
        let args_at = tokens.iter().position(|t| *t == Token::Args);
        let (prefix, suffix) = match args_at {
            Some(i) => (&tokens[..i], &tokens[i + 1..]),
            None => (&tokens[..], &tokens[tokens.len()..]),
        };
        let needed = prefix.len() + suffix.len();
        if words.len() < needed {
            return Err(Mismatch::at_word(
                words.len(),
                false,
                Refusal::new(
                    Code::TestNotAllowlisted,
                    format!(
                        "the command is incomplete; the allowed form is `{}`",
                        self.pattern.source
                    ),
                ),
            ));
        }
        let suffix_start = words.len() - suffix.len();
        let fixed = prefix.iter().zip(words.iter().enumerate()).chain(
            suffix
                .iter()
                .zip(words.iter().enumerate().skip(suffix_start)),
        );
        for (token, (i, word)) in fixed {
            self.fixed_word(token, i, word)?;
        }
        let middle = &words[prefix.len()..suffix_start];
        if args_at.is_none() {
            if let Some(extra) = middle.first() {
                let code = if extra.starts_with('-') {
                    Code::TestOptionNotAllowed
                } else {
                    Code::TestNotAllowlisted
                };
                return Err(Mismatch::at_word(
                    prefix.len(),
                    false,
                    Refusal::new(
                        code,
                        format!(
                            "unexpected argument `{}`; the allowed form is `{}`",
                            clip(extra),
                            self.pattern.source
                        ),
                    ),
                ));
            }
            return Ok(());
        }
        self.args(middle)
            .map_err(|(offset, refusal)| Mismatch::at_word(prefix.len() + offset, true, refusal))
    }

    fn fixed_word(&self, token: &Token, i: usize, word: &str) -> Result<(), Mismatch> {
        let Token::Word(parts) = token else {
            return Ok(());
        };
        match parts.as_slice() {
            [Part::Lit(lit)] if lit == word => Ok(()),
            [Part::Script] => SCRIPT
                .is_match(word)
                .then_some(())
                .ok_or_else(|| {
                    Mismatch::at_word(
                        i,
                        true,
                        Refusal::new(
                            Code::TestInvalidArgument,
                            format!(
                                "`{}` is not a script name (letters, digits, `_.:-`); the allowed form is `{}`",
                                clip(word),
                                self.pattern.source
                            ),
                        ),
                    )
                }),
            _ => {
                let code = if word.starts_with('-') {
                    Code::TestOptionNotAllowed
                } else {
                    Code::TestNotAllowlisted
                };
                Err(Mismatch::at_word(
                    i,
                    false,
                    Refusal::new(
                        code,
                        format!("`{}` does not fit `{}`", clip(word), self.pattern.source),
                    ),
                ))
            }
        }
    }

    /// The word a matched command has where the pattern has `<script>`.
    pub fn script_word(&self, words: &[String]) -> Option<String> {
        self.pattern
            .tokens
            .iter()
            .position(|t| matches!(t, Token::Word(parts) if parts.as_slice() == [Part::Script]))
            .and_then(|i| words.get(i).cloned())
    }

    /// Checks the words taken by `<args>`; on failure, the offending word's offset.
    fn args(&self, args: &[String]) -> Result<(), (usize, Refusal)> {
        let mut i = 0;
        while i < args.len() {
            let word = &args[i];
            if word.starts_with('-') && word.len() > 1 {
                i += self.flag(args, i).map_err(|r| (i, r))?;
            } else {
                self.positional(word).map_err(|r| (i, r))?;
                i += 1;
            }
        }
        Ok(())
    }

    /// Accepts the option at `args[i]`; returns how many words it took.
    fn flag(&self, args: &[String], i: usize) -> Result<usize, Refusal> {
        let word = &args[i];
        for spec in &self.flags {
            match spec.value {
                None if *word == spec.name => return Ok(1),
                None => {}
                Some(kind) => {
                    let (value, taken) = if spec.glued {
                        match word
                            .strip_prefix(spec.name.as_str())
                            .and_then(|rest| rest.strip_prefix('='))
                        {
                            Some(v) => (v, 1),
                            None if *word == spec.name => {
                                return Err(Refusal::new(
                                    Code::TestInvalidArgument,
                                    format!(
                                        "`{}` takes its value attached: `{}=<value>`",
                                        spec.name, spec.name
                                    ),
                                ));
                            }
                            None => continue,
                        }
                    } else if *word == spec.name {
                        match args.get(i + 1) {
                            Some(v) => (v.as_str(), 2),
                            None => {
                                return Err(Refusal::new(
                                    Code::TestInvalidArgument,
                                    format!("`{}` needs a value", spec.name),
                                ));
                            }
                        }
                    } else if let Some(v) = word
                        .strip_prefix(spec.name.as_str())
                        .and_then(|rest| rest.strip_prefix('='))
                    {
                        (v, 1)
                    } else if spec.name.len() == 2
                        && !spec.name.starts_with("--")
                        && word.len() > 2
                        && word.starts_with(spec.name.as_str())
                    {
                        (&word[2..], 1)
                    } else {
                        continue;
                    };
                    return kind.check(value).map(|()| taken).map_err(|expected| {
                        Refusal::new(
                            Code::TestInvalidArgument,
                            format!(
                                "`{}` is not a valid value for `{}`: expected {expected}",
                                clip(value),
                                spec.name
                            ),
                        )
                    });
                }
            }
        }
        let allowed: Vec<String> = self.flags.iter().map(FlagSpec::render).collect();
        let allowed = if allowed.is_empty() {
            "none".to_string()
        } else {
            allowed.join(", ")
        };
        Err(Refusal::new(
            Code::TestOptionNotAllowed,
            format!(
                "option `{}` is not allowed in `{}`; allowed options: {allowed}",
                clip(word),
                self.pattern.source
            ),
        ))
    }

    fn positional(&self, word: &str) -> Result<(), Refusal> {
        match &self.positionals {
            Positionals::Kind(kind) => kind.check(word).map_err(|expected| {
                Refusal::new(
                    Code::TestInvalidArgument,
                    format!(
                        "argument `{}` is not allowed in `{}`: expected {expected}",
                        clip(word),
                        self.pattern.source
                    ),
                )
            }),
            Positionals::OneOf(choices) if choices.iter().any(|c| c == word) => Ok(()),
            Positionals::OneOf(choices) => Err(Refusal::new(
                Code::TestInvalidArgument,
                format!(
                    "argument `{}` is not allowed in `{}`: use one of {}",
                    clip(word),
                    self.pattern.source,
                    choices.join(", ")
                ),
            )),
        }
    }
}

static PROGRAM: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z0-9][a-z0-9._-]*$").expect("valid regex"));
static FLAG_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^--?[A-Za-z0-9][A-Za-z0-9._-]*$|^--$").expect("valid regex"));
static ENV_ASSIGNMENT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*=").expect("valid regex"));
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

#[cfg(test)]
mod tests {
    use super::*;

    struct Declared(&'static [(&'static str, &'static str)]);

    impl Placeholders for Declared {
        fn package(&self, name: &str) -> Result<(), Refusal> {
            if name.is_empty() || name.starts_with('-') {
                return Err(Refusal::new(Code::CommandInvalidPackage, "bad"));
            }
            if self.0.iter().any(|(p, _)| *p == name) {
                Ok(())
            } else {
                Err(Refusal::new(
                    Code::CommandUndeclaredPackage,
                    name.to_string(),
                ))
            }
        }
        fn version(&self, package: &str, version: &str) -> Result<(), Refusal> {
            match self.0.iter().find(|(p, _)| *p == package) {
                Some((_, to)) if *to == version => Ok(()),
                _ => Err(Refusal::new(
                    Code::CommandVersionMismatch,
                    version.to_string(),
                )),
            }
        }
    }

    fn words(s: &str) -> Vec<String> {
        split(s).unwrap()
    }

    fn update(pattern: &str) -> Pattern {
        Pattern::parse(pattern, PatternKind::Update).unwrap()
    }

    #[test]
    fn split_refuses_shell_syntax_and_paths() {
        for (cmd, code) in [
            ("", Code::CommandEmpty),
            ("   ", Code::CommandEmpty),
            ("go mod tidy; curl x", Code::CommandShellSyntax),
            ("go mod tidy && curl x", Code::CommandShellSyntax),
            ("go get $(curl x)", Code::CommandShellSyntax),
            ("go get `id`", Code::CommandShellSyntax),
            ("go mod tidy > /dev/null", Code::CommandShellSyntax),
            ("go mod tidy\ncurl x", Code::CommandShellSyntax),
            ("go mod tidy # note", Code::CommandShellSyntax),
            ("go get 'unbalanced", Code::CommandUnparseable),
            ("GOFLAGS=-x go mod tidy", Code::CommandEnvAssignment),
            ("/usr/bin/go mod tidy", Code::CommandProgramPath),
            ("./go mod tidy", Code::CommandProgramPath),
        ] {
            assert_eq!(split(cmd).unwrap_err().code, code, "{cmd:?}");
        }
        assert_eq!(split(&"a ".repeat(600)).unwrap_err().code, Code::TooLong);
        assert_eq!(split(&"a ".repeat(65)).unwrap_err().code, Code::TooMany);
        assert_eq!(words("go  get   'x y'"), vec!["go", "get", "x y"]);
    }

    #[test]
    fn pattern_parse_refuses_ambiguous_or_misplaced_placeholders() {
        assert!(Pattern::parse("go get <pkg><ver>", PatternKind::Update).is_err());
        assert!(Pattern::parse("go get <ver>", PatternKind::Update).is_err());
        assert!(Pattern::parse("go test <args>", PatternKind::Update).is_err());
        assert!(Pattern::parse("npm run <script> <args> <args>", PatternKind::Test).is_err());
        assert!(Pattern::parse("<pkg> x", PatternKind::Update).is_err());
        assert!(Pattern::parse("/bin/go x", PatternKind::Update).is_err());
        assert!(Pattern::parse("go get <thing>", PatternKind::Update).is_err());
        let p = update("go  get <pkg>@<ver>");
        assert_eq!(p.source(), "go get <pkg>@<ver>");
        assert_eq!(p.program(), "go");
        assert!(p.mentions_package());
        assert!(!update("go mod tidy").mentions_package());
    }

    #[test]
    fn exact_match_binds_package_and_version() {
        let decl = Declared(&[
            ("github.com/gorilla/mux", "v1.8.1"),
            ("@types/node", "20.1.0"),
        ]);
        let b = update("go get <pkg>@<ver>")
            .match_update(&words("go get github.com/gorilla/mux@v1.8.1"), &decl)
            .unwrap();
        assert_eq!(b.package.as_deref(), Some("github.com/gorilla/mux"));
        assert_eq!(b.version.as_deref(), Some("v1.8.1"));
        let b = update("npm install <pkg>@<ver>")
            .match_update(&words("npm install @types/node@20.1.0"), &decl)
            .unwrap();
        assert_eq!(b.package.as_deref(), Some("@types/node"));
    }

    #[test]
    fn option_injection_under_an_allowed_prefix_is_refused() {
        let decl = Declared(&[("github.com/a/b", "v1.0.0"), ("lodash", "4.17.21")]);
        let go = update("go get <pkg>@<ver>");
        let m = go
            .match_update(
                &words("go get -toolexec=/tmp/x github.com/a/b@v1.0.0"),
                &decl,
            )
            .unwrap_err();
        assert_eq!(m.refusal.code, Code::CommandOptionInjection);
        assert!(
            m.refusal
                .message
                .contains("`-toolexec=/tmp/x` is an option")
        );
        let npm = update("npm install <pkg>@<ver>");
        for cmd in [
            "npm install --registry=http://evil lodash@4.17.21",
            "npm install lodash@4.17.21 --registry=http://evil",
        ] {
            let m = npm.match_update(&words(cmd), &decl).unwrap_err();
            assert_eq!(m.refusal.code, Code::CommandOptionInjection, "{cmd}");
        }
    }

    #[test]
    fn mismatches_name_the_wrong_word() {
        let decl = Declared(&[("lodash", "4.17.21")]);
        let npm = update("npm install <pkg>@<ver>");
        let m = npm
            .match_update(&words("npm install lodash@4.17.20"), &decl)
            .unwrap_err();
        assert_eq!(m.refusal.code, Code::CommandVersionMismatch);
        let m = npm
            .match_update(&words("npm install left-pad@1.0.0"), &decl)
            .unwrap_err();
        assert_eq!(m.refusal.code, Code::CommandUndeclaredPackage);
        let m = npm
            .match_update(&words("npm install lodash"), &decl)
            .unwrap_err();
        assert_eq!(m.refusal.code, Code::CommandNotAllowlisted);
        let m = npm
            .match_update(&words("npm install git+https://x/y.git"), &decl)
            .unwrap_err();
        assert_eq!(m.refusal.code, Code::CommandPackageSpec);
        let m = npm
            .match_update(&words("npm install lodash@4.17.21 extra"), &decl)
            .unwrap_err();
        assert_eq!(m.refusal.code, Code::CommandNotAllowlisted);
        assert!(m.refusal.message.contains("unexpected argument `extra`"));
        let m = npm.match_update(&words("npm"), &decl).unwrap_err();
        assert!(m.refusal.message.contains("incomplete"));
        let deeper = npm
            .match_update(&words("npm install lodash@1"), &decl)
            .unwrap_err();
        let shallower = update("npm audit fix")
            .match_update(&words("npm install lodash@1"), &decl)
            .unwrap_err();
        assert!(deeper.depth > shallower.depth);
    }

    fn test_pattern(pattern: &str, flags: &[&str], positionals: Positionals) -> TestPattern {
        TestPattern {
            pattern: Pattern::parse(pattern, PatternKind::Test).unwrap(),
            flags: flags.iter().map(|f| FlagSpec::parse(f).unwrap()).collect(),
            positionals,
        }
    }

    #[test]
    fn test_args_accept_listed_flags_in_every_spelling() {
        let go = test_pattern(
            "go test <args>",
            &["-v", "-count <n>", "-run <word>", "-p <n>"],
            Positionals::Kind(ValueKind::Path),
        );
        for ok in [
            "go test",
            "go test ./...",
            "go test -v -count=1 ./pkg/...",
            "go test -count 1 -run TestFoo ./...",
            "go test -p4 .",
        ] {
            assert_eq!(go.matches(&words(ok)), Ok(()), "{ok}");
        }
        for (bad, code) in [
            ("go test -exec=/tmp/x ./...", Code::TestOptionNotAllowed),
            ("go test -toolexec /tmp/x", Code::TestOptionNotAllowed),
            ("go test -count=-1", Code::TestInvalidArgument),
            ("go test -run -exec=/x", Code::TestInvalidArgument),
            ("go test -count", Code::TestInvalidArgument),
            ("go test ../outside", Code::TestInvalidArgument),
            ("go test /abs", Code::TestInvalidArgument),
            ("go test .git/hooks", Code::TestInvalidArgument),
            ("go build ./...", Code::TestNotAllowlisted),
        ] {
            let m = go.matches(&words(bad)).unwrap_err();
            assert_eq!(m.refusal.code, code, "{bad}: {}", m.refusal.message);
        }
    }

    #[test]
    fn test_positional_choices_and_scripts() {
        let mvn = test_pattern(
            "mvn <args>",
            &["-B"],
            Positionals::OneOf(vec!["test".into(), "verify".into()]),
        );
        assert_eq!(mvn.matches(&words("mvn -B verify")), Ok(()));
        let m = mvn
            .matches(&words("mvn com.evil:plugin:1.0:run"))
            .unwrap_err();
        assert_eq!(m.refusal.code, Code::TestInvalidArgument);
        assert!(m.refusal.message.contains("use one of test, verify"));
        let npm = test_pattern(
            "npm run <script> <args>",
            &[],
            Positionals::Kind(ValueKind::Path),
        );
        assert_eq!(npm.matches(&words("npm run test:unit")), Ok(()));
        let m = npm.matches(&words("npm run ../x")).unwrap_err();
        assert_eq!(m.refusal.code, Code::TestInvalidArgument);
        let make = test_pattern("make <args>", &[], Positionals::Kind(ValueKind::Target));
        assert_eq!(make.matches(&words("make test lint")), Ok(()));
        let m = make.matches(&words("make test SHELL=/tmp/x")).unwrap_err();
        assert_eq!(m.refusal.code, Code::TestInvalidArgument);
        let exact = test_pattern("npm test", &[], Positionals::Kind(ValueKind::Path));
        assert_eq!(
            exact
                .matches(&words("npm test --x"))
                .unwrap_err()
                .refusal
                .code,
            Code::TestOptionNotAllowed
        );
    }

    #[test]
    fn value_kinds() {
        assert!(ValueKind::Expr.check("not slow and (db or api)").is_ok());
        assert!(ValueKind::Expr.check("-x").is_err());
        assert!(ValueKind::Word.check("a=b").is_err());
        assert!(ValueKind::Word.check("test_*.py").is_ok());
        assert!(ValueKind::Word.check("@scope/pkg").is_ok());
        for bad in [
            "/tmp/x.json",
            "../../x.json",
            "a/../b",
            "xml:/etc/passwd",
            "@/tmp/a.rsp",
            "@file.rsp",
        ] {
            assert!(ValueKind::Word.check(bad).is_err(), "{bad}");
        }
        assert!(ValueKind::Path.check("tests/test_a.py::test_b").is_ok());
        assert!(ValueKind::Path.check("http://evil/x").is_err());
        assert!(ValueKind::Path.check("a/.GIT/config").is_err());
        assert!(ValueKind::Number.check("1234567").is_err());
    }

    #[test]
    fn flag_spec_parse() {
        assert_eq!(
            FlagSpec::parse("-count <n>").unwrap(),
            FlagSpec {
                name: "-count".into(),
                value: Some(ValueKind::Number),
                glued: false
            }
        );
        let glued = FlagSpec::parse("-Dtest=<word>").unwrap();
        assert!(glued.glued && glued.name == "-Dtest");
        assert_eq!(glued.render(), "-Dtest=<word>");
        assert!(FlagSpec::parse("-Dtest=<word> <n>").is_err());
        assert!(FlagSpec::parse("count").is_err());
        assert!(FlagSpec::parse("-x <thing>").is_err());
        assert!(FlagSpec::parse("-x <n> <n>").is_err());
        assert_eq!(FlagSpec::parse("--").unwrap().name, "--");
    }
}
