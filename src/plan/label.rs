//! Label names, as both forges accept them: what a plan's labels and the bot label must satisfy.

use crate::finding::Code;

/// GitHub's limit on label names.
pub(crate) const MAX_LABEL_CHARS: usize = 50;

/// Why a forge would refuse (or mangle) `label`, or `None`.
pub(crate) fn problem(label: &str) -> Option<(Code, String)> {
    if label.is_empty() {
        Some((Code::LabelEmpty, "the label is empty".to_string()))
    } else if label.chars().count() > MAX_LABEL_CHARS {
        Some((
            Code::LabelTooLong,
            format!("labels are at most {MAX_LABEL_CHARS} characters"),
        ))
    } else if label.chars().any(char::is_control) {
        Some((
            Code::LabelControlChar,
            "the label contains control characters".to_string(),
        ))
    } else if label.contains(',') {
        Some((
            Code::LabelComma,
            "labels cannot contain `,` (GitLab splits label lists on commas): give each label separately".to_string(),
        ))
    } else if label.trim() != label {
        Some((
            Code::LabelWhitespace,
            "remove the leading or trailing white space".to_string(),
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_checked_as_the_forges_would() {
        assert_eq!(problem("deps"), None);
        assert_eq!(problem("").unwrap().0, Code::LabelEmpty);
        assert_eq!(problem(&"x".repeat(51)).unwrap().0, Code::LabelTooLong);
        assert_eq!(problem("a,b").unwrap().0, Code::LabelComma);
        assert_eq!(problem(" a").unwrap().0, Code::LabelWhitespace);
        assert_eq!(problem("a\tb").unwrap().0, Code::LabelControlChar);
    }
}
