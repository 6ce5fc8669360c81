//! A smart-HTTP git server on loopback for tests: `git http-backend` behind HTTP basic
//! authentication, the way GitHub and GitLab serve repositories to a token.

use base64::Engine as _;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

pub(crate) struct GitHttp {
    pub url: String,
    server: Arc<tiny_http::Server>,
    /// Requests that arrived with wrong or missing credentials.
    pub refused: Arc<AtomicUsize>,
}

impl GitHttp {
    /// Serves the repositories under `root` to `user:token`.
    pub(crate) fn start(root: &Path, user: &str, token: &str) -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let url = format!("http://{}", server.server_addr().to_ip().unwrap());
        let expected = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{token}"))
        );
        let refused = Arc::new(AtomicUsize::new(0));
        let root = root.to_path_buf();
        let (srv, count, user) = (server.clone(), refused.clone(), user.to_string());
        std::thread::spawn(move || {
            for request in srv.incoming_requests() {
                let (root, expected, count, user) =
                    (root.clone(), expected.clone(), count.clone(), user.clone());
                std::thread::spawn(move || serve(request, &root, &expected, &count, &user));
            }
        });
        Self {
            url,
            server,
            refused,
        }
    }
}

impl Drop for GitHttp {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

fn header(request: &tiny_http::Request, name: &str) -> Option<String> {
    request
        .headers()
        .iter()
        .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
        .map(|h| h.value.as_str().to_string())
}

fn serve(
    mut request: tiny_http::Request,
    root: &PathBuf,
    expected: &str,
    refused: &AtomicUsize,
    user: &str,
) {
    if header(&request, "Authorization").as_deref() != Some(expected) {
        if header(&request, "Authorization").is_some() {
            refused.fetch_add(1, Ordering::Relaxed);
        }
        let response = tiny_http::Response::from_string("authentication required")
            .with_status_code(401)
            .with_header(
                "WWW-Authenticate: Basic realm=\"git\""
                    .parse::<tiny_http::Header>()
                    .unwrap(),
            );
        let _ = request.respond(response);
        return;
    }
    let out = http_backend(&mut request, root, user);
    let response = cgi_response(out).unwrap_or_else(|| {
        tiny_http::Response::from_string("bad CGI answer").with_status_code(500)
    });
    let _ = request.respond(response);
}

/// Runs `git http-backend` on the request as a CGI; what it printed, headers and body.
fn http_backend(request: &mut tiny_http::Request, root: &PathBuf, user: &str) -> Vec<u8> {
    let url = request.url().to_string();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    let mut body = Vec::new();
    let _ = request.as_reader().read_to_end(&mut body);
    let mut cgi = Command::new("git");
    cgi.arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("REQUEST_METHOD", request.method().as_str())
        .env("REMOTE_USER", user)
        .env("REMOTE_ADDR", "127.0.0.1")
        .env("CONTENT_LENGTH", body.len().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (name, var) in [
        ("Content-Type", "CONTENT_TYPE"),
        ("Content-Encoding", "HTTP_CONTENT_ENCODING"),
        ("Git-Protocol", "GIT_PROTOCOL"),
    ] {
        if let Some(v) = header(request, name) {
            cgi.env(var, v);
        }
    }
    let mut child = cgi.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&body);
    });
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    let _ = writer.join();
    let _ = child.wait();
    out
}

/// A CGI answer as an HTTP response: its `Status` and other headers, then its body.
fn cgi_response(out: Vec<u8>) -> Option<tiny_http::Response<std::io::Cursor<Vec<u8>>>> {
    let (at, gap) = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| out.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)))?;
    let head = String::from_utf8_lossy(&out[..at]).into_owned();
    let payload = out[at + gap..].to_vec();
    let mut status = 200;
    let mut response = tiny_http::Response::from_data(payload);
    for line in head.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        if name.eq_ignore_ascii_case("Status") {
            status = value.trim()[..3].parse().unwrap_or(500);
        } else if let Ok(h) =
            tiny_http::Header::from_bytes(name.trim().as_bytes(), value.trim().as_bytes())
        {
            response.add_header(h);
        }
    }
    Some(response.with_status_code(status))
}
