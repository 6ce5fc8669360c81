//! Arbitrary command strings through the update-command and test-command checks, which random
//! JSON rarely reaches. Anything accepted must split into words without shell syntax.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quartermaster::mission::Mission;
use quartermaster::plan::{Update, UpdateType};
use std::sync::LazyLock;

static MISSION: LazyLock<Mission> =
    LazyLock::new(|| quartermaster::mission::load("deps", None).expect("deps mission loads"));

static UPDATES: LazyLock<Vec<Update>> = LazyLock::new(|| {
    [
        ("github.com/gorilla/mux", "v1.8.1"),
        ("lodash", "4.17.21"),
        ("@types/node", "20.1.0"),
        ("serde", "1.0.201"),
        ("requests", "2.32.0"),
        ("rails", "7.1.3"),
    ]
    .into_iter()
    .map(|(p, v)| Update {
        package: p.into(),
        from: "0".into(),
        to: v.into(),
        update_type: UpdateType::Patch,
    })
    .collect()
});

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else {
        return;
    };
    let ecosystems: Vec<String> = MISSION.ecosystems.keys().cloned().collect();
    if let Ok(m) = MISSION.check_update_command(command, &ecosystems, &UPDATES) {
        assert!(!m.argv.is_empty());
        assert!(!command.contains([';', '|', '&', '$', '`', '\n']));
        // Every option that runs is one the mission's entry wrote: in its form or in what it runs.
        let entry = MISSION.ecosystems[&m.ecosystem]
            .commands
            .iter()
            .find(|c| c.source() == m.pattern)
            .unwrap();
        let executed = entry.executed().source();
        assert!(
            m.argv
                .iter()
                .skip(1)
                .all(|w| !w.starts_with('-') || executed.contains(w.as_str()))
        );
    }
    if let Ok(test) = MISSION.check_test_command(command) {
        assert!(!test.argv.is_empty());
        // What runs is a runner's program: a form's `runs` starts with its pattern's.
        assert!(MISSION.test_runners().contains(test.argv[0].as_str()));
        assert!(!command.contains([';', '|', '&', '$', '`', '\n']));
    }
});
