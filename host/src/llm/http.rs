//! The HTTP layer both network providers share: one POST with a timeout,
//! retries with backoff on 429 and 5xx (honouring `Retry-After`), and
//! errors that name the URL and the cause.
//!
//! Transport failures are not retried: "connection refused" almost always
//! means the server is not running (a local Ollama that was not started),
//! and a timeout has already spent the whole budget; retrying either would
//! only make the user wait longer for the same answer (and a server that
//! timed out is often still generating the abandoned answer, so a retry
//! would queue behind it). The whole call, attempts and waits between
//! them, is bounded by `total_timeout`: no attempt runs past it, and no
//! retry starts whose wait would end past it.
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};

use super::{LlmError, excerpt};

/// How patient the network providers are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    /// Budget for one attempt, from connecting to the last byte.
    pub timeout: Duration,
    /// Budget for the whole call: every attempt and every wait between
    /// attempts.
    pub total_timeout: Duration,
    /// Extra attempts after a 429 or 5xx (0 = try once).
    pub max_retries: u32,
    /// First backoff delay; doubles on every retry (with jitter).
    pub backoff_base: Duration,
    /// Largest backoff delay when the server gave no `Retry-After`.
    pub backoff_cap: Duration,
    /// Largest wait a server's `Retry-After` can impose; a server asking
    /// for an hour should not freeze a run for an hour.
    pub retry_after_cap: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            timeout: Duration::from_secs(60),
            total_timeout: Duration::from_secs(120),
            max_retries: 3,
            backoff_base: Duration::from_millis(500),
            backoff_cap: Duration::from_secs(8),
            retry_after_cap: Duration::from_secs(60),
        }
    }
}

/// What replaces the API key in a message.
const REDACTED: &str = "[redacted]";

/// Takes the API key out of every error a provider returns. Servers quote
/// the key they were sent (`Incorrect API key provided: Bearer sk-...`),
/// and an error message ends up on stderr, in `--json` output and in the
/// store. The exact key is removed, which also covers its `Bearer` form,
/// and so is its JSON-escaped spelling, as it appears in a raw body.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    secrets: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secret form(s))", self.secrets.len())
    }
}

impl Redactor {
    pub(crate) fn new(key: Option<&str>) -> Self {
        let mut secrets = Vec::new();
        if let Some(key) = key.map(str::trim).filter(|k| !k.is_empty()) {
            secrets.push(key.to_owned());
            if let Ok(quoted) = serde_json::to_string(key) {
                let escaped = &quoted[1..quoted.len() - 1];
                if escaped != key {
                    secrets.push(escaped.to_owned());
                }
            }
        }
        Redactor { secrets }
    }

    /// `text` with every occurrence of the key replaced.
    pub(crate) fn text(&self, text: &str) -> String {
        self.secrets.iter().fold(text.to_owned(), |t, secret| {
            t.replace(secret.as_str(), REDACTED)
        })
    }

    /// The same error with the key taken out of every text it carries.
    pub(crate) fn error(&self, mut e: LlmError) -> LlmError {
        if self.secrets.is_empty() {
            return e;
        }
        let scrub = |s: &mut String| *s = self.text(s);
        // Exhaustive on purpose, fields too: a new one must say what it carries.
        match &mut e {
            LlmError::Timeout {
                url,
                timeout: _,
                setting: _,
            } => scrub(url),
            LlmError::Status {
                status: _,
                url,
                attempts: _,
                excerpt,
            }
            | LlmError::RateLimited {
                url,
                attempts: _,
                excerpt,
            } => {
                scrub(url);
                scrub(excerpt);
            }
            LlmError::Unreachable { url: a, cause: b }
            | LlmError::Protocol { url: a, what: b }
            | LlmError::InvalidScript { path: a, reason: b } => {
                scrub(a);
                scrub(b);
            }
            LlmError::Config(m) | LlmError::Scripted(m) => scrub(m),
            LlmError::ScriptExhausted { path, turns: _ } => scrub(path),
        }
        e
    }
}

