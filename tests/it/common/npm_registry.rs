//! An npm registry stand-in on loopback for tests: packuments and tarballs over HTTP, built on the
//! spot, so that npm, yarn, pnpm and bun resolve and install with no network (pnpm and bun ask for
//! the abbreviated packument but take the full one). It serves one package, or a set of them
//! with their dependencies and peer dependencies. Versions are published while it runs, as a
//! release appears after a lock file was written.

use super::{Fixture, sh, succeed};
use base64::Engine as _;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha512};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A version's tarball, the manifest the packument gives for it (with its `dist`, and its
/// `deprecated` message once deprecated) and when it was published.
struct Release {
    tarball: Vec<u8>,
    manifest: Value,
    time: String,
}

/// Package name -> version -> release.
type Releases = BTreeMap<String, BTreeMap<String, Release>>;

pub(crate) struct NpmRegistry {
    /// `http://127.0.0.1:PORT/`, the registry URL npm is given.
    pub url: String,
    name: String,
    releases: Arc<Mutex<Releases>>,
    /// The paths requested, in order.
    pub requests: Arc<Mutex<Vec<String>>>,
    /// The `Authorization` header of each request that had one.
    pub authorizations: Arc<Mutex<Vec<String>>>,
    server: Arc<tiny_http::Server>,
}

impl NpmRegistry {
    /// An npm app in `f` whose lock has `async` 3.2.5 (`^3.2.5`) from a new stand-in, which then
    /// releases 3.2.6.
    pub(crate) fn async_app(f: &Fixture) -> Self {
        Self::async_app_locked_by(f, &[&["npm", "install", "--package-lock-only"]])
    }

    /// [`Self::async_app`] with the lock file `lock_commands` write (see [`Fixture::add_node_app`]).
    pub(crate) fn async_app_locked_by(f: &Fixture, lock_commands: &[&[&str]]) -> Self {
        let registry = Self::start("async");
        registry.publish("3.2.5");
        f.add_node_app(&registry, &[("async", "^3.2.5")], lock_commands);
        registry.publish("3.2.6");
        registry
    }

    /// Serves the package `name` with no version yet.
    pub(crate) fn start(name: &str) -> Self {
        Self::serve(name, Arc::default())
    }

    /// Another server with the same releases (the same tarballs, byte for byte) on a port of its
    /// own: a second host for tests of where lock files resolve from.
    pub(crate) fn mirror(&self) -> Self {
        Self::serve(&self.name, self.releases.clone())
    }

    fn serve(name: &str, releases: Arc<Mutex<Releases>>) -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}/", server.server_addr().to_ip().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let authorizations: Arc<Mutex<Vec<String>>> = Arc::default();
        let (srv, served, seen) = (server.clone(), releases.clone(), requests.clone());
        let authorized = authorizations.clone();
        std::thread::spawn(move || {
            for request in srv.incoming_requests() {
                seen.lock().unwrap().push(request.url().to_string());
                let auth = request
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("Authorization"));
                if let Some(header) = auth {
                    authorized.lock().unwrap().push(header.value.to_string());
                }
                let response = answer(&served.lock().unwrap(), request.url());
                let _ = request.respond(response);
            }
        });
        Self {
            url,
            name: name.to_string(),
            releases,
            requests,
            authorizations,
            server,
        }
    }

    /// Publishes `version`, long ago: a tarball with `package/package.json` and an `index.js`
    /// that exports the version.
    pub(crate) fn publish(&self, version: &str) {
        self.publish_at(version, super::LONG_AGO);
    }

    /// Publishes `version` with the packument naming `tarball` as its URL, as a registry may
    /// (npm fetches it from there, or from this registry for a `registry.npmjs.org` URL).
    pub(crate) fn publish_with_tarball(&self, version: &str, tarball: &str) {
        self.publish(version);
        let mut releases = self.releases.lock().unwrap();
        let release = releases.get_mut(&self.name).unwrap().get_mut(version);
        release.unwrap().manifest["dist"]["tarball"] = json!(tarball);
    }

    /// Publishes `version` at `time` (RFC 3339), the packument's `time[version]`.
    pub(crate) fn publish_at(&self, version: &str, time: &str) {
        self.publish_dated(&self.name.clone(), version, json!({}), &[], time);
    }

    /// Deprecates `version` with `message`, as `npm deprecate` does.
    pub(crate) fn deprecate(&self, version: &str, message: &str) {
        let mut releases = self.releases.lock().unwrap();
        let release = releases.get_mut(&self.name).unwrap().get_mut(version);
        release.unwrap().manifest["deprecated"] = json!(message);
    }

    /// Publishes `version` of `name`, long ago, whose package.json also holds `fields` (its
    /// `dependencies`, `peerDependencies`, ...).
    pub(crate) fn publish_package(&self, name: &str, version: &str, fields: Value) {
        self.publish_files(name, version, fields, &[]);
    }

    /// [`NpmRegistry::publish_package`] with more `files` in the package (a `bin` script).
    pub(crate) fn publish_files(
        &self,
        name: &str,
        version: &str,
        fields: Value,
        files: &[(&str, &str)],
    ) {
        self.publish_dated(name, version, fields, files, super::LONG_AGO);
    }

    /// [`NpmRegistry::publish_files`], published at `time` (RFC 3339).
    fn publish_dated(
        &self,
        name: &str,
        version: &str,
        fields: Value,
        files: &[(&str, &str)],
        time: &str,
    ) {
        let work = tempfile::tempdir().unwrap();
        let package = work.path().join("package");
        std::fs::create_dir_all(&package).unwrap();
        let mut manifest = json!({"name": name, "version": version, "main": "index.js"});
        for (key, value) in fields.as_object().unwrap() {
            manifest[key] = value.clone();
        }
        std::fs::write(package.join("package.json"), manifest.to_string()).unwrap();
        std::fs::write(
            package.join("index.js"),
            format!("module.exports = {{ version: \"{version}\" }};\n"),
        )
        .unwrap();
        for (file, text) in files {
            std::fs::write(package.join(file), text).unwrap();
        }
        sh(work.path(), "tar -czf package.tgz package");
        let bytes = std::fs::read(work.path().join("package.tgz")).unwrap();
        let integrity = format!(
            "sha512-{}",
            base64::engine::general_purpose::STANDARD.encode(Sha512::digest(&bytes).as_slice())
        );
        let file = format!("{name}-{version}.tgz");
        let dist = json!({
            "tarball": format!("{}{name}/-/{file}", self.url),
            "integrity": integrity,
        });
        manifest["dist"] = dist;
        let mut releases = self.releases.lock().unwrap();
        releases.entry(name.to_string()).or_default().insert(
            version.to_string(),
            Release {
                tarball: bytes,
                manifest,
                time: time.to_string(),
            },
        );
    }
}

