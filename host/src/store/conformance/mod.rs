//! One test suite, every implementation: each test below runs against the
//! SQLite store and against PostgreSQL, through `&dyn RunStore` only.
//!
//! PostgreSQL tests use the server `SKILLHOST_TEST_POSTGRES_URL` names,
//! each in a schema of its own. Without the variable they say they were
//! skipped and pass, except under CI (`CI` set), where they fail: CI must
//! not pass by testing one implementation.

use std::io::Write as _;
use std::sync::Arc;

use super::*;

mod copy;
mod gate;
mod kv;
mod runs;

/// Where a test's stores live; `open` may be called again to reopen the
/// same data, as another process or host would.
pub(super) trait Backend {
    fn open(&self, quota: KvQuota) -> Arc<dyn RunStore>;
}

pub(super) struct Sqlite(tempfile::TempDir);

impl Sqlite {
    pub(super) fn new() -> Sqlite {
        Sqlite(tempfile::tempdir().expect("tempdir"))
    }
}

impl Backend for Sqlite {
    fn open(&self, quota: KvQuota) -> Arc<dyn RunStore> {
        let store = SqliteStore::open(&self.0.path().join("s.db")).expect("open the SQLite store");
        Arc::new(store.with_kv_quota(quota))
    }
}

/// The value of the environment variable `var` for `test`: None (said on
/// stderr, naming `set_it`) without one, a panic under CI, which must test
/// what it names.
fn required_env(test: &str, var: &str, set_it: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => Some(v),
        _ if std::env::var_os("CI").is_some() => {
            panic!("{test}: {var} is not set, and CI must test it")
        }
        _ => {
            // Straight to stderr (not the std print macros, which the
            // crate keeps to the CLI's printing, and the harness hides).
            let _ = writeln!(std::io::stderr(), "{test}: skipped ({set_it})");
            None
        }
    }
}

/// The CA certificate of the test server's TLS (SKILLHOST_TEST_POSTGRES_CA,
/// as `.ci/postgres.sh` makes it), if any; required under CI.
pub(super) fn postgres_ca(test: &str) -> Option<String> {
    required_env(
        test,
        "SKILLHOST_TEST_POSTGRES_CA",
        "set SKILLHOST_TEST_POSTGRES_CA, as .ci/postgres.sh does",
    )
}

/// The server to test against, if any.
pub(super) fn postgres_url(test: &str) -> Option<String> {
    required_env(
        test,
        "SKILLHOST_TEST_POSTGRES_URL",
        "against PostgreSQL: set SKILLHOST_TEST_POSTGRES_URL=postgres://...",
    )
}

/// A fresh schema on the test server, dropped afterwards.
pub(super) struct Postgres {
    base: String,
    schema: String,
}

impl Postgres {
    pub(super) fn new(test: &str) -> Option<Postgres> {
        let base = postgres_url(test)?;
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let schema = format!("t_{}_{}_{n}", std::process::id(), test);
        admin(
            &base,
            &format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"),
        );
        Some(Postgres { base, schema })
    }

    /// The URL of this test's schema.
    pub(super) fn url(&self) -> String {
        let join = if self.base.contains('?') { '&' } else { '?' };
        format!(
            "{}{join}options=-c%20search_path%3D{}",
            self.base, self.schema
        )
    }

    /// Runs `sql` in this test's schema.
    pub(super) fn execute(&self, sql: &str) {
        admin(&self.url(), sql);
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        admin(
            &self.base,
            &format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema),
        );
    }
}

impl Backend for Postgres {
    fn open(&self, quota: KvQuota) -> Arc<dyn RunStore> {
        let store = PgStore::open(&self.url()).expect("open the PostgreSQL store");
        Arc::new(store.with_kv_quota(quota))
    }
}

/// Runs `sql` over a connection of its own.
fn admin(url: &str, sql: &str) {
    PgStore::execute_on(url, sql).expect("SQL on SKILLHOST_TEST_POSTGRES_URL");
}

/// `#[test]`s for each implementation, calling `fn name(&dyn Backend)` of
/// the concern's file.
macro_rules! suite {
    ($($concern:ident :: $name:ident),* $(,)?) => {
        mod sqlite {
            $(#[test]
            fn $name() {
                super::$concern::$name(&super::Sqlite::new());
            })*
        }
        mod postgres {
            $(#[test]
            fn $name() {
                if let Some(backend) = super::Postgres::new(stringify!($name)) {
                    super::$concern::$name(&backend);
                }
            })*
        }
    };
}

suite!(
    kv::kv_is_per_skill_and_survives_reopen,
    kv::kv_bytes_quota_counts_keys_values_and_replacements,
    kv::kv_key_count_quota_and_a_lowered_quota,
    kv::concurrent_kv_writers_cannot_overrun_the_quota,
    runs::a_verdict_overrides_the_outcome_for_learning_and_keeps_the_record,
    runs::usage_counts_runs_and_keeps_an_ema_of_their_outcomes,
    runs::a_replayed_run_that_was_stored_is_not_counted_again,
    runs::tool_steps_stream_in_run_and_step_order,
    runs::a_run_reads_back_whole_and_listings_go_newest_first,
    runs::run_ids_are_handed_out_once_across_stores_and_given_back_only_when_last,
    runs::failure_groups_count_runs_and_tool_errors_in_the_window,
    runs::a_run_with_nul_characters_is_stored,
    copy::a_copy_of_a_sqlite_store_is_whole_and_a_second_copy_adds_nothing,
    gate::an_approval_needs_a_passed_report_of_the_same_artifact,
    gate::old_reports_are_dropped_but_never_the_approved_one,
);

pub(super) fn default_store(b: &dyn Backend) -> Arc<dyn RunStore> {
    b.open(KvQuota::default())
}

pub(super) fn run(skill: &str, success: bool, at: i64) -> RunRecord {
    RunRecord::new(skill, success, at)
}