/// A reqwest client plus the retry policy, and the key to keep out of
/// every error.
#[derive(Debug, Clone)]
pub(crate) struct HttpClient {
    client: reqwest::Client,
    opts: HttpOptions,
    redactor: Redactor,
}

impl HttpClient {
    /// `api_key` is the key the provider sends, if any: it is scrubbed
    /// from every error (see [`HttpClient::scrub`]).
    pub(crate) fn new(opts: HttpOptions, api_key: Option<&str>) -> Result<Self, LlmError> {
        let client = reqwest::Client::builder()
            .timeout(opts.timeout)
            .connect_timeout(opts.timeout.min(Duration::from_secs(10)))
            // A redirect to another host would carry `x-api-key` along
            // (reqwest only strips `Authorization`); an API endpoint that
            // redirects is misconfigured anyway, so surface it instead.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("skillhost/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Config(format!("cannot create the HTTP client: {e}")))?;
        Ok(HttpClient {
            client,
            opts,
            redactor: Redactor::new(api_key),
        })
    }

    /// One chat exchange: encodes `body`, POSTs it with retries, parses the
    /// answer with the provider's `parse`, and records the sizes. Every
    /// error leaves here with the key taken out, whatever made it
    /// (encoding, transport, status, a malformed answer).
    pub(crate) async fn chat(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &serde_json::Value,
        parse: fn(&str, &[u8]) -> Result<super::ChatResponse, LlmError>,
    ) -> Result<super::ChatResponse, LlmError> {
        let answered = async {
            let body = serde_json::to_vec(body)
                .map_err(|e| LlmError::Config(format!("cannot encode the request: {e}")))?;
            let request_bytes = body.len();
            let (reply, retries) = self.post_json(url, headers, body).await?;
            let mut resp = parse(url, &reply)?;
            resp.request_bytes = request_bytes;
            resp.response_bytes = reply.len();
            resp.retries = retries;
            Ok(resp)
        }
        .await;
        answered.map_err(|e| self.redactor.error(e))
    }

    /// POSTs `body` as JSON to `url` and returns the body of the first
    /// successful answer, and how many attempts were repeated before it.
    /// Only a 429 or 5xx is retried, and only while the wait before the
    /// next attempt ends within the call's `total_timeout`.
    pub(crate) async fn post_json(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: Vec<u8>,
    ) -> Result<(Vec<u8>, u32), LlmError> {
        let deadline = Instant::now() + self.opts.total_timeout;
        let attempts = self.opts.max_retries.saturating_add(1);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (status, retry_after, bytes) =
                self.attempt(url, headers, body.clone(), deadline).await?;
            if status.is_success() {
                return Ok((bytes, attempt - 1));
            }
            let retryable = status.as_u16() == 429 || status.is_server_error();
            let wait = self.delay(attempt, retry_after);
            let left = deadline.saturating_duration_since(Instant::now());
            if retryable && attempt < attempts && wait < left {
                tokio::time::sleep(wait).await;
                continue;
            }
            return Err(self.status_error(url, status.as_u16(), attempt, &bytes));
        }
    }

    /// One POST, cut at the attempt's timeout or at `deadline`, whichever
    /// comes first: the status, the server's `Retry-After` and the body.
    async fn attempt(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: Vec<u8>,
        deadline: Instant,
    ) -> Result<(reqwest::StatusCode, Option<Duration>, Vec<u8>), LlmError> {
        let left = deadline.saturating_duration_since(Instant::now());
        // The budget an error names: the call's when it is what cut this
        // attempt short.
        let (timeout, budget, setting) = if left < self.opts.timeout {
            (left, self.opts.total_timeout, "total_timeout_ms")
        } else {
            (self.opts.timeout, self.opts.timeout, "timeout_ms")
        };
        let failed = |e: reqwest::Error| self.transport_error(url, &e, budget, setting);
        let resp = self
            .client
            .post(url)
            .headers(headers.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .body(body)
            .timeout(timeout)
            .send()
            .await
            .map_err(failed)?;
        let status = resp.status();
        let retry_after = retry_after(resp.headers(), SystemTime::now());
        let bytes = resp.bytes().await.map_err(failed)?;
        Ok((status, retry_after, bytes.to_vec()))
    }

    /// The error for a final non-success status.
    fn status_error(&self, url: &str, code: u16, attempts: u32, body: &[u8]) -> LlmError {
        // Before the excerpt is cut, so no piece of the key is left.
        let excerpt = error_excerpt(
            self.redactor
                .text(&String::from_utf8_lossy(body))
                .as_bytes(),
        );
        let url = url.to_string();
        if code == 429 {
            LlmError::RateLimited {
                url,
                attempts,
                excerpt,
            }
        } else {
            LlmError::Status {
                status: code,
                url,
                attempts,
                excerpt,
            }
        }
    }

    /// The wait before attempt `attempt + 1`: the server's `Retry-After`
    /// when it gave one (capped), else exponential backoff with jitter so
    /// that many clients hit by the same outage do not retry in lockstep.
    fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(d) = retry_after {
            return d.min(self.opts.retry_after_cap);
        }
        let exp = 2u32.saturating_pow(attempt.saturating_sub(1));
        let nominal = self.opts.backoff_base.saturating_mul(exp);
        // Jitter in [0.8, 1.2) of the nominal delay.
        let jittered = nominal.mul_f64(0.8 + 0.4 * unit_random());
        jittered.min(self.opts.backoff_cap)
    }

    /// `timeout` is the budget that ran out, and `setting` its key.
    fn transport_error(
        &self,
        url: &str,
        e: &reqwest::Error,
        timeout: Duration,
        setting: &'static str,
    ) -> LlmError {
        if e.is_timeout() {
            LlmError::Timeout {
                url: url.to_string(),
                timeout,
                setting,
            }
        } else {
            LlmError::Unreachable {
                url: url.to_string(),
                cause: root_cause(e),
            }
        }
    }
}

