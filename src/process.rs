//! The environment children start from: an allowlist of the operator's variables (never a forge
//! token) over safe defaults. The sandbox then gives each unit its own HOME, temporary directory
//! and tool configuration (see [`crate::sandbox`]).

use std::collections::BTreeMap;
use std::ffi::OsString;

/// Environment variables children inherit. Everything else is dropped: tokens, CI metadata, and
/// tool configuration an attacker could use (`GOFLAGS`, `npm_config_*`, `RUSTFLAGS`, ...). Operators
/// add more with the extra-env input. `GOTOOLCHAIN` is set by [`crate::toolchain::env`].
pub(crate) const INHERITED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "CI",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "GOROOT",
    "GOPATH",
    "GOCACHE",
    "GOMODCACHE",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "JAVA_HOME",
    "MAVEN_HOME",
    "GRADLE_HOME",
    "GRADLE_USER_HOME",
    "GEM_HOME",
    "GEM_PATH",
    "BUNDLE_PATH",
    "DOTNET_ROOT",
    "NUGET_PACKAGES",
    "PNPM_HOME",
    "BUN_INSTALL",
    "PYENV_ROOT",
    "POETRY_HOME",
];

/// Settings every child gets unless the operator passes the same variable with extra-env: package
/// managers must not run install scripts or build source distributions (arbitrary code from the
/// registry) while Quartermaster updates lock files. Renovate and Dependabot do the same.
pub(crate) const SAFE_DEFAULTS: &[(&str, &str)] = &[
    ("npm_config_ignore_scripts", "true"),
    ("YARN_IGNORE_SCRIPTS", "true"),
    ("YARN_ENABLE_SCRIPTS", "false"),
    ("PIP_ONLY_BINARY", ":all:"),
    // uv: wheels only (no sdist build backend runs), and never a Python interpreter downloaded
    // into the unit; the operator's Python on PATH is the one used.
    ("UV_NO_BUILD", "1"),
    ("UV_PYTHON_DOWNLOADS", "never"),
];

/// The safe defaults that hold while the update commands compute a lock, and no longer once it
/// is committed: the frozen install builds the tests' environment as the project's own CI
/// would (install scripts and source builds included), and the tests run that code anyway, in
/// the same sandbox. One the operator passes by name with extra-env keeps holding.
const UPDATE_ONLY: &[&str] = &[
    "npm_config_ignore_scripts",
    "YARN_IGNORE_SCRIPTS",
    "YARN_ENABLE_SCRIPTS",
    "PIP_ONLY_BINARY",
    "UV_NO_BUILD",
];

/// The environment a frozen install and the tests start from: `env` (the update commands')
/// without the update-only defaults the operator did not pass (`extra`).
pub(crate) fn install_env(
    env: &BTreeMap<OsString, OsString>,
    extra: &[String],
) -> BTreeMap<OsString, OsString> {
    let mut env = env.clone();
    for name in UPDATE_ONLY
        .iter()
        .filter(|n| !extra.iter().any(|e| e == *n))
    {
        env.remove(&OsString::from(name));
    }
    env
}

/// Builds a child environment: the inherited allowlist plus the operator's `extra` names, taken
/// from `source` (normally the process environment), over [`SAFE_DEFAULTS`].
pub fn child_env(
    source: impl IntoIterator<Item = (OsString, OsString)>,
    extra: &[String],
) -> BTreeMap<OsString, OsString> {
    let mut env: BTreeMap<OsString, OsString> = SAFE_DEFAULTS
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect();
    env.extend(source.into_iter().filter(|(name, _)| {
        let name = name.to_string_lossy();
        INHERITED_ENV.contains(&name.as_ref()) || extra.iter().any(|e| *e == name)
    }));
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_is_an_allowlist() {
        let source = vec![
            (OsString::from("PATH"), OsString::from("/bin")),
            (OsString::from("GITHUB_TOKEN"), OsString::from("t")),
            (OsString::from("GOFLAGS"), OsString::from("-toolexec=x")),
            (OsString::from("GOPROXY"), OsString::from("https://proxy")),
        ];
        let env = child_env(source, &["GOPROXY".to_string()]);
        let names: Vec<String> = env
            .keys()
            .map(|k| k.to_string_lossy().into_owned())
            .filter(|k| !SAFE_DEFAULTS.iter().any(|(d, _)| d == k))
            .collect();
        assert_eq!(names, vec!["GOPROXY", "PATH"]);
        assert_eq!(env[&OsString::from("npm_config_ignore_scripts")], "true");
        // uv builds no sdist and downloads no Python unless the operator says otherwise.
        assert_eq!(env[&OsString::from("UV_NO_BUILD")], "1");
        assert_eq!(env[&OsString::from("UV_PYTHON_DOWNLOADS")], "never");
        let opted_in = child_env(
            vec![(
                OsString::from("npm_config_ignore_scripts"),
                OsString::from("false"),
            )],
            &["npm_config_ignore_scripts".to_string()],
        );
        assert_eq!(
            opted_in[&OsString::from("npm_config_ignore_scripts")],
            "false"
        );
    }

    #[test]
    fn the_install_environment_lifts_the_update_only_defaults() {
        let env = child_env(
            vec![
                (OsString::from("PATH"), OsString::from("/bin")),
                (OsString::from("VIRTUAL_ENV"), OsString::from("/opt/venv")),
                (OsString::from("PIP_ONLY_BINARY"), OsString::from(":all:")),
            ],
            &["PIP_ONLY_BINARY".to_string()],
        );
        assert!(
            !env.contains_key(&OsString::from("VIRTUAL_ENV")),
            "the operator's virtualenv is no unit's"
        );
        let install = install_env(&env, &["PIP_ONLY_BINARY".to_string()]);
        let names: Vec<String> = install
            .keys()
            .map(|k| k.to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["PATH", "PIP_ONLY_BINARY", "UV_PYTHON_DOWNLOADS"]);
    }
}
