//! A test pattern's `runs`: what executes for a command that matched the form the plan writes,
//! when that differs. `npx jest <args>` runs as `npx --no -- jest <args>`, which never downloads
//! a package, and `uv run pytest <args>` as `uv run --no-sync pytest <args>`, which neither
//! re-locks nor re-installs the environment the frozen install built.

use super::{Part, Pattern, PatternError, TestPattern, Token};

impl TestPattern {
    /// The argv to execute for `words`, which matched the form, and how many places the words of
    /// `<args>` moved in it (the indices of path arguments follow them).
    pub fn executed(&self, words: &[String]) -> (Vec<String>, usize) {
        let Some(runs) = &self.runs else {
            return (words.to_vec(), 0);
        };
        let tokens = &self.pattern.tokens;
        let args_at = tokens.iter().position(|t| *t == Token::Args);
        let suffix = args_at.map_or(0, |i| tokens.len() - i - 1);
        let args = match args_at {
            Some(i) => &words[i..words.len() - suffix],
            None => &[],
        };
        let script = self.script_word(words);
        let mut argv = Vec::with_capacity(words.len() + runs.tokens.len());
        let mut shift = 0;
        for token in &runs.tokens {
            match token {
                Token::Args => {
                    shift = argv.len() - args_at.unwrap_or(argv.len());
                    argv.extend(args.iter().cloned());
                }
                Token::Word(parts) => match parts.as_slice() {
                    [Part::Lit(text)] => argv.push(text.clone()),
                    _ => argv.extend(script.clone()),
                },
            }
        }
        (argv, shift)
    }
}

/// `runs` may differ from its form only in literal words it adds: the same program, the same
/// `<script>` and `<args>`, in the same order, and the form's own words kept.
pub(crate) fn check_runs(form: &Pattern, runs: &Pattern) -> Result<(), PatternError> {
    if runs.program() != form.program() {
        return Err(PatternError::RunsProgram {
            runs: runs.program().to_string(),
            form: form.program().to_string(),
        });
    }
    let placeholders = |p: &Pattern| -> Vec<String> {
        p.tokens
            .iter()
            .filter(
                |t| !matches!(t, Token::Word(parts) if matches!(parts.as_slice(), [Part::Lit(_)])),
            )
            .map(|t| format!("{t:?}"))
            .collect()
    };
    if placeholders(form) != placeholders(runs) {
        return Err(PatternError::RunsPlaceholders);
    }
    let mut kept = runs.tokens.iter();
    if !form.tokens.iter().all(|t| kept.any(|r| r == t)) {
        return Err(PatternError::RunsDropsWords);
    }
    if runs
        .tokens
        .iter()
        .any(|t| matches!(t, Token::Word(parts) if parts.len() > 1))
    {
        return Err(PatternError::RunsMixedWords);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{PatternKind, Positionals, ValueKind};
    use super::*;

    fn pattern(source: &str) -> Pattern {
        Pattern::parse(source, PatternKind::Test).unwrap()
    }

    fn words(command: &str) -> Vec<String> {
        command.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn runs_adds_its_words_and_moves_the_arguments() {
        let npx = TestPattern {
            pattern: pattern("npx jest <args>"),
            runs: Some(pattern("npx --no -- jest <args>")),
            flags: vec![],
            positionals: Positionals::Kind(ValueKind::Filter),
        };
        assert_eq!(
            npx.executed(&words("npx jest test/a.test.js")),
            (words("npx --no -- jest test/a.test.js"), 2)
        );
        let plain = TestPattern {
            runs: None,
            ..npx.clone()
        };
        assert_eq!(
            plain.executed(&words("npx jest x")),
            (words("npx jest x"), 0)
        );
        let script = TestPattern {
            pattern: pattern("pnpm run <script> <args>"),
            runs: Some(pattern("pnpm --offline run <script> <args>")),
            ..npx
        };
        assert_eq!(
            script.executed(&words("pnpm run unit -t x")),
            (words("pnpm --offline run unit -t x"), 1)
        );
    }

    #[test]
    fn runs_that_do_not_fit_the_form_are_refused() {
        let refusals: Vec<String> = [
            ("npx jest <args>", "npm exec jest <args>"),
            ("npx jest <args>", "npx --no -- jest"),
            ("npm run <script> <args>", "npm run <args>"),
            ("npx jest <args>", "npx --no -- vitest <args>"),
        ]
        .into_iter()
        .map(|(form, runs)| {
            check_runs(&pattern(form), &pattern(runs))
                .unwrap_err()
                .to_string()
        })
        .collect();
        insta::assert_snapshot!("test_runs_refusals", refusals.join("\n"));
        assert!(
            check_runs(
                &pattern("uv run pytest <args>"),
                &pattern("uv run --no-sync pytest <args>")
            )
            .is_ok()
        );
    }
}
