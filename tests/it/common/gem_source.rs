//! A gem source stand-in on loopback for tests: one gem's versions, built on the spot with
//! `gem build` and indexed with `gem generate_index` (the full index, which bundler reads when a
//! source has no compact index), served over HTTP, so that bundler resolves and installs with no
//! network. Versions are published while it runs, as a release appears after Gemfile.lock was
//! written. RubyGems' versions API (`api/v1/versions/<name>.json`) lists each version with its
//! `created_at`.

use super::{Fixture, sh, succeed};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

pub(crate) struct GemSource {
    /// `http://127.0.0.1:PORT/`, the source the Gemfile names.
    pub url: String,
    /// The indexed directory served.
    dir: PathBuf,
    /// Where gems are built, and the HOME of the `gem` commands that build and index them.
    work: PathBuf,
    name: String,
    /// The paths requested, in order.
    pub requests: Arc<Mutex<Vec<String>>>,
    server: Arc<tiny_http::Server>,
}

impl GemSource {
    /// A source serving `lib` 1.0.0, and an app on the default branch whose Gemfile asks for
    /// `~> 1.0` and whose Gemfile.lock has 1.0.0 from it.
    pub(crate) fn lib_app(fixture: &Fixture) -> Self {
        let source = Self::start(fixture, "lib");
        source.publish("1.0.0");
        fixture.add_bundle_app(&source, "~> 1.0");
        source
    }

    /// A source in `fixture`'s root serving the gem `name` with no version yet.
    pub(crate) fn start(fixture: &Fixture, name: &str) -> Self {
        let root = fixture.root.path().join("gem-source");
        let (dir, work) = (root.join("index"), root.join("work"));
        std::fs::create_dir_all(dir.join("gems")).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}/", server.server_addr().to_ip().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (srv, seen, served) = (server.clone(), requests.clone(), dir.clone());
        std::thread::spawn(move || {
            for request in srv.incoming_requests() {
                seen.lock().unwrap().push(request.url().to_string());
                let response = answer(&served, request.url());
                let _ = request.respond(response);
            }
        });
        Self {
            url,
            dir,
            work,
            name: name.to_string(),
            requests,
            server,
        }
    }

    /// Publishes `version`, long ago: a gem whose `lib/<name>.rb` defines `Lib::VERSION` as the
    /// version, then indexes the source anew.
    pub(crate) fn publish(&self, version: &str) {
        self.publish_at(version, super::LONG_AGO);
    }

    /// Publishes `version`, created at `time` (RFC 3339) as the versions API says.
    pub(crate) fn publish_at(&self, version: &str, time: &str) {
        let api = self.dir.join("api/v1/versions");
        std::fs::create_dir_all(&api).unwrap();
        let list_file = api.join(format!("{}.json", self.name));
        let mut list: Vec<serde_json::Value> = std::fs::read(&list_file)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        list.insert(0, serde_json::json!({"number": version, "created_at": time, "platform": "ruby", "prerelease": false}));
        std::fs::write(&list_file, serde_json::to_vec(&list).unwrap()).unwrap();
        let name = &self.name;
        let src = self.work.join(format!("{name}-{version}"));
        std::fs::create_dir_all(src.join("lib")).unwrap();
        std::fs::write(
            src.join(format!("{name}.gemspec")),
            format!(
                "Gem::Specification.new do |s|\n  s.name = \"{name}\"\n  s.version = \"{version}\"\n  s.summary = \"A library.\"\n  s.authors = [\"Test\"]\n  s.license = \"MIT\"\n  s.files = [\"lib/{name}.rb\"]\nend\n"
            ),
        )
        .unwrap();
        std::fs::write(
            src.join(format!("lib/{name}.rb")),
            format!("module Lib\n  VERSION = \"{version}\"\nend\n"),
        )
        .unwrap();
        self.gem(&src, &["build", "--quiet", &format!("{name}.gemspec")]);
        let file = format!("{name}-{version}.gem");
        std::fs::copy(src.join(&file), self.dir.join("gems").join(&file)).unwrap();
        let dir = self.dir.display().to_string();
        self.gem(
            &self.work,
            &["generate_index", "--quiet", "--directory", &dir],
        );
    }

    fn gem(&self, dir: &Path, args: &[&str]) {
        succeed(
            std::process::Command::new("gem")
                .args(args)
                .current_dir(dir)
                .env("HOME", &self.work)
                .env("GEM_HOME", self.work.join(".gem")),
        );
    }
}

impl Drop for GemSource {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

/// A file of the index, 404 otherwise (bundler's compact index and dependency API included, so
/// that it falls back to the full index).
fn answer(dir: &Path, url: &str) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let path = Path::new(
        url.split('?')
            .next()
            .unwrap_or_default()
            .trim_start_matches('/'),
    );
    let inside = path.components().all(|c| matches!(c, Component::Normal(_)));
    let file = dir.join(path);
    match std::fs::read(&file) {
        Ok(data) if inside && file.is_file() => tiny_http::Response::from_data(data),
        _ => tiny_http::Response::from_data(b"not found".to_vec()).with_status_code(404),
    }
}

impl Fixture {
    /// Adds to the default branch a Gemfile that requires `gem` (`requirement`) from `source`,
    /// a test that loads it (`make gems`: `bundle exec ruby`), and its Gemfile.lock resolved
    /// against `source` now by `bundle lock`.
    pub(crate) fn add_bundle_app(&self, source: &GemSource, requirement: &str) {
        let work = self.clone_main("bundle-app");
        let name = &source.name;
        std::fs::write(
            work.join("Gemfile"),
            format!(
                "source \"{}\"\n\ngem \"{name}\", \"{requirement}\"\n",
                source.url
            ),
        )
        .unwrap();
        std::fs::create_dir_all(work.join("test")).unwrap();
        std::fs::write(
            work.join("test/lib_test.rb"),
            format!("require \"{name}\"\nabort \"no version\" if Lib::VERSION.empty?\nputs \"{name} #{{Lib::VERSION}}\"\n"),
        )
        .unwrap();
        let makefile = std::fs::read_to_string(work.join("Makefile")).unwrap();
        std::fs::write(
            work.join("Makefile"),
            makefile + "\ngems:\n\tbundle exec ruby -Itest test/lib_test.rb\n",
        )
        .unwrap();
        let home = self.root.path().join("bundle-home");
        succeed(
            std::process::Command::new("bundle")
                .arg("lock")
                .current_dir(&work)
                .env("HOME", &home)
                .env("GEM_HOME", home.join(".gem"))
                .env("BUNDLE_USER_HOME", home.join(".bundle"))
                .env("BUNDLE_APP_CONFIG", home.join(".bundle/app")),
        );
        sh(
            &work,
            "git add . && git commit -qm 'bundle app' && git push -q origin main",
        );
    }
}
