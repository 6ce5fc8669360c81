//! The documentation (the README and the reference in `docs/`) documents every finding code, and
//! every update command, frozen install and dependency file of the deps mission.

use quartermaster::finding::Code;

/// The README and every file of `docs/`, one after the other.
pub(crate) fn documentation() -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut files: Vec<_> = std::fs::read_dir(format!("{root}/docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files.insert(0, format!("{root}/README.md").into());
    files
        .iter()
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_code_is_documented() {
    let readme = documentation();
    let missing: Vec<&str> = Code::ALL
        .iter()
        .map(|c| c.as_str())
        .filter(|c| !readme.contains(&format!("`{c}`")))
        .collect();
    assert!(missing.is_empty(), "README lacks codes: {missing:?}");
}

#[test]
fn every_deps_command_is_documented() {
    let readme = documentation();
    let deps = quartermaster::mission::load("deps", None).unwrap();
    for (name, eco) in &deps.ecosystems {
        for pattern in &eco.commands {
            assert!(
                readme.contains(&format!("`{}`", pattern.source())),
                "README lacks {name} command `{}`",
                pattern.source()
            );
        }
    }
    for name in deps.ecosystems.keys() {
        let files: Vec<String> = deps
            .files
            .patterns(name)
            .iter()
            .map(|f| format!("`{f}`"))
            .collect();
        let row_ends = format!("| {} |", files.join(", "));
        assert!(
            readme
                .lines()
                .any(|l| l.starts_with(&format!("| {name} |")) && l.ends_with(&row_ends)),
            "README's {name} row lacks its files {row_ends}"
        );
    }
    for (name, eco) in &deps.ecosystems {
        for install in &eco.install {
            assert!(
                readme.contains(&format!("`{}`", install.source())),
                "README lacks {name}'s frozen install `{}`",
                install.source()
            );
        }
    }
    for runner in deps.test_runners() {
        assert!(
            readme.contains(&format!("`{runner}`")),
            "README lacks runner {runner}"
        );
    }
}
