use super::*;
use secrecy::ExposeSecret;

fn flags(plan: &str) -> Inputs {
    Inputs {
        plan: Some(plan.into()),
        ..Inputs::default()
    }
}

fn env(pairs: &[(&str, &str)]) -> Inputs {
    Inputs::from_vars(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string()))).unwrap()
}

fn resolve(inputs: Inputs, ci: CiEnv) -> Result<RunConfig, ConfigError> {
    RunConfig::resolve(inputs, ci, "/w".into())
}

#[test]
fn defaults() {
    let c = resolve(flags("p.json"), CiEnv::default()).unwrap();
    assert_eq!(c.checkout, PathBuf::from("/w"));
    assert_eq!(c.forge, ForgeKind::Local);
    assert_eq!(c.min_confidence, 0.5);
    assert_eq!(c.command_timeout, Duration::from_secs(900));
    assert_eq!(c.bot_label, "quartermaster");
    assert_eq!(c.author.to_string(), DEFAULT_AUTHOR);
    assert_eq!(c.mission, "deps");
    assert!(c.token.is_none());
}

#[test]
fn flags_beat_environment_which_beats_ci() {
    let qm = env(&[
        ("QM_CHECKOUT", "/from-env"),
        ("QM_MIN_CONFIDENCE", "0.7"),
        ("QM_DRY_RUN", ""),
        ("QM_TOKEN", "qm-token"),
    ]);
    let ci = CiEnv {
        github_actions: Some("true".into()),
        github_workspace: Some("/github/workspace".into()),
        github_token: Some("gh-token".into()),
        ..CiEnv::default()
    };
    let mut f = flags("p.json");
    f.min_confidence = Some("0.9".into());
    let c = resolve(f.combine(qm), ci.clone()).unwrap();
    assert_eq!(c.checkout, PathBuf::from("/from-env"));
    assert_eq!(c.min_confidence, 0.9);
    assert!(!c.dry_run, "an empty variable is unset");
    assert_eq!(c.forge, ForgeKind::Github);
    assert_eq!(c.author.to_string(), GITHUB_BOT_AUTHOR);
    assert_eq!(c.token.unwrap().expose_secret(), "qm-token");
    let c = resolve(flags("p.json"), ci).unwrap();
    assert_eq!(c.checkout, PathBuf::from("/github/workspace"));
    assert!(
        c.token_is_default,
        "the token is the workflow's own GITHUB_TOKEN"
    );
}

#[test]
fn refusals_name_the_input() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "QM_FORGE",
            "bitbucket",
            "--forge must be auto, local, github or gitlab",
        ),
        (
            "QM_MIN_CONFIDENCE",
            "2",
            "min-confidence must be between 0 and 1",
        ),
        (
            "QM_MIN_CONFIDENCE",
            "high",
            "QM_MIN_CONFIDENCE must be a number",
        ),
        ("QM_DRY_RUN", "maybe", "QM_DRY_RUN must be true or false"),
        ("QM_COMMAND_TIMEOUT", "0", "between 1s and 24h"),
        (
            "QM_FORGE_MAX_WAIT",
            "2d",
            "forge-max-wait must be at most 24h",
        ),
        ("QM_COMMAND_TIMEOUT", "soon", "must be a duration"),
        ("QM_BOT_LABEL", "a,b", "bot label `a,b`"),
        (
            "QM_GIT_AUTHOR",
            "bot",
            "must look like `Name <email@example.com>`",
        ),
        ("QM_EXTRA_ENV", "GITHUB_TOKEN", "holds forge credentials"),
        ("QM_EXTRA_ENV", "A-B", "is not a variable name"),
    ];
    for (name, value, expected) in cases {
        let inputs = flags("p.json").combine(env(&[(name, value)]));
        let err = resolve(inputs, CiEnv::default()).unwrap_err();
        assert!(err.to_string().contains(expected), "{err} / {expected}");
    }
    let err = resolve(Inputs::default(), CiEnv::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no plan given: pass --plan FILE or set QM_PLAN"
    );
}

#[test]
fn forge_settings_follow_the_token_policy() {
    let gitlab = |token: Option<&str>, job: Option<&str>| {
        let mut inputs = flags("p.json");
        inputs.forge = Some("gitlab".into());
        inputs.token = token.map(String::from);
        let ci = CiEnv {
            ci_job_token: job.map(String::from),
            ci_server_url: Some("https://gitlab.example.com".into()),
            ci_project_path: Some("g/p".into()),
            ..CiEnv::default()
        };
        resolve(inputs, ci).unwrap().forge_config()
    };
    let err = gitlab(None, Some("glcbt-x")).err().unwrap();
    assert!(
        err.to_string()
            .starts_with("only the CI job token is available")
    );
    assert!(
        crate::hint::Hint::hint(&err)
            .unwrap()
            .contains("`api` and `write_repository` scopes")
    );
    let err = gitlab(Some("glcbt-x"), None).err().unwrap();
    assert!(err.to_string().starts_with("the token is the CI job token"));
    let Ok(crate::forge::ForgeConfig::Gitlab(settings)) = gitlab(Some("glpat-x"), None) else {
        panic!("a project token is accepted");
    };
    assert_eq!(settings.api_url, "https://gitlab.example.com/api/v4");
    assert_eq!(settings.project, "g/p");
}

