//! How Quartermaster talks to a forge's HTTP API without hammering it or giving up too early.
//!
//! Shared by the GitHub and GitLab adapters (their clients differ; the policy does not):
//! - 5xx answers and network errors are retried with capped exponential backoff, but only for
//!   requests that are safe to repeat. A create (POST) that failed this way may still have been
//!   processed, so its caller first looks for what it may have made ([`recover_create`]);
//! - rate limits (429, or 403 with `retry-after` / an exhausted `x-ratelimit-remaining`) are waited
//!   out when the forge says how long and the wait is bounded; a longer wait exhausts the budget,
//!   after which every call fails at once with the reason, so the run ends with a report instead of
//!   hanging;
//! - writes are paced: at least `write_interval` apart and at most 80 a minute, 500 an hour (GitHub's
//!   documented content-creation limits; GitLab's defaults are looser).

use super::ForgeError;
use http::HeaderMap;
use std::collections::VecDeque;
use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Why one attempt got no answer at all.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SendError {
    #[error("no answer within {}s", .0.as_secs())]
    Timeout(Duration),
    /// The HTTP client's own error (connection, TLS, a body that could not be read).
    #[error(transparent)]
    Client(Box<dyn std::error::Error + Send + Sync>),
}

impl SendError {
    pub(crate) fn client(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Client(Box::new(e))
    }
}

/// Tunables; the defaults suit a weekly CI job. Tests shrink the delays.
#[derive(Debug, Clone)]
pub struct RequestPolicy {
    /// Tries per request, the first included.
    pub attempts: u32,
    /// First backoff; doubled each retry, capped at 8 times this.
    pub backoff: Duration,
    /// Longest rate-limit wait honoured; longer means the budget is exhausted.
    pub max_wait: Duration,
    /// Minimum time between two writes.
    pub write_interval: Duration,
    pub writes_per_minute: usize,
    pub writes_per_hour: usize,
}

impl RequestPolicy {
    /// The wait before retry number `attempt` (1: after the first try): doubling, capped at 8
    /// times the first.
    pub fn backoff(&self, attempt: u32) -> Duration {
        self.backoff * (1u32 << attempt.saturating_sub(1).min(3))
    }
}

impl Default for RequestPolicy {
    fn default() -> Self {
        Self {
            attempts: 4,
            backoff: Duration::from_millis(500),
            max_wait: Duration::from_secs(90),
            write_interval: Duration::from_secs(1),
            writes_per_minute: 80,
            writes_per_hour: 500,
        }
    }
}

/// A response, as the policy needs to see it.
#[derive(Debug, Clone)]
pub(crate) struct RawResponse {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: String,
}

impl RawResponse {
    pub(crate) fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

#[derive(Default)]
struct Pacing {
    writes: VecDeque<Instant>,
    exhausted: Option<String>,
}

/// The policy plus the state it keeps across requests.
pub(crate) struct Resilience {
    policy: RequestPolicy,
    pacing: Mutex<Pacing>,
    requests: AtomicU64,
}

impl Resilience {
    pub(crate) fn new(policy: RequestPolicy) -> Self {
        Self {
            policy,
            pacing: Mutex::new(Pacing::default()),
            requests: AtomicU64::new(0),
        }
    }

    /// How many HTTP requests were sent.
    pub(crate) fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    fn exhausted(&self) -> Option<String> {
        self.pacing.lock().expect("pacing lock").exhausted.clone()
    }

    fn exhaust(&self, reason: &str) {
        self.pacing.lock().expect("pacing lock").exhausted = Some(reason.to_string());
    }

    /// Waits until a write is allowed; fails when the hourly budget is spent.
    async fn pace(&self) -> Result<(), ForgeError> {
        let wait = {
            let mut p = self.pacing.lock().expect("pacing lock");
            let now = Instant::now();
            while p
                .writes
                .front()
                .is_some_and(|t| now.duration_since(*t) > Duration::from_secs(3600))
            {
                p.writes.pop_front();
            }
            if p.writes.len() >= self.policy.writes_per_hour {
                let reason = format!(
                    "Quartermaster's write budget of {} requests an hour is spent",
                    self.policy.writes_per_hour
                );
                p.exhausted = Some(reason.clone());
                return Err(ForgeError::RateLimited(reason));
            }
            let last_minute: Vec<&Instant> = p
                .writes
                .iter()
                .filter(|t| now.duration_since(**t) < Duration::from_secs(60))
                .collect();
            let by_minute = if last_minute.len() >= self.policy.writes_per_minute {
                (*last_minute[0] + Duration::from_secs(60)).saturating_duration_since(now)
            } else {
                Duration::ZERO
            };
            let by_interval = p
                .writes
                .back()
                .map(|t| (*t + self.policy.write_interval).saturating_duration_since(now))
                .unwrap_or(Duration::ZERO);
            let wait = by_minute.max(by_interval);
            p.writes.push_back(now + wait);
            wait
        };
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        Ok(())
    }

