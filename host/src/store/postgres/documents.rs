//! Shared documents in the PostgreSQL store: edits take turns under one
//! lock, each write takes the next version, and every write is announced
//! to the hosts listening on [`SHARED_CHANNEL`].

use std::time::Duration;

use tokio_postgres_rustls::MakeRustlsConnect;

use super::{LOCK_SHARED, PgStore};
use crate::store::{DocEdit, SharedDoc, SharedState, StoreError};

/// The channel a write of shared state is announced on (its payload: the
/// document's name), for hosts that want to hear of it before their next
/// run (a server telling its clients that the skills changed).
pub const SHARED_CHANNEL: &str = "skillhost_shared";

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Listens on [`SHARED_CHANNEL`] over a connection of its own, counting
/// each announcement in `heard`, and once more after every (re)connection,
/// as announcements made while it was not listening are lost. Runs until
/// the store's runtime stops (the store is dropped).
async fn listen(
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    heard: tokio::sync::watch::Sender<u64>,
) {
    use futures::StreamExt;
    use tokio_postgres::AsyncMessage;
    let bump = |heard: &tokio::sync::watch::Sender<u64>| heard.send_modify(|n| *n += 1);
    loop {
        match config.connect(tls.clone()).await {
            Ok((client, mut connection)) => {
                let (note, mut notes) = tokio::sync::mpsc::unbounded_channel();
                let driver = tokio::spawn(async move {
                    let mut messages =
                        futures::stream::poll_fn(move |cx| connection.poll_message(cx));
                    while let Some(message) = messages.next().await {
                        match message {
                            Ok(AsyncMessage::Notification(_)) => {
                                if note.send(()).is_err() {
                                    break;
                                }
                            }
                            Ok(_) => {}
                            Err(e) => {
                                tracing::warn!("PostgreSQL listener connection: {e}");
                                break;
                            }
                        }
                    }
                });
                match client
                    .batch_execute(&format!("LISTEN {SHARED_CHANNEL}"))
                    .await
                {
                    Ok(()) => {
                        bump(&heard);
                        while notes.recv().await.is_some() {
                            bump(&heard);
                        }
                    }
                    Err(e) => tracing::warn!("cannot listen for other hosts' changes: {e}"),
                }
                driver.abort();
            }
            Err(e) => tracing::warn!("cannot listen for other hosts' changes: {e}"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

impl SharedState for PgStore {
    fn changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        let runtime = self.pool.runtime.as_ref()?;
        let heard = self.listener.get_or_init(|| {
            let (heard, _) = tokio::sync::watch::channel(0);
            let (config, tls) = (self.pool.config.clone(), self.pool.tls.clone());
            runtime.spawn(listen(config, tls, heard.clone()));
            heard
        });
        Some(heard.subscribe())
    }

    fn generation(&self) -> Result<i64, StoreError> {
        let row = self.query_opt("SELECT max(version) FROM shared_docs", &[])?;
        Ok(match row {
            Some(r) => r.try_get::<_, Option<i64>>(0)?.unwrap_or(0),
            None => 0,
        })
    }

    fn read(&self, name: &str) -> Result<Option<SharedDoc>, StoreError> {
        self.query_opt(
            "SELECT version, body FROM shared_docs WHERE name = $1",
            &[&name],
        )?
        .map(|r| {
            Ok(SharedDoc {
                version: r.try_get(0)?,
                body: r.try_get(1)?,
            })
        })
        .transpose()
    }

    fn list(&self, prefix: &str) -> Result<Vec<(String, i64)>, StoreError> {
        // `starts_with` rather than LIKE: a name may hold `%` or `_`.
        self.query(
            "SELECT name, version FROM shared_docs WHERE starts_with(name, $1) ORDER BY name",
            &[&prefix],
        )?
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect()
    }

    fn update(&self, name: &str, edit: &mut DocEdit<'_>) -> Result<Option<i64>, StoreError> {
        in_transaction!(self, |tx| {
            // Held to the commit: a second host's edit waits here and then
            // reads this one's result. One lock for every document, so
            // versions commit in the order they are taken and a reader that
            // saw the generation can miss no earlier write. (A row lock
            // could not cover a document that does not exist yet.)
            tx.execute("SELECT pg_advisory_xact_lock($1, 0)", &[&LOCK_SHARED])
                .await?;
            let current: Option<Vec<u8>> = tx
                .query_opt("SELECT body FROM shared_docs WHERE name = $1", &[&name])
                .await?
                .map(|r| r.try_get(0))
                .transpose()?;
            let Some(body) = edit(current.as_deref()) else {
                return Ok(None);
            };
            let version: i64 = tx
                .query_one(
                    "INSERT INTO shared_docs (name, version, body, updated_at)
                     VALUES ($1, nextval('shared_version'), $2, $3)
                     ON CONFLICT (name) DO UPDATE SET
                         version = EXCLUDED.version, body = EXCLUDED.body,
                         updated_at = EXCLUDED.updated_at
                     RETURNING version",
                    &[&name, &body, &now_secs()],
                )
                .await?
                .try_get(0)?;
            // Delivered at the commit, to every host listening.
            tx.execute("SELECT pg_notify($1, $2)", &[&SHARED_CHANNEL, &name])
                .await?;
            Ok(Some(version))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::RunStore;
    use crate::store::conformance::Postgres;

    /// Shared documents: each edit sees every earlier one, from any host
    /// (four stores here, as four hosts would have); the generation is the
    /// latest version; an edit that answers nothing writes nothing.
    #[test]
    fn shared_documents_take_turns_and_name_their_generation() {
        let Some(pg) = Postgres::new("shared_documents") else {
            return;
        };
        let first = PgStore::open(&pg.url()).expect("open");
        let shared = first.shared().expect("a PostgreSQL store is shared");
        assert_eq!(shared.generation().expect("generation"), 0);
        assert_eq!(shared.read("counter").expect("read"), None);
        let hosts: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn({
                    let url = pg.url();
                    move || {
                        let store = PgStore::open(&url).expect("open");
                        let shared = store.shared().expect("shared");
                        for _ in 0..25 {
                            shared
                                .update("counter", &mut |now| {
                                    let n: u64 = now
                                        .and_then(|b| std::str::from_utf8(b).ok()?.parse().ok())
                                        .unwrap_or(0);
                                    Some((n + 1).to_string().into_bytes())
                                })
                                .expect("update");
                        }
                    }
                })
            })
            .collect();
        for h in hosts {
            h.join().expect("host");
        }
        let counter = shared.read("counter").expect("read").expect("written");
        assert_eq!(counter.body, b"100", "no edit lost");
        assert_eq!(shared.generation().expect("generation"), counter.version);

        let unchanged = shared.update("counter", &mut |_| None).expect("update");
        assert_eq!(unchanged, None);
        assert_eq!(shared.generation().expect("generation"), counter.version);

        let v = shared
            .update("skill/forged/a%b", &mut |_| Some(b"x".to_vec()))
            .expect("update")
            .expect("written");
        assert!(v > counter.version, "{v} after {}", counter.version);
        assert_eq!(shared.generation().expect("generation"), v);
        // A prefix is a prefix, `%` and `_` included.
        assert_eq!(
            shared.list("skill/forged/a%").expect("list"),
            vec![("skill/forged/a%b".to_owned(), v)]
        );
        assert!(shared.list("skill/forged/_").expect("list").is_empty());
    }
}
