//! Resolver warnings: what a package manager says about a dependency tree it resolved anyway (an
//! npm `ERESOLVE` override of a peer dependency, pnpm's or yarn's unmet peers, pip's dependency
//! conflicts, a Bundler update that stayed put). A lock that resolved with such a warning may not
//! install again as it is (npm's own frozen install refuses an override it accepted while
//! updating), so the warnings are kept for the report and shown in the PR.

use crate::markdown::code;
use crate::report::Warned;

/// At most this many warnings are kept from one command's output.
const MAX_WARNINGS: usize = 20;
/// At most this many lines are kept of one warning.
const MAX_LINES: usize = 40;
/// At most this many characters are kept of one line.
const MAX_LINE: usize = 300;

/// At most this many lines of warnings are shown in a PR; the report keeps them all.
const MAX_SHOWN_LINES: usize = 80;

/// The PR's section on the resolver warnings of its branch (empty when there were none): each
/// command that warned, and its warnings in a code block.
pub(super) fn section(warned: &[Warned]) -> String {
    if warned.is_empty() {
        return String::new();
    }
    let mut out = "\n**Resolver warnings** (the package managers resolved this branch with them)\n"
        .to_string();
    let mut room = MAX_SHOWN_LINES;
    for w in warned {
        let lines: Vec<&str> = w.warnings.iter().flat_map(|b| b.lines()).collect();
        if room == 0 {
            out.push_str(&format!(
                "\n{}: {} more lines in the run's report.\n",
                code(&w.command),
                lines.len()
            ));
            continue;
        }
        let shown = lines.len().min(room);
        room -= shown;
        out.push_str(&format!(
            "\n{}:\n\n{}\n",
            code(&w.command),
            crate::sink::summary_block(&lines[..shown].join("\n"))
        ));
        if shown < lines.len() {
            out.push_str(&format!(
                "\n… and {} more lines in the run's report.\n",
                lines.len() - shown
            ));
        }
    }
    out
}

/// The resolver warnings in a command's output, each a block of lines, in order.
pub(crate) fn resolver_warnings(output: &str) -> Vec<String> {
    let lines: Vec<&str> = output.lines().map(str::trim_end).collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() && found.len() < MAX_WARNINGS {
        let Some(kind) = WarningKind::of(lines[i]) else {
            i += 1;
            continue;
        };
        let end = kind.end(&lines, i);
        let block: Vec<String> = lines[i..end]
            .iter()
            .take(MAX_LINES)
            .map(|l| clip(l))
            .collect();
        found.push(block.join("\n"));
        i = end;
    }
    found
}

/// How a warning starts, and so where it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WarningKind {
    /// npm's `npm warn ERESOLVE ...`, followed by its explanation on more `npm warn` lines.
    Npm,
    /// pnpm's `WARN  Issues with peer dependencies found`, followed by a tree.
    PnpmPeers,
    /// pip's dependency-conflict error, followed by one line per conflict.
    PipConflicts,
    /// A warning on one line (yarn, bun, Bundler).
    Line,
}

impl WarningKind {
    fn of(line: &str) -> Option<WarningKind> {
        let content = npm_warning(line);
        if content.is_some_and(|c| c.starts_with("ERESOLVE") || c.contains("requires a peer of")) {
            return Some(WarningKind::Npm);
        }
        if line.contains("WARN") && line.contains("Issues with peer dependencies found") {
            return Some(WarningKind::PnpmPeers);
        }
        if line.starts_with("ERROR: pip's dependency resolver does not currently take into account")
        {
            return Some(WarningKind::PipConflicts);
        }
        let single = [
            "has unmet peer dependency",
            "has incorrect peer dependency",
            "YN0002:",
            "YN0060:",
            "YN0086:",
            "incorrect peer dependency",
            "Bundler attempted to update",
        ];
        single
            .iter()
            .any(|s| line.contains(s))
            .then_some(WarningKind::Line)
    }

    /// Where the warning starting at `start` ends (exclusive).
    fn end(self, lines: &[&str], start: usize) -> usize {
        let rest = lines.iter().enumerate().skip(start + 1);
        let stop = match self {
            WarningKind::Line => return start + 1,
            // Until a line that is no npm warning, or one that starts another warning.
            WarningKind::Npm => rest
                .take_while(|(_, l)| npm_warning(l).is_some_and(|c| !starts_npm_warning(c)))
                .last(),
            WarningKind::PnpmPeers => rest.take_while(|(_, l)| !l.trim().is_empty()).last(),
            WarningKind::PipConflicts => rest
                .take_while(|(_, l)| l.contains(" requires ") || l.contains(" has requirement "))
                .last(),
        };
        stop.map_or(start + 1, |(i, _)| i + 1)
    }
}

