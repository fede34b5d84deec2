//! The PostgreSQL store: one database that many hosts share. The same
//! tables and meanings as the SQLite file; where SQLite serializes writers
//! with one lock, here row locks (`FOR UPDATE`) and advisory locks keep
//! the same promises (run ids handed out once, usage statistics that agree
//! with the runs, key-value quotas that concurrent writers cannot overrun).
//!
//! Calls block, like the SQLite store's. The connections run on a small
//! runtime of the store's own, and a call waits for its answer with a plain
//! executor, so it works from any thread, including inside another tokio
//! runtime, where a nested `block_on` would panic.
//!
//! One file per concern (runs, key-value data, the gate's records, shared
//! documents), the connections in `pool.rs` and the schema in `schema.rs`.

use futures::executor::block_on;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::{KvQuota, RunStore, SharedState, StoreError};
pub(super) use pool::parse_url;
use pool::{Conn, Pool};

/// Advisory lock keys (first half of the two-key form).
const LOCK_MIGRATE: i32 = 0x5348_0001;
const LOCK_KV: i32 = 0x5348_0002;
const LOCK_SHARED: i32 = 0x5348_0003;

type Params<'a> = [&'a (dyn ToSql + Sync)];

/// `in_transaction!(store, |tx| { ... Ok(value) })`: the block runs in a
/// transaction on one of the store's connections, committed when the
/// block returns `Ok` and rolled back (dropped) otherwise.
macro_rules! in_transaction {
    ($store:expr, |$tx:ident| $body:block) => {{
        let mut conn = $store.conn()?;
        futures::executor::block_on(async {
            let $tx = conn.transaction().await?;
            let out: Result<_, $crate::store::StoreError> = async { $body }.await;
            let out = out?;
            $tx.commit().await?;
            Ok(out)
        })
    }};
}

mod documents;
mod gate;
mod kv;
mod pool;
mod runs;
mod schema;

use pool::URL_SETTING;

/// The store in a PostgreSQL database.
pub struct PgStore {
    pool: Pool,
    /// The server and database, without the password.
    location: String,
    kv_quota: KvQuota,
    /// Counts what was heard on [`SHARED_CHANNEL`](documents::SHARED_CHANNEL);
    /// started on first [`SharedState::changes`].
    listener: std::sync::OnceLock<tokio::sync::watch::Sender<u64>>,
}

impl PgStore {
    /// Connects to the database `url` (`[store] url`) names and migrates
    /// its schema.
    pub fn open(url: &str) -> Result<PgStore, StoreError> {
        Self::open_from(url, URL_SETTING)
    }

    /// [`open`](Self::open) with a URL from `setting` (named in errors).
    pub fn open_from(url: &str, setting: &'static str) -> Result<PgStore, StoreError> {
        let config = parse_url(url).map_err(|message| StoreError::BadUrl { setting, message })?;
        let pool = Pool::new(config, setting)?;
        let store = PgStore {
            location: pool.location.clone(),
            pool,
            kv_quota: KvQuota::default(),
            listener: std::sync::OnceLock::new(),
        };
        store.migrate()?;
        Ok(store)
    }

    /// Runs `sql` (statements separated by `;`) over a connection of its
    /// own to the server `url` names: for making and dropping databases
    /// and schemas (tests, benchmarks), outside any store.
    pub fn execute_on(url: &str, sql: &str) -> Result<(), StoreError> {
        let config = parse_url(url).map_err(|message| StoreError::BadUrl {
            setting: "the URL given",
            message,
        })?;
        let pool = Pool::new(config, "the URL given")?;
        let conn = pool.get()?;
        Ok(block_on(conn.batch_execute(sql))?)
    }

    /// The same store, enforcing `quota` on every skill's key-value writes.
    pub fn with_kv_quota(mut self, quota: KvQuota) -> Self {
        self.kv_quota = quota;
        self
    }

    fn conn(&self) -> Result<Conn<'_>, StoreError> {
        self.pool.get()
    }

    #[cfg(test)]
    fn query_one_value<T: for<'a> tokio_postgres::types::FromSql<'a>>(
        &self,
        sql: &str,
    ) -> Result<T, StoreError> {
        let conn = self.conn()?;
        Ok(block_on(conn.query_one(sql, &[]))?.try_get(0)?)
    }

    fn query(&self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>, StoreError> {
        let conn = self.conn()?;
        Ok(block_on(conn.query(sql, params))?)
    }

    fn query_opt(&self, sql: &str, params: &Params<'_>) -> Result<Option<Row>, StoreError> {
        let conn = self.conn()?;
        Ok(block_on(conn.query_opt(sql, params))?)
    }

    fn execute(&self, sql: &str, params: &Params<'_>) -> Result<u64, StoreError> {
        let conn = self.conn()?;
        Ok(block_on(conn.execute(sql, params))?)
    }
}

/// `s` as PostgreSQL text can hold it: NUL, which SQLite keeps and
/// PostgreSQL refuses, becomes U+FFFD. A run a handler or client put a NUL
/// in must still be stored, not retried until the writer gives up.
fn text(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\0') {
        s.replace('\0', "\u{FFFD}").into()
    } else {
        s.into()
    }
}

