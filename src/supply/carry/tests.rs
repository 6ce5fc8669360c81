use super::*;

fn vars(pairs: &[(&str, String)]) -> BTreeMap<OsString, OsString> {
    pairs
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect()
}

fn npm() -> BTreeSet<Ecosystem> {
    BTreeSet::from([Ecosystem::Npm])
}

#[test]
fn setup_nodes_npmrc_and_its_token_are_carried() {
    let dir = tempfile::tempdir().unwrap();
    let npmrc = dir.path().join(".npmrc");
    std::fs::write(&npmrc, "@acme:registry=https://npm.pkg.github.com/\n//npm.pkg.github.com/:_authToken=${NODE_AUTH_TOKEN}\n").unwrap();
    let operator = vars(&[
        ("NPM_CONFIG_USERCONFIG", npmrc.display().to_string()),
        ("NODE_AUTH_TOKEN", "ghp_secretvalue".into()),
        ("HOME", dir.path().join("home").display().to_string()),
    ]);
    let c = discover(&npm(), &[], &[], &operator);
    assert_eq!(
        c.seeds,
        vec![Seed {
            tool: ToolConfig::Npmrc,
            source: npmrc.clone()
        }]
    );
    assert_eq!(c.env, vec!["NODE_AUTH_TOKEN"]);
    assert_eq!(c.secrets, vec!["ghp_secretvalue"]);
    assert!(c.hosts.contains("npm.pkg.github.com"), "{:?}", c.hosts);
    let said = c.found.join(", ");
    assert!(!said.contains("ghp_secretvalue"), "{said}");
    assert!(
        said.starts_with("npmrc from NPM_CONFIG_USERCONFIG"),
        "{said}"
    );
}

#[test]
fn home_npmrc_is_carried_unless_the_operator_names_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".npmrc"),
        "registry=https://mirror.example/\n",
    )
    .unwrap();
    let operator = vars(&[("HOME", dir.path().display().to_string())]);
    let c = discover(&npm(), &[], &[], &operator);
    assert_eq!(c.seeds.len(), 1);
    assert!(c.hosts.contains("mirror.example"));
    let explicit = Seed {
        tool: ToolConfig::Npmrc,
        source: "/etc/npmrc".into(),
    };
    let c = discover(&npm(), &[explicit], &[], &operator);
    assert!(c.seeds.is_empty(), "--tool-config wins");
    let c = discover(&BTreeSet::from([Ecosystem::Cargo]), &[], &[], &operator);
    assert!(c.seeds.is_empty(), "only the plan's ecosystems");
}

#[test]
fn index_and_proxy_variables_are_passed_and_credentials_kept_secret() {
    let operator = vars(&[
        (
            "PIP_INDEX_URL",
            "https://user:pw@pypi.example/simple".into(),
        ),
        ("GOPROXY", "https://goproxy.example,direct".into()),
        ("GOFLAGS", "-toolexec=/bin/evil".into()),
    ]);
    let all = BTreeSet::from([Ecosystem::Pip, Ecosystem::Go]);
    let c = discover(&all, &[], &["GOPROXY".to_string()], &operator);
    assert_eq!(
        c.env,
        vec!["PIP_INDEX_URL"],
        "GOPROXY is passed already; GOFLAGS never"
    );
    assert_eq!(c.secrets, vec!["https://user:pw@pypi.example/simple"]);
    assert!(c.hosts.contains("pypi.example"));
    assert!(!c.found.join(" ").contains("pw@"));
}
