//! GitHub Actions: workflow commands, step outputs and the job summary.
//!
//! Formats follow `@actions/core`: command data escapes `%`, CR and LF; property values also `:`
//! and `,`; multi-line outputs use a `name<<DELIMITER` heredoc whose random delimiter cannot occur
//! in the value.

use crate::config::CiEnv;
use crate::finding::Finding;
use crate::report::{PullRequestRef, RunReport};
use std::io::Write;
use std::path::Path;

/// Escapes the data part of a workflow command.
pub(crate) fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value of a workflow command.
pub(crate) fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// 128 random bits as hex, for `::stop-commands::` tokens and heredoc delimiters.
pub(crate) fn random_token() -> String {
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| {
        use std::io::Read;
        f.read_exact(&mut bytes)
    });
    if read.is_err() {
        // No /dev/urandom: fall back to the standard library's randomly keyed hasher.
        use std::hash::{BuildHasher, RandomState};
        let state = RandomState::new();
        bytes[..8].copy_from_slice(&state.hash_one(1u8).to_le_bytes());
        bytes[8..].copy_from_slice(&state.hash_one(2u8).to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `::error`/`::warning` annotations for validation findings, pointing at the plan file.
pub(crate) fn annotations(findings: &[Finding], plan: &Path) -> Vec<String> {
    findings
        .iter()
        .map(|f| {
            format!(
                "::{} file={},title={}::{}",
                if f.is_error() { "error" } else { "warning" },
                escape_property(&plan.display().to_string()),
                escape_property(f.code.as_str()),
                escape_data(&format!(
                    "{}: {}",
                    if f.pointer.is_empty() {
                        "/"
                    } else {
                        &f.pointer
                    },
                    f.message
                ))
            )
        })
        .collect()
}

/// One `name=value` (or heredoc) entry for `$GITHUB_OUTPUT`.
pub(crate) fn output_entry(name: &str, value: &str) -> String {
    if value.contains('\n') || value.contains('\r') {
        let mut delimiter = format!("ghadelimiter_{}", random_token());
        while value.contains(&delimiter) {
            delimiter = format!("ghadelimiter_{}", random_token());
        }
        format!("{name}<<{delimiter}\n{value}\n{delimiter}\n")
    } else {
        format!("{name}={value}\n")
    }
}

/// The step outputs: report path, counts, exit code, and the PRs touched.
pub(crate) fn outputs(report: &RunReport, report_path: Option<&Path>) -> String {
    let pulls: Vec<&PullRequestRef> = report
        .actions
        .iter()
        .flat_map(|a| a.pull_requests.iter())
        .collect();
    let s = &report.summary;
    let mut out = String::new();
    if let Some(path) = report_path {
        out.push_str(&output_entry("report", &path.display().to_string()));
    }
    for (name, value) in [
        ("done", s.done),
        ("failed", s.failed),
        ("skipped", s.skipped),
        ("denied", s.denied),
    ] {
        out.push_str(&output_entry(name, &value.to_string()));
    }
    out.push_str(&output_entry("exit-code", &report.exit_code.to_string()));
    out.push_str(&output_entry(
        "pull-requests",
        &serde_json::to_string(&pulls).expect("serialises"),
    ));
    out.push_str(&output_entry(
        "pull-request-numbers",
        &pulls
            .iter()
            .map(|p| p.number.to_string())
            .collect::<Vec<_>>()
            .join(" "),
    ));
    out.push_str(&output_entry(
        "pull-request-urls",
        &pulls
            .iter()
            .map(|p| p.url.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    ));
    out
}

/// A warning annotation titled "Quartermaster".
pub(crate) fn warning(text: &str) -> String {
    format!("::warning title=Quartermaster::{}", escape_data(text))
}

/// The workflow commands that mask `secrets` in the log.
pub(crate) fn masks(secrets: &[String]) -> Vec<String> {
    secrets.iter().map(|s| format!("::add-mask::{s}")).collect()
}

/// The files GitHub Actions gave that could not be written, each with why.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub(crate) struct PublishError(pub Vec<Unwritten>);

/// One file GitHub Actions gave that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the {what} {path}: {source}")]
pub(crate) struct Unwritten {
    /// `job summary` or `step outputs`.
    pub what: &'static str,
    pub path: String,
    #[source]
    pub source: std::io::Error,
}

/// Writes the job summary and the step outputs, where GitHub Actions asks for them. Every file is
/// attempted; the error lists those that could not be written.
pub(crate) fn publish(
    ci: &CiEnv,
    report: &RunReport,
    report_path: Option<&Path>,
    markdown: &str,
) -> Result<(), PublishError> {
    let files = [
        ("job summary", &ci.github_step_summary, markdown.to_string()),
        (
            "step outputs",
            &ci.github_output,
            outputs(report, report_path),
        ),
    ];
    let unwritten: Vec<Unwritten> = files
        .into_iter()
        .filter_map(|(what, path, text)| {
            let path = path.as_deref()?;
            let source = append(Path::new(path), &text).err()?;
            Some(Unwritten {
                what,
                path: path.to_string(),
                source,
            })
        })
        .collect();
    if unwritten.is_empty() {
        Ok(())
    } else {
        Err(PublishError(unwritten))
    }
}

/// Appends to a file GitHub gave us (`$GITHUB_OUTPUT`, `$GITHUB_STEP_SUMMARY`).
pub(crate) fn append(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Code;

    #[test]
    fn escaping_follows_actions_core() {
        assert_eq!(escape_data("50%\r\nnext"), "50%25%0D%0Anext");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }

    #[test]
    fn annotations_name_file_code_and_pointer() {
        let f = Finding::error(
            "/actions/0/branch",
            Code::BranchPrefix,
            "use quartermaster/\n::set-output",
        );
        assert_eq!(
            annotations(&[f], Path::new("plans/a,b.json")),
            vec![
                "::error file=plans/a%2Cb.json,title=branch.prefix::/actions/0/branch: use quartermaster/%0A::set-output"
            ]
        );
    }

    #[test]
    fn multi_line_outputs_use_a_fresh_delimiter() {
        assert_eq!(output_entry("n", "1"), "n=1\n");
        let entry = output_entry("urls", "a\nb");
        let (head, rest) = entry.split_once('\n').unwrap();
        let delimiter = head.strip_prefix("urls<<").unwrap();
        assert_eq!(rest, format!("a\nb\n{delimiter}\n"));
        assert_eq!(delimiter.len(), "ghadelimiter_".len() + 32);
        assert_ne!(random_token(), random_token());
    }
}
