//! The arguments of test commands: flag specs, value kinds, positionals, and the matcher of a
//! test pattern's `<args>`.

use super::*;

/// The kind of a flag's value or of a positional argument in a test command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// `<n>`: a small non-negative number.
    Number,
    /// `<word>`: a name, pattern or list (letters, digits, `_.,:/+@%^*`), no `=`.
    Word,
    /// `<path>`: a relative path inside the checkout (no `..`, no `.git`) that must exist.
    Path,
    /// `<dir>`: like `<path>`, an existing directory.
    Dir,
    /// `<file>`: like `<path>`, an existing file.
    File,
    /// `<cwd>`: a directory the tool changes into before reading its build files; at most one
    /// per command, since tools resolve a second one from the first (`make -C a -C b`).
    Cwd,
    /// `<out>`: a file the tool writes (a report), which need not exist yet.
    Out,
    /// `<expr>`: a filter expression (`not slow and not db`), letters, digits, spaces, `_.,:=!()~*`.
    Expr,
    /// A build target or task name: letters, digits, `_.:/-`, no `=`.
    Target,
    /// A test location: a path, optionally followed by `::id` (pytest) or `:line` (rspec).
    Test,
    /// A go package pattern inside the module: `.`, `./pkg`, `./...`, `./pkg/...`.
    GoPackage,
    /// A Python test file (`tests/test_x.py`), never a dotted name.
    PythonFile,
    /// A JavaScript test filter: a path or a name pattern; resolved only when it exists.
    Filter,
}

impl ValueKind {
    fn from_placeholder(s: &str) -> Option<Self> {
        Some(match s {
            "<n>" => ValueKind::Number,
            "<word>" => ValueKind::Word,
            "<path>" => ValueKind::Path,
            "<dir>" => ValueKind::Dir,
            "<file>" => ValueKind::File,
            "<cwd>" => ValueKind::Cwd,
            "<out>" => ValueKind::Out,
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
            _ => {
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
                _ => "a relative path inside the checkout (no `..`, `.git` or URL)",
            })
        }
    }

    /// How the kind is written in a pattern (`<path>`); targets read as words.
    pub fn placeholder(self) -> &'static str {
        match self {
            ValueKind::Number => "<n>",
            ValueKind::Word | ValueKind::Target => "<word>",
            ValueKind::Expr => "<expr>",
            ValueKind::Dir => "<dir>",
            ValueKind::File => "<file>",
            ValueKind::Cwd => "<cwd>",
            ValueKind::Out => "<out>",
            _ => "<path>",
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
    pub(crate) glued: bool,
}

impl FlagSpec {
    pub fn parse(spec: &str) -> Result<Self, PatternError> {
        let mut words = spec.split_whitespace();
        let first = words.next().ok_or(PatternError::EmptyFlagSpec)?;
        let (name, glued_kind) = match first.split_once("=<") {
            Some((name, kind)) => (name, Some(format!("<{kind}"))),
            None => (first, None),
        };
        if !name.starts_with('-') || !FLAG_NAME.is_match(name) {
            return Err(PatternError::NotAnOption(name.to_string()));
        }
        let kind_of = |kind: &str| {
            ValueKind::from_placeholder(kind).ok_or_else(|| PatternError::UnknownValueKind {
                kind: kind.to_string(),
                spec: spec.to_string(),
            })
        };
        let glued = glued_kind.is_some();
        let value = match (glued_kind, words.next()) {
            (Some(kind), None) => Some(kind_of(&kind)?),
            (Some(_), Some(_)) => return Err(PatternError::TwoValues(spec.to_string())),
            (None, None) => None,
            (None, Some(kind)) => Some(kind_of(kind)?),
        };
        if words.next().is_some() {
            return Err(PatternError::ExtraWords(spec.to_string()));
        }
        Ok(Self {
            name: name.to_string(),
            value,
            glued,
        })
    }

    pub(super) fn render(&self) -> String {
        if self.glued {
            return self.render_spaced().replacen(' ', "=", 1);
        }
        self.render_spaced()
    }

