//! Each parser on its real fixture: concrete packages, versions, sources and direct flags.

use super::{copies, eco, fixture, package, read};
use crate::changes::{Ecosystem, Source};

#[test]
fn cargo_lock_and_manifest() {
    let s = read(&fixture("cargo/hexyl"), ".", "cargo").unwrap();
    let cargo = eco(&s, Ecosystem::Cargo);
    let thiserror = package(cargo, "thiserror", "1.0.65");
    assert!(thiserror.direct);
    assert_eq!(
        thiserror.source,
        Source::Registry("registry+https://github.com/rust-lang/crates.io-index".into())
    );
    assert_eq!(
        thiserror.integrity.as_deref().map(|c| &c[..8]),
        Some("5d11abd9")
    );
    assert!(!package(cargo, "thiserror-impl", "1.0.65").direct);
    assert_eq!(
        package(cargo, "hexyl", "0.17.0").source,
        Source::Path("hexyl".into())
    );
    let manifest = &cargo.manifests[0];
    assert_eq!(manifest.dependencies["dependencies"]["thiserror"], "1.0");
    assert!(manifest.dependencies["dependencies"]["clap"].contains("wrap_help"));
    assert_eq!(
        manifest.dependencies["dev-dependencies"]["assert_cmd"],
        "2.1"
    );
    assert_eq!(manifest.fields["profile.release.lto"], "true");
    assert_eq!(manifest.fields["package.name"], "hexyl");
}

#[test]
fn package_lock_with_nested_copies() {
    let s = read(&fixture("npm/winston"), ".", "npm").unwrap();
    let npm = eco(&s, Ecosystem::Npm);
    let async_ = package(npm, "async", "3.2.5");
    assert!(async_.direct);
    assert_eq!(async_.source.origin().to_string(), "registry.npmjs.org");
    assert!(
        async_
            .integrity
            .as_deref()
            .unwrap()
            .starts_with("sha512-baNZyqaa")
    );
    assert_eq!(
        copies(npm, "semver"),
        [("5.7.2".to_string(), false), ("6.3.1".to_string(), false)]
    );
    assert_eq!(
        npm.manifests[0].dependencies["dependencies"]["stack-trace"],
        "0.0.x"
    );
    assert_eq!(npm.manifests[0].fields["scripts.test"], "jest");
}

#[test]
fn go_mod_and_sum() {
    let s = read(&fixture("go/docker-agent"), ".", "go").unwrap();
    let go = eco(&s, Ecosystem::Go);
    assert_eq!(go.lock_file.as_deref(), Some("go.sum"));
    let bubbles = package(go, "charm.land/bubbles/v2", "v2.0.0");
    assert!(bubbles.direct);
    assert_eq!(bubbles.source.origin().to_string(), "charm.land");
    assert!(
        bubbles
            .integrity
            .as_deref()
            .unwrap()
            .starts_with("h1:tE3eK")
    );
    assert!(!package(go, "dario.cat/mergo", "v1.0.2").direct);
    let manifest = &go.manifests[0];
    assert_eq!(manifest.dependencies["require"].len(), 6);
    assert!(!manifest.dependencies["require"].contains_key("dario.cat/mergo"));
    assert!(
        manifest.fields["replace"]
            .starts_with("github.com/charmbracelet/ultraviolet => github.com/dgageot/ultraviolet")
    );
    assert_eq!(manifest.fields["go"], "1.26.0");
}

#[test]
fn pnpm_workspace_importer() {
    let s = read(&fixture("pnpm/vue-core"), "packages/compiler-sfc", "pnpm").unwrap();
    let pnpm = eco(&s, Ecosystem::Pnpm);
    assert_eq!(pnpm.lock_file.as_deref(), Some("pnpm-lock.yaml"));
    let magic = package(pnpm, "magic-string", "0.30.21");
    assert!(magic.direct);
    assert_eq!(magic.source, Source::DefaultRegistry);
    assert!(
        magic
            .integrity
            .as_deref()
            .unwrap()
            .starts_with("sha512-vd2F4YUy")
    );
    assert_eq!(
        copies(pnpm, "lru-cache"),
        [
            ("10.1.0".to_string(), true),
            ("11.3.6".to_string(), false),
            ("11.5.2".to_string(), false)
        ]
    );
    assert_eq!(pnpm.manifests[0].file, "packages/compiler-sfc/package.json");
    assert_eq!(
        pnpm.manifests[0].dependencies["dependencies"]["@vue/shared"],
        "workspace:*"
    );
}