#[test]
fn extra_env_never_passes_a_variable_that_held_the_token() {
    let mut inputs = flags("p.json");
    inputs.extra_env = vec!["DEPLOY_AUTH".into()];
    inputs.token_holders = vec!["DEPLOY_AUTH".into()];
    let err = resolve(inputs, CiEnv::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "extra-env: `DEPLOY_AUTH` holds the forge token and is never passed to agent commands"
    );
    let forms = secret_forms("tok3n-value");
    assert!(forms.contains(&"eC1hY2Nlc3MtdG9rZW46dG9rM24tdmFsdWU=".to_string()));
    assert_eq!(forms.len(), 5);
}

#[test]
fn extra_env_never_passes_a_variable_that_holds_a_ci_credential() {
    let mut inputs = flags("p.json");
    inputs.extra_env = vec!["CACHE_AUTH".into()];
    inputs.credential_holders = vec![("CACHE_AUTH".into(), "ACTIONS_RUNTIME_TOKEN".into())];
    let err = resolve(inputs, CiEnv::default()).unwrap_err();
    insta::assert_snapshot!(crate::hint::render(&err));
}

#[test]
fn only_limits_the_run_to_a_shard() {
    let c = resolve(
        flags("p.json").combine(env(&[("QM_ONLY", "")])),
        CiEnv::default(),
    )
    .unwrap();
    assert_eq!(c.only, None, "an empty QM_ONLY runs every action");
    let mut f = flags("p.json");
    f.only = Some("3, 0".into());
    let c = resolve(f, CiEnv::default()).unwrap();
    assert_eq!(c.only.unwrap().indices(), vec![0, 3]);
    let err = resolve(
        flags("p.json").combine(env(&[("QM_ONLY", "0,two")])),
        CiEnv::default(),
    )
    .unwrap_err();
    assert_eq!(
        crate::hint::render(&err),
        "error: --only: `two` is not an action index\nhint: give action indices separated by commas, such as 0,3,5 (`quartermaster shards` prints them)"
    );
}

#[test]
fn repository_names_another_project_on_the_forges_only() {
    let config = |forge: &str, repository: &str| {
        let mut inputs = flags("p.json").combine(env(&[("QM_REPOSITORY", repository)]));
        inputs.forge = Some(forge.into());
        inputs.token = Some("glpat-token".into());
        let ci = CiEnv {
            github_repository: Some("fleet/runner".into()),
            ci_server_url: Some("https://gitlab.example.com".into()),
            ci_project_path: Some("fleet/runner".into()),
            ci_project_id: Some("7".into()),
            ..CiEnv::default()
        };
        resolve(inputs, ci).unwrap().forge_config()
    };
    let Ok(crate::forge::ForgeConfig::Github(github)) = config("github", "octo/widgets") else {
        panic!("a GitHub repository is accepted");
    };
    assert_eq!(github.repository, "octo/widgets");
    let Ok(crate::forge::ForgeConfig::Github(github)) = config("github", "") else {
        panic!("no repository input is the job's own");
    };
    assert_eq!(github.repository, "fleet/runner");
    let Ok(crate::forge::ForgeConfig::Gitlab(gitlab)) = config("gitlab", "tools/sub/widgets")
    else {
        panic!("a GitLab project path is accepted");
    };
    assert_eq!(
        (gitlab.project.as_str(), gitlab.project_path.as_str()),
        ("tools/sub/widgets", "tools/sub/widgets"),
        "CI_PROJECT_ID is the job's project, not this one"
    );
    let refusals = [
        (
            "github",
            "octo/sub/widgets",
            "error: --repository `octo/sub/widgets` is not an owner/name\nhint: name the repository as the forge shows it, for example octo/widgets",
        ),
        (
            "gitlab",
            "widgets",
            "error: --repository `widgets` is not a group/project\nhint: name the repository as the forge shows it, for example tools/widgets or group/subgroup/project",
        ),
        (
            "gitlab",
            "tools/../widgets",
            "error: --repository `tools/../widgets` is not a group/project\nhint: name the repository as the forge shows it, for example tools/widgets or group/subgroup/project",
        ),
        (
            "local",
            "octo/widgets",
            "error: --repository names a GitHub or GitLab repository, and the forge is local\nhint: the local forge works on the checkout (--checkout) and its remote (--remote); leave QM_REPOSITORY unset, or choose --forge github or gitlab",
        ),
    ];
    for (forge, repository, expected) in refusals {
        let err = config(forge, repository).err().unwrap();
        assert_eq!(crate::hint::render(&err), expected);
    }
}

