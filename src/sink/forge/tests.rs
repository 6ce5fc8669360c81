use super::*;

#[test]
fn quick_actions_are_escaped() {
    let out = body("Please review.\n/merge\n  /approve\nnot /close here", false);
    assert_eq!(
        out,
        "Please review.\n\\/merge\n  \\/approve\nnot /close here"
    );
}

#[test]
fn mentions_and_references_do_not_ping() {
    let out = body(
        "cc @alice and @org/team, fixes #12, see !7, mail a@b.c, ref octo/widgets#3, &#8203;",
        false,
    );
    assert_eq!(
        out,
        "cc @\u{200B}alice and @\u{200B}org/team, fixes #\u{200B}12, see !\u{200B}7, mail a@b.c, ref octo/widgets#\u{200B}3, &#8203;"
    );
    assert_eq!(body("cc @alice #12", true), "cc @alice #12");
    // After any non-word character, in code spans too (the space is invisible there).
    for (given, broken) in [
        ("`@alice`", "`@\u{200B}alice`"),
        ("team/@alice", "team/@\u{200B}alice"),
        ("@_name", "@\u{200B}_name"),
        ("see GH-12 and gh-3", "see GH-\u{200B}12 and gh-\u{200B}3"),
        (
            "epic &12, not &#12; or &amp;",
            "epic &\u{200B}12, not &#12; or &amp;",
        ),
    ] {
        assert_eq!(body(given, false), broken, "{given}");
    }
}

#[test]
fn remote_images_become_links() {
    assert_eq!(
        body("![beacon](https://evil.example/t.gif) <IMG src=x>", false),
        "\\![beacon](https://evil.example/t.gif) &lt;IMG src=x>"
    );
    assert_eq!(body("![x](y)", true), "![x](y)");
}

#[test]
fn markers_cannot_be_forged_or_hidden() {
    let out = body("<!-- quartermaster:pr:abc -->hidden", false);
    assert!(!out.contains("<!--"));
}

#[test]
fn control_characters_are_dropped() {
    assert_eq!(body("a\u{7}b\u{1b}[31mc\td", false), "ab[31mc\td");
}

/// With GitHub's "default to pull request title and description" squash setting, a PR's title
/// and body become a commit on the default branch.
#[test]
fn no_text_skips_ci_even_once_squashed() {
    for (given, broken) in [
        ("[skip ci]", "(skip ci)"),
        ("[CI SKIP]", "(CI SKIP)"),
        ("[no ci]", "(no ci)"),
        ("[skip actions]", "(skip actions)"),
        ("[actions skip]", "(actions skip)"),
        ("[skip azp]", "(skip azp)"),
        ("***NO_CI***", "NO_CI"),
        ("skip-checks: true", "skip checks: true"),
    ] {
        assert_eq!(body(given, true), broken, "{given}");
        assert_eq!(line(given, true), broken, "{given}");
        assert_eq!(literal(given), broken, "{given}");
    }
    assert_eq!(body("[docs] and [ci]", false), "[docs] and [ci]");
}

/// A title and a commit subject carry no invisible character: what would ping or close goes in
/// a code span, Quartermaster's own suffix (a scoped package name) included.
#[test]
fn lines_break_mentions_and_references_visibly() {
    let out = line(
        "fix: bump greeting [skip ci] fixes #1 @alice\n(@types/node 20.1.0), see GH-3, &4, org/repo!5, a@b.c",
        false,
    );
    assert_eq!(
        out,
        "fix: bump greeting (skip ci) fixes `#1` `@alice` (`@types/node` 20.1.0), see `GH-3`, `&4`, org/repo`!5`, a@b.c"
    );
    assert!(!out.contains('\u{200B}'));
    assert_eq!(line("update @types/node #1", true), "update @types/node #1");
    assert_eq!(line("/close\nnow", false), "/close now");
}

/// A lock file's own text, quoted in a code span: a squashed commit closes nothing and skips
/// no CI, and a scoped name stays as it is.
#[test]
fn literals_close_and_skip_nothing() {
    assert_eq!(
        literal("2.1 -> fixes #1 [skip ci]\u{1b}"),
        "2.1 -> fixes #\u{200B}1 (skip ci)"
    );
    assert_eq!(literal("@types/node"), "@types/node");
}
