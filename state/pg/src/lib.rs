//! The PostgreSQL backend: one row per workspace in `<schema>.states`, the
//! apply journal as rows of `<schema>.journal`, drift runs' history as a
//! row of `<schema>.history`, and a session-level
//! advisory lock per workspace, as Terraform's `pg` backend locks. A run
//! that dies loses its session and with it the advisory lock, so the next
//! run takes over (naming the dead holder, whose info is in
//! `<schema>.locks`); `force-unlock` ends a live holder's session.
//!
//! Every write is one transaction: the new state, the previous one kept
//! as `previous`, the journal it includes deleted — all or nothing.

use postgres::{Client, Config};
use std::sync::{Mutex, MutexGuard};
use strata_state::{
    on_own_thread, Acquired, Backend, JournalAfter, LockInfo, StateError, Stored, Version,
};

/// The backend block's settings.
#[derive(Debug, Clone)]
pub struct PgConfig {
    /// A libpq connection string or URL.
    pub conn_str: String,
    /// The schema holding strata's tables (created when missing).
    pub schema_name: String,
    pub workspace: String,
}

pub const DEFAULT_SCHEMA: &str = "strata_remote_state";

pub struct PgBackend {
    config: PgConfig,
    /// The session: opened at first use and kept, because the advisory
    /// lock belongs to it.
    client: Mutex<Option<Client>>,
}

/// The workspace's advisory lock key, computed by the server so that every
/// client agrees on it.
const KEY: &str = "hashtextextended('strata/' || $1, 0)";
/// A second key per name, held for the length of one lock attempt: lockers
/// take turns, so a refused one reads the winner's row, never the moment
/// between the winner's lock and its row (or a dead holder's old row).
const TURN: &str = "hashtextextended('strata-turn/' || $1, 0)";

impl PgBackend {
    pub fn new(config: PgConfig) -> Result<PgBackend, StateError> {
        let valid = |s: &str| {
            s.chars()
                .next()
                .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        };
        if !valid(&config.schema_name) {
            return Err(StateError::backend(
                "postgres",
                format!(
                    "schema_name {:?} must be lower-case letters, digits and underscores",
                    config.schema_name
                ),
            ));
        }
        config
            .conn_str
            .parse::<Config>()
            .map_err(|e| StateError::backend("postgres", format!("conn_str: {e}")))?;
        Ok(PgBackend {
            config,
            client: Mutex::new(None),
        })
    }

    /// The name a lock and a row go by: schema and workspace.
    fn name(&self) -> String {
        format!("{}/{}", self.config.schema_name, self.config.workspace)
    }

    fn err(&self, e: impl std::fmt::Display) -> StateError {
        StateError::backend(self.location(), e)
    }

    fn table(&self, t: &str) -> String {
        format!("\"{}\".{t}", self.config.schema_name)
    }

    fn connect(&self) -> Result<Client, StateError> {
        let config: Config = self
            .config
            .conn_str
            .parse()
            .map_err(|e| self.err(format!("conn_str: {e}")))?;
        let mut roots = rustls::RootCertStore::empty();
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        let tls = rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let mut client = config
            .connect(tokio_postgres_rustls::MakeRustlsConnect::new(tls))
            .map_err(|e| self.err(e))?;
        // Creating the tables from several sessions at once races in the
        // catalog; one at a time, under a transaction's advisory lock.
        let mut tx = client.transaction().map_err(|e| self.err(e))?;
        tx.batch_execute(&format!(
            "SELECT pg_advisory_xact_lock(hashtextextended('strata/schema', 0));
             CREATE SCHEMA IF NOT EXISTS \"{schema}\";
             CREATE TABLE IF NOT EXISTS {states} (
                 name text PRIMARY KEY,
                 data text NOT NULL,
                 previous text,
                 version bigint NOT NULL,
                 updated timestamptz NOT NULL DEFAULT now());
             CREATE TABLE IF NOT EXISTS {journal} (
                 name text NOT NULL,
                 seq bigserial,
                 lines text NOT NULL,
                 PRIMARY KEY (name, seq));
             CREATE TABLE IF NOT EXISTS {history} (
                 name text PRIMARY KEY,
                 data text NOT NULL);
             CREATE TABLE IF NOT EXISTS {locks} (
                 name text PRIMARY KEY,
                 info text NOT NULL);",
            schema = self.config.schema_name,
            states = self.table("states"),
            journal = self.table("journal"),
            history = self.table("history"),
            locks = self.table("locks"),
        ))
        .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(client)
    }

