//! Throwaway PostgreSQL databases for tests and benchmarks, on the server
//! SKILLHOST_TEST_POSTGRES_URL names: a test without it says it was
//! skipped, except under CI, where that is a failure.

use super::Workspace;

/// A database of its own on a server, dropped afterwards.
pub struct TestDatabase {
    admin: String,
    name: String,
    /// The database's URL (`[store] url`).
    pub url: String,
}

impl TestDatabase {
    /// A database for `test` on the SKILLHOST_TEST_POSTGRES_URL server;
    /// `None` (said on stderr) without one, a panic under CI.
    pub fn new(test: &str) -> Option<TestDatabase> {
        let admin = match std::env::var("SKILLHOST_TEST_POSTGRES_URL") {
            Ok(url) if !url.is_empty() => url,
            _ if std::env::var_os("CI").is_some() => {
                panic!(
                    "{test}: SKILLHOST_TEST_POSTGRES_URL is not set, and CI must test PostgreSQL"
                )
            }
            _ => {
                eprintln!("{test}: skipped (set SKILLHOST_TEST_POSTGRES_URL=postgres://...)");
                return None;
            }
        };
        Some(TestDatabase::on(&admin, test))
    }

    /// A database for `test` on the server `admin` (a URL of any database
    /// there) names.
    pub fn on(admin: &str, test: &str) -> TestDatabase {
        let name = format!("skillhost_it_{}_{test}", std::process::id());
        sql(admin, &format!("DROP DATABASE IF EXISTS {name}"));
        sql(admin, &format!("CREATE DATABASE {name}"));
        // The admin URL with this database in place of its own.
        let base = admin.split('?').next().unwrap_or(admin);
        let server = base.rsplit_once('/').map_or(base, |(s, _)| s);
        let url = format!("{server}/{name}");
        TestDatabase {
            admin: admin.to_owned(),
            name,
            url,
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        sql(
            &self.admin,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

/// Points workspace `ws` (a host) at the database `url`: its only
/// skillhost.toml setting.
pub fn use_database(ws: &Workspace, url: &str) {
    std::fs::write(
        ws.workspace.join("skillhost.toml"),
        format!("[store]\nurl = \"{url}\"\n"),
    )
    .expect("write skillhost.toml");
}

fn sql(url: &str, statement: &str) {
    skillhost::store::PgStore::execute_on(url, statement).expect(statement);
}
