//! What a PR says of the gates: the advisories its update fixes, the checks its versions passed,
//! and each direct update's release notes. Advisory summaries and release notes are written by
//! strangers: they go through the same neutralising as plan text, lose their HTML (so they cannot
//! close the `<details>` they are folded in) and are quoted line by line (so a line cannot start a
//! quick action or leave a code fence open), and they are size-capped.

use super::Notes;
use super::judge::{Screening, describe_advisory};
use super::notes::Found;
use crate::markdown;
use crate::policy::{Policy, describe_age};

/// The most characters of one release's notes quoted.
const MAX_RELEASE: usize = 3_000;
/// The most characters of notes quoted for one package.
const MAX_PACKAGE: usize = 6_000;
/// The most characters of notes in one PR.
const MAX_NOTES: usize = 20_000;

/// The title of a PR whose update fixes known advisories says so.
pub(crate) fn security_title(title: &str) -> String {
    if title.to_lowercase().contains("[security]") {
        title.to_string()
    } else {
        format!("{title} [security]")
    }
}

/// The PR's sections: the fixed advisories first, then what was checked, then release notes.
pub(crate) fn sections(
    screening: &Screening,
    notes: &[Notes],
    policy: &Policy,
    allow_mentions: bool,
) -> String {
    let mut out = String::new();
    if screening.is_security_fix() {
        out.push_str("\n**Security update**: this update fixes known advisories.\n\n");
        for fix in &screening.fixes {
            let a = &fix.advisory;
            let id = markdown::link(&markdown::cell(&describe_advisory(a)), &a.url);
            let summary = markdown::cell(&crate::sink::body_line(&a.summary, allow_mentions));
            out.push_str(&format!(
                "- {id} in {} {} → {}: {summary}\n",
                markdown::code(&fix.package),
                markdown::code(&fix.from),
                markdown::code(&fix.to),
            ));
        }
    }
    out.push_str(&checks_line(screening, policy));
    out.push_str(&allowed_findings(screening));
    out.push_str(&notes_section(notes, allow_mentions));
    out
}

/// What the policy reports without refusing (`block = false`): known advisories and deprecations
/// of the new versions, so a reviewer still sees them.
fn allowed_findings(screening: &Screening) -> String {
    let mut out = String::new();
    for c in &screening.checked {
        let name = format!(
            "{} {}",
            markdown::code(&c.package),
            markdown::code(&c.version)
        );
        if !c.advisories.is_empty() {
            let links: Vec<String> = c
                .advisories
                .iter()
                .map(|id| {
                    let url = format!("https://osv.dev/vulnerability/{id}");
                    markdown::link(&markdown::cell(id), &url)
                })
                .collect();
            out.push_str(&format!(
                "- ⚠️ {name} has known advisories: {} (reported, not refused: `advisories.block = false`)\n",
                links.join(", ")
            ));
        }
        if let Some(how) = &c.withdrawn {
            out.push_str(&format!(
                "- ⚠️ {name} is {} by its registry (reported, not refused: `deprecated.block = false`)\n",
                markdown::cell(&crate::sink::body_line(how, false))
            ));
        }
    }
    if out.is_empty() {
        out
    } else {
        format!("\n{out}")
    }
}

/// One line saying what the new versions were checked against.
fn checks_line(screening: &Screening, policy: &Policy) -> String {
    let count = screening.checked.len();
    if count == 0 {
        return String::new();
    }
    let age = if policy.release_age.minimum.is_zero() {
        "no minimum release age".to_string()
    } else {
        format!(
            "a minimum release age of {}",
            describe_age(policy.release_age.minimum)
        )
    };
    let advisories = match &screening.advisories_unchecked {
        None => ", deprecations and known advisories (OSV)".to_string(),
        Some(why) => format!(
            " and deprecations; known advisories could not be checked ({}; the policy allows it with `advisories.block = false`)",
            markdown::cell(&crate::sink::body_line(why, false))
        ),
    };
    format!(
        "\nChecked: {count} newly resolved version{} against {age}{advisories}.\n",
        if count == 1 { "" } else { "s" }
    )
}

fn notes_section(notes: &[Notes], allow_mentions: bool) -> String {
    if notes.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n**Release notes**\n");
    let mut budget = MAX_NOTES;
    for n in notes {
        let heading = format!(
            "{} {} → {}",
            markdown::cell(&n.package),
            markdown::cell(n.from.as_deref().unwrap_or("none")),
            markdown::cell(&n.to)
        );
        match &n.found {
            Found::Releases {
                repository,
                releases,
            } if budget > 0 => {
                let mut quoted = String::new();
                for (tag, title, body) in releases {
                    let title = if title.is_empty() { tag } else { title };
                    quoted.push_str(&format!(
                        "\n#### {}\n\n",
                        markdown::cell(&crate::sink::body_line(title, allow_mentions))
                    ));
                    quoted.push_str(&quote(&capped(body, MAX_RELEASE), allow_mentions));
                    if quoted.chars().count() > MAX_PACKAGE.min(budget) {
                        quoted = capped(&quoted, MAX_PACKAGE.min(budget));
                        quoted.push('\n');
                        break;
                    }
                }
                budget = budget.saturating_sub(quoted.chars().count());
                let all = markdown::link("all releases", &format!("{repository}/releases"));
                out.push_str(&format!(
                    "\n<details><summary>{heading}</summary>\n{quoted}\n{all}\n\n</details>\n"
                ));
            }
            Found::Releases { repository, .. } => out.push_str(&format!(
                "\n- {heading}: {}\n",
                markdown::link("release notes", &format!("{repository}/releases"))
            )),
            Found::Link(url) => out.push_str(&format!(
                "\n- {heading}: {}\n",
                markdown::link("release notes", url)
            )),
            Found::Unavailable(why) => out.push_str(&format!(
                "\n- {heading}: release notes unavailable ({})\n",
                markdown::cell(&crate::sink::body_line(why, false))
            )),
        }
    }
    out
}

/// Stranger-written Markdown as a quote: neutralised, without HTML, every line behind `> `.
fn quote(text: &str, allow_mentions: bool) -> String {
    let safe = crate::sink::body(text, allow_mentions).replace('<', "&lt;");
    let mut out: String = safe.lines().map(|l| format!("> {l}\n")).collect();
    if out.is_empty() {
        out.push_str("> (no notes)\n");
    }
    out
}

fn capped(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        text.chars().take(max).collect::<String>() + "… (cut)"
    }
}

#[cfg(test)]
mod tests;