    /// Runs `f` with the session, on a thread of its own (the client
    /// drives its own runtime). A session that broke is dropped, so the
    /// next call reconnects — without the advisory lock, which the lock
    /// check then notices.
    fn with<T: Send>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<T, postgres::Error> + Send,
    ) -> Result<T, StateError> {
        on_own_thread(|| {
            let mut slot = self.session();
            if slot.as_ref().is_none_or(|c| c.is_closed()) {
                *slot = Some(self.connect()?);
            }
            let Some(client) = slot.as_mut() else {
                return Err(self.err("no session"));
            };
            let result = f(client);
            if client.is_closed() {
                *slot = None;
            }
            result.map_err(|e| self.err(e))
        })
    }

    fn session(&self) -> MutexGuard<'_, Option<Client>> {
        self.client.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn holder(
        &self,
        client: &mut impl postgres::GenericClient,
    ) -> Result<Option<LockInfo>, postgres::Error> {
        let row = client.query_opt(
            &format!("SELECT info FROM {} WHERE name = $1", self.table("locks")),
            &[&self.name()],
        )?;
        Ok(row.and_then(|r| LockInfo::decode(r.get::<_, &str>(0))))
    }
}

impl Drop for PgBackend {
    /// The client closes its session on its own runtime, which cannot
    /// happen on a thread inside the engine's: closed on a thread of its own.
    fn drop(&mut self) {
        if let Some(client) = self.session().take() {
            on_own_thread(move || drop(client));
        }
    }
}

impl Backend for PgBackend {
    fn workspaces(&self) -> Result<Vec<String>, StateError> {
        let prefix = format!("{}/", self.config.schema_name);
        self.with(|c| {
            let rows = c.query(
                &format!(
                    "SELECT name FROM {} WHERE starts_with(name, $1) ORDER BY name",
                    self.table("states")
                ),
                &[&prefix],
            )?;
            let mut names = vec!["default".to_string()];
            for r in rows {
                let name: &str = r.get(0);
                let name = name.strip_prefix(&prefix).unwrap_or(name);
                if name != "default" {
                    names.push(name.to_string());
                }
            }
            Ok(names)
        })
    }

    fn delete_workspace(&self) -> Result<(), StateError> {
        let name = self.name();
        self.with(|c| {
            let mut tx = c.transaction()?;
            for table in ["states", "journal", "history"] {
                tx.execute(
                    &format!("DELETE FROM {} WHERE name = $1", self.table(table)),
                    &[&name],
                )?;
            }
            tx.commit()
        })
    }

    fn location(&self) -> String {
        // The connection string may hold a password: never shown.
        let host = self
            .config
            .conn_str
            .parse::<Config>()
            .ok()
            .and_then(|c| {
                c.get_hosts().first().map(|h| match h {
                    postgres::config::Host::Tcp(h) => h.clone(),
                    #[cfg(unix)]
                    postgres::config::Host::Unix(p) => p.display().to_string(),
                })
            })
            .unwrap_or_default();
        format!(
            "postgres://{host} schema {} workspace {}",
            self.config.schema_name, self.config.workspace
        )
    }

    fn lock(&self, info: &LockInfo) -> Result<Acquired, StateError> {
        let name = self.name();
        let text = info.encode();
        let (got, previous) = self.with(|c| {
            let mut c = c.transaction()?;
            c.execute(&format!("SELECT pg_advisory_xact_lock({TURN})"), &[&name])?;
            // A session-level lock: it outlives this transaction.
            let got: bool = c
                .query_one(&format!("SELECT pg_try_advisory_lock({KEY})"), &[&name])?
                .get(0);
            let previous = self.holder(&mut c)?;
            if got {
                c.execute(
                    &format!(
                        "INSERT INTO {} (name, info) VALUES ($1, $2)
                         ON CONFLICT (name) DO UPDATE SET info = EXCLUDED.info",
                        self.table("locks")
                    ),
                    &[&name, &text],
                )?;
            }
            c.commit()?;
            Ok((got, previous))
        })?;
        if !got {
            return Err(match previous {
                Some(p) => p.held(),
                None => StateError::Locked {
                    id: "unknown".into(),
                    who: "another session (its lock info is not written yet)".into(),
                    operation: "unknown".into(),
                    created: "unknown".into(),
                },
            });
        }
        // The advisory lock was free, so whoever left a lock row is gone.
        Ok(Acquired {
            guard: Box::new(()),
            took_over: previous,
        })
    }

