//! A Go module proxy stand-in for tests: one module's versions in GOPROXY's directory layout
//! (`<module>/@v/list`, `.info`, `.mod`, `.zip`), served as a `file://` GOPROXY, so that go
//! resolves and downloads with no network. Versions are published as a release appears after
//! go.sum was written.

use super::{Fixture, Run, create_mr, plan_tested_by, sh, succeed};
use serde_json::json;
use std::path::{Path, PathBuf};

pub(crate) struct GoProxy {
    /// The proxy's directory, under the fixture's root (which sandbox users may read).
    pub dir: PathBuf,
    /// `file://<dir>`, the GOPROXY go is given.
    pub url: String,
    module: String,
}

impl GoProxy {
    /// A proxy serving example.com/lib v1.0.0, an app on the default branch requiring it, then
    /// v1.0.1 released.
    pub(crate) fn lib_app(fixture: &Fixture) -> Self {
        let proxy = Self::new(fixture, "example.com/lib");
        proxy.publish("v1.0.0");
        fixture.add_go_app(&proxy, "example.com/lib", "v1.0.0");
        proxy.publish("v1.0.1");
        proxy
    }

    /// A proxy in `fixture`'s root serving the module `module` with no version yet.
    pub(crate) fn new(fixture: &Fixture, module: &str) -> Self {
        let dir = fixture.root.path().canonicalize().unwrap().join("goproxy");
        std::fs::create_dir_all(dir.join(module).join("@v")).unwrap();
        Self {
            url: format!("file://{}", dir.display()),
            dir,
            module: module.to_string(),
        }
    }

    /// Publishes `version` (`v1.2.3`), long ago: its go.mod and a `lib.go` whose `Version` is
    /// the version.
    pub(crate) fn publish(&self, version: &str) {
        self.publish_at(version, super::LONG_AGO);
    }

    /// Publishes `version` with `time` (RFC 3339) as its `.info`'s `Time`.
    pub(crate) fn publish_at(&self, version: &str, time: &str) {
        let versions = self.dir.join(&self.module).join("@v");
        let work = tempfile::tempdir().unwrap();
        let prefix = format!("{}@{version}", self.module);
        let files = work.path().join(&prefix);
        std::fs::create_dir_all(&files).unwrap();
        let go_mod = format!("module {}\n\ngo 1.19\n", self.module);
        std::fs::write(files.join("go.mod"), &go_mod).unwrap();
        std::fs::write(
            files.join("lib.go"),
            format!("package lib\n\n// Version is this release.\nconst Version = \"{version}\"\n"),
        )
        .unwrap();
        std::fs::write(versions.join(format!("{version}.mod")), go_mod).unwrap();
        std::fs::write(
            versions.join(format!("{version}.info")),
            format!("{{\"Version\":\"{version}\",\"Time\":\"{time}\"}}"),
        )
        .unwrap();
        let zip = versions.join(format!("{version}.zip"));
        sh(
            work.path(),
            &format!(
                "python3 -c 'import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], \"w\") as z:\n    [z.write(f) for f in sys.argv[2:]]' {} {prefix}/go.mod {prefix}/lib.go",
                zip.display()
            ),
        );
        let list = versions.join("list");
        let text = std::fs::read_to_string(&list).unwrap_or_default();
        std::fs::write(&list, format!("{text}{version}\n")).unwrap();
    }
}

impl GoProxy {
    /// Runs, against this proxy, a plan updating the module from v1.0.0 to v1.0.1 with `go get`
    /// on `quartermaster/go-lib`, tested by `go test ./...`; `gotoolchain` is the operator's
    /// GOTOOLCHAIN.
    pub(crate) fn run_update(&self, f: &Fixture, gotoolchain: &str) -> Run {
        self.run_update_to(f, "v1.0.1", gotoolchain)
    }

    /// [`GoProxy::run_update`] to the version `to`.
    pub(crate) fn run_update_to(&self, f: &Fixture, to: &str, gotoolchain: &str) -> Run {
        let module = &self.module;
        let mut action = create_mr(
            "quartermaster/go-lib",
            &[json!({"package": module, "from": "v1.0.0", "to": to, "update_type": "patch"})],
            "batch",
        );
        action["title"] = json!(format!("chore(deps): update {module}"));
        action["commands"] = json!([format!("go get {module}@{to}")]);
        action["test_command"] = json!("go test ./...");
        let go_plan = plan_tested_by("go", "go.sum", "go test ./...", vec![action]);
        let dir = self.dir.display().to_string();
        f.run_with(
            &go_plan,
            &[
                "--extra-env",
                "GOPROXY",
                "--extra-env",
                "GOSUMDB",
                "--expose-dir",
                &dir,
            ],
            &[
                ("GOPROXY", &self.url),
                ("GOSUMDB", "off"),
                ("GOTOOLCHAIN", gotoolchain),
            ],
        )
    }
}

impl Fixture {
    /// Adds to the default branch a go module `example.com/app` that requires `module` at
    /// `version`, with a test that uses it (`go test ./...`), and its go.sum resolved against
    /// `proxy` now.
    pub(crate) fn add_go_app(&self, proxy: &GoProxy, module: &str, version: &str) {
        let work = self.clone_main("go-app");
        std::fs::write(
            work.join("go.mod"),
            format!("module example.com/app\n\ngo 1.19\n\nrequire {module} {version}\n"),
        )
        .unwrap();
        std::fs::write(
            work.join("app.go"),
            format!("package app\n\nimport \"{module}\"\n\n// Lib is the version of the library in use.\nfunc Lib() string {{ return lib.Version }}\n"),
        )
        .unwrap();
        std::fs::write(
            work.join("app_test.go"),
            "package app\n\nimport \"testing\"\n\nfunc TestLib(t *testing.T) {\n\tif Lib() == \"\" {\n\t\tt.Fatal(\"no version\")\n\t}\n}\n",
        )
        .unwrap();
        self.go(&work, proxy, &["mod", "tidy"]);
        sh(
            &work,
            "git add . && git commit -qm 'go app' && git push -q origin main",
        );
    }

    /// Runs go in `dir` against `proxy` alone (no checksum database), with a module cache and a
    /// build cache of the fixture's own, writable so that the fixture can be removed.
    fn go(&self, dir: &Path, proxy: &GoProxy, args: &[&str]) {
        let gopath = self.root.path().join("gopath");
        succeed(
            std::process::Command::new("go")
                .args(args)
                .current_dir(dir)
                .env("GOPROXY", &proxy.url)
                .env("GOSUMDB", "off")
                .env("GONOSUMDB", "*")
                .env("GOFLAGS", "-mod=mod -modcacherw")
                .env("GOTOOLCHAIN", "local")
                .env("GOENV", "off")
                .env("GOPATH", &gopath)
                .env("GOMODCACHE", gopath.join("pkg/mod"))
                .env("GOCACHE", self.root.path().join("gocache")),
        );
    }
}
