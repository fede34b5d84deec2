//! A handler's outbound wasi:http requests: every request goes through the
//! network guard, and is then sent over a connection this module makes to
//! the very address the guard checked. The name is looked up once, by the
//! guard; nothing here resolves it again, for HTTP or HTTPS, so a second
//! DNS answer (rebinding) cannot steer the connection elsewhere. For HTTPS
//! the certificate is verified against the requested name (the Web PKI
//! roots), on top of that pinned connection.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep, timeout};
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody};

use super::netguard::{self, Checked, NetPolicy};
use crate::grants::Events;

/// How long a name lookup may take.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);
/// Connect, first-byte and between-bytes timeouts when the guest sets none
/// (wasmtime's defaults); the call's own time limit still bounds them.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// wasi:http hooks that put every outgoing request through the network
/// guard before anything is sent, and send it to the checked address.
pub(crate) struct HttpGuard {
    granted_hosts: Vec<String>,
    net: NetPolicy,
    events: Events,
}

impl HttpGuard {
    /// The guard of a call granted `granted_hosts`, noting what it sends
    /// and denies in `events`.
    pub(crate) fn new(granted_hosts: Vec<String>, net: NetPolicy, events: Events) -> Self {
        HttpGuard {
            granted_hosts,
            net,
            events,
        }
    }
}

type IoFuture = Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>;
type SendResult = wasmtime_wasi_http::Result<(http::Response<WasiBody>, IoFuture)>;

impl wasmtime_wasi_http::WasiHttpHooks for HttpGuard {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: IoFuture,
    ) -> Box<dyn Future<Output = SendResult> + Send> {
        let granted = self.granted_hosts.clone();
        let net = self.net.clone();
        let events = self.events.clone();
        Box::new(async move {
            let _ = fut;
            let uri = request.uri().clone();
            let host = uri.host().unwrap_or("").to_owned();
            let https = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
            let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
            let checked = match netguard::check(&host, port, &granted, &net, RESOLVE_TIMEOUT).await
            {
                Ok(c) => c,
                Err(denied) => {
                    events.note(format!("denied: http {uri}: {denied}"));
                    return Err(Error::HttpRequestDenied);
                }
            };
            events.note(format!(
                "http {} {uri} via {}",
                request.method(),
                checked.addr
            ));
            send_to_checked(request, options, &checked, https).await
        })
    }
}

/// A byte stream to the server: TCP, or TLS over TCP.
trait Stream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Stream for T {}

/// Sends `request` over a new HTTP/1.1 connection to `checked.addr`: TCP,
/// TLS for `https` (server name: `checked.host`), then the request. The
/// response body is bounded by the between-bytes timeout.
async fn send_to_checked(
    mut request: http::Request<WasiBody>,
    options: Option<RequestOptions>,
    checked: &Checked,
    https: bool,
) -> SendResult {
    let timeouts = Timeouts::of(options);
    let (sender, conn) = connect(checked, https, timeouts.connect).await?;

    // The request carries the scheme and authority; the wire gets the
    // origin form (the Host header is already set).
    let path = request
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    *request.uri_mut() = http::Uri::builder()
        .path_and_query(path)
        .build()
        .map_err(|_| Error::HttpRequestUriInvalid)?;

    let (response, conn) = response_head(sender, conn, request, timeouts.first_byte).await?;
    let idle = timeouts.between_bytes;
    let response = response.map(|incoming| {
        TimedBody {
            inner: incoming,
            idle,
            deadline: Box::pin(tokio::time::sleep_until(deadline(idle))),
        }
        .boxed_unsync()
    });
    let io: IoFuture = Box::new(async move {
        match conn {
            None => Ok(()),
            Some(c) => c.await.map_err(|e| {
                if e.is_timeout() {
                    Error::HttpResponseTimeout
                } else {
                    Error::from(e)
                }
            }),
        }
    });
    Ok((response, io))
}

/// The guest's timeouts for one request, [`DEFAULT_TIMEOUT`] where it set
/// none.
struct Timeouts {
    connect: Duration,
    first_byte: Duration,
    between_bytes: Duration,
}

