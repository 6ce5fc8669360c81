//! Why a command pattern, an option spec or a test command's `runs` was refused: the mission's
//! own definition, checked when the mission loads.

use super::PatternKind;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    #[error("empty pattern")]
    Empty,
    #[error("`{0}` is not a bare program name")]
    NotAProgram(String),
    #[error("the first word must be the program")]
    FirstNotProgram,
    #[error("`<args>` is only for test commands")]
    ArgsOutsideTests,
    #[error("`<file:…>` must be a whole word, not part of `{0}`")]
    FileInWord(String),
    #[error("{placeholder} placeholder not allowed in {kind:?} patterns")]
    NotAllowed {
        placeholder: String,
        kind: PatternKind,
    },
    #[error("test pattern word `{0}` mixes text and placeholders")]
    MixedTestWord(String),
    #[error("`<script>` must come before `<args>`")]
    ScriptAfterArgs,
    #[error(
        "at most one `<pkg>`, one `<ver>`, one `<from>`, one `<file:…>` and one `<args>` per pattern"
    )]
    Repeated,
    #[error("`{0}` needs a `<pkg>` to compare with")]
    NeedsPackage(&'static str),
    #[error("unclosed placeholder in `{0}`")]
    Unclosed(String),
    #[error("unknown placeholder `<{0}>`")]
    UnknownPlaceholder(String),
    #[error("placeholders in `{0}` must be separated by literal text")]
    Adjacent(String),
    #[error("stray `>` in `{0}`")]
    StrayClose(String),
    #[error("`<file:{0}>`: the glob is a file name of letters, digits, `*`, `.`, `_` and `-`")]
    Glob(String),
    #[error("empty flag spec")]
    EmptyFlagSpec,
    #[error("`{0}` is not an option name")]
    NotAnOption(String),
    #[error("unknown value kind `{kind}` in `{spec}`")]
    UnknownValueKind { kind: String, spec: String },
    #[error("flag spec `{0}` has two values")]
    TwoValues(String),
    #[error("flag spec `{0}` has more than a name and a value")]
    ExtraWords(String),
    /// A test command's `runs` that does not run the form's program.
    #[error("`runs` starts with `{runs}`; it must run the form's program `{form}`")]
    RunsProgram { runs: String, form: String },
    #[error("`runs` must use the form's `<script>` and `<args>`, in the same order, and no others")]
    RunsPlaceholders,
    #[error("`runs` must keep every word of the form, in order, and only add words")]
    RunsDropsWords,
    #[error("`runs` words are literal words, `<script>` or `<args>`")]
    RunsMixedWords,
}
