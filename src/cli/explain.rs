//! `quartermaster explain [CODE]`: what a finding code means and how to fix the plan, as the MCP
//! `explain_code` tool says it; without a code, every code and its meaning.

use super::{ExplainCliArgs, Format, fail};
use crate::finding::explain::{Explanation, explain};
use crate::finding::{Code, clip, closest};
use crate::hint::Hint;
use std::borrow::Cow;
use std::process::ExitCode;

pub(super) fn command(args: &ExplainCliArgs) -> ExitCode {
    let Some(input) = &args.code else {
        print!("{}", list());
        return ExitCode::SUCCESS;
    };
    match find(input) {
        Ok(code) => {
            let explanation = explain(code);
            match args.format {
                Format::Text => print!("{}", render(&explanation)),
                Format::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(&explanation).expect("an explanation serialises")
                ),
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

/// `quartermaster explain` was given something else than a finding code.
#[derive(Debug, thiserror::Error)]
#[error("`{}` is not a finding code", clip(.input))]
struct UnknownCode {
    input: String,
    /// The code it is closest to, if one is close.
    near: Option<&'static str>,
}

impl Hint for UnknownCode {
    fn hint(&self) -> Option<Cow<'_, str>> {
        let near = self
            .near
            .map(|near| format!("did you mean `{near}`? "))
            .unwrap_or_default();
        Some(format!("{near}`quartermaster explain` lists every code").into())
    }
}

/// The code `input` names: as written, or as a finding line shows it (`error[json.syntax]`).
fn find(input: &str) -> Result<Code, UnknownCode> {
    let name = input.trim();
    let name = name
        .strip_suffix(']')
        .and_then(|n| n.split_once('['))
        .map_or(name, |(_, code)| code);
    Code::from_name(name).ok_or_else(|| {
        let known: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        UnknownCode {
            input: input.to_string(),
            near: closest(name, &known),
        }
    })
}

fn render(e: &Explanation) -> String {
    format!("{}\n\n{}\n\nFix: {}\n", e.code, e.meaning, e.fix)
}

fn list() -> String {
    let width = Code::ALL
        .iter()
        .map(|c| c.as_str().len())
        .max()
        .unwrap_or(0);
    Code::ALL
        .iter()
        .map(|&code| format!("{:width$}  {}\n", code.as_str(), explain(code).meaning))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_explained_with_its_fix() {
        insta::assert_snapshot!(render(&explain(find("json.syntax").unwrap())));
        assert_eq!(find(" error[json.syntax]").unwrap(), Code::JsonSyntax);
    }

    #[test]
    fn an_unknown_code_gets_the_closest_one() {
        insta::assert_snapshot!(crate::hint::render(&find("json.sintax").unwrap_err()));
    }

    #[test]
    fn the_list_has_every_code_once() {
        let list = list();
        assert_eq!(list.lines().count(), Code::ALL.len());
        assert!(list.starts_with(Code::ALL[0].as_str()), "{list}");
    }
}
