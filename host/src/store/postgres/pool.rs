//! Connections to the PostgreSQL server: the URL read and checked, TLS set
//! up, and a few connections kept open for the store's calls.

use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use futures::executor::block_on;
use tokio_postgres::Client;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::store::StoreError;
// A connection left mid-call by a panic is closed or idle: either way
// usable (a closed one is reopened).
use crate::types::lock;

/// Connections one store keeps open at most; each is opened when needed.
const POOL_SIZE: usize = 4;

/// How long connecting may take when the URL does not say.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A few connections, each opened on first need and again after it broke.
pub(super) struct Pool {
    pub(super) config: tokio_postgres::Config,
    /// Used when the URL asks for TLS (`sslmode=require`); otherwise the
    /// connection is plain TCP and this is never called.
    pub(super) tls: MakeRustlsConnect,
    pub(super) location: String,
    /// Where the URL came from, for errors.
    setting: &'static str,
    /// Drives the connections; `None` only while dropping.
    pub(super) runtime: Option<tokio::runtime::Runtime>,
    slots: Vec<Mutex<Option<Client>>>,
    next: AtomicUsize,
}

/// A connection taken from the pool for one call.
pub(super) struct Conn<'a>(MutexGuard<'a, Option<Client>>);

impl std::ops::Deref for Conn<'_> {
    type Target = Client;
    #[allow(
        clippy::expect_used,
        reason = "the pool hands out connected slots only"
    )]
    fn deref(&self) -> &Client {
        self.0
            .as_ref()
            .expect("the pool hands out connected slots only")
    }
}

impl std::ops::DerefMut for Conn<'_> {
    #[allow(
        clippy::expect_used,
        reason = "the pool hands out connected slots only"
    )]
    fn deref_mut(&mut self) -> &mut Client {
        self.0
            .as_mut()
            .expect("the pool hands out connected slots only")
    }
}

/// `host:port/database` of a connection config, for messages: never the
/// password.
fn describe(config: &tokio_postgres::Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(name) => name.clone(),
            tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config
        .get_dbname()
        .or(config.get_user())
        .unwrap_or_default();
    let tls = match config.get_ssl_mode() {
        tokio_postgres::config::SslMode::Require => " (TLS)",
        _ => "",
    };
    format!("postgres://{host}:{port}/{db}{tls}")
}

/// Where [`PgStore::open`]'s URL comes from, for its errors.
pub const URL_SETTING: &str = "`url` in [store] of skillhost.toml";

/// A parsed store URL: where to connect, and the TLS it asks for.
pub(in crate::store) struct Target {
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
}

/// Parses a `postgres://` URL; the error says what is wrong with it
/// (without repeating it: it may hold a password).
///
/// `sslmode=require` asks for TLS, and the server's certificate is then
/// verified, name included (what libpq calls `verify-full`): against the
/// Web PKI roots, or only against the CA certificates of
/// `sslrootcert=FILE` (PEM). Without it the connection is plain TCP:
/// `prefer` would encrypt without verifying, which stops no one who can
/// stand in for the server, so it is taken as `disable`.
pub(in crate::store) fn parse_url(url: &str) -> Result<Target, String> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err("a PostgreSQL URL starts with postgres:// or postgresql://".into());
    }
    // `sslrootcert` is libpq's, not tokio-postgres's: taken out here.
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut root_cert = None;
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("sslrootcert", file)) => root_cert = Some(file),
            _ => kept.push(pair),
        }
    }
    let url = match kept.is_empty() {
        true => base.to_owned(),
        false => format!("{base}?{}", kept.join("&")),
    };
    let mut config = tokio_postgres::Config::from_str(&url)
        .map_err(|e| format!("not a valid PostgreSQL URL: {e}"))?;
    if config.get_ssl_mode() != tokio_postgres::config::SslMode::Require {
        if root_cert.is_some() {
            return Err("`sslrootcert` is used only with `sslmode=require`".into());
        }
        config.ssl_mode(tokio_postgres::config::SslMode::Disable);
    }
    let tls = tls_connector(root_cert)?;
    Ok(Target { config, tls })
}

/// Verifies servers against `root_cert`'s certificates, or the Web PKI
/// roots without one; the ring provider, no client certificate.
fn tls_connector(root_cert: Option<&str>) -> Result<MakeRustlsConnect, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    match root_cert {
        Some(file) => {
            let pem = std::fs::read(file).map_err(|e| format!("`sslrootcert` {file}: {e}"))?;
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert = cert.map_err(|e| format!("`sslrootcert` {file}: {e}"))?;
                roots
                    .add(cert)
                    .map_err(|e| format!("`sslrootcert` {file}: {e}"))?;
            }
            if roots.is_empty() {
                return Err(format!("`sslrootcert` {file} holds no PEM certificate"));
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

impl Pool {
    pub(super) fn new(target: Target, setting: &'static str) -> Result<Pool, StoreError> {
        let Target { mut config, tls } = target;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let location = describe(&config);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("skillhost-postgres")
            .enable_all()
            .build()
            .map_err(|source| StoreError::Runtime { source })?;
        Ok(Pool {
            config,
            tls,
            location,
            setting,
            runtime: Some(runtime),
            slots: (0..POOL_SIZE).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
        })
    }

    fn connect(&self) -> Result<Client, StoreError> {
        let connect_error = |source| StoreError::Connect {
            location: self.location.clone(),
            setting: self.setting,
            source,
        };
        let runtime = self.runtime.as_ref().ok_or(StoreError::Closed)?;
        let (config, tls) = (self.config.clone(), self.tls.clone());
        let connecting = runtime.spawn(async move {
            let (client, connection) = config.connect(tls).await?;
            tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::warn!("PostgreSQL connection closed: {e}");
                }
            });
            Ok::<_, tokio_postgres::Error>(client)
        });
        match block_on(connecting) {
            Ok(connected) => connected.map_err(connect_error),
            Err(_) => Err(StoreError::Closed),
        }
    }

    /// A connected connection: an idle one, else a new one in a free slot,
    /// else the next one to come free.
    pub(super) fn get(&self) -> Result<Conn<'_>, StoreError> {
        let usable = |c: &Option<Client>| c.as_ref().is_some_and(|c| !c.is_closed());
        let mut free = None;
        for slot in &self.slots {
            if let Ok(guard) = slot.try_lock() {
                if usable(&guard) {
                    return Ok(Conn(guard));
                }
                free.get_or_insert(guard);
            }
        }
        let mut guard = match free {
            Some(guard) => guard,
            None => {
                let i = self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len();
                lock(&self.slots[i])
            }
        };
        if !usable(&guard) {
            *guard = Some(self.connect()?);
        }
        Ok(Conn(guard))
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Dropping a runtime waits for its tasks, which panics inside
        // another runtime; the connections close with their clients.
        for slot in &self.slots {
            lock(slot).take();
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}
