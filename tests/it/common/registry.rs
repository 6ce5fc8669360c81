//! The fixture's local cargo registry.

use super::*;

impl Fixture {
    pub(crate) fn cargo(&self, dir: &Path, args: &[&str]) {
        succeed(
            std::process::Command::new("cargo")
                .args(args)
                .current_dir(dir)
                .env("CARGO_HOME", &self.cargo_home),
        );
    }

    /// Adds a crate version to the local registry (cargo's `local-registry` layout), published
    /// long ago.
    pub(crate) fn publish(&self, name: &str, version: &str, code: &str) {
        self.publish_crate(name, version, code, &Crate::default());
    }

    /// [`Fixture::publish`] for a crate depending on `dependencies` (name, requirement).
    pub(crate) fn publish_with(
        &self,
        name: &str,
        version: &str,
        code: &str,
        dependencies: &[(&str, &str)],
    ) {
        let deps = dependencies
            .iter()
            .map(|(dep, req)| (dep.to_string(), req.to_string()))
            .collect();
        self.publish_crate(
            name,
            version,
            code,
            &Crate {
                deps,
                ..Crate::default()
            },
        );
    }

    /// Adds a crate version with the index line's `pubtime`, dependencies and `yanked` flag.
    pub(crate) fn publish_crate(&self, name: &str, version: &str, code: &str, line: &Crate) {
        let work = tempfile::tempdir().unwrap();
        let dir = work.path().join(format!("{name}-{version}"));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        let requires: String = line
            .deps
            .iter()
            .map(|(dep, req)| format!("{dep} = \"{req}\"\n"))
            .collect();
        std::fs::write(
            dir.join("Cargo.toml"),
            format!("[package]\nname = \"{name}\"\nversion = \"{version}\"\nedition = \"2021\"\n\n[dependencies]\n{requires}"),
        )
        .unwrap();
        std::fs::write(dir.join("src/lib.rs"), code).unwrap();
        let archive = self.registry.join(format!("{name}-{version}.crate"));
        sh(
            work.path(),
            &format!("tar -czf {} {name}-{version}", archive.display()),
        );
        let sum: String = Sha256::digest(std::fs::read(&archive).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let index = self
            .registry
            .join("index")
            .join(&name[..2])
            .join(&name[2..4]);
        std::fs::create_dir_all(&index).unwrap();
        let deps: Vec<Value> = line
            .deps
            .iter()
            .map(|(dep, req)| json!({"name": dep, "req": req, "features": [], "optional": false, "default_features": true, "target": null, "kind": "normal"}))
            .collect();
        let pubtime = line.pubtime.clone().unwrap_or_else(|| LONG_AGO.to_string());
        let mut line = json!({"name": name, "vers": version, "deps": deps, "cksum": sum, "features": {}, "yanked": line.yanked, "pubtime": pubtime});
        if pubtime.is_empty() {
            // An index written before registries recorded publish times.
            line.as_object_mut().unwrap().remove("pubtime");
        }
        let path = index.join(name);
        let mut text = std::fs::read_to_string(&path).unwrap_or_default();
        text.push_str(&format!("{line}\n"));
        std::fs::write(path, text).unwrap();
    }
}