    pub(super) fn render_spaced(&self) -> String {
        match self.value {
            None => self.name.clone(),
            Some(kind) => format!("{} {}", self.name, kind.placeholder()),
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
    /// What executes instead of the form, when it differs (see [`TestPattern::executed`]).
    pub runs: Option<Pattern>,
    pub flags: Vec<FlagSpec>,
    pub(crate) positionals: Positionals,
}

/// An option's name, value kind and value.
type FlagValue = (String, ValueKind, String);

/// A value a test command's `<args>` bound: an option's value or a positional argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// Where it is among the command's words.
    pub word: usize,
    /// The option it is the value of (`-C`); `None` for a positional.
    pub flag: Option<String>,
    pub kind: ValueKind,
    pub value: String,
}

impl TestPattern {
    /// Matches a test command's words; on success, the values its `<args>` bound.
    pub fn matches(&self, words: &[String]) -> Result<Vec<Arg>, Mismatch> {
        let tokens = &self.pattern.tokens;
        let args_at = tokens.iter().position(|t| *t == Token::Args);
        let (prefix, suffix) = match args_at {
            Some(i) => (&tokens[..i], &tokens[i + 1..]),
            None => (&tokens[..], &tokens[tokens.len()..]),
        };
        let needed = prefix.len() + suffix.len();
        if words.len() < needed {
            // The words there are must fit first: `uv run --frozen pytest` is refused for its
            // option, not as an incomplete `uv run python -m unittest discover`.
            for (i, (token, word)) in prefix.iter().zip(words).enumerate() {
                self.fixed_word(token, i, word)?;
            }
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
            return Ok(Vec::new());
        }
        self.args(middle, prefix.len())
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
    pub(crate) fn script_word(&self, words: &[String]) -> Option<String> {
        self.pattern
            .tokens
            .iter()
            .position(|t| matches!(t, Token::Word(parts) if parts.as_slice() == [Part::Script]))
            .and_then(|i| words.get(i).cloned())
    }

    /// Checks the words taken by `<args>`, which start at word `start` of the command; on
    /// failure, the offending word's offset.
    fn args(&self, args: &[String], start: usize) -> Result<Vec<Arg>, (usize, Refusal)> {
        let mut bound = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let word = &args[i];
            if word.starts_with('-') && word.len() > 1 {
                let (taken, value) = self.flag(args, i).map_err(|r| (i, r))?;
                if let Some((flag, kind, value)) = value {
                    bound.push(Arg {
                        word: start + i + taken - 1,
                        flag: Some(flag),
                        kind,
                        value,
                    });
                }
                i += taken;
            } else {
                let kind = self.positional(word).map_err(|r| (i, r))?;
                bound.push(Arg {
                    word: start + i,
                    flag: None,
                    kind,
                    value: word.clone(),
                });
                i += 1;
            }
        }
        Ok(bound)
    }

    /// Accepts the option at `args[i]`; returns how many words it took and the value it bound.
    fn flag(&self, args: &[String], i: usize) -> Result<(usize, Option<FlagValue>), Refusal> {
        let word = &args[i];
        for spec in &self.flags {
            match spec.value {
                None if *word == spec.name => return Ok((1, None)),
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
                    return match kind.check(value) {
                        Ok(()) => Ok((taken, Some((spec.name.clone(), kind, value.to_string())))),
                        Err(expected) => Err(Refusal::new(
                            Code::TestInvalidArgument,
                            format!(
                                "`{}` is not a valid value for `{}`: expected {expected}",
                                clip(value),
                                spec.name
                            ),
                        )),
                    };
                }
            }
        }
        Err(self.unknown_option(word))
    }

    fn unknown_option(&self, word: &str) -> Refusal {
        let allowed: Vec<String> = self.flags.iter().map(FlagSpec::render).collect();
        let allowed = if allowed.is_empty() {
            "none".to_string()
        } else {
            allowed.join(", ")
        };
        Refusal::new(
            Code::TestOptionNotAllowed,
            format!(
                "option `{}` is not allowed in `{}`; allowed options: {allowed}",
                clip(word),
                self.pattern.source
            ),
        )
    }

    /// Accepts a positional argument; returns its kind.
    fn positional(&self, word: &str) -> Result<ValueKind, Refusal> {
        let refuse = |why: String| {
            Refusal::new(
                Code::TestInvalidArgument,
                format!(
                    "argument `{}` is not allowed in `{}`: {why}",
                    clip(word),
                    self.pattern.source
                ),
            )
        };
        match &self.positionals {
            Positionals::Kind(kind) => kind
                .check(word)
                .map(|()| *kind)
                .map_err(|expected| refuse(format!("expected {expected}"))),
            Positionals::OneOf(choices) if choices.iter().any(|c| c == word) => {
                Ok(ValueKind::Target)
            }
            Positionals::OneOf(choices) => {
                Err(refuse(format!("use one of {}", choices.join(", "))))
            }
        }
    }
}