/// The innermost cause of a transport error ("Connection refused (os
/// error 111)"), which is what the user can act on; the outer layers only
/// repeat that a request failed.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// The API's own error message when the body carries one (OpenAI and
/// Anthropic: `{"error": {"message": ...}}`, Ollama: `{"error": "..."}`),
/// else the start of the body.
pub(crate) fn error_excerpt(body: &[u8]) -> String {
    const MAX: usize = 300;
    let text = String::from_utf8_lossy(body);
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
        let msg = v
            .pointer("/error/message")
            .or_else(|| v.get("error").filter(|e| e.is_string()))
            .or_else(|| v.get("message"))
            .and_then(|m| m.as_str());
        if let Some(m) = msg {
            return excerpt(m, MAX);
        }
    }
    if text.trim().is_empty() {
        "(empty body)".to_string()
    } else {
        excerpt(&text, MAX)
    }
}

/// How long the server asked us to wait: `retry-after-ms` (OpenAI) or
/// `Retry-After` as seconds or an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let v = get("retry-after")?;
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e9)));
    }
    let at = parse_http_date(v)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the only date
/// form RFC 9110 asks senders to produce.
fn parse_http_date(s: &str) -> Option<SystemTime> {
    let parts: Vec<&str> = s.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let day: u32 = day.parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as u32
        + 1;
    let year: i64 = year.parse().ok()?;
    let mut hms = time.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, sec) = (hms.next()??, hms.next()??, hms.next()??);
    if hms.next().is_some() || !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = u64::try_from(days).ok()? * 86_400 + h * 3600 + m * 60 + sec;
    Some(UNIX_EPOCH + Duration::from_secs(secs))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A number in [0, 1) that differs between calls; good enough for jitter
