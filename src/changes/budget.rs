//! Parser budgets: how deep and how large a document may be before it is parsed into memory.
//!
//! A lock file is written by hostile code. Within its size cap it could still nest deep enough
//! to overflow a recursive parser's stack, or (YAML) name an anchor a billion times over, which
//! `yaml-rust2` expands: a 9-line `pnpm-lock.yaml` would need gigabytes. So JSON is measured by
//! a scan before it is parsed, and YAML is built here from the parser's events, without
//! recursion, refusing aliases (pnpm never writes one) and counting nodes. TOML needs nothing of
//! the kind: the `toml` crate stops at its own recursion limit, and it has no aliases.

use super::ChangesError;
use yaml_rust2::parser::Parser;
use yaml_rust2::scanner::TScalarStyle;
use yaml_rust2::{Event, Yaml};

/// Deeper than any lock file or manifest nests (a pnpm lock, 5 levels; a bun lock, 6).
pub(crate) const MAX_DEPTH: usize = 64;
/// Values (scalars, arrays, objects) a document may hold: a 30 MiB lock file has about two
/// million; at this budget the parsed document stays below about 600 MiB.
pub(crate) const MAX_VALUES: usize = 8_000_000;

fn over(file: &str, what: String) -> ChangesError {
    ChangesError::OverLimit {
        file: file.to_string(),
        what,
    }
}

fn too_deep(file: &str, line: usize) -> ChangesError {
    over(
        file,
        format!("nests deeper than {MAX_DEPTH} levels (at line {line})"),
    )
}

fn too_many(file: &str) -> ChangesError {
    over(file, format!("holds more than {MAX_VALUES} values"))
}

/// Measures JSON (or bun's JSONC: comments, trailing commas, single-quoted strings) before it is
/// parsed: its nesting depth and, roughly, its number of values.
pub(crate) fn check_json(file: &str, text: &str) -> Result<(), ChangesError> {
    let (mut depth, mut values, mut line) = (0usize, 0usize, 1usize);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            '"' | '\'' => line += skip_string(&mut chars, c),
            '/' if chars.peek() == Some(&'/') => {
                chars.by_ref().find(|c| *c == '\n');
                line += 1;
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    line += usize::from(c == '\n');
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            '[' | '{' => {
                depth += 1;
                values += 1;
                if depth > MAX_DEPTH {
                    return Err(too_deep(file, line));
                }
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            ',' | ':' => values += 1,
            _ => {}
        }
        if values > MAX_VALUES {
            return Err(too_many(file));
        }
    }
    Ok(())
}

/// Skips a string opened by `quote`; the line breaks it held (JSONC allows escaped ones).
fn skip_string(chars: &mut impl Iterator<Item = char>, quote: char) -> usize {
    let mut lines = 0;
    let mut escaped = false;
    for c in chars {
        lines += usize::from(c == '\n');
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            c if c == quote => break,
            _ => {}
        }
    }
    lines
}

/// A node being built: a sequence, or a mapping with the key waiting for its value.
enum Open {
    Seq(Vec<Yaml>),
    Map(yaml_rust2::yaml::Hash, Option<Yaml>),
}

/// The first document of `text`, built within the budgets: no alias, at most [`MAX_DEPTH`]
/// levels and [`MAX_VALUES`] nodes. `Yaml::BadValue` for an empty file.
pub(crate) fn yaml(file: &str, text: &str) -> Result<Yaml, ChangesError> {
    let mut parser = Parser::new_from_str(text);
    let (mut stack, mut docs, mut nodes) = (Vec::new(), Vec::new(), 0usize);
    loop {
        let (event, mark) = parser
            .next_token()
            .map_err(|e| ChangesError::parse(file, Some(e.marker().line()), e.info()))?;
        let node = match event {
            Event::StreamEnd => break,
            Event::Alias(_) => {
                let what = format!(
                    "uses a YAML alias (at line {}), which pnpm never writes",
                    mark.line()
                );
                return Err(over(file, what));
            }
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(too_deep(file, mark.line()));
                }
                stack.push(match event {
                    Event::SequenceStart(..) => Open::Seq(Vec::new()),
                    _ => Open::Map(yaml_rust2::yaml::Hash::new(), None),
                });
                nodes += 1;
                None
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Open::Seq(items)) => Some(Yaml::Array(items)),
                Some(Open::Map(map, _)) => Some(Yaml::Hash(map)),
                None => None,
            },
            Event::Scalar(value, style, _, tag) => {
                nodes += 1;
                Some(if style == TScalarStyle::Plain && tag.is_none() {
                    Yaml::from_str(&value)
                } else {
                    Yaml::String(value)
                })
            }
            _ => None,
        };
        if nodes > MAX_VALUES {
            return Err(too_many(file));
        }
        if let Some(node) = node {
            insert(&mut stack, &mut docs, node)
                .map_err(|why| ChangesError::parse(file, Some(mark.line()), why))?;
        }
    }
    Ok(docs.into_iter().next().unwrap_or(Yaml::BadValue))
}

fn insert(stack: &mut [Open], docs: &mut Vec<Yaml>, node: Yaml) -> Result<(), &'static str> {
    match stack.last_mut() {
        None => docs.push(node),
        Some(Open::Seq(items)) => items.push(node),
        Some(Open::Map(map, key)) => match key.take() {
            None => *key = Some(node),
            Some(key) => {
                if map.insert(key, node).is_some() {
                    return Err("a key appears twice in one mapping");
                }
            }
        },
    }
    Ok(())
}
