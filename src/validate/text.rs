//! Rules for single fields: ids, titles, texts, labels, paths.

use super::{MAX_BODY_CHARS, MAX_LABELS, MAX_TITLE_CHARS};
use crate::finding::{Code, Finding, Pointer, clip};

/// A path relative to the checkout, in normal form, outside `.git`.
pub(crate) fn relative_path(path: &str, at: &Pointer, out: &mut Vec<Finding>) {
    let mut fail = |code: Code, why: &str| {
        out.push(Finding::error(at, code, format!("`{}` {why}", clip(path))));
    };
    if path.is_empty() {
        return fail(
            Code::PathNotNormalized,
            "is empty; omit the field for the repository root",
        );
    }
    if path.len() > 4096 {
        return fail(Code::TooLong, "is longer than 4096 bytes");
    }
    if path.chars().any(char::is_control) {
        return fail(Code::PathInvalidChar, "contains control characters");
    }
    let bytes = path.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if path.starts_with('/') || path.starts_with('\\') || drive {
        return fail(
            Code::PathAbsolute,
            "is absolute; give a path relative to the repository root",
        );
    }
    if path.contains('\\') {
        return fail(
            Code::PathNotNormalized,
            "uses `\\`; separate components with `/`",
        );
    }
    let components: Vec<&str> = path.split('/').collect();
    if components.contains(&"..") {
        return fail(
            Code::PathParent,
            "climbs out with `..`; paths must stay inside the repository",
        );
    }
    if components.iter().any(|c| c.eq_ignore_ascii_case(".git")) {
        return fail(
            Code::PathGitDir,
            "points into `.git`; commands never run there",
        );
    }
    if components.iter().any(|c| c.is_empty() || *c == ".") {
        fail(
            Code::PathNotNormalized,
            "is not in normal form: no `.` components, no empty components, no trailing `/` (omit the field for the repository root)",
        );
    }
}

pub(super) fn id(value: u64, at: &Pointer, out: &mut Vec<Finding>) {
    if value == 0 {
        out.push(Finding::error(
            at,
            Code::IdNotPositive,
            "ids start at 1: give the PR/MR or issue number",
        ));
    }
}

pub(super) fn title(text: &str, at: &Pointer, out: &mut Vec<Finding>) {
    if text.trim().is_empty() {
        out.push(Finding::error(at, Code::TitleEmpty, "the title is empty"));
    } else if text.chars().count() > MAX_TITLE_CHARS {
        out.push(Finding::error(
            at,
            Code::TitleTooLong,
            format!(
                "the title has {} characters; the forges accept at most {MAX_TITLE_CHARS}",
                text.chars().count()
            ),
        ));
    } else if text.chars().any(char::is_control) {
        out.push(Finding::error(
            at,
            Code::TitleControlChar,
            "the title contains a line break or control character; titles are one line",
        ));
    }
}

pub(super) fn body(text: &str, at: &Pointer, required: bool, out: &mut Vec<Finding>) {
    let chars = text.chars().count();
    if required && text.trim().is_empty() {
        out.push(Finding::error(at, Code::TextEmpty, "the text is empty"));
    } else if chars > MAX_BODY_CHARS {
        out.push(Finding::error(
            at,
            Code::BodyTooLong,
            format!(
                "{chars} characters; at most {MAX_BODY_CHARS} (GitHub's 65,536 less room for Quartermaster's marker): shorten it or link to details"
            ),
        ));
    }
}

pub(super) fn labels(list: &[String], at: &Pointer, out: &mut Vec<Finding>) {
    if list.len() > MAX_LABELS {
        out.push(Finding::error(
            at,
            Code::TooMany,
            format!("{} labels; at most {MAX_LABELS}", list.len()),
        ));
    }
    for (i, label) in list.iter().enumerate() {
        let here = at.index(i);
        match crate::plan::label::problem(label) {
            Some((code, why)) => out.push(Finding::error(
                here,
                code,
                format!("label `{}`: {why}", clip(label)),
            )),
            None => {
                if list[..i].contains(label) {
                    out.push(Finding::warning(
                        here,
                        Code::LabelDuplicate,
                        format!("label `{}` is listed twice", clip(label)),
                    ));
                }
            }
        }
    }
}

pub(super) fn too_long(at: Pointer, max: usize) -> Finding {
    Finding::error(at, Code::TooLong, format!("longer than {max} characters"))
}
