//! What version managers may do in the commands' environment. By default nothing is downloaded:
//! Go uses the toolchain installed (`GOTOOLCHAIN=local`, where it would otherwise fetch the one
//! go.mod names), rustup does not install the toolchain rust-toolchain.toml names, and corepack
//! neither prompts nor fetches the package manager `packageManager` names. With the opt-in, the
//! managers that verify their own downloads fetch the declared version: Go checks toolchains
//! against its checksum database, rustup checks its distribution's hashes, and corepack checks
//! the hash `packageManager` carries when it carries one.

use super::{DeclaredVersion, Rule, Tool};
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::sync::LazyLock;

/// A Go version as `GOTOOLCHAIN` names one (`1.22.3`, `1.23rc1`), and nothing else.
static GO_VERSION: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"^\d+\.\d+(\.\d+)?((rc|beta)\d+)?$").expect("the pattern compiles")
});

/// The variables, for downloads allowed (`install`) or not.
pub(crate) fn variables(install: bool) -> [(&'static str, &'static str); 4] {
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
pub(crate) fn apply(env: &mut BTreeMap<OsString, OsString>, install: bool, extra: &[String]) {
    for (name, value) in variables(install) {
        let passed = extra.iter().any(|e| e == name) && env.contains_key(&OsString::from(name));
        if !passed {
            env.insert(name.into(), value.into());
        }
    }
}

/// With the opt-in (`GOTOOLCHAIN=local+auto`), the toolchain go.mod's `toolchain` line names is
/// the one to run: `go1.22.3+auto` has Go fetch it (and a newer one only when go.mod requires
/// it), as Dependabot does. `None` leaves the environment as it is.
pub(crate) fn go_toolchain(
    env: &BTreeMap<OsString, OsString>,
    declared: &[DeclaredVersion],
) -> Option<String> {
    let opted_in = env
        .get(OsStr::new("GOTOOLCHAIN"))
        .is_some_and(|v| v == "local+auto");
    if !opted_in {
        return None;
    }
    declared
        .iter()
        .find(|d| d.tool == Tool::Go && d.rule == Rule::Exact && GO_VERSION.is_match(&d.value))
        .map(|d| format!("go{}+auto", d.value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_the_opt_in_go_runs_the_toolchain_go_mod_names() {
        let go = |value: &str, rule| DeclaredVersion {
            tool: Tool::Go,
            file: "go.mod".into(),
            value: value.into(),
            rule,
        };
        let declared = [go("1.21", Rule::Minimum), go("1.22.3", Rule::Exact)];
        let mut env = BTreeMap::new();
        apply(&mut env, true, &[]);
        assert_eq!(
            go_toolchain(&env, &declared).as_deref(),
            Some("go1.22.3+auto")
        );
        assert_eq!(go_toolchain(&env, &declared[..1]), None);
        assert_eq!(go_toolchain(&env, &[go("1.22.3 -x", Rule::Exact)]), None);
        apply(&mut env, false, &[]);
        assert_eq!(go_toolchain(&env, &declared), None);
    }

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
