//! `http_fetch`: GET or POST to a host the skill may reach, through the
//! same resolved-address guard as the sandbox. The connection goes to the
//! address that was checked: the client's resolver answers every name with
//! that address and nothing else (so no spelling of the name, such as one
//! with a trailing dot, reaches a second lookup), and no proxy is used.
//! Redirects are not followed: each hop would need its own check.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::builtin::Builtin;
use super::{CallContext, Denied, Offer, ToolError, Toolbox, str_arg};
use crate::grants::netguard;
use crate::types::FailureClass;

const MAX_BODY: usize = 1 << 20;
const TIMEOUT: Duration = Duration::from_secs(30);

pub(super) const HTTP_FETCH: Builtin = Builtin {
    name: "http_fetch",
    description: "Fetch a URL over HTTP(S) with GET or POST; only hosts granted to the skill, never internal addresses.",
    parameters: || {
        json!({
            "type": "object",
            "properties": {
                "url": { "type": "string" },
                "method": { "type": "string", "enum": ["GET", "POST"], "default": "GET" },
                "body": { "type": "string", "description": "Request body for POST" },
                "content_type": { "type": "string", "description": "Content-Type of the body" }
            },
            "required": ["url"]
        })
    },
    confined: false,
    offer: Offer::Granted(|grants| !grants.http.is_empty()),
    authorize: |_, cx, args| authorize(cx, args),
    call: |tools, cx, args| Box::pin(fetch(tools, cx, args)),
};

/// The grant check: the URL's host is one the skill may reach.
fn authorize(cx: &CallContext<'_>, args: &Value) -> Result<(), Denied> {
    let url = args.get("url").and_then(Value::as_str).unwrap_or("");
    let (_, host, _) = parse_url(url).map_err(Denied::Url)?;
    if netguard::host_granted(&host, &cx.grants.http) {
        Ok(())
    } else {
        Err(netguard::NetDenied::HostNotGranted(host).into())
    }
}

async fn fetch(tools: &Toolbox, cx: &CallContext<'_>, args: Value) -> Result<Value, ToolError> {
    let url = str_arg(&args, "url")?;
    let method = method_of(&args)?;
    let (parsed, host, port) = parse_url(url)?;
    let checked = netguard::check(
        &host,
        port,
        &cx.grants.http,
        &tools.net,
        Duration::from_secs(5),
    )
    .await
    .map_err(Denied::Net)?;
    let client = pinned_client(checked.addr)?;
    let mut req = if method == "POST" {
        client.post(parsed)
    } else {
        client.get(parsed)
    };
    if let Some(body) = args.get("body").and_then(Value::as_str) {
        req = req.body(body.to_owned());
    }
    if let Some(ct) = args.get("content_type").and_then(Value::as_str) {
        req = req.header(reqwest::header::CONTENT_TYPE, ct);
    }
    let resp = req
        .send()
        .await
        .map_err(|e| ToolError::failed(FailureClass::HttpError, format!("{url}: {e}")))?;
    read_response(resp, url).await
}

/// `method`, GET (the default) or POST.
fn method_of(args: &Value) -> Result<String, ToolError> {
    let method = args
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or("GET")
        .to_ascii_uppercase();
    if method != "GET" && method != "POST" {
        return Err(ToolError::InvalidArguments(format!(
            "method must be GET or POST, got {method}"
        )));
    }
    Ok(method)
}

/// A client that connects only to `addr`, the address the network check
/// passed (no proxy, no redirect followed).
fn pinned_client(addr: std::net::SocketAddr) -> Result<reqwest::Client, ToolError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(TIMEOUT)
        .no_proxy()
        .dns_resolver(Arc::new(Pinned(addr)))
        .build()
        .map_err(|e| ToolError::failed(FailureClass::HttpError, e.to_string()))
}

/// The tool's result: the status, the content type and the body, cut at
/// [`MAX_BODY`] bytes.
async fn read_response(mut resp: reqwest::Response, url: &str) -> Result<Value, ToolError> {
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let mut body = Vec::new();
    let mut truncated = false;
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| ToolError::failed(FailureClass::HttpError, format!("{url}: {e}")))?
    {
        if body.len() + chunk.len() > MAX_BODY {
            body.extend_from_slice(&chunk[..MAX_BODY - body.len()]);
            truncated = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(json!({
        "status": status,
        "content_type": content_type,
        "body": String::from_utf8_lossy(&body),
        "truncated": truncated,
    }))
}

/// A resolver that answers every name with the address the guard checked.
struct Pinned(SocketAddr);

impl reqwest::dns::Resolve for Pinned {
    fn resolve(&self, _name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let addr = self.0;
        Box::pin(async move { Ok(Box::new(std::iter::once(addr)) as reqwest::dns::Addrs) })
    }
}

/// Why a URL cannot be fetched, whatever the grants.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("`{url}` is not a URL: {reason}")]
    NotAUrl {
        url: String,
        reason: url::ParseError,
    },
    #[error("only http and https URLs, not `{0}`")]
    Scheme(String),
    #[error("`{0}` has no host")]
    NoHost(String),
    #[error("`{0}` has no port")]
    NoPort(String),
}

impl From<UrlError> for ToolError {
    fn from(e: UrlError) -> Self {
        ToolError::InvalidArguments(e.to_string())
    }
}

fn parse_url(url: &str) -> Result<(reqwest::Url, String, u16), UrlError> {
    let parsed = reqwest::Url::parse(url).map_err(|reason| UrlError::NotAUrl {
        url: url.to_owned(),
        reason,
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(UrlError::Scheme(parsed.scheme().to_owned()));
    }
    let host = parsed
        .host_str()
        .ok_or_else(|| UrlError::NoHost(url.to_owned()))?
        .to_owned();
    let port = parsed
        .port_or_known_default()
        .ok_or_else(|| UrlError::NoPort(url.to_owned()))?;
    Ok((parsed, host, port))
}