impl Drop for NpmRegistry {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

/// The packument at `/<name>`, a tarball at `/<name>/-/<name>-<version>.tgz`, 404 otherwise
/// (npm's audit and other endpoints included).
fn answer(releases: &Releases, url: &str) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let path = url.split('?').next().unwrap_or_default();
    let name = path.trim_start_matches('/');
    if let Some(versions) = releases.get(name).filter(|v| !v.is_empty()) {
        let body = packument(name, versions).to_string().into_bytes();
        let json = tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap();
        return tiny_http::Response::from_data(body).with_header(json);
    }
    // By file name, whatever the path before it: a packument may name any URL.
    let file = path.rsplit('/').next().unwrap_or_default();
    let tarball = releases.iter().find_map(|(name, versions)| {
        let base = name.rsplit('/').next().unwrap_or(name);
        let version = file
            .strip_prefix(&format!("{base}-"))?
            .strip_suffix(".tgz")?;
        versions.get(version)
    });
    match tarball {
        Some(release) => tiny_http::Response::from_data(release.tarball.clone()),
        None => tiny_http::Response::from_data(b"not found".to_vec()).with_status_code(404),
    }
}

fn packument(name: &str, releases: &BTreeMap<String, Release>) -> Value {
    let mut versions = Map::new();
    let mut latest = semver::Version::new(0, 0, 0);
    let mut time = Map::new();
    for (version, release) in releases {
        latest = latest.max(version.parse().unwrap());
        versions.insert(version.clone(), release.manifest.clone());
        time.insert(version.clone(), json!(release.time));
    }
    json!({
        "name": name,
        "dist-tags": {"latest": latest.to_string()},
        "versions": versions,
        "time": time,
        "repository": {"type": "git", "url": format!("git+https://github.com/example/{name}.git")},
    })
}

impl Fixture {
    /// The operator's npm configuration for `registry`, for `QM_TOOL_CONFIG=npmrc=...`: npm talks
    /// to the stand-in only.
    pub(crate) fn npmrc(&self, registry: &NpmRegistry) -> PathBuf {
        let path = self.root.path().join("npmrc");
        std::fs::write(
            &path,
            format!(
                "registry={}\naudit=false\nfund=false\nupdate-notifier=false\n",
                registry.url
            ),
        )
        .unwrap();
        path
    }

    /// Adds to the default branch an npm app (`app`, whose `npm test` requires each of
    /// `dependencies`) with its package-lock.json resolved against `registry` now.
    pub(crate) fn add_npm_app(&self, registry: &NpmRegistry, dependencies: &[(&str, &str)]) {
        self.add_node_app(
            registry,
            dependencies,
            &[&["npm", "install", "--package-lock-only"]],
        );
    }

    /// Adds to the default branch a node app (`app`, whose `test` script requires each of
    /// `dependencies`) with the lock file that `lock_commands` (package manager argvs, run in
    /// turn) write against `registry` now.
    pub(crate) fn add_node_app(
        &self,
        registry: &NpmRegistry,
        dependencies: &[(&str, &str)],
        lock_commands: &[&[&str]],
    ) {
        let work = self.clone_main("node-app");
        write_node_app(&work, dependencies);
        for argv in lock_commands {
            self.node_tool(&work, registry, argv);
        }
        sh(
            &work,
            "git add . && git commit -qm 'node app' && git push -q origin main",
        );
    }

