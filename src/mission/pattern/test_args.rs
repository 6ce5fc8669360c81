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

    pub(super) fn render(&self) -> String {
        if self.glued {
            return self.render_spaced().replacen(' ', "=", 1);
        }
        self.render_spaced()
    }

    pub(super) fn render_spaced(&self) -> String {
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
