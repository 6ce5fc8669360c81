//! The one way Quartermaster's own lookups reach registries, the advisory database and source
//! forges: bounded in time (timeouts per request), in size (a body past its cap is refused), in
//! number (a few requests at once) and in retries (a connection error, a 5xx or a 429 is tried
//! again after a pause, three times at most). `file://` URLs (a Go module proxy or a cargo
//! registry on disk) are read from the file system with the same size cap.

use secrecy::{ExposeSecret, SecretString};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// Requests in flight at once, across every lookup of a run.
const CONCURRENT: usize = 8;
/// Attempts of a request that fails for a reason that may pass.
const ATTEMPTS: u32 = 3;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A response: its status and body.
#[derive(Debug)]
pub(crate) struct Fetched {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Fetched {
    pub(crate) fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Why a request had no answer.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum FetchError {
    #[error("{host} could not be reached: {why}")]
    Unreachable { host: String, why: String },
    #[error("{host} answered {status}")]
    Status { host: String, status: u16 },
    #[error("{host} sent more than {limit} bytes")]
    TooLarge { host: String, limit: usize },
    #[error("{path} cannot be read: {source}")]
    File {
        path: String,
        #[source]
        source: Arc<std::io::Error>,
    },
    #[error("{0} cannot be read: not a regular file")]
    NotAFile(String),
    #[error("`{0}` is not a URL Quartermaster can ask")]
    BadUrl(String),
}

/// Why the HTTP client could not be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the HTTP client: {0}")]
pub struct ClientError(#[source] reqwest::Error);

/// A request header; a secret one is never logged and marked sensitive on the wire.
#[derive(Clone)]
pub(crate) enum Header {
    Plain(&'static str, String),
    Secret(&'static str, SecretString),
}

/// The HTTP client of a run (or of the MCP server), shared by every lookup.
#[derive(Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
    slots: Arc<Semaphore>,
    /// Hosts that could not be reached after every attempt: asked no more in this run, so that an
    /// unreachable service costs its retries once, not once per lookup.
    unreachable: Arc<std::sync::Mutex<std::collections::HashMap<String, String>>>,
}

impl Http {
    pub(crate) fn new() -> Result<Self, ClientError> {
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .user_agent(concat!("quartermaster/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(ClientError)?;
        Ok(Self {
            client,
            slots: Arc::new(Semaphore::new(CONCURRENT)),
            unreachable: Arc::default(),
        })
    }

    /// `GET url`, with `headers`, reading at most `limit` bytes of body.
    pub(crate) async fn get(
        &self,
        url: &str,
        headers: &[Header],
        limit: usize,
    ) -> Result<Fetched, FetchError> {
        if url.starts_with("file://") {
            let path = url::Url::parse(url)
                .ok()
                .and_then(|u| u.to_file_path().ok())
                .ok_or_else(|| FetchError::BadUrl(url.to_string()))?;
            return read_file(&path, limit);
        }
        self.send(url, headers, None, limit).await
    }

    /// `POST url` with a JSON body.
    pub(crate) async fn post_json(
        &self,
        url: &str,
        body: &serde_json::Value,
        limit: usize,
    ) -> Result<Fetched, FetchError> {
        self.send(url, &[], Some(body.to_string()), limit).await
    }

    async fn send(
        &self,
        url: &str,
        headers: &[Header],
        body: Option<String>,
        limit: usize,
    ) -> Result<Fetched, FetchError> {
        let parsed = url::Url::parse(url).map_err(|_| FetchError::BadUrl(url.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(FetchError::BadUrl(url.to_string()));
        }
        let host = parsed.host_str().unwrap_or_default().to_string();
        let key = format!("{}:{}", host, parsed.port_or_known_default().unwrap_or(0));
        if let Some(why) = self.gave_up(&key, None) {
            return Err(FetchError::Unreachable {
                host,
                why: format!("{why}, earlier in this run"),
            });
        }
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|_| FetchError::Unreachable {
                host: host.clone(),
                why: "the client is shutting down".into(),
            })?;
        let mut last = None;
        for attempt in 0..ATTEMPTS {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(500 << attempt)).await;
            }
            match self.once(&parsed, headers, body.as_deref(), limit).await {
                Ok(f) if f.status >= 500 || f.status == 429 => {
                    last = Some(FetchError::Status {
                        host: host.clone(),
                        status: f.status,
                    });
                }
                Ok(f) => return Ok(f),
                Err(Attempt::Retry(why)) => {
                    last = Some(FetchError::Unreachable {
                        host: host.clone(),
                        why,
                    });
                }
                Err(Attempt::TooLarge) => return Err(FetchError::TooLarge { host, limit }),
            }
        }
        let error = last.unwrap_or(FetchError::Unreachable {
            host,
            why: "no attempt was made".into(),
        });
        if let FetchError::Unreachable { why, .. } = &error {
            self.gave_up(&key, Some(why));
        }
        Err(error)
    }

    /// Why `key` was given up on, if it was; with `why`, gives up on it.
    fn gave_up(&self, key: &str, why: Option<&str>) -> Option<String> {
        let mut hosts = self
            .unreachable
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match why {
            Some(why) => hosts.insert(key.to_string(), why.to_string()),
            None => hosts.get(key).cloned(),
        }
    }

    async fn once(
        &self,
        url: &url::Url,
        headers: &[Header],
        body: Option<&str>,
        limit: usize,
    ) -> Result<Fetched, Attempt> {
        let mut request = match body {
            Some(body) => self
                .client
                .post(url.clone())
                .header("content-type", "application/json")
                .body(body.to_string()),
            None => self.client.get(url.clone()),
        };
        for header in headers {
            request = match header {
                Header::Plain(name, value) => request.header(*name, value.as_str()),
                Header::Secret(name, value) => {
                    let mut value = reqwest::header::HeaderValue::from_str(value.expose_secret())
                        .map_err(|_| {
                        Attempt::Retry("a credential is not a valid header".into())
                    })?;
                    value.set_sensitive(true);
                    request.header(*name, value)
                }
            };
        }
        let mut response = request
            .send()
            .await
            .map_err(|e| Attempt::Retry(without_url(&e)))?;
        let status = response.status().as_u16();
        let mut out = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| Attempt::Retry(without_url(&e)))?
        {
            if out.len() + chunk.len() > limit {
                return Err(Attempt::TooLarge);
            }
            out.extend_from_slice(&chunk);
        }
        Ok(Fetched { status, body: out })
    }
}

enum Attempt {
    Retry(String),
    TooLarge,
}

/// reqwest's message without the URL it may carry (a URL can hold credentials).
fn without_url(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "connection failed"
    } else if e.is_body() || e.is_decode() {
        "the answer was cut off"
    } else {
        "the request failed"
    };
    let mut source = std::error::Error::source(e);
    let mut detail = String::new();
    while let Some(s) = source {
        detail = s.to_string();
        source = s.source();
    }
    if detail.is_empty() {
        kind.to_string()
    } else {
        format!("{kind} ({detail})")
    }
}

/// A `file://` URL's file, at most `limit` bytes; a missing file is a 404, as a server says it.
fn read_file(path: &std::path::Path, limit: usize) -> Result<Fetched, FetchError> {
    use std::io::Read;
    let shown = path.display().to_string();
    let fail = |e: std::io::Error| FetchError::File {
        path: shown.clone(),
        source: Arc::new(e),
    };
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Fetched {
                status: 404,
                body: Vec::new(),
            });
        }
        Err(e) => return Err(fail(e)),
    };
    if !file.metadata().map_err(fail)?.is_file() {
        return Err(FetchError::NotAFile(shown));
    }
    let mut body = Vec::new();
    file.take(limit as u64 + 1)
        .read_to_end(&mut body)
        .map_err(fail)?;
    if body.len() > limit {
        return Err(FetchError::TooLarge {
            host: "the file system".into(),
            limit,
        });
    }
    Ok(Fetched { status: 200, body })
}
