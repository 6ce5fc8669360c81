//! Everything Quartermaster prints or posts goes through here: one policy per destination, for
//! text it did not write itself (plan text, child output, lock-file and registry values).
//!
//! | destination | what untrusted text cannot do there | how |
//! |---|---|---|
//! | PR, issue and comment bodies ([`body`]) | ping, cross-link, run a GitLab quick action, load an image, hide or forge a marker, skip CI once squashed | mentions and references broken with a zero-width space; `/` at a line start escaped; images made links; `<!--` escaped; skip directives broken visibly; control characters dropped |
//! | one line of a body, such as a table cell ([`body_line`]) | as in a body | as in a body, with line breaks made spaces |
//! | titles and commit messages ([`line`]) | the same, on one line, and close an issue or skip CI from a commit subject | one line; mentions and references put in code spans (no invisible character); skip directives broken visibly |
//! | values inside Quartermaster's own Markdown ([`literal`], for code spans) | close an issue or skip CI once squashed into a commit | references broken, skip directives broken visibly, control characters dropped |
//! | the job log and the terminal ([`log`]) | issue workflow commands, steer the terminal, fake log sections | GitHub: inside `::stop-commands::<random>`; everywhere: control characters (ESC, CR, ...) written as `\x1b`, so GitLab's section markers and cursor moves are inert; no line starts with `::` |
//! | the Markdown summary (the report's failures) | the same as the job log, where it is printed | output tails with control characters made visible, in fences they cannot close |
//!
//! `--allow-mentions` lets mentions and references through; nothing lets skip directives,
//! quick actions, markers or control characters through.

mod forge;
pub(crate) mod log;

pub(crate) use forge::{body, body_line, line, literal};
pub(crate) use log::{summary_block, terminal};