#[test]
fn yarn_classic() {
    let s = read(&fixture("yarn-v1/hyper"), ".", "yarn").unwrap();
    let yarn = eco(&s, Ecosystem::Yarn);
    assert_eq!(
        copies(yarn, "chalk"),
        [
            ("2.4.2".to_string(), false),
            ("3.0.0".to_string(), false),
            ("4.1.2".to_string(), false),
            ("5.3.0".to_string(), true)
        ]
    );
    let chalk = package(yarn, "chalk", "5.3.0");
    assert_eq!(
        chalk.source,
        Source::Registry("https://registry.npmjs.org/chalk/-/chalk-5.3.0.tgz".into())
    );
    assert!(
        chalk
            .integrity
            .as_deref()
            .unwrap()
            .starts_with("sha512-dLitG79d")
    );
    assert!(yarn.manifests[0].fields["scripts.postinstall"].contains("yarn run rebuild-node-pty"));
}

#[test]
fn yarn_berry() {
    let s = read(&fixture("yarn-berry/prettier"), ".", "yarn").unwrap();
    let yarn = eco(&s, Ecosystem::Yarn);
    assert_eq!(
        copies(yarn, "@babel/code-frame"),
        [("7.29.7".to_string(), false), ("8.0.0".to_string(), true)]
    );
    let frame = package(yarn, "@babel/code-frame", "8.0.0");
    assert_eq!(frame.source, Source::DefaultRegistry);
    assert!(
        frame
            .integrity
            .as_deref()
            .unwrap()
            .starts_with("10/735b64f3")
    );
    assert_eq!(
        package(yarn, "prettier", "0.0.0-use.local").source,
        Source::Path(".".into())
    );
}

#[test]
fn bun_text_lock() {
    let s = read(&fixture("bun/hono"), ".", "bun").unwrap();
    let bun = eco(&s, Ecosystem::Bun);
    let zod = package(bun, "zod", "3.23.8");
    assert!(zod.direct);
    assert_eq!(zod.source, Source::DefaultRegistry);
    assert!(
        zod.integrity
            .as_deref()
            .unwrap()
            .starts_with("sha512-XBx9AXhX")
    );
    assert_eq!(
        bun.manifests[0].dependencies["devDependencies"]["typescript"],
        "^6.0.3"
    );
}

#[test]
fn uv_lock_and_pyproject() {
    let s = read(&fixture("uv/flask"), ".", "uv").unwrap();
    let uv = eco(&s, Ecosystem::Uv);
    let werkzeug = package(uv, "werkzeug", "3.1.8");
    assert!(werkzeug.direct);
    assert_eq!(
        werkzeug.source,
        Source::Registry("https://pypi.org/simple".into())
    );
    assert!(werkzeug.integrity.as_deref().unwrap().contains("sha256:"));
    assert!(!package(uv, "colorama", "0.4.6").direct);
    assert_eq!(
        package(uv, "flask", "3.2.0.dev0").source,
        Source::Path(".".into())
    );
    let manifest = &uv.manifests[0];
    assert_eq!(
        manifest.dependencies["project.dependencies"]["werkzeug"],
        "werkzeug>=3.1.0"
    );
    assert_eq!(
        manifest.fields["build-system.build-backend"],
        "flit_core.buildapi"
    );
}

#[test]
fn poetry_lock_and_groups() {
    let s = read(&fixture("poetry/poetry"), ".", "poetry").unwrap();
    let poetry = eco(&s, Ecosystem::Poetry);
    let requests = package(poetry, "requests", "2.33.1");
    assert!(requests.direct);
    assert_eq!(requests.source, Source::DefaultRegistry);
    assert!(
        requests
            .integrity
            .as_deref()
            .unwrap()
            .starts_with("sha256:")
    );
    assert!(!package(poetry, "urllib3", "2.6.3").direct);
    assert!(
        poetry.manifests[0]
            .dependencies
            .contains_key("tool.poetry.group.test.dependencies")
    );
}

