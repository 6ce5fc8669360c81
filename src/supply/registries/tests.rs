use super::*;

fn seed(dir: &Path, tool: ToolConfig, name: &str, text: &str) -> Seed {
    let source = dir.join(name);
    std::fs::write(&source, text).unwrap();
    Seed { tool, source }
}

fn vars(pairs: &[(&str, &str)]) -> BTreeMap<OsString, OsString> {
    pairs
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect()
}

#[test]
fn official_registries_without_configuration() {
    let r = Registries::default();
    let npm = r.endpoint(Ecosystem::Npm, "lodash", &Source::DefaultRegistry);
    assert_eq!(
        npm,
        Endpoint::Npm {
            base: NPM.into(),
            token: None
        }
    );
    assert_eq!(
        r.endpoint(Ecosystem::Pip, "flask", &Source::DefaultRegistry),
        Endpoint::Python { index: PYPI.into() }
    );
    let crates_io =
        Source::Registry("registry+https://github.com/rust-lang/crates.io-index".into());
    assert_eq!(
        r.endpoint(Ecosystem::Cargo, "serde", &crates_io),
        Endpoint::CratesSparse {
            index: CRATES_IO_INDEX.into()
        }
    );
    assert_eq!(
        r.endpoint(
            Ecosystem::Go,
            "golang.org/x/text",
            &Source::Module("golang.org/x/text".into())
        ),
        Endpoint::GoProxy {
            base: GO_PROXY.into()
        }
    );
    assert_eq!(
        r.endpoint(
            Ecosystem::Bundle,
            "rack",
            &Source::Registry("https://rubygems.org/".into())
        ),
        Endpoint::Gems {
            source: RUBYGEMS.into()
        }
    );
}

/// An operator's setup: npmrc with a scoped private registry and its token, a cargo sparse
/// mirror, uv's default index, a Bundler mirror, Go and pip variables.
fn configured(dir: &Path) -> Registries {
    let seeds = vec![
        seed(
            dir,
            ToolConfig::Npmrc,
            "npmrc",
            "registry=https://mirror.example/npm/\n@acme:registry=https://npm.pkg.github.com\n//npm.pkg.github.com/:_authToken=${NODE_AUTH_TOKEN}\n",
        ),
        seed(
            dir,
            ToolConfig::Cargo,
            "config.toml",
            "[source.crates-io]\nreplace-with = \"m\"\n[source.m]\nregistry = \"sparse+https://cargo.example/index\"\n",
        ),
        seed(
            dir,
            ToolConfig::Uv,
            "uv.toml",
            "[[index]]\nurl = \"https://uv.example/simple\"\ndefault = true\n",
        ),
        seed(
            dir,
            ToolConfig::Bundle,
            "config",
            "---\nBUNDLE_MIRROR__HTTPS://RUBYGEMS__ORG/: \"https://gems.example/\"\n",
        ),
    ];
    let env = vars(&[
        ("GOPROXY", "https://goproxy.example,direct"),
        ("GOPRIVATE", "example.com/private"),
        ("PIP_INDEX_URL", "https://pip.example/simple"),
    ]);
    Registries::from_config(&seeds, &env, &vars(&[("NODE_AUTH_TOKEN", "npm_secret")]))
}

#[test]
fn npm_scopes_and_their_tokens_are_followed() {
    let dir = tempfile::tempdir().unwrap();
    let r = configured(dir.path());
    let Endpoint::Npm { base, token } =
        r.endpoint(Ecosystem::Npm, "@acme/widgets", &Source::DefaultRegistry)
    else {
        panic!("npm");
    };
    assert_eq!(base, "https://npm.pkg.github.com/");
    assert_eq!(
        token,
        Some(Credential(SecretString::from("Bearer npm_secret")))
    );
    assert!(
        !format!("{token:?}").contains("npm_secret"),
        "credentials never print"
    );
    assert_eq!(
        r.endpoint(Ecosystem::Npm, "lodash", &Source::DefaultRegistry),
        Endpoint::Npm {
            base: "https://mirror.example/npm/".into(),
            token: None
        }
    );
}

#[test]
fn mirrors_and_indexes_are_followed() {
    let dir = tempfile::tempdir().unwrap();
    let r = configured(dir.path());
    let crates_io =
        Source::Registry("registry+https://github.com/rust-lang/crates.io-index".into());
    let python = |e, s: &Source| r.endpoint(e, "flask", s);
    assert_eq!(
        r.endpoint(Ecosystem::Cargo, "serde", &crates_io),
        Endpoint::CratesSparse {
            index: "https://cargo.example/index/".into()
        }
    );
    assert_eq!(
        python(Ecosystem::Uv, &Source::DefaultRegistry),
        Endpoint::Python {
            index: "https://uv.example/simple".into()
        }
    );
    assert_eq!(
        python(Ecosystem::Pip, &Source::DefaultRegistry),
        Endpoint::Python {
            index: "https://pip.example/simple".into()
        }
    );
    let locked = Source::Registry("http://127.0.0.1:1/simple".into());
    assert_eq!(
        python(Ecosystem::Uv, &locked),
        Endpoint::Python {
            index: "http://127.0.0.1:1/simple".into()
        },
        "the index a lock records wins"
    );
    let rubygems = Source::Registry("https://rubygems.org/".into());
    assert_eq!(
        r.endpoint(Ecosystem::Bundle, "rack", &rubygems),
        Endpoint::Gems {
            source: "https://gems.example/".into()
        }
    );
}

#[test]
fn go_proxies_and_private_modules_are_followed() {
    let dir = tempfile::tempdir().unwrap();
    let r = configured(dir.path());
    let module = Source::Module("x".into());
    assert_eq!(
        r.endpoint(Ecosystem::Go, "golang.org/x/text", &module),
        Endpoint::GoProxy {
            base: "https://goproxy.example".into()
        }
    );
    assert!(matches!(
        r.endpoint(Ecosystem::Go, "example.com/private/lib", &module),
        Endpoint::None(_)
    ));
}

#[test]
fn a_local_cargo_registry_is_read_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = vec![seed(
        dir.path(),
        ToolConfig::Cargo,
        "config.toml",
        "[source.crates-io]\nreplace-with = \"l\"\n[source.l]\nlocal-registry = \"/srv/registry\"\n",
    )];
    let r = Registries::from_config(&seeds, &BTreeMap::new(), &BTreeMap::new());
    let crates_io =
        Source::Registry("registry+https://github.com/rust-lang/crates.io-index".into());
    assert_eq!(
        r.endpoint(Ecosystem::Cargo, "x", &crates_io),
        Endpoint::CratesLocal {
            dir: "/srv/registry".into()
        }
    );
    assert_eq!(
        local_registry_dir(&seeds[0].source),
        Some(PathBuf::from("/srv/registry"))
    );
}