/// What follows `npm warn` (npm 7+) or `npm WARN` (npm 6) on a line of npm's output.
fn npm_warning(line: &str) -> Option<&str> {
    line.strip_prefix("npm warn")
        .or_else(|| line.strip_prefix("npm WARN"))
        .map(str::trim_start)
}

/// A warning of its own (`ERESOLVE ...`, `deprecated ...`, `EBADENGINE ...`) rather than a line of
/// the one before.
fn starts_npm_warning(content: &str) -> bool {
    let word = content.split_whitespace().next().unwrap_or_default();
    word == "deprecated"
        || word.len() > 1
            && word.starts_with('E')
            && word
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

fn clip(line: &str) -> String {
    let line: String = line.chars().filter(|c| !c.is_control()).collect();
    if line.chars().count() <= MAX_LINE {
        return line;
    }
    line.chars().take(MAX_LINE).collect::<String>() + "…"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_npm_peer_override_is_one_warning() {
        let output = "\
npm warn deprecated glob@7.2.3: Glob versions prior to v9 are no longer supported
npm warn ERESOLVE overriding peer dependency
npm warn While resolving: app@1.0.0
npm warn Found: typescript@6.0.2
npm warn node_modules/typescript
npm warn   peer typescript@\">=4.8.4 <6.1.0\" from tseslint@8.0.0
npm warn
npm warn Could not resolve dependency:
npm warn peer typescript@\">=4.8.4 <6.1.0\" from tseslint@8.0.0
npm warn deprecated inflight@1.0.6: This module is not supported
npm warn ERESOLVE overriding peer dependency
npm warn While resolving: other@1.0.0

added 2 packages in 796ms
";
        let warnings = resolver_warnings(output);
        assert_eq!(warnings.len(), 2, "{warnings:#?}");
        assert!(warnings[0].starts_with("npm warn ERESOLVE overriding peer dependency\n"));
        assert!(
            warnings[0].ends_with("from tseslint@8.0.0"),
            "{}",
            warnings[0]
        );
        assert_eq!(warnings[0].lines().count(), 8);
        assert_eq!(
            warnings[1],
            "npm warn ERESOLVE overriding peer dependency\nnpm warn While resolving: other@1.0.0"
        );
    }

    #[test]
    fn other_managers_warnings_are_found() {
        let output = "\
 WARN  Issues with peer dependencies found
.
└─┬ tseslint 8.0.0
  └── ✕ unmet peer typescript@\">=4.8.4 <6.1.0\": found 6.1.0

warning \" > tseslint@8.0.0\" has unmet peer dependency \"typescript@>=4.8.4 <6.1.0\".
➤ YN0060: │ typescript is listed by your project with version 6.1.0 (p1a2b3), which doesn't satisfy what tseslint requests (>=4.8.4 <6.1.0).
ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. This behaviour is the source of the following dependency conflicts.
app 1.0 requires lib<2, but you have lib 2.0.0 which is incompatible.
Successfully installed lib-2.0.0
Bundler attempted to update lib but its version stayed the same
Fetching gem metadata from http://127.0.0.1:1/.
";
        insta::assert_snapshot!(
            "resolver_warnings",
            resolver_warnings(output).join("\n---\n")
        );
    }

    #[test]
    fn a_pr_shows_each_command_that_warned() {
        let warned = [
            Warned {
                command: "npm install typescript@6.1.0".into(),
                warnings: vec!["npm warn ERESOLVE overriding peer dependency\nnpm warn ```".into()],
            },
            Warned {
                command: "npm ci".into(),
                warnings: vec!["x\n".repeat(100)],
            },
        ];
        insta::assert_snapshot!("pr_warnings_section", section(&warned[..1]));
        let both = section(&warned);
        assert!(
            both.ends_with("\n… and 22 more lines in the run's report.\n"),
            "{both}"
        );
        assert_eq!(both.matches("\nx").count(), MAX_SHOWN_LINES - 2);
        assert_eq!(section(&[]), "");
    }

    #[test]
    fn warnings_are_bounded() {
        let output = "warning \"x\" has unmet peer dependency \"y\".\n".repeat(100);
        assert_eq!(resolver_warnings(&output).len(), MAX_WARNINGS);
        let long = format!(
            "warning \"{}\" has unmet peer dependency \"y\".",
            "x".repeat(1000)
        );
        assert_eq!(resolver_warnings(&long)[0].chars().count(), MAX_LINE + 1);
        assert!(resolver_warnings("added 2 packages\nnpm warn deprecated x").is_empty());
    }
}
