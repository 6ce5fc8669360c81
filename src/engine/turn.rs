//! Forge writes in plan order. Actions build their branches at once, but what they create on the
//! forge is numbered there (PRs and issues share one sequence on GitHub), and what they read may
//! be what an earlier action wrote: so an action's first write waits until every earlier action
//! has finished, and the forge sees exactly the writes of a run of one action at a time.

use super::workers::Board;
use crate::forge::{
    ApiCommit, Comment, Forge, ForgeKind, Issue, NewIssue, NewPullRequest, People, PullRequest,
    PullRequestEdit, Result, Target,
};
use crate::git::RemoteSpec;
use async_trait::async_trait;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A worker's forge: reads go straight through, writes wait for the action's turn.
pub(super) struct InTurn<'a> {
    forge: &'a dyn Forge,
    board: &'a Board,
    /// The position, in the run, of the action the worker is running.
    position: AtomicUsize,
}

impl<'a> InTurn<'a> {
    pub(super) fn new(forge: &'a dyn Forge, board: &'a Board) -> Self {
        Self {
            forge,
            board,
            position: AtomicUsize::new(0),
        }
    }

    pub(super) fn set_position(&self, position: usize) {
        self.position.store(position, Ordering::SeqCst);
    }

    fn turn(&self) {
        self.board.await_turn(self.position.load(Ordering::SeqCst));
    }
}

#[async_trait]
impl Forge for InTurn<'_> {
    fn kind(&self) -> ForgeKind {
        self.forge.kind()
    }

    fn remote(&self) -> &RemoteSpec {
        self.forge.remote()
    }

    fn requests(&self) -> u64 {
        self.forge.requests()
    }

    fn explain_push_rejection(&self, message: &str) -> Option<String> {
        self.forge.explain_push_rejection(message)
    }

    async fn find_pull_request(&self, branch: &str) -> Result<Option<PullRequest>> {
        self.forge.find_pull_request(branch).await
    }

    async fn pull_request(&self, number: u64) -> Result<Option<PullRequest>> {
        self.forge.pull_request(number).await
    }

    async fn create_pull_request(&self, new: &NewPullRequest) -> Result<PullRequest> {
        self.turn();
        self.forge.create_pull_request(new).await
    }

    async fn update_pull_request(
        &self,
        number: u64,
        edit: &PullRequestEdit,
    ) -> Result<PullRequest> {
        self.turn();
        self.forge.update_pull_request(number, edit).await
    }

    async fn close_pull_request(&self, number: u64) -> Result<PullRequest> {
        self.turn();
        self.forge.close_pull_request(number).await
    }

    async fn open_pull_requests(&self, label: &str) -> Result<Vec<PullRequest>> {
        self.forge.open_pull_requests(label).await
    }

    async fn request_auto_merge(&self, number: u64, head: git2::Oid) -> Result<()> {
        self.turn();
        self.forge.request_auto_merge(number, head).await
    }

    async fn request_review(&self, number: u64, people: &People) -> Result<Vec<String>> {
        self.turn();
        self.forge.request_review(number, people).await
    }

    /// A commit gets no number on the forge: like a push, it does not wait for the turn.
    async fn create_commit(&self, commit: &ApiCommit) -> Result<git2::Oid> {
        self.forge.create_commit(commit).await
    }

    async fn commit_authors(&self, pr: &PullRequest) -> Result<Option<Vec<String>>> {
        self.forge.commit_authors(pr).await
    }

    async fn find_open_issue(
        &self,
        title: &str,
        label: &str,
        marker: &str,
    ) -> Result<Option<Issue>> {
        self.forge.find_open_issue(title, label, marker).await
    }

    async fn issue(&self, number: u64) -> Result<Option<Issue>> {
        self.forge.issue(number).await
    }

    async fn create_issue(&self, new: &NewIssue) -> Result<Issue> {
        self.turn();
        self.forge.create_issue(new).await
    }

    async fn update_issue_body(&self, number: u64, body: &str) -> Result<Issue> {
        self.turn();
        self.forge.update_issue_body(number, body).await
    }

    async fn comments(&self, target: Target) -> Result<Vec<Comment>> {
        self.forge.comments(target).await
    }

    async fn create_comment(&self, target: Target, body: &str) -> Result<Comment> {
        self.turn();
        self.forge.create_comment(target, body).await
    }
}
