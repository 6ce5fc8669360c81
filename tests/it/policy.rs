//! The test-command policy checked where validation could only see text: in the workspace, right
//! before the test runs.

use crate::common::*;
use serde_json::json;

/// `make -C shared test` passes validation as text; in the workspace `shared` is a link to a
/// directory outside the checkout, whose Makefile would run.
#[test]
fn a_test_command_cannot_leave_the_checkout_through_a_link() {
    let f = Fixture::new();
    let outside = f.root.path().join("outside");
    let marker = f.root.path().join("ran");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        outside.join("Makefile"),
        format!("test:\n\ttouch {}\n", marker.display()),
    )
    .unwrap();
    sh(
        f.root.path(),
        &format!(
            "git clone -q file://{remote} linked && cd linked && ln -s {outside} shared && \
             git add shared && git commit -qm 'link' && git push -q origin main",
            remote = f.remote.display(),
            outside = outside.display()
        ),
    );
    let mut action = create_mr("quartermaster/cargo", &[greeting()], "batch");
    action["test_command"] = json!("make -C shared test");
    let run = f.run(&plan(vec![action]), &[]);
    assert_eq!(run.code, 1, "{}", run.said());
    assert_eq!(run.status(0), "denied");
    assert!(
        run.reason(0).starts_with(
            "[test_command.path_outside] test command is not allowed: `-C shared` leads outside the checkout through a symbolic link"
        ),
        "{}",
        run.reason(0)
    );
    assert!(!marker.exists(), "the outside Makefile ran");
    assert!(f.pulls().is_empty());
}
