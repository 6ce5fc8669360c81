//! `quartermaster mcp`: an MCP server over stdio for the agent's validate-and-fix loop.
//!
//! Tools: `get_schema`, `validate_plan` (the findings, pointers and codes of `validate --format
//! json`), `describe_mission`, `explain_code` (read-only), and `submit_plan`, which validates a plan
//! and writes it as a docker-agent named plan with status `ready`. Nothing is ever run: the worst a
//! prompt-injected agent can do through this server is write a plan file, which the operator's
//! `quartermaster run` validates again before anything happens.
//!
//! The protocol is rmcp's, the official Rust SDK (pinned); the stdio transport is ours
//! ([`transport`]) because rmcp's stays silent on input it cannot parse.

mod describe;
pub(crate) mod policy;
mod tools;
pub(crate) mod transport;

pub(crate) use describe::describe;
pub(crate) use tools::QmServer;

use rmcp::ServiceExt;
use std::path::PathBuf;
use tokio::io::{AsyncRead, AsyncWrite};

/// What the server needs from the command line.
#[derive(Debug, Clone)]
pub(crate) struct McpConfig {
    /// Where `submit_plan` writes named plans (docker-agent's plans directory).
    pub plans_dir: PathBuf,
    /// The mission used when a tool call names none.
    pub mission: String,
    /// Custom missions (`<dir>/<name>/allowlist.json`), searched before the embedded ones.
    pub(crate) missions_dir: Option<PathBuf>,
    /// The repository's policy, or why it cannot be used.
    pub policy: Result<crate::policy::Policy, crate::policy::PolicyError>,
    /// The registries `check_update` asks (the operator's configuration, as `run` carries it).
    pub registries: crate::supply::registries::Registries,
    /// The OSV service.
    pub(crate) osv_url: String,
}

/// Why the server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub(crate) enum McpError {
    #[error("cannot start the MCP server's runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("MCP session failed to start: {0}")]
    Start(String),
    #[error("MCP session ended with an error: {0}")]
    Session(String),
    #[error("mission: {0}")]
    Mission(#[from] crate::mission::MissionError),
}

impl crate::hint::Hint for McpError {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        None
    }
}

/// Serves MCP on standard input and output until the client closes its end. The server's mission
/// is loaded first, so a misconfigured server fails at once rather than on the first call.
pub(crate) fn serve_stdio(config: McpConfig) -> Result<(), McpError> {
    let server = QmServer::new(config)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(McpError::Runtime)?;
    runtime.block_on(serve(server, tokio::io::stdin(), tokio::io::stdout()))
}

/// Serves MCP on any byte streams.
pub(crate) async fn serve<R, W>(server: QmServer, input: R, output: W) -> Result<(), McpError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let transport = transport::LineTransport::new(input, output, transport::MAX_LINE_BYTES);
    let service = server
        .serve(transport)
        .await
        .map_err(|e| McpError::Start(e.to_string()))?;
    service
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| McpError::Session(e.to_string()))
}
