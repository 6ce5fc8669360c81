//! What version managers may do in the commands' environment. By default nothing is downloaded:
//! Go uses the toolchain installed (`GOTOOLCHAIN=local`, where it would otherwise fetch the one
//! go.mod names), rustup does not install the toolchain rust-toolchain.toml names, and corepack
//! neither prompts nor fetches the package manager `packageManager` names. With the opt-in, the
//! managers that verify their own downloads fetch the declared version: Go checks toolchains
//! against its checksum database, rustup checks its distribution's hashes, and corepack checks
//! the hash `packageManager` carries when it carries one.

use std::collections::BTreeMap;
use std::ffi::OsString;

/// The variables, for downloads allowed (`install`) or not.
pub fn variables(install: bool) -> [(&'static str, &'static str); 4] {
    if install {
        [
            ("GOTOOLCHAIN", "local+auto"),
            ("RUSTUP_AUTO_INSTALL", "1"),
            ("COREPACK_ENABLE_DOWNLOAD_PROMPT", "0"),
            ("COREPACK_ENABLE_NETWORK", "1"),
        ]
    } else {
        [
            ("GOTOOLCHAIN", "local"),
            ("RUSTUP_AUTO_INSTALL", "0"),
            ("COREPACK_ENABLE_DOWNLOAD_PROMPT", "0"),
            ("COREPACK_ENABLE_NETWORK", "0"),
        ]
    }
}

/// Sets the variables in a child environment; one the operator passes by name with extra-env
/// (`extra`) keeps the operator's value.
pub fn apply(env: &mut BTreeMap<OsString, OsString>, install: bool, extra: &[String]) {
    for (name, value) in variables(install) {
        let passed = extra.iter().any(|e| e == name) && env.contains_key(&OsString::from(name));
        if !passed {
            env.insert(name.into(), value.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(env: &BTreeMap<OsString, OsString>, name: &str) -> String {
        env[&OsString::from(name)].to_string_lossy().into_owned()
    }

    #[test]
    fn nothing_is_downloaded_unless_opted_in() {
        let mut env = BTreeMap::new();
        env.insert(OsString::from("GOTOOLCHAIN"), OsString::from("auto"));
        apply(&mut env, false, &[]);
        assert_eq!(value(&env, "GOTOOLCHAIN"), "local");
        assert_eq!(value(&env, "RUSTUP_AUTO_INSTALL"), "0");
        assert_eq!(value(&env, "COREPACK_ENABLE_NETWORK"), "0");
        assert_eq!(value(&env, "COREPACK_ENABLE_DOWNLOAD_PROMPT"), "0");
        apply(&mut env, true, &[]);
        assert_eq!(value(&env, "GOTOOLCHAIN"), "local+auto");
        assert_eq!(value(&env, "RUSTUP_AUTO_INSTALL"), "1");
        assert_eq!(value(&env, "COREPACK_ENABLE_NETWORK"), "1");
        assert_eq!(value(&env, "COREPACK_ENABLE_DOWNLOAD_PROMPT"), "0");
    }

    #[test]
    fn a_variable_the_operator_passes_by_name_is_kept() {
        let mut env = BTreeMap::new();
        env.insert(OsString::from("GOTOOLCHAIN"), OsString::from("go1.22.3"));
        apply(&mut env, false, &["GOTOOLCHAIN".to_string()]);
        assert_eq!(value(&env, "GOTOOLCHAIN"), "go1.22.3");
        assert_eq!(value(&env, "RUSTUP_AUTO_INSTALL"), "0");
    }
}
