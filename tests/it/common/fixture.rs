//! How a fixture is built: the registry, the app, its remote and checkout, and the forge.

use super::*;

impl Fixture {
    pub(crate) fn new() -> Self {
        Self::on(Backend::Local)
    }

    pub(crate) fn on(backend: Backend) -> Self {
        Self::build(backend, "", TOKEN)
    }

    /// A fixture for a test that drives the real tool `argv` names, or `None` where the tool
    /// does not run here (see [`tool_present`]).
    pub(crate) fn with_tool(argv: &[&str]) -> Option<Self> {
        tool_present(argv).then(Self::new)
    }

    /// `clone_args` go to `git clone` for the checkout (e.g. `--depth 1`); `token` is what the
    /// forge fakes accept.
    pub(crate) fn build(backend: Backend, clone_args: &str, token: &str) -> Self {
        let root = tempfile::tempdir().unwrap();
        // Sandbox users read the registry in here.
        std::fs::set_permissions(
            root.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let base = root.path().canonicalize().unwrap();
        let remote = match backend {
            Backend::Local => base.join("remote.git"),
            Backend::Github => base
                .join(github::OWNER)
                .join(format!("{}.git", github::REPO)),
            Backend::Gitlab => base.join(format!("{}.git", gitlab::PROJECT_PATH)),
        };
        let mut f = Self {
            backend,
            token: token.to_string(),
            harness: None,
            registry: base.join("registry"),
            cargo_home: base.join("cargo-home"),
            remote,
            checkout: base.join("checkout"),
            forge: base.join("forge"),
            uid_base: next_uid_base(),
            osv: osv::OsvStandIn::start(),
            releases: releases::ReleasesStandIn::start(),
            root,
        };
        f.seed_registry();
        f.seed_app(&base, clone_args);
        if backend != Backend::Local {
            f.harness = Some(Harness::start(backend, &base, token, &f.remote));
        }
        f
    }

    /// The local registry: greeting 1.0.0 and 1.0.1, farewell 2.0.0 and 2.0.1.
    fn seed_registry(&self) {
        std::fs::create_dir_all(self.registry.join("index")).unwrap();
        std::fs::create_dir_all(&self.cargo_home).unwrap();
        std::fs::write(
            self.cargo_home.join("config.toml"),
            format!(
                "[source.crates-io]\nreplace-with = \"fixture\"\n\n[source.fixture]\nlocal-registry = \"{}\"\n",
                self.registry.display()
            ),
        )
        .unwrap();
        self.publish(
            "greeting",
            "1.0.0",
            r#"pub fn greet(name: &str) -> String { format!("Hello, {name}!") }"#,
        );
        self.publish(
            "greeting",
            "1.0.1",
            "/// Greets.\npub fn greet(name: &str) -> String { format!(\"Hello, {name}!\") }",
        );
        self.publish(
            "farewell",
            "2.0.0",
            r#"pub fn bye(name: &str) -> String { format!("Goodbye, {name}.") }"#,
        );
        self.publish(
            "farewell",
            "2.0.1",
            r#"pub fn bye(name: &str) -> String { format!("Bye {name}") }"#,
        );
    }

    /// The app on the bare remote's `main`, locked to the old versions, and the checkout.
    fn seed_app(&self, base: &Path, clone_args: &str) {
        sh(
            base,
            &format!(
                "git init -q --bare -b main {} && mkdir seed",
                self.remote.display()
            ),
        );
        let seed = base.join("seed");
        std::fs::create_dir_all(seed.join("src")).unwrap();
        std::fs::write(
            seed.join("Cargo.toml"),
            "[package]\nname = \"hello-app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ngreeting = \"1.0\"\nfarewell = \"2.0\"\n",
        )
        .unwrap();
        std::fs::write(
            seed.join("src/lib.rs"),
            "pub fn message(name: &str) -> String {\n    format!(\"{} {}\", greeting::greet(name), farewell::bye(name))\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn greets_and_says_goodbye() {\n        assert_eq!(super::message(\"Ada\"), \"Hello, Ada! Goodbye, Ada.\");\n    }\n}\n",
        )
        .unwrap();
        std::fs::write(seed.join(".gitignore"), "/target\n").unwrap();
        std::fs::write(
            seed.join("Makefile"),
            "test:\n\tcargo test\n\nquick:\n\tgrep -q 1.0.1 Cargo.lock\n\npause:\n\tsleep 3\n\tcargo test\n\nslow:\n\tsleep 60 & sleep 60\n\nhang:\n\texec sleep 1213\n\nescape:\n\tmkdir -p .github/workflows\n\techo 'on: push' > .github/workflows/release.yml\n\techo '// edited' >> src/lib.rs\n\techo '# edited' >> Cargo.toml\n\ninject:\n\t@echo '::add-mask::everything'\n\t@echo '::error::injected by a test'\n\t@exit 1\n\nansi:\n\t@printf '\\033]0;pwned\\007\\033[2Jcleared\\n'\n\t@exit 1\n",
        )
        .unwrap();
        self.cargo(&seed, &["generate-lockfile", "--quiet"]);
        self.cargo(
            &seed,
            &["update", "--quiet", "-p", "greeting", "--precise", "1.0.0"],
        );
        self.cargo(
            &seed,
            &["update", "--quiet", "-p", "farewell", "--precise", "2.0.0"],
        );
        sh(
            &seed,
            &format!(
                "git init -q -b main && git add . && git commit -qm 'hello-app' && git remote add origin {} && git push -q origin main",
                self.remote.display()
            ),
        );
        sh(
            base,
            &format!(
                "git clone -q {clone_args} file://{} checkout",
                self.remote.display()
            ),
        );
    }
}

impl Harness {
    /// The smart-HTTP git server and the forge's fake, for a remote forge.
    fn start(backend: Backend, base: &Path, token: &str, remote: &Path) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let user = if backend == Backend::Github {
            "x-access-token"
        } else {
            "oauth2"
        };
        let git = git_http::GitHttp::start(base, user, token);
        let (github, gitlab) = match backend {
            Backend::Github => (
                Some(runtime.block_on(github::FakeGithub::start(token, remote.to_path_buf()))),
                None,
            ),
            _ => (
                None,
                Some(runtime.block_on(gitlab::FakeGitlab::start(token, remote.to_path_buf()))),
            ),
        };
        Self {
            runtime,
            git,
            github,
            gitlab,
        }
    }
}
