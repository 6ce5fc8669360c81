//! Every environment variable Quartermaster reads, in one place.

/// Prefix of Quartermaster's own inputs: `QM_<FLAG>` for every `--flag` of `run`.
pub(crate) const PREFIX: &str = "QM_";

/// The forge token, when set explicitly (never a flag: flags show in process listings).
pub(crate) const QM_TOKEN: &str = "QM_TOKEN";
/// Set by the GitHub Action when `token` is the workflow's own `GITHUB_TOKEN`.
pub(crate) const QM_TOKEN_IS_DEFAULT: &str = "QM_TOKEN_IS_DEFAULT";
/// The log filter (`tracing` syntax).
pub(crate) const QM_LOG: &str = "QM_LOG";

/// Variables that hold forge credentials: never handed to agent commands, whatever extra-env says.
pub(crate) const TOKEN_VARIABLES: &[&str] = &[
    "QM_TOKEN",
    "GITHUB_TOKEN",
    "GITLAB_TOKEN",
    "CI_JOB_TOKEN",
    "INPUT_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "CI_REGISTRY_PASSWORD",
];

/// The CI's own credentials of a run, besides the forge token: the Actions runtime (cache and
/// artifacts) and OIDC request tokens, GitLab's job token, ID tokens and registry passwords. A
/// variable that holds one of their values is never handed to agent commands either.
pub(crate) const CI_CREDENTIALS: &[&str] = &[
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "CI_JOB_TOKEN",
    "CI_JOB_JWT",
    "CI_JOB_JWT_V1",
    "CI_JOB_JWT_V2",
    "CI_REGISTRY_PASSWORD",
    "CI_DEPENDENCY_PROXY_PASSWORD",
    "CI_DEPLOY_PASSWORD",
];

/// Variables a token may arrive in, which `run` takes out of its environment (and out of the
/// initial environment block `/proc/<pid>/environ` shows) before anything else happens.
pub(crate) const TAKEN_AT_START: &[&str] = &[
    "QM_TOKEN",
    "GITHUB_TOKEN",
    "GITLAB_TOKEN",
    "CI_JOB_TOKEN",
    "INPUT_TOKEN",
];
