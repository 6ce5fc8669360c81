//! Commits GitHub makes, and so signs ("Verified"), from the bytes Quartermaster verified: the
//! Git database endpoints (blobs, a tree on the base's, a commit), each answer checked against the
//! object ids git gives the verified bytes, then the branch moved with GraphQL `updateRefs`, whose
//! `beforeOid` is the lease (REST's ref update has none).

use super::*;
use base64::Engine as _;

const REPOSITORY_ID: &str =
    "query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { id } }";

const UPDATE_REFS: &str = "mutation($repo: ID!, $updates: [RefUpdate!]!) { updateRefs(input: {repositoryId: $repo, refUpdates: $updates}) { clientMutationId } }";

/// The all-zero id: in `beforeOid`, "the branch must not exist".
const ABSENT: &str = "0000000000000000000000000000000000000000";

#[derive(serde::Deserialize)]
struct Created {
    sha: String,
}

impl GithubForge {
    pub(super) async fn commit_through_api(&self, c: &ApiCommit) -> Result<git2::Oid> {
        let mut entries = Vec::new();
        for file in &c.files {
            let sha = match &file.content {
                Some(bytes) => Some(self.blob(&file.path, bytes).await?),
                None => None,
            };
            entries.push(json!({
                "path": file.path, "mode": format!("{:06o}", file.mode), "type": "blob", "sha": sha,
            }));
        }
        let body = json!({ "base_tree": c.base_tree.to_string(), "tree": entries });
        let tree = self.create("/git/trees", body, "creating the tree").await?;
        if tree != c.tree {
            return Err(differs("tree", &c.branch, tree, c.tree));
        }
        let body = json!({
            "message": c.message, "tree": tree.to_string(), "parents": [c.base.to_string()],
        });
        let commit = self
            .create("/git/commits", body, "creating the commit")
            .await?;
        self.move_branch(&c.branch, c.expected, commit).await?;
        Ok(commit)
    }

    /// Uploads one file; its blob id, which must be git's id of these very bytes.
    async fn blob(&self, path: &str, bytes: &[u8]) -> Result<String> {
        let body = json!({
            "content": base64::engine::general_purpose::STANDARD.encode(bytes),
            "encoding": "base64",
        });
        let stored = self.create("/git/blobs", body, "uploading a file").await?;
        let verified = git2::Oid::hash_object(git2::ObjectType::Blob, bytes)
            .map_err(|e| ForgeError::Local(format!("hashing {path}: {}", e.message())))?;
        if stored != verified {
            return Err(differs(&format!("file {path}"), "", stored, verified));
        }
        Ok(stored.to_string())
    }

    /// A POST to the Git database; the id of what it made. Objects are named by their content,
    /// so sending one twice makes nothing new: retried like a GET.
    async fn create(&self, rest: &str, body: Value, what: &str) -> Result<git2::Oid> {
        let r = self
            .call_as(Method::Post, &self.path(rest), Some(body), what, true)
            .await?;
        let created: Created = parse(&r.body, what)?;
        git2::Oid::from_str(&created.sha).map_err(|_| ForgeError::Api {
            status: r.status,
            message: format!("{what}: GitHub answered an object id `{}`", created.sha),
        })
    }

    /// Points `branch` at `commit` if it is still at `expected` (absent, for `None`).
    async fn move_branch(
        &self,
        branch: &str,
        expected: Option<git2::Oid>,
        commit: git2::Oid,
    ) -> Result<()> {
        let data = self
            .graphql(
                REPOSITORY_ID,
                json!({ "owner": self.owner, "name": self.repo }),
                "reading the repository's id",
            )
            .await?;
        let repo = data["repository"]["id"]
            .as_str()
            .ok_or_else(|| ForgeError::Api {
                status: 200,
                message: "reading the repository's id: no id in GitHub's answer".into(),
            })?;
        let update = json!({
            "name": format!("refs/heads/{branch}"),
            "afterOid": commit.to_string(),
            "beforeOid": expected.map_or_else(|| ABSENT.to_string(), |e| e.to_string()),
            "force": true,
        });
        self.graphql(
            UPDATE_REFS,
            json!({ "repo": repo, "updates": [update] }),
            &format!("moving {branch} (it must still be where Quartermaster saw it)"),
        )
        .await?;
        Ok(())
    }
}

/// GitHub built another object than the verified one: nothing of it is used.
fn differs(what: &str, branch: &str, built: git2::Oid, verified: git2::Oid) -> ForgeError {
    let on = if branch.is_empty() {
        String::new()
    } else {
        format!(" for {branch}")
    };
    ForgeError::Differs(format!(
        "the {what} GitHub built{on} is {built}, not the verified {verified}; the branch was not moved"
    ))
}