    /// [`Fixture::add_node_app`] for yarn berry: the project commits `release` (a yarn 2+
    /// `yarn.js`) and names it as `yarnPath`, so that the global yarn runs it, as berry projects
    /// do; `yarn install` writes yarn.lock and the Plug'n'Play loader.
    pub(crate) fn add_berry_app(
        &self,
        registry: &NpmRegistry,
        release: &Path,
        dependencies: &[(&str, &str)],
    ) {
        let work = self.clone_main("node-app");
        write_node_app(&work, dependencies);
        std::fs::create_dir_all(work.join(".yarn/releases")).unwrap();
        std::fs::copy(release, work.join(".yarn/releases/yarn-berry.cjs")).unwrap();
        std::fs::write(
            work.join(".yarnrc.yml"),
            "yarnPath: .yarn/releases/yarn-berry.cjs\n",
        )
        .unwrap();
        let ignore = std::fs::read_to_string(work.join(".gitignore")).unwrap();
        std::fs::write(work.join(".gitignore"), ignore + ".yarn/install-state.gz\n").unwrap();
        self.node_tool(&work, registry, &["yarn", "install"]);
        sh(
            &work,
            "git add . && git commit -qm 'yarn berry app' && git push -q origin main",
        );
    }

    /// The operator's yarn berry configuration for `registry`, for
    /// `QM_TOOL_CONFIG=yarnrc-yml=...`: berry reads no npmrc. The stand-in serves plain HTTP and
    /// its releases are new, which berry refuses by default (`npmMinimalAgeGate`, one day).
    pub(crate) fn yarnrc_yml(&self, registry: &NpmRegistry) -> PathBuf {
        let path = self.root.path().join("yarnrc.yml");
        let server = registry.url.trim_end_matches('/');
        std::fs::write(
            &path,
            format!(
                "npmRegistryServer: \"{server}\"\nunsafeHttpWhitelist:\n  - \"127.0.0.1\"\nnpmMinimalAgeGate: 0\n"
            ),
        )
        .unwrap();
        path
    }

    /// Runs a package manager's `argv` in `dir` against `registry` alone: a HOME of the
    /// fixture's own holds the npmrc (and berry's .yarnrc.yml) they read, and their caches.
    pub(crate) fn node_tool(&self, dir: &Path, registry: &NpmRegistry, argv: &[&str]) {
        let home = self.root.path().join("node-home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::copy(self.npmrc(registry), home.join(".npmrc")).unwrap();
        std::fs::copy(self.yarnrc_yml(registry), home.join(".yarnrc.yml")).unwrap();
        succeed(
            std::process::Command::new(argv[0])
                .args(&argv[1..])
                .current_dir(dir)
                // Under CI, berry refuses to write a lock file (immutable installs); this one
                // writes the fixture's.
                .env_remove("CI")
                .env("HOME", &home)
                .env("XDG_CONFIG_HOME", home.join(".config"))
                .env("XDG_CACHE_HOME", home.join(".cache"))
                .env("XDG_DATA_HOME", home.join(".local/share"))
                .env("XDG_STATE_HOME", home.join(".local/state"))
                .env("npm_config_userconfig", home.join(".npmrc"))
                .env("npm_config_cache", home.join(".cache/npm"))
                .env("npm_config_ignore_scripts", "true")
                .env("YARN_CACHE_FOLDER", home.join(".cache/yarn"))
                .env("YARN_IGNORE_SCRIPTS", "true")
                .env("BUN_INSTALL_CACHE_DIR", home.join(".cache/bun")),
        );
    }
}

/// Writes a node app's package.json (`app`, depending on `dependencies`), a `test` script that
/// loads each of them, and a .gitignore for node_modules.
fn write_node_app(work: &Path, dependencies: &[(&str, &str)]) {
    let deps: Map<String, Value> = dependencies
        .iter()
        .map(|(name, range)| (name.to_string(), json!(range)))
        .collect();
    let manifest = json!({
        "name": "app", "version": "1.0.0", "private": true,
        "dependencies": deps, "scripts": {"test": "node test.js"},
    });
    std::fs::write(
        work.join("package.json"),
        serde_json::to_string_pretty(&manifest).unwrap() + "\n",
    )
    .unwrap();
    let requires: String = dependencies
        .iter()
        .map(|(name, _)| {
            format!("console.log(\"{name}\", require(\"{name}/package.json\").version);\n")
        })
        .collect();
    std::fs::write(work.join("test.js"), requires).unwrap();
    let ignore = std::fs::read_to_string(work.join(".gitignore")).unwrap_or_default();
    std::fs::write(work.join(".gitignore"), ignore + "node_modules/\n").unwrap();
}
