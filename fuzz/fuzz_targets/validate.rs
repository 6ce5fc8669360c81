//! Any bytes through parse + validate: must never panic, whatever the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quartermaster::mission::Mission;
use std::sync::LazyLock;

static MISSION: LazyLock<Mission> =
    LazyLock::new(|| quartermaster::mission::load("deps", None).expect("deps mission loads"));

fuzz_target!(|data: &[u8]| {
    let result = quartermaster::validate::validate(data, &MISSION);
    // A plan judged valid must be complete and free of errors.
    if result.is_valid() {
        assert_eq!(result.errors().count(), 0);
    }
});