    /// Sends one request through the policy. `send` performs a single attempt; `repeatable` says
    /// whether a 5xx or network failure may be retried blindly. Non-2xx answers other than rate
    /// limits and retried 5xx come back as `Ok` for the caller to interpret.
    pub(crate) async fn send<F, Fut>(
        &self,
        write: bool,
        repeatable: bool,
        send: F,
    ) -> Result<RawResponse, ForgeError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<RawResponse, SendError>>,
    {
        // After a signal no request starts, and none in flight (or waiting out a rate limit)
        // holds the run back.
        if let Some(signal) = crate::harden::cancelled() {
            return Err(ForgeError::Cancelled(signal));
        }
        tokio::select! {
            answer = self.attempts(write, repeatable, send) => answer,
            signal = until_cancelled() => Err(ForgeError::Cancelled(signal)),
        }
    }

    async fn attempts<F, Fut>(
        &self,
        write: bool,
        repeatable: bool,
        mut send: F,
    ) -> Result<RawResponse, ForgeError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<RawResponse, SendError>>,
    {
        let mut attempt = 0;
        loop {
            attempt += 1;
            if let Some(reason) = self.exhausted() {
                return Err(ForgeError::RateLimited(reason));
            }
            if write {
                self.pace().await?;
            }
            self.requests.fetch_add(1, Ordering::Relaxed);
            let last = attempt >= self.policy.attempts;
            match send().await {
                Err(e) if repeatable && !last => {
                    tracing::warn!("network error ({e}); retrying");
                    tokio::time::sleep(self.policy.backoff(attempt)).await;
                }
                Err(e) => return Err(ForgeError::Transport(e.into())),
                Ok(r) if r.ok() => return Ok(r),
                Ok(r) => {
                    if let Some(wait) = rate_limit_wait(&r) {
                        let message = format!(
                            "the forge asked to wait {}s ({})",
                            wait.as_secs(),
                            short_message(&r.body)
                        );
                        if wait > self.policy.max_wait {
                            let reason = format!(
                                "{message}, longer than the {}s Quartermaster waits; the remaining forge calls of this run are skipped",
                                self.policy.max_wait.as_secs()
                            );
                            self.exhaust(&reason);
                            return Err(ForgeError::RateLimited(reason));
                        }
                        if last {
                            return Err(ForgeError::RateLimited(message));
                        }
                        tracing::warn!("rate limited: {message}");
                        tokio::time::sleep(wait).await;
                    } else if r.status >= 500 && repeatable && !last {
                        tracing::warn!("server error {}; retrying", r.status);
                        tokio::time::sleep(self.policy.backoff(attempt)).await;
                    } else {
                        return Ok(r);
                    }
                }
            }
        }
    }
}

/// Returns once a signal stops the run, with the signal.
async fn until_cancelled() -> i32 {
    loop {
        if let Some(signal) = crate::harden::cancelled() {
            return signal;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// How long a rate-limited answer asks to wait, or `None` if it is not a rate limit.
pub(crate) fn rate_limit_wait(r: &RawResponse) -> Option<Duration> {
    let header = |name: &str| {
        r.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    let retry_after = header("retry-after");
    let exhausted =
        header("x-ratelimit-remaining") == Some(0) || header("ratelimit-remaining") == Some(0);
    let secondary = r.body.to_ascii_lowercase().contains("secondary rate limit");
    let limited =
        r.status == 429 || (r.status == 403 && (retry_after.is_some() || exhausted || secondary));
    if !limited {
        return None;
    }
    if let Some(seconds) = retry_after {
        return Some(Duration::from_secs(seconds));
    }
    let reset = header("x-ratelimit-reset").or_else(|| header("ratelimit-reset"));
    if let Some(epoch) = reset {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        return Some(Duration::from_secs(epoch.saturating_sub(now).max(1)));
    }
    // GitHub: "wait at least one minute" when a secondary limit gives no header.
    Some(Duration::from_secs(60))
}

/// The forge's own `message` (or `error`), else the start of the body.
pub(crate) fn short_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let pick = |key: &str| {
        parsed.as_ref().and_then(|v| v.get(key)).map(|m| match m {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    pick("message")
        .or_else(|| pick("error"))
        .unwrap_or_else(|| crate::finding::clip(body.trim()))
}

/// A create that may have happened although the answer was lost: on a transient failure, look
/// for the object before trying again, so a retried POST never makes a duplicate.
pub(crate) async fn recover_create<T, C, CF, L, LF>(
    attempts: u32,
    backoff: Duration,
    mut create: C,
    mut look: L,
) -> Result<T, ForgeError>
where
    C: FnMut() -> CF,
    CF: Future<Output = Result<T, ForgeError>>,
    L: FnMut() -> LF,
    LF: Future<Output = Result<Option<T>, ForgeError>>,
{
    let mut attempt = 0;
    loop {
        attempt += 1;
        match create().await {
            Ok(made) => return Ok(made),
            Err(e) if e.is_transient() && attempt < attempts => {
                tracing::warn!("create failed ({e}); checking whether it happened anyway");
                if let Some(made) = look().await? {
                    return Ok(made);
                }
                tokio::time::sleep(backoff * attempt).await;
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, headers: &[(&str, &str)], body: &str) -> RawResponse {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.insert(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        RawResponse {
            status,
            headers: map,
            body: body.into(),
        }
    }

    #[test]
    fn recognises_rate_limits() {
        assert_eq!(
            rate_limit_wait(&response(429, &[("retry-after", "3")], "")),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            rate_limit_wait(&response(
                403,
                &[],
                r#"{"message":"You have exceeded a secondary rate limit"}"#
            )),
            Some(Duration::from_secs(60))
        );
        let soon = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 5;
        let wait = rate_limit_wait(&response(
            403,
            &[
                ("x-ratelimit-remaining", "0"),
                ("x-ratelimit-reset", &soon.to_string()),
            ],
            "",
        ))
        .unwrap();
        assert!(
            wait <= Duration::from_secs(5) && wait >= Duration::from_secs(3),
            "{wait:?}"
        );
        assert_eq!(
            rate_limit_wait(&response(
                403,
                &[],
                r#"{"message":"Resource not accessible by integration"}"#
            )),
            None
        );
        assert_eq!(rate_limit_wait(&response(502, &[], "")), None);
    }

    fn quick() -> RequestPolicy {
        RequestPolicy {
            attempts: 3,
            backoff: Duration::from_millis(1),
            max_wait: Duration::from_secs(2),
            write_interval: Duration::ZERO,
            writes_per_minute: 80,
            writes_per_hour: 3,
        }
    }

    #[tokio::test]
    async fn retries_server_errors_only_when_repeatable() {
        let r = Resilience::new(quick());
        let mut answers = vec![response(200, &[], "ok"), response(502, &[], "")];
        let got = r
            .send(false, true, || {
                let a = answers.pop().unwrap();
                async move { Ok(a) }
            })
            .await
            .unwrap();
        assert_eq!(got.body, "ok");
        assert_eq!(r.requests(), 2);
        let got = r
            .send(true, false, || async { Ok(response(502, &[], "")) })
            .await
            .unwrap();
        assert_eq!(got.status, 502, "a POST's 5xx goes back to its caller");
    }

    #[tokio::test]
    async fn a_long_rate_limit_exhausts_the_budget() {
        let r = Resilience::new(quick());
        let err = r
            .send(false, true, || async {
                Ok(response(429, &[("retry-after", "3600")], "{}"))
            })
            .await
            .unwrap_err();
        assert!(err.to_string().contains("asked to wait 3600s"), "{err}");
        let again = r
            .send(false, true, || async { Ok(response(200, &[], "")) })
            .await;
        assert!(matches!(again, Err(ForgeError::RateLimited(_))));
        assert_eq!(r.requests(), 1, "no request after exhaustion");
    }

    #[tokio::test]
    async fn the_hourly_write_budget_is_enforced() {
        let r = Resilience::new(quick());
        for _ in 0..3 {
            r.send(true, false, || async { Ok(response(201, &[], "")) })
                .await
                .unwrap();
        }
        let err = r
            .send(true, false, || async { Ok(response(201, &[], "")) })
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("write budget of 3 requests an hour"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn recovery_finds_what_a_lost_create_made() {
        let mut creates = 0;
        let made = recover_create(
            3,
            Duration::from_millis(1),
            || {
                creates += 1;
                async {
                    Err::<u32, _>(ForgeError::Api {
                        status: 502,
                        message: "bad gateway".into(),
                    })
                }
            },
            || async { Ok(Some(7)) },
        )
        .await
        .unwrap();
        assert_eq!((made, creates), (7, 1));
    }
}
