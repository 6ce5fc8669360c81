//! Newline-delimited JSON-RPC over a byte stream (the MCP stdio transport), answering what rmcp's
//! own stdio transport leaves unanswered: a line that is not JSON gets a Parse error (-32700), a
//! line longer than the limit gets an Invalid Request error (-32600) instead of silence, and a
//! request whose parameters do not fit its method gets Invalid params (-32602) with its id. A
//! client that sends garbage learns so at once instead of waiting for an answer that never comes.
//!
//! Reading is cancellation-safe (rmcp drops a pending `receive` whenever it has something to
//! send): the partial line lives in the transport, not in the future. Every outgoing line goes
//! through one writer task, so replies never interleave.

use crate::finding::clip;
use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use std::io;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Longest request line accepted. A plan may be 10 MiB; escaped inside a JSON string it can grow,
/// so the limit leaves room above that while bounding memory.
pub(crate) const MAX_LINE_BYTES: usize = 32 << 20;

/// The server end of the stdio transport, over any byte streams.
pub(crate) struct LineTransport<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    /// The current line has passed the limit: its bytes are being skipped up to its end.
    discarding: bool,
    max_line: usize,
    out: Option<mpsc::UnboundedSender<Vec<u8>>>,
    writer: Option<JoinHandle<io::Result<()>>>,
}

/// What one line of input amounts to.
enum Incoming {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    Reply(Value),
    Ignore,
}

impl<R: AsyncRead + Unpin + Send> LineTransport<R> {
    /// Starts the writer task on the current Tokio runtime.
    pub(crate) fn new<W: AsyncWrite + Unpin + Send + 'static>(
        reader: R,
        writer: W,
        max_line: usize,
    ) -> Self {
        let (out, lines) = mpsc::unbounded_channel();
        Self {
            reader: BufReader::new(reader),
            line: Vec::new(),
            discarding: false,
            max_line,
            out: Some(out),
            writer: Some(tokio::spawn(write_lines(writer, lines))),
        }
    }

    fn queue(&self, line: Vec<u8>) -> io::Result<()> {
        let closed = || io::Error::new(io::ErrorKind::BrokenPipe, "the output is closed");
        self.out
            .as_ref()
            .ok_or_else(closed)?
            .send(line)
            .map_err(|_| closed())
    }

    /// Reads up to the end of the next line. `Ok(true)` when a complete line (or an overlong one)
    /// is ready, `Ok(false)` at the end of the input.
    async fn fill_line(&mut self) -> io::Result<bool> {
        loop {
            let chunk = self.reader.fill_buf().await?;
            if chunk.is_empty() {
                return Ok(!self.line.is_empty() || self.discarding);
            }
            let (part, complete) = match chunk.iter().position(|b| *b == b'\n') {
                Some(end) => (&chunk[..end], true),
                None => (chunk, false),
            };
            if !self.discarding && self.line.len() + part.len() > self.max_line {
                self.discarding = true;
                self.line = Vec::new();
            }
            if !self.discarding {
                self.line.extend_from_slice(part);
            }
            let used = part.len() + usize::from(complete);
            self.reader.consume(used);
            if complete {
                return Ok(true);
            }
        }
    }

    fn take_line(&mut self) -> Incoming {
        let incoming = if self.discarding {
            Incoming::Reply(error_reply(
                Value::Null,
                -32600,
                format!(
                    "Invalid Request: the request is longer than {} bytes",
                    self.max_line
                ),
            ))
        } else {
            classify(&self.line)
        };
        self.line.clear();
        self.discarding = false;
        incoming
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let queued = serde_json::to_vec(&item)
            .map_err(io::Error::from)
            .and_then(|line| self.queue(line));
        std::future::ready(queued)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.fill_line().await {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    tracing::error!("cannot read the MCP input: {e}");
                    return None;
                }
            }
            match self.take_line() {
                Incoming::Message(message) => return Some(*message),
                Incoming::Reply(reply) => {
                    let line = serde_json::to_vec(&reply).expect("a JSON value serialises");
                    if self.queue(line).is_err() {
                        return None;
                    }
                }
                Incoming::Ignore => {}
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.out = None;
        let writer = self.writer.take();
        async move {
            match writer {
                Some(task) => task.await.map_err(io::Error::other)?,
                None => Ok(()),
            }
        }
    }
}

/// Writes queued lines in order, each followed by a newline, until every sender is gone.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
) -> io::Result<()> {
    while let Some(mut line) = lines.recv().await {
        line.push(b'\n');
        writer.write_all(&line).await?;
        writer.flush().await?;
    }
    Ok(())
}

/// Turns one input line into a message for rmcp, an error reply, or nothing.
fn classify(line: &[u8]) -> Incoming {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Incoming::Ignore;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => {
            return Incoming::Reply(error_reply(
                Value::Null,
                -32700,
                format!("Parse error: {e}"),
            ));
        }
    };
    let id = match value.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    let method = value
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    let is_notification = method.is_some() && value.get("id").is_none();
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value.clone()) {
        Ok(message) => Incoming::Message(Box::new(message)),
        // JSON-RPC never answers a notification, even one it cannot use.
        Err(_) if is_notification => Incoming::Ignore,
        Err(e) => match (&method, &id, value.get("jsonrpc")) {
            (Some(method), Value::String(_) | Value::Number(_), Some(v)) if v == "2.0" => {
                Incoming::Reply(error_reply(
                    id,
                    -32602,
                    format!("Invalid params for `{}`: {e}", clip(method)),
                ))
            }
            _ => Incoming::Reply(error_reply(id, -32600, format!("Invalid Request: {e}"))),
        },
    }
}

fn error_reply(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}
