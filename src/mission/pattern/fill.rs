//! Filling an update pattern's placeholders with what a match bound: how the argv of an update
//! command whose allowlist entry names a `runs` form is built.

use super::{Bound, Part, Pattern, Token};

impl Pattern {
    /// The update placeholders the pattern uses, each once, `<pkg>` before `<ver>` before
    /// `<from>` before `<file:…>` (with its glob).
    pub(crate) fn update_placeholders(&self) -> Vec<String> {
        let parts: Vec<&Part> = self
            .tokens
            .iter()
            .flat_map(|t| match t {
                Token::Word(parts) => parts.as_slice(),
                Token::Args => &[],
            })
            .collect();
        let mut names: Vec<String> = [
            (Part::Pkg, "<pkg>"),
            (Part::Ver, "<ver>"),
            (Part::From, "<from>"),
        ]
        .into_iter()
        .filter(|(p, _)| parts.contains(&p))
        .map(|(_, name)| name.to_string())
        .collect();
        names.extend(parts.iter().filter_map(|p| match p {
            Part::File(glob) => Some(format!("<file:{glob}>")),
            _ => None,
        }));
        names
    }

    /// The pattern's words with `<pkg>` and `<ver>` replaced by the values `bound` holds; `None`
    /// when the pattern uses a placeholder `bound` has no value for, or a test placeholder.
    pub fn fill(&self, bound: &Bound) -> Option<Vec<String>> {
        self.tokens
            .iter()
            .map(|token| {
                let Token::Word(parts) = token else {
                    return None;
                };
                parts
                    .iter()
                    .map(|part| match part {
                        Part::Lit(text) => Some(text.as_str()),
                        Part::Pkg => bound.package.as_deref(),
                        Part::Ver => bound.version.as_deref(),
                        Part::From => bound.from.as_deref(),
                        Part::File(_) => bound.file.as_deref(),
                        Part::Script => None,
                    })
                    .collect::<Option<String>>()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::PatternKind;
    use super::*;

    fn update(source: &str) -> Pattern {
        Pattern::parse(source, PatternKind::Update).unwrap()
    }

    #[test]
    fn placeholders_are_listed_once_in_a_fixed_order() {
        assert_eq!(
            update("poetry add --lock <pkg>@<ver>").update_placeholders(),
            vec!["<pkg>", "<ver>"]
        );
        assert_eq!(
            update("bundle lock --update <pkg>").update_placeholders(),
            vec!["<pkg>"]
        );
        assert!(update("go mod tidy").update_placeholders().is_empty());
    }

    #[test]
    fn fill_substitutes_bound_values_inside_words() {
        let bound = Bound {
            package: Some("@types/node".into()),
            version: Some("20.1.0".into()),
            from: None,
            file: None,
        };
        assert_eq!(
            update("npm install --save-exact <pkg>@<ver>").fill(&bound),
            Some(vec![
                "npm".to_string(),
                "install".into(),
                "--save-exact".into(),
                "@types/node@20.1.0".into()
            ])
        );
        assert_eq!(
            update("go mod tidy").fill(&Bound::default()),
            Some(vec!["go".to_string(), "mod".into(), "tidy".into()])
        );
        let unbound = Bound {
            package: Some("rack".into()),
            version: None,
            from: None,
            file: None,
        };
        assert_eq!(update("gem install <pkg>:<ver>").fill(&unbound), None);
    }
}