impl Timeouts {
    fn of(options: Option<RequestOptions>) -> Self {
        Timeouts {
            connect: options
                .and_then(|o| o.connect_timeout)
                .unwrap_or(DEFAULT_TIMEOUT),
            first_byte: options
                .and_then(|o| o.first_byte_timeout)
                .unwrap_or(DEFAULT_TIMEOUT),
            between_bytes: options
                .and_then(|o| o.between_bytes_timeout)
                .unwrap_or(DEFAULT_TIMEOUT),
        }
    }
}

type Sender = hyper::client::conn::http1::SendRequest<WasiBody>;
type Connection = hyper::client::conn::http1::Connection<TokioIo<Box<dyn Stream>>, WasiBody>;

/// An HTTP/1.1 connection to `checked.addr`: TCP, TLS for `https` (server
/// name: `checked.host`), then the handshake, each within `limit`.
async fn connect(
    checked: &Checked,
    https: bool,
    limit: Duration,
) -> wasmtime_wasi_http::Result<(Sender, Connection)> {
    let tcp = timeout(limit, TcpStream::connect(checked.addr))
        .await
        .map_err(|_| Error::ConnectionTimeout)?
        .map_err(Error::Connect)?;
    let stream: Box<dyn Stream> = if https {
        let name = rustls::pki_types::ServerName::try_from(checked.host.clone())?;
        let tls = timeout(limit, tls_connector()?.connect(name, tcp))
            .await
            .map_err(|_| Error::ConnectionTimeout)?
            .map_err(Error::Tls)?;
        Box::new(tls)
    } else {
        Box::new(tcp)
    };
    let (sender, conn) = timeout(
        limit,
        hyper::client::conn::http1::handshake(TokioIo::new(stream)),
    )
    .await
    .map_err(|_| Error::ConnectionTimeout)??;
    Ok((sender, conn))
}

/// Sends `request` and waits for the response head, the first byte within
/// `first_byte`. Returns the connection still to be driven (None once it
/// has ended).
async fn response_head(
    mut sender: Sender,
    conn: Connection,
    request: http::Request<WasiBody>,
    first_byte: Duration,
) -> wasmtime_wasi_http::Result<(http::Response<Incoming>, Option<Connection>)> {
    let mut send = Box::pin(async move {
        timeout(first_byte, sender.send_request(request))
            .await
            .map_err(|_| Error::ConnectionReadTimeout)?
            .map_err(Error::from)
    });
    // The connection must be driven while the response is awaited; once
    // the head is in, the caller drives the rest (the returned future).
    let mut conn = Some(conn);
    let response = poll_fn(|cx: &mut Context<'_>| {
        if let Poll::Ready(r) = send.as_mut().poll(cx) {
            return Poll::Ready(r);
        }
        let Some(c) = conn.as_mut() else {
            return Poll::Pending;
        };
        match Pin::new(c).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(e)) => {
                conn = None;
                Poll::Ready(Err(Error::from(e)))
            }
            Poll::Ready(Ok(())) => {
                conn = None;
                send.as_mut().poll(cx)
            }
        }
    })
    .await?;
    Ok((response, conn))
}

/// The Web PKI roots, the ring provider, no client certificate; built once.
fn tls_connector() -> Result<tokio_rustls::TlsConnector, Error> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.into(),
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map(|b| Arc::new(b.with_root_certificates(roots).with_no_client_auth()))
            .map_err(|e| e.to_string())
    });
    match config {
        Ok(c) => Ok(tokio_rustls::TlsConnector::from(c.clone())),
        Err(e) => Err(Error::InternalError(Some(format!("TLS setup: {e}")))),
    }
}

/// `idle` from now, or far in the future when that overflows.
fn deadline(idle: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(idle)
        .unwrap_or_else(|| now + Duration::from_secs(30 * 365 * 86_400))
}

/// A response body that fails once no frame arrives for `idle`.
struct TimedBody {
    inner: Incoming,
    idle: Duration,
    deadline: Pin<Box<Sleep>>,
}

impl Body for TimedBody {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let next = deadline(this.idle);
                this.deadline.as_mut().reset(next);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) if e.is_timeout() => {
                Poll::Ready(Some(Err(Error::HttpResponseTimeout)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(Error::from(e)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(Error::ConnectionReadTimeout))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