#[test]
fn pip_compile_output() {
    let s = read(&fixture("pip/sigstore"), ".", "pip").unwrap();
    let pip = eco(&s, Ecosystem::Pip);
    let sigstore = package(pip, "sigstore", "4.5.0");
    assert!(sigstore.direct, "`# via -r` marks the direct requirement");
    assert_eq!(
        sigstore.integrity.as_deref().map(|h| h.split(' ').count()),
        Some(2)
    );
    assert!(!package(pip, "idna", "3.18").direct);
    assert_eq!(
        pip.manifests[0].dependencies["requirements.txt"]["sigstore"],
        "sigstore==4.5.0"
    );
}

#[test]
fn gemfile_and_lock() {
    let s = read(&fixture("bundle/rubygems.org"), ".", "bundle").unwrap();
    let bundle = eco(&s, Ecosystem::Bundle);
    let rack = package(bundle, "rack", "3.2.6");
    assert!(rack.direct);
    assert_eq!(
        rack.source,
        Source::Registry("https://rubygems.org/".into())
    );
    assert!(
        rack.integrity
            .as_deref()
            .unwrap()
            .starts_with("sha256=5ed78e1f")
    );
    assert_eq!(
        package(bundle, "avo-advanced", "3.32.4")
            .source
            .origin()
            .to_string(),
        "packager.dev"
    );
    assert_eq!(
        bundle
            .packages
            .iter()
            .filter(|p| p.name == "nokogiri" && p.version == "1.19.4")
            .count(),
        8
    );
    let gemfile = &bundle.manifests[0];
    assert_eq!(gemfile.dependencies["gem"]["rack"], "\"~> 3.2\"");
    assert_eq!(
        gemfile.dependencies["group :avo, optional: true > source \"https://packager.dev/avo-hq/\""]
            ["avo-advanced"],
        "\"~> 3.32\""
    );
    assert_eq!(
        gemfile.fields["source"],
        "source \"https://rubygems.org\"\n"
    );
}

#[test]
fn package_lock_v1_nested_tree() {
    // Written by npm 6: logform's fecha ^4.2.0 is nested under it, as the app pins fecha 2.3.3.
    let dir = super::copy("npm/lockfile-v1");
    let s = read(dir.path(), ".", "npm").unwrap();
    let npm = eco(&s, Ecosystem::Npm);
    assert_eq!(npm.lock_file.as_deref(), Some("package-lock.json"));
    assert!(package(npm, "logform", "2.7.0").direct);
    assert_eq!(
        copies(npm, "fecha"),
        [("2.3.3".to_string(), true), ("4.2.3".to_string(), false)]
    );
    assert!(!package(npm, "ms", "2.1.3").direct);
}

#[test]
fn workspace_member_reads_the_root_lock_and_manifest() {
    let dir = super::copy("npm/winston");
    let member = dir.path().join("packages/app");
    std::fs::create_dir_all(&member).unwrap();
    std::fs::write(
        member.join("package.json"),
        r#"{"name": "app", "dependencies": {"async": "^3.2.0"}}"#,
    )
    .unwrap();
    let s = read(dir.path(), "packages/app", "npm").unwrap();
    let npm = eco(&s, Ecosystem::Npm);
    assert_eq!(npm.lock_file.as_deref(), Some("package-lock.json"));
    assert_eq!(
        npm.manifests
            .iter()
            .map(|m| m.file.as_str())
            .collect::<Vec<_>>(),
        ["packages/app/package.json", "package.json"]
    );
    assert!(
        package(npm, "async", "3.2.5").direct,
        "resolved through the hoisted node_modules"
    );
    assert!(
        !package(npm, "logform", "2.7.0").direct,
        "the root's dependencies are not the member's"
    );
}

#[test]
fn pnpm_keys_of_every_format() {
    use crate::changes::pnpm::split_key;
    let pair = |n: &str, v: &str| Some((n.to_string(), v.to_string()));
    assert_eq!(
        split_key("@babel/core@7.29.0", false),
        pair("@babel/core", "7.29.0")
    );
    assert_eq!(
        split_key("/postcss-modules@6.0.1(postcss@8.5.23)", false),
        pair("postcss-modules", "6.0.1")
    );
    assert_eq!(
        split_key("/@types/node/18.11.9_typescript@4.9.3", true),
        pair("@types/node", "18.11.9")
    );
}
