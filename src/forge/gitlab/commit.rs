//! Commits GitLab makes, and so signs, through the commits API: one request with every file of
//! the verified commit, on the base commit (`start_sha`), replacing the branch (`force`). The
//! API has no compare-and-swap of the branch, so the lease is checked right before.

use super::*;
use crate::forge::FileChange;
use api::projects::repository::commits::{
    CommitAction, CommitActionBuilder, CommitActionType, CreateCommit,
};

#[derive(Deserialize)]
struct Tip {
    commit: Made,
}

#[derive(Deserialize)]
struct Made {
    id: String,
}

impl GitlabForge {
    pub(super) async fn commit_through_api(&self, c: &ApiCommit) -> Result<git2::Oid> {
        let found = self.branch_tip(&c.branch).await?;
        if found != c.expected {
            let show = |o: Option<git2::Oid>| o.map_or("nothing".into(), |o| o.to_string());
            return Err(ForgeError::Api {
                status: 409,
                message: format!(
                    "{} changed on GitLab while Quartermaster worked (expected {}, found {}); nothing was overwritten",
                    c.branch,
                    show(c.expected),
                    show(found)
                ),
            });
        }
        let base = c.base.to_string();
        let mut builder = CreateCommit::builder();
        builder
            .project(self.project.as_str())
            .branch(c.branch.as_str())
            .commit_message(c.message.as_str())
            .start_sha(base.as_str())
            .force(true)
            .author_name(c.author.name.as_str())
            .author_email(c.author.email.as_str());
        for file in &c.files {
            for action in actions(file)? {
                builder.action(action);
            }
        }
        let e = builder
            .build()
            .map_err(|e| build_error("creating the commit", e))?;
        let made: Made = self.fetch(&e, "creating the commit").await?;
        git2::Oid::from_str(&made.id).map_err(|_| ForgeError::Api {
            status: 201,
            message: format!(
                "creating the commit: GitLab answered a commit id `{}`",
                made.id
            ),
        })
    }

    /// Where `branch` is on GitLab, or `None` when it does not exist.
    async fn branch_tip(&self, branch: &str) -> Result<Option<git2::Oid>> {
        let e = api::projects::repository::branches::Branch::builder()
            .project(self.project.as_str())
            .branch(branch)
            .build()
            .map_err(|e| build_error("reading the branch", e))?;
        let Some(tip) = self
            .fetch_optional::<Tip, _>(&e, "reading the branch")
            .await?
        else {
            return Ok(None);
        };
        git2::Oid::from_str(&tip.commit.id)
            .map(Some)
            .map_err(|_| ForgeError::Api {
                status: 200,
                message: format!(
                    "reading the branch: GitLab answered a commit id `{}`",
                    tip.commit.id
                ),
            })
    }
}

/// The commit actions that write `file` as verified: its content in base64, and its mode.
fn actions(file: &FileChange) -> Result<Vec<CommitAction<'_>>> {
    let Some(content) = &file.content else {
        let mut delete = CommitAction::builder();
        delete
            .action(CommitActionType::Delete)
            .file_path(file.path.as_str());
        return Ok(vec![built(&mut delete, &file.path)?]);
    };
    if file.mode == 0o120000 {
        return Err(ForgeError::Local(format!(
            "{} is a symbolic link, which GitLab's commits API cannot write; turn off sign-commits for this repository",
            file.path
        )));
    }
    let mut write = CommitAction::builder();
    write
        .action(if file.in_base {
            CommitActionType::Update
        } else {
            CommitActionType::Create
        })
        .file_path(file.path.as_str())
        .content(content.as_slice())
        .encoding(api::projects::repository::files::Encoding::Base64);
    let mut out = vec![built(&mut write, &file.path)?];
    // A written file keeps its mode; a new one is not executable unless made so.
    if file.mode == 0o100755 {
        let mut chmod = CommitAction::builder();
        chmod
            .action(CommitActionType::Chmod)
            .file_path(file.path.as_str())
            .execute_filemode(true);
        out.push(built(&mut chmod, &file.path)?);
    }
    Ok(out)
}

fn built<'a>(b: &mut CommitActionBuilder<'a>, path: &str) -> Result<CommitAction<'a>> {
    b.build()
        .map_err(|e| build_error(&format!("committing {path}"), e))
}