    fn check_lock(&self, id: &str) -> Result<(), StateError> {
        let holder = self.with(|c| {
            // Still ours only if this session holds the advisory lock: a
            // session ended by force-unlock reconnects without it.
            let held: bool = c
                .query_one(
                    &format!(
                        "SELECT EXISTS (SELECT 1 FROM pg_locks
                           WHERE locktype = 'advisory' AND granted
                             AND pid = pg_backend_pid()
                             AND ((classid::bigint << 32) | objid::bigint) = {KEY})"
                    ),
                    &[&self.name()],
                )?
                .get(0);
            Ok(held.then(|| self.holder(c)).transpose()?.flatten())
        })?;
        LockInfo::check(holder, id)
    }

    fn unlock(&self, id: &str) -> Result<(), StateError> {
        let name = self.name();
        self.with(|c| {
            if self.holder(c)?.is_some_and(|i| i.id == id) {
                c.execute(
                    &format!("DELETE FROM {} WHERE name = $1", self.table("locks")),
                    &[&name],
                )?;
            }
            c.execute(&format!("SELECT pg_advisory_unlock({KEY})"), &[&name])?;
            Ok(())
        })
    }

    fn force_unlock(&self, id: &str) -> Result<(), StateError> {
        let name = self.name();
        let holder = self.with(|c| self.holder(c))?;
        match holder {
            None => Err(StateError::NotLocked),
            Some(i) if i.id != id => Err(StateError::LockMismatch {
                given: id.to_string(),
                held: i.id,
            }),
            Some(_) => self.with(|c| {
                // End the session holding the advisory lock, if it lives,
                // and wait for it to be gone: termination is asynchronous,
                // and the lock is held until the session has ended.
                let held = format!(
                    "SELECT pid FROM pg_locks
                      WHERE locktype = 'advisory' AND granted
                        AND pid <> pg_backend_pid()
                        AND ((classid::bigint << 32) | objid::bigint) = {KEY}"
                );
                c.execute(
                    &format!("SELECT pg_terminate_backend(pid) FROM ({held}) AS h"),
                    &[&name],
                )?;
                for _ in 0..100 {
                    if c.query(&held, &[&name])?.is_empty() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                c.execute(
                    &format!("DELETE FROM {} WHERE name = $1", self.table("locks")),
                    &[&name],
                )?;
                Ok(())
            }),
        }
    }

    fn read(&self) -> Result<Stored, StateError> {
        let name = self.name();
        self.with(|c| {
            // One snapshot for the state and its journal.
            let mut tx = c
                .build_transaction()
                .isolation_level(postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()?;
            let row = tx.query_opt(
                &format!(
                    "SELECT data, version FROM {} WHERE name = $1",
                    self.table("states")
                ),
                &[&name],
            )?;
            let mut journal = String::new();
            for r in tx.query(
                &format!(
                    "SELECT lines FROM {} WHERE name = $1 ORDER BY seq",
                    self.table("journal")
                ),
                &[&name],
            )? {
                journal.push_str(r.get::<_, &str>(0));
            }
            tx.commit()?;
            Ok(Stored {
                state: row.as_ref().map(|r| r.get::<_, String>(0)),
                version: row.map(|r| Version(r.get::<_, i64>(1).to_string())),
                journal,
            })
        })
    }

    fn write(
        &self,
        text: &str,
        expected: Option<&Version>,
        journal: JournalAfter,
    ) -> Result<Version, StateError> {
        let name = self.name();
        let expected: Option<i64> = match expected {
            Some(v) => Some(v.0.parse().map_err(|_| self.err("bad version"))?),
            None => None,
        };
        let written = self.with(|c| {
            let mut tx = c.transaction()?;
            let row = match expected {
                Some(v) => tx.query_opt(
                    &format!(
                        "UPDATE {} SET previous = data, data = $2, version = version + 1,
                                updated = now()
                          WHERE name = $1 AND version = $3 RETURNING version",
                        self.table("states")
                    ),
                    &[&name, &text, &v],
                )?,
                None => tx.query_opt(
                    &format!(
                        "INSERT INTO {} (name, data, version) VALUES ($1, $2, 1)
                         ON CONFLICT (name) DO NOTHING RETURNING version",
                        self.table("states")
                    ),
                    &[&name, &text],
                )?,
            };
            let Some(row) = row else {
                tx.rollback()?;
                return Ok(None);
            };
            if journal == JournalAfter::Dropped {
                tx.execute(
                    &format!("DELETE FROM {} WHERE name = $1", self.table("journal")),
                    &[&name],
                )?;
            }
            tx.commit()?;
            Ok(Some(row.get::<_, i64>(0)))
        })?;
        match written {
            Some(v) => Ok(Version(v.to_string())),
            None => Err(StateError::Conflict {
                location: self.location(),
            }),
        }
    }

    fn read_history(&self) -> Result<String, StateError> {
        let name = self.name();
        self.with(|c| {
            let row = c.query_opt(
                &format!("SELECT data FROM {} WHERE name = $1", self.table("history")),
                &[&name],
            )?;
            Ok(row.map(|r| r.get::<_, String>(0)).unwrap_or_default())
        })
    }

    /// One statement, so one transaction: the row is replaced or kept.
    fn write_history(&self, text: &str) -> Result<(), StateError> {
        let name = self.name();
        self.with(|c| {
            c.execute(
                &format!(
                    "INSERT INTO {} (name, data) VALUES ($1, $2)
                     ON CONFLICT (name) DO UPDATE SET data = EXCLUDED.data",
                    self.table("history")
                ),
                &[&name, &text],
            )
        })
        .map(|_| ())
    }

    fn append(&self, lines: &str) -> Result<(), StateError> {
        let name = self.name();
        self.with(|c| {
            c.execute(
                &format!(
                    "INSERT INTO {} (name, lines) VALUES ($1, $2)",
                    self.table("journal")
                ),
                &[&name, &lines],
            )
        })
        .map(|_| ())
    }
}
