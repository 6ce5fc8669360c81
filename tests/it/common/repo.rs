//! The fixture's remote: its branches, and commits made on it as a human would.

use super::*;

impl Fixture {
    /// Remote branches and their tips.
    pub(crate) fn branches(&self) -> BTreeMap<String, String> {
        sh(
            &self.remote,
            "git for-each-ref --format='%(refname:short) %(objectname)' refs/heads",
        )
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(b, s)| (b.to_string(), s.to_string()))
        .collect()
    }

    /// A file's content on a remote branch.
    pub(crate) fn show(&self, branch: &str, path: &str) -> String {
        sh(&self.remote, &format!("git show {branch}:{path}"))
    }

    /// A commit by a human on a remote branch (clone, commit, push).
    pub(crate) fn human_commit(&self, branch: &str, file: &str) {
        self.commit_file(branch, file, "edited by a human\n");
    }

    /// Writes `file` on a remote branch as a human would: clone, commit, push.
    pub(crate) fn commit_file(&self, branch: &str, file: &str, content: &str) {
        let work = self
            .root
            .path()
            .join(format!("human-{}", file.replace('/', "-")));
        let _ = std::fs::remove_dir_all(&work);
        sh(
            self.root.path(),
            &format!(
                "git clone -q -b {branch} file://{} {}",
                self.remote.display(),
                work.display()
            ),
        );
        std::fs::write(work.join(file), content).unwrap();
        sh(
            &work,
            &format!(
                "git add {file} && git commit -qm 'human edit' && git push -q origin {branch}"
            ),
        );
    }

    /// A fresh clone of the remote in the fixture, named `name`, to commit and push from.
    pub(crate) fn clone_main(&self, name: &str) -> PathBuf {
        let work = self.root.path().join(name);
        let _ = std::fs::remove_dir_all(&work);
        sh(
            self.root.path(),
            &format!(
                "git clone -q file://{} {}",
                self.remote.display(),
                work.display()
            ),
        );
        work
    }

    /// Adds to the default branch one cargo project per name, each in its own directory with its
    /// own `Cargo.lock` (greeting 1.0.0) and a `make check` that takes `seconds`.
    pub(crate) fn add_projects(&self, names: &[&str], seconds: u32) {
        let work = self.clone_main("projects");
        for name in names {
            let dir = work.join(name);
            std::fs::create_dir_all(dir.join("src")).unwrap();
            std::fs::write(
                dir.join("Cargo.toml"),
                format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ngreeting = \"1.0\"\n"),
            )
            .unwrap();
            std::fs::write(dir.join("src/lib.rs"), "pub use greeting::greet;\n").unwrap();
            std::fs::write(dir.join("Makefile"), format!("check:\n\tsleep {seconds}\n")).unwrap();
            self.cargo(&dir, &["generate-lockfile", "--quiet"]);
            self.cargo(
                &dir,
                &["update", "--quiet", "-p", "greeting", "--precise", "1.0.0"],
            );
        }
        sh(
            &work,
            "git add . && git commit -qm 'more projects' && git push -q origin main",
        );
    }

    /// Adds `count` small tracked files to the default branch (`pad/<dir>/<file>`, 500 a
    /// directory), as a large repository has.
    pub(crate) fn pad(&self, count: usize) {
        if count == 0 {
            return;
        }
        let work = self.clone_main("padding");
        for i in 0..count {
            let dir = work.join("pad").join(format!("d{:03}", i / 500));
            if i % 500 == 0 {
                std::fs::create_dir_all(&dir).unwrap();
            }
            std::fs::write(dir.join(format!("f{i:05}.txt")), format!("{i}\n")).unwrap();
        }
        sh(
            &work,
            "git add . && git commit -qm padding && git push -q origin main",
        );
    }

    /// Writes a mission `name` with these ecosystems under the fixture; returns the `run` flags
    /// that select it.
    pub(crate) fn custom_mission(&self, name: &str, ecosystems: Value) -> Vec<String> {
        let dir = self.root.path().join("missions");
        std::fs::create_dir_all(dir.join(name)).unwrap();
        let mission =
            json!({"description": name, "action_types": ["create_mr"], "ecosystems": ecosystems});
        std::fs::write(
            dir.join(name).join("allowlist.json"),
            serde_json::to_vec(&mission).unwrap(),
        )
        .unwrap();
        vec![
            "--mission".into(),
            name.into(),
            "--missions-dir".into(),
            dir.display().to_string(),
        ]
    }

    /// Opens PR #1 on `quartermaster/cargo` with the greeting update.
    pub(crate) fn open_cargo_pr(&self) {
        let run = self.run(&one_pr(), &[]);
        assert_eq!(run.code, 0, "{}", run.said());
    }
}