/// without pulling in a random number crate.
fn unit_random() -> f64 {
    let mut h = RandomState::new().build_hasher();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    h.write_u128(nanos);
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).expect("test header"));
        }
        h
    }

    #[test]
    fn retry_after_seconds_ms_and_date() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770); // 1994-11-06 08:49:30
        assert_eq!(
            retry_after(&headers(&[("retry-after", "2")]), now),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            retry_after(
                &headers(&[("retry-after-ms", "250"), ("retry-after", "9")]),
                now
            ),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            retry_after(
                &headers(&[("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")]),
                now
            ),
            Some(Duration::from_secs(7))
        );
        // A date in the past means "now".
        assert_eq!(
            retry_after(
                &headers(&[("retry-after", "Sun, 06 Nov 1994 08:00:00 GMT")]),
                now
            ),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")]), now), None);
        assert_eq!(retry_after(&headers(&[("retry-after", "-3")]), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn http_date_epoch_math() {
        assert_eq!(
            parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"),
            Some(UNIX_EPOCH)
        );
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(UNIX_EPOCH + Duration::from_secs(784_111_777))
        );
        assert_eq!(parse_http_date("Sun, 06 Foo 1994 08:49:37 GMT"), None);
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49 GMT"), None);
    }

    #[test]
    fn backoff_grows_is_capped_and_obeys_retry_after_cap() {
        let c = HttpClient::new(
            HttpOptions {
                backoff_base: Duration::from_millis(500),
                backoff_cap: Duration::from_secs(2),
                retry_after_cap: Duration::from_secs(60),
                ..HttpOptions::default()
            },
            None,
        )
        .expect("client");
        let d1 = c.delay(1, None);
        assert!(
            d1 >= Duration::from_millis(400) && d1 < Duration::from_millis(600),
            "{d1:?}"
        );
        let d2 = c.delay(2, None);
        assert!(
            d2 >= Duration::from_millis(800) && d2 < Duration::from_millis(1200),
            "{d2:?}"
        );
        assert!(c.delay(10, None) <= Duration::from_secs(2));
        assert_eq!(
            c.delay(1, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert_eq!(
            c.delay(1, Some(Duration::from_secs(3600))),
            Duration::from_secs(60)
        );
    }

    #[test]
    fn the_key_is_taken_out_of_every_error() {
        let key = "sk-live-\"quoted\"-0123456789";
        let r = Redactor::new(Some(&format!("  {key} ")));
        let escaped = r#"sk-live-\"quoted\"-0123456789"#;
        let quoted = format!("Incorrect API key provided: Bearer {key}; raw body: {escaped}");
        let errors = [
            LlmError::Status {
                status: 401,
                url: "http://h/v1".into(),
                attempts: 1,
                excerpt: quoted.clone(),
            },
            LlmError::RateLimited {
                url: "http://h/v1".into(),
                attempts: 3,
                excerpt: quoted.clone(),
            },
            LlmError::Protocol {
                url: "http://h/v1".into(),
                what: quoted.clone(),
            },
            LlmError::Unreachable {
                url: "http://h/v1".into(),
                cause: quoted.clone(),
            },
            LlmError::Config(quoted.clone()),
            LlmError::Scripted(quoted.clone()),
        ];
        for e in errors {
            let e = r.error(e);
            let shown = format!("{e} {e:?}");
            assert!(!shown.contains(key) && !shown.contains(escaped), "{shown}");
            assert!(
                shown.contains("Bearer [redacted]; raw body: [redacted]"),
                "{shown}"
            );
        }
        // No key, nothing to take out; and the redactor never shows it.
        assert_eq!(Redactor::new(None).text("Bearer x"), "Bearer x");
        assert_eq!(Redactor::new(Some("  ")).text("a  b"), "a  b");
        assert!(!format!("{r:?}").contains("sk-live"));
    }

    #[test]
    fn error_excerpt_prefers_api_message() {
        assert_eq!(
            error_excerpt(
                br#"{"error":{"message":"Invalid model","type":"invalid_request_error"}}"#
            ),
            "Invalid model"
        );
        assert_eq!(
            error_excerpt(
                br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
        );
        assert_eq!(
            error_excerpt(br#"{"error":"model 'x' not found"}"#),
            "model 'x' not found"
        );
        assert_eq!(
            error_excerpt(b"<html>Bad gateway</html>"),
            "<html>Bad gateway</html>"
        );
        assert_eq!(error_excerpt(b""), "(empty body)");
        assert_eq!(error_excerpt(&[b'x'; 1000]).chars().count(), 301);
    }
}