#[test]
fn a_docker_agent_plan_resolves_its_directory_status_and_result() {
    assert_eq!(
        resolve(flags("p.json"), CiEnv::default())
            .unwrap()
            .named_plan,
        None
    );
    let ci = CiEnv {
        home: Some("/home/agent".into()),
        tmpdir: Some("/var/tmp".into()),
        ..CiEnv::default()
    };
    let named = resolve(flags("docker-agent:weekly"), ci)
        .unwrap()
        .named_plan
        .unwrap();
    assert_eq!(named.name.as_str(), "weekly");
    assert_eq!(named.dir, PathBuf::from("/home/agent/.cagent/plans"));
    assert_eq!(named.claim_status, "ready");
    assert_eq!(named.result.as_str(), "weekly-result");
    let qm = env(&[
        ("QM_PLANS_DIR", "plans"),
        ("QM_CLAIM_STATUS", "approved"),
        ("QM_RESULT_PLAN", "weekly-outcome"),
    ]);
    let ci = CiEnv {
        tmpdir: Some("/var/tmp".into()),
        ..CiEnv::default()
    };
    let named = resolve(flags("docker-agent:weekly").combine(qm), ci.clone())
        .unwrap()
        .named_plan
        .unwrap();
    assert_eq!(
        (named.dir, named.claim_status, named.result.as_str()),
        (
            PathBuf::from("plans"),
            "approved".to_string(),
            "weekly-outcome"
        )
    );
    let named = resolve(flags("docker-agent:weekly"), ci)
        .unwrap()
        .named_plan
        .unwrap();
    assert_eq!(named.dir, PathBuf::from("/var/tmp/.cagent/plans"));
    let err = resolve(flags("docker-agent:../x"), CiEnv::default()).unwrap_err();
    assert_eq!(err.to_string(), "`../x` is not a valid plan name");
}

#[test]
fn toolchain_policy_and_install_come_from_flags_or_variables() {
    let c = resolve(flags("p.json"), CiEnv::default()).unwrap();
    assert_eq!(c.toolchain_policy, crate::toolchain::ToolchainPolicy::Warn);
    assert!(!c.toolchain_install);
    let qm = env(&[
        ("QM_TOOLCHAIN_POLICY", "fail"),
        ("QM_TOOLCHAIN_INSTALL", "true"),
    ]);
    let c = resolve(flags("p.json").combine(qm), CiEnv::default()).unwrap();
    assert_eq!(c.toolchain_policy, crate::toolchain::ToolchainPolicy::Fail);
    assert!(c.toolchain_install);
    let bad = env(&[("QM_TOOLCHAIN_POLICY", "strict")]);
    let e = resolve(flags("p.json").combine(bad), CiEnv::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "--toolchain-policy must be warn or fail, not `strict`"
    );
}

/// Signing needs a forge that makes commits itself: on the local forge it is refused by name.
#[test]
fn sign_commits_is_refused_on_the_local_forge() {
    let mut inputs = flags("p.json");
    inputs.sign_commits = Some("true".into());
    let c = resolve(inputs.clone(), CiEnv::default()).unwrap();
    assert!(c.sign_commits);
    let err = c.forge_config().err().unwrap();
    insta::assert_snapshot!(crate::hint::render(&err));
    inputs.forge = Some("github".into());
    inputs.token = Some("qm-token-0123456789".into());
    let ci = CiEnv {
        github_repository: Some("octo/widgets".into()),
        ..CiEnv::default()
    };
    let c = resolve(inputs, ci).unwrap();
    assert!(matches!(
        c.forge_config(),
        Ok(crate::forge::ForgeConfig::Github(_))
    ));
}

#[test]
fn caches_are_warm_unless_cold_is_asked_for_and_other_words_are_refused() {
    let c = resolve(flags("p.json"), CiEnv::default()).unwrap();
    assert!(c.caches.warm);
    let cold = resolve(
        flags("p.json").combine(env(&[("QM_CACHES", "cold"), ("QM_CACHE_DIR", "ci-cache")])),
        CiEnv::default(),
    )
    .unwrap();
    assert!(!cold.caches.warm);
    assert_eq!(
        cold.caches.dir.as_deref(),
        Some(std::path::Path::new("ci-cache"))
    );
    let mut inputs = flags("p.json");
    inputs.caches = Some("hot".into());
    let err = resolve(inputs, CiEnv::default()).unwrap_err();
    insta::assert_snapshot!(crate::hint::render(&err));
}

#[test]
fn workspaces_are_layered_unless_checkouts_are_asked_for_and_other_words_are_refused() {
    let c = resolve(flags("p.json"), CiEnv::default()).unwrap();
    assert!(c.layered_workspaces);
    let checkouts = resolve(
        flags("p.json").combine(env(&[("QM_WORKSPACES", "checkouts")])),
        CiEnv::default(),
    )
    .unwrap();
    assert!(!checkouts.layered_workspaces);
    let mut inputs = flags("p.json");
    inputs.workspaces = Some("overlay".into());
    let err = resolve(inputs, CiEnv::default()).unwrap_err();
    insta::assert_snapshot!(crate::hint::render(&err));
}