fn opt_text(s: &Option<String>) -> Option<std::borrow::Cow<'_, str>> {
    s.as_deref().map(text)
}

/// One array parameter: `f` of each item.
fn column<'a, T, U>(items: &'a [T], f: impl Fn(&'a T) -> U) -> Vec<U> {
    items.iter().map(f).collect()
}

impl RunStore for PgStore {
    fn location(&self) -> String {
        self.location.clone()
    }

    fn shared(&self) -> Option<&dyn SharedState> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::conformance::{Backend, Postgres};
    use crate::store::{RunLog, RunRecord};

    #[test]
    fn a_bad_url_or_an_unreachable_server_is_named_with_the_setting() {
        let e = PgStore::open("mysql://localhost/db")
            .err()
            .expect("refused");
        assert!(e.to_string().contains("[store]"), "{e}");
        assert!(e.to_string().contains("postgres://"), "{e}");
        let e = PgStore::open("postgres://me:hunter2@127.0.0.1:9999:x/db")
            .err()
            .expect("refused");
        assert!(e.to_string().contains("not a valid PostgreSQL URL"), "{e}");
        // Port 1 on loopback: nothing listens, the connection is refused.
        let e = PgStore::open("postgres://me:hunter2@127.0.0.1:1/db")
            .err()
            .expect("unreachable");
        let text = e.to_string();
        assert!(matches!(e, StoreError::Connect { .. }), "{text}");
        assert!(text.contains("`url` in [store]"), "{text}");
        assert!(text.contains("127.0.0.1:1/db"), "{text}");
        assert!(
            !text.contains("hunter2"),
            "the password is never shown: {text}"
        );
    }

    /// A row PostgreSQL refuses for its data (a skill name is never given
    /// NUL by the host, so nothing replaces it) is told from an
    /// unavailable store: the run writer sets such a run aside rather
    /// than trying it again forever.
    #[test]
    fn a_row_refused_for_its_data_says_so() {
        let Some(pg) = Postgres::new("refused_row") else {
            return;
        };
        let store = pg.open(KvQuota::default());
        let mut run = RunRecord::new("a\0b", true, 1);
        run.id = store.reserve_run_ids(1).expect("ids").start;
        let e = store.insert_runs(&[run]).expect_err("refused");
        assert!(e.refuses_data(), "{e}");
    }

    /// `sslmode=require`: TLS, with the server's certificate verified
    /// against `sslrootcert`'s CA; a server whose CA is not trusted is
    /// refused, and no URL takes `sslrootcert` without asking for TLS.
    #[test]
    fn tls_is_verified_against_the_given_ca_or_refused() {
        let Some(pg) = Postgres::new("tls") else {
            return;
        };
        let Some(ca) = crate::store::conformance::postgres_ca("tls") else {
            return;
        };
        // The test's URL has a query already (its schema).
        let url = pg.url();
        let tls = format!("{url}&sslmode=require&sslrootcert={ca}");
        let store = PgStore::open(&tls).expect("a TLS connection");
        assert!(store.location().ends_with("(TLS)"), "{}", store.location());
        let encrypted: bool = store
            .query_one_value("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            .expect("pg_stat_ssl");
        assert!(encrypted, "the connection is encrypted");
        store
            .record_run(&RunRecord::new("a", true, 1))
            .expect("record over TLS");
        let plain = PgStore::open(&url).expect("plain");
        let encrypted: bool = plain
            .query_one_value("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            .expect("pg_stat_ssl");
        assert!(
            !encrypted,
            "without sslmode=require the connection is plain"
        );

        // The server's CA is no Web PKI root: refused, saying why.
        let e = PgStore::open(&format!("{url}&sslmode=require"))
            .err()
            .expect("an unknown CA is refused");
        assert!(matches!(e, StoreError::Connect { .. }), "{e}");
        let text = format!("{e}: {:?}", std::error::Error::source(&e));
        assert!(
            text.contains("certificate") || text.contains("Certificate"),
            "{text}"
        );

        let e = PgStore::open(&format!("{url}&sslrootcert={ca}"))
            .err()
            .expect("sslrootcert alone");
        assert!(e.to_string().contains("sslmode=require"), "{e}");
        let e = PgStore::open(&format!(
            "{url}&sslmode=require&sslrootcert=/nonexistent/ca.pem"
        ))
        .err()
        .expect("a missing CA file");
        assert!(e.to_string().contains("/nonexistent/ca.pem"), "{e}");
    }

    /// A store used, and dropped, on an async worker: no nested runtime
    /// panics, the call just blocks as the SQLite store's does.
    #[test]
    fn works_and_drops_inside_an_async_runtime() {
        let Some(pg) = Postgres::new("works_inside_an_async_runtime") else {
            return;
        };
        let url = pg.url();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let count = rt.block_on(async move {
            let store = PgStore::open(&url).expect("open");
            store
                .record_run(&RunRecord::new("a", true, 1))
                .expect("record");
            store.run_count().expect("count")
        });
        assert_eq!(count, 1);
    }
}
