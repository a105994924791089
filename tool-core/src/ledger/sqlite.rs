//! The ledger in one SQLite file: durable across restarts, shared by every process on the
//! machine that opens the same file.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OptionalExtension as _, Row, TransactionBehavior, params};

use super::audit::{AuditEvent, AuditKind, AuditRecord, GENESIS, record_hash};
use super::{
    Binding, Claim, ClaimKey, Claimed, HeldOutcome, KeyKind, Ledger, LedgerError, LedgerFuture,
    Reconciled, Recorded, Resolution, Unsettled, claim_event, decide, from_unix_millis,
    held_outcomes, parse_effect, settling, taken_over_effect, unix_millis,
};
use crate::Effect;
use crate::outcome::Code;
use crate::sync::lock;

/// A [`Ledger`] in one SQLite file (feature `sqlite`).
///
/// Every method is one SQLite transaction, begun as `IMMEDIATE` so that writers take the
/// file's lock before they read: processes that open the same file (on one machine: SQLite
/// locks do not work over network file systems) see one ledger, and a call id is claimed by
/// one of them only. A process that finds the file locked waits up to the
/// [busy timeout](SqliteLedgerBuilder::busy_timeout) (5 s by default) and then gives up with a
/// [`LedgerError`], so the call is refused as `ledger_unavailable` and nothing runs. The work
/// is done on Tokio's blocking threads, never on the thread that polls the future, so the
/// ledger must be used inside a Tokio runtime (as the runtime itself must).
///
/// The file is put in WAL mode (readers and the writer do not block each other), with
/// `synchronous = NORMAL` by default: a transaction that returned is kept if the process
/// crashes, but the last ones may be lost if the machine loses power or the operating system
/// crashes. A lost claim lets its call run again, so if a power loss must not repeat an
/// effect, open the ledger with [`Synchronous::Full`]: each transaction then waits for the disk.
///
/// The tables are created when the file has none, with a schema version; a file written by a
/// newer version of this crate, or one that has the ledger's table names without being a
/// ledger, is refused rather than changed. A file at an older schema version is brought to
/// this one when it is opened, and its records verify as before. From version 1, the
/// outcomes of its claims settled before then are not covered by the audit trail (later ones
/// are). From version 2, records already written stay as they are; new ones store their
/// digests and hashes as bytes and their link to the record before as nothing (it is that
/// record's hash), about half the size. From version 3, the audit records are moved once, in
/// the transaction that opens the file, to the table version 4 keeps them in (each keyed by
/// its place in its trail, so that appending writes fewer pages), with the values they had:
/// the time it takes grows with the number of records. A file at a version cannot be opened
/// by a version of this crate that writes an older one, so upgrade every process that opens
/// the file together: one of an older version that has it open when it is brought up to date
/// fails its next writes (its calls are refused as `ledger_unavailable`, and nothing runs).
///
/// # Retention
///
/// Claims are kept until [`purge`](Self::purge) deletes the settled ones: that is how long an
/// id or an idempotency key is remembered (a purged key is claimed again as new, and runs).
/// Call it periodically with the retention the application promises. Expired nonces are
/// deleted as new ones are used. The audit trails, the quota counts and the stored runs are
/// kept for as long as the file is: they are the application's records.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// use std::time::Duration;
/// use tool_core::ledger::{Ledger, SqliteLedger, verify};
///
/// let path = std::env::temp_dir().join(format!("ledger-doc-{}.db", std::process::id()));
/// let ledger = SqliteLedger::open(&path).unwrap();
/// let later = std::time::SystemTime::now() + Duration::from_secs(60);
/// assert!(ledger.use_nonce("n-1", later).await.unwrap());
/// assert!(!ledger.use_nonce("n-1", later).await.unwrap());
/// assert_eq!(verify(&ledger.trail("run-1").await.unwrap(), None), Ok(None));
/// // Forget the ids of calls settled more than a day ago.
/// ledger.purge(Duration::from_secs(24 * 3600)).await.unwrap();
/// # drop(ledger);
/// # for suffix in ["", "-wal", "-shm"] {
/// #     let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
/// # }
/// # });
/// ```
#[derive(Clone)]
pub struct SqliteLedger {
    connection: Arc<Mutex<Conn>>,
    path: Arc<Path>,
    busy_timeout: Duration,
}

/// The connection, with the heads of the audit chains it wrote last.
struct Conn {
    connection: Connection,
    heads: Heads,
}

/// The last record of a scope's audit chain: its sequence number and hash, and the number of
/// the part of the trail it is in (see [`position`]).
#[derive(Clone)]
struct Head {
    number: i64,
    seq: u64,
    hash: String,
}

/// The heads of the scopes this connection read or appended to, as of the file's
/// `PRAGMA data_version` when it did: while no other connection has written to the file
/// since, they are the heads in the file, and a transaction need not read them. Forgotten when
/// another connection writes, and all at once when more than [`Heads::MAX`] scopes are held.
#[derive(Default)]
struct Heads {
    version: Option<i64>,
    by_scope: std::collections::HashMap<String, Head>,
    /// The heads the open transaction read or moved, the latest of a scope last; kept once it
    /// commits.
    current: Vec<(String, Head)>,
}

impl Heads {
    /// How many scopes' heads are held at most.
    const MAX: usize = 1024;

    /// At the start of a write transaction: forgets the heads if another connection wrote.
    fn begin(&mut self, tx: &Connection) -> Result<(), Error> {
        self.current.clear();
        let version: i64 = tx
            .prepare_cached("PRAGMA data_version")?
            .query_row([], |row| row.get(0))?;
        if self.version != Some(version) {
            self.by_scope.clear();
            self.version = Some(version);
        }
        Ok(())
    }

    /// The head of `scope` in the open transaction: held, or read from the file (and held
    /// from then on); `None` when the scope has no records.
    fn get(&mut self, tx: &Connection, scope: &str) -> Result<Option<Head>, Error> {
        if let Some((_, head)) = self.current.iter().rev().find(|(s, _)| s == scope) {
            return Ok(Some(head.clone()));
        }
        if let Some(head) = self.by_scope.get(scope) {
            return Ok(Some(head.clone()));
        }
        let head = stored_head(tx, scope)?;
        if let Some(head) = &head {
            self.current.push((scope.to_owned(), head.clone()));
        }
        Ok(head)
    }

    /// Notes that the open transaction appended to `scope` up to `head`.
    fn moved(&mut self, scope: &str, head: Head) {
        self.current.push((scope.to_owned(), head));
    }

    /// Once the transaction committed: keeps the heads it read or moved.
    fn committed(&mut self) {
        for (scope, head) in self.current.drain(..) {
            if self.by_scope.len() >= Heads::MAX && !self.by_scope.contains_key(&scope) {
                self.by_scope.clear();
            }
            self.by_scope.insert(scope, head);
        }
    }
}

/// Options for opening a [`SqliteLedger`], from [`SqliteLedger::builder`].
#[derive(Debug, Clone)]
pub struct SqliteLedgerBuilder {
    synchronous: Synchronous,
    busy_timeout: Duration,
}

/// When a SQLite transaction is on disk (SQLite's `synchronous` setting), in WAL mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Synchronous {
    /// A transaction survives a crash of the process; the last ones may be lost on a power
    /// loss or an operating system crash (the file stays consistent). The default.
    #[default]
    Normal,
    /// A transaction survives a power loss too: every commit waits for the disk.
    Full,
}

impl Synchronous {
    const fn as_str(self) -> &'static str {
        match self {
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        }
    }
}

impl SqliteLedger {
    /// The version of the tables this crate writes. A file at version 1, 2 or 3 is brought to
    /// it when opened (the claims a version 1 file settled have no audit record that covers
    /// their outcome; the records of older files keep the values they were written with and
    /// are read as before); a file with another version is refused.
    pub const SCHEMA_VERSION: i64 = 4;

    /// How long a process waits for another one's transaction by default: 5 s.
    pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

    /// Opens the ledger in the SQLite file at `path`, creating the file and its tables if
    /// there are none, with the default options ([`builder`](Self::builder) for others).
    ///
    /// This is blocking work (the file is opened and its schema checked): call it before
    /// serving, or from a blocking thread.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteLedger, LedgerError> {
        SqliteLedger::builder().open(path)
    }

    /// Options for opening a ledger: durability and how long to wait for other processes.
    pub fn builder() -> SqliteLedgerBuilder {
        SqliteLedgerBuilder {
            synchronous: Synchronous::Normal,
            busy_timeout: SqliteLedger::DEFAULT_BUSY_TIMEOUT,
        }
    }

    /// The file the ledger is in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Deletes the claims settled (with an outcome, or reconciled) at least `older_than` ago,
    /// and the nonces that have expired; returns how many claims were deleted.
    ///
    /// A deleted claim is forgotten: its call id or idempotency key is claimed again as new,
    /// takes a quota unit and runs. Claims without an outcome are never deleted, and neither
    /// are the audit trails.
    ///
    /// This reads every claim (as [`unsettled`](Ledger::unsettled) does): the claims table
    /// has no index but its key, so that each call writes as few pages as it can. Both are
    /// operator actions, run now and then.
    pub async fn purge(&self, older_than: Duration) -> Result<u64, LedgerError> {
        self.run_owned("purge settled claims", move |conn| {
            let now = unix_millis(SystemTime::now());
            let cutoff = now.saturating_sub(millis(older_than));
            let tx = Write::begin(&conn.connection)?;
            let claims = tx
                .prepare_cached(
                    "DELETE FROM ledger_claims WHERE settled_at IS NOT NULL AND settled_at <= ?1",
                )?
                .execute(params![cutoff])?;
            tx.prepare_cached("DELETE FROM ledger_nonces WHERE expires_at <= ?1")?
                .execute(params![now])?;
            tx.commit()?;
            Ok(u64::try_from(claims).unwrap_or(u64::MAX))
        })
        .await
    }

    /// Runs `work` with the connection, or a copy of it: `what` completes "could not …" in the
    /// error's message.
    fn run_owned<T: Send + 'static>(
        &self,
        what: &'static str,
        work: impl Fn(&mut Conn) -> Result<T, Error> + Send + Sync + Clone + 'static,
    ) -> impl Future<Output = Result<T, LedgerError>> + Send + '_ {
        let later = work.clone();
        self.run(what, work, move || later)
    }

    /// Runs `here` with the connection; `what` completes "could not …" in the error's message.
    ///
    /// When the connection and the file are free, `here` runs right here, on what the caller
    /// lent: a transaction takes tens of microseconds, less than handing it to another thread
    /// and back. When either is busy (another task's or another process's transaction),
    /// nothing was written, and the work `later` makes (owning what it needs) runs on a
    /// blocking thread, where it may wait up to the busy timeout.
    async fn run<'a, T, L>(
        &'a self,
        what: &'static str,
        here: impl FnOnce(&mut Conn) -> Result<T, Error> + Send + 'a,
        later: impl FnOnce() -> L + Send + 'a,
    ) -> Result<T, LedgerError>
    where
        T: Send + 'static,
        L: FnOnce(&mut Conn) -> Result<T, Error> + Send + 'static,
    {
        let failed = |reason: &dyn fmt::Display| {
            LedgerError::new(format!(
                "the SQLite ledger {} could not {what}: {reason}",
                self.path.display()
            ))
        };
        // Checked first, so the answer does not depend on whether the file is busy.
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|_| failed(&"it is used outside a Tokio runtime (it needs one)"))?;
        match run_here(&self.connection, self.busy_timeout, here) {
            None => {}
            Some(Ok(value)) => return Ok(value),
            Some(Err(Error::Sqlite(error))) => return Err(failed(&error)),
            Some(Err(Error::Data(message))) => return Err(failed(&message)),
        }
        let work = later();
        let connection = Arc::clone(&self.connection);
        let busy_timeout = self.busy_timeout;
        match handle
            .spawn_blocking(move || {
                let mut conn = lock(&connection);
                conn.connection.busy_timeout(busy_timeout)?;
                work(&mut conn)
            })
            .await
        {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(Error::Sqlite(error))) => Err(failed(&error)),
            Ok(Err(Error::Data(message))) => Err(failed(&message)),
            Err(error) if error.is_panic() => Err(failed(&"its blocking thread panicked")),
            Err(_) => Err(failed(&"its blocking task was cancelled")),
        }
    }
}

/// A write transaction, begun as `IMMEDIATE` and rolled back if it is dropped before it
/// commits, as rusqlite's `Transaction` is; its `BEGIN` and `COMMIT` are prepared once per
/// connection instead of parsed each time.
struct Write<'c> {
    connection: &'c Connection,
}

impl<'c> Write<'c> {
    fn begin(connection: &'c Connection) -> rusqlite::Result<Self> {
        if !connection.is_autocommit() {
            // One whose rollback failed when it was dropped.
            connection.execute_batch("ROLLBACK")?;
        }
        connection.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
        Ok(Write { connection })
    }

    fn commit(self) -> rusqlite::Result<()> {
        self.connection.prepare_cached("COMMIT")?.execute([])?;
        Ok(())
    }
}

impl std::ops::Deref for Write<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.connection
    }
}

impl Drop for Write<'_> {
    fn drop(&mut self) {
        if !self.connection.is_autocommit() {
            // A failed rollback is tried again when the next transaction begins.
            let _ = self.connection.execute_batch("ROLLBACK");
        }
    }
}

/// Runs `work` on this thread if the connection and the file are free; `None` when either is
/// busy (nothing was written).
fn run_here<T>(
    connection: &Mutex<Conn>,
    busy_timeout: Duration,
    work: impl FnOnce(&mut Conn) -> Result<T, Error>,
) -> Option<Result<T, Error>> {
    let mut guard = match connection.try_lock() {
        Ok(guard) => guard,
        Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return None,
    };
    let attempt = guard
        .connection
        .busy_timeout(Duration::ZERO)
        .map_err(Error::from)
        .and_then(|()| work(&mut guard));
    let restored = guard.connection.busy_timeout(busy_timeout);
    match attempt {
        Err(Error::Sqlite(error)) if is_busy(&error) => None,
        Ok(value) => Some(restored.map(|()| value).map_err(Error::from)),
        Err(error) => Some(Err(error)),
    }
}

/// Whether SQLite refused for want of a lock another connection holds: the transaction did
/// not start, so it can be run again.
fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

impl SqliteLedgerBuilder {
    /// When a transaction is on disk: [`Synchronous::Normal`] (the default) or
    /// [`Synchronous::Full`].
    pub fn synchronous(mut self, synchronous: Synchronous) -> Self {
        self.synchronous = synchronous;
        self
    }

    /// How long a transaction waits for the file while another connection (another process)
    /// writes to it, before the call fails as `ledger_unavailable` (default
    /// [`DEFAULT_BUSY_TIMEOUT`](SqliteLedger::DEFAULT_BUSY_TIMEOUT), 5 s).
    pub fn busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }

    /// Opens the ledger in the SQLite file at `path`, creating the file and its tables if
    /// there are none. Blocking work, like [`SqliteLedger::open`].
    pub fn open(self, path: impl AsRef<Path>) -> Result<SqliteLedger, LedgerError> {
        let path: PathBuf = path.as_ref().to_owned();
        let failed = |reason: &dyn fmt::Display| {
            LedgerError::new(format!(
                "the SQLite ledger {} could not be opened: {reason}",
                path.display()
            ))
        };
        let mut connection = Connection::open(&path).map_err(|error| failed(&error))?;
        self.configure(&mut connection)
            .map_err(|error| match error {
                Error::Sqlite(error) => failed(&error),
                Error::Data(message) => failed(&message),
            })?;
        Ok(SqliteLedger {
            connection: Arc::new(Mutex::new(Conn {
                connection,
                heads: Heads::default(),
            })),
            path: path.into(),
            busy_timeout: self.busy_timeout,
        })
    }

    fn configure(&self, connection: &mut Connection) -> Result<(), Error> {
        connection.busy_timeout(self.busy_timeout)?;
        let mode: String =
            connection.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Error::Data(format!(
                "the file cannot be put in WAL mode (it stays in {mode:?} mode)"
            )));
        }
        connection.pragma_update(None, "synchronous", self.synchronous.as_str())?;
        // Plans that do not depend on the values bound: without it, SQLite prepares the lookup
        // of a scope's last audit record again each time the scope is bound, which was a fifth
        // of a call's work. The ledger's queries all go by key, so no plan is worse for it.
        connection.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
            true,
        )?;
        schema(connection)
    }
}

impl fmt::Debug for SqliteLedger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteLedger")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// What went wrong inside a transaction: SQLite's error, or a row this crate did not write.
enum Error {
    Sqlite(rusqlite::Error),
    Data(String),
}

impl From<rusqlite::Error> for Error {
    fn from(error: rusqlite::Error) -> Self {
        Error::Sqlite(error)
    }
}

impl From<LedgerError> for Error {
    fn from(error: LedgerError) -> Self {
        Error::Data(error.message().to_owned())
    }
}

/// The tables, created on a file that has none (with [`AUDIT_TABLES`]). Claims have no index
/// but their key: every index is one more page written per claim and per settlement, on the
/// path of every call, while the queries that would use one (`unsettled`, `purge`) are rare.
/// Claims, counters, nonces, audit records and runs each have their own; every name starts
/// with `ledger_` so the file may hold the application's own tables too. A claim's contract
/// and arguments digests are stored as audit records' are (see [`Packed`]).
const TABLES: &str = "
CREATE TABLE ledger_claims (
    kind TEXT NOT NULL,
    key_scope TEXT NOT NULL,
    id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    tool TEXT NOT NULL,
    contract BLOB NOT NULL,
    arguments BLOB NOT NULL,
    principal TEXT NOT NULL,
    effect TEXT NOT NULL,
    call_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    claimed_at INTEGER NOT NULL,
    lease_until INTEGER NOT NULL,
    status TEXT,
    body TEXT,
    detail TEXT,
    released INTEGER NOT NULL DEFAULT 0,
    settled_at INTEGER,
    settled_seq INTEGER,
    PRIMARY KEY (kind, key_scope, id)
) WITHOUT ROWID;
CREATE TABLE ledger_counters (
    scope TEXT NOT NULL,
    name TEXT NOT NULL,
    used INTEGER NOT NULL,
    PRIMARY KEY (scope, name)
) WITHOUT ROWID;
CREATE TABLE ledger_nonces (
    nonce TEXT NOT NULL PRIMARY KEY,
    expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX ledger_nonces_expiry ON ledger_nonces (expires_at);
CREATE TABLE ledger_runs (
    scope TEXT NOT NULL,
    run TEXT NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (scope, run)
);
";

/// The audit trails: the numbered parts of each scope's trail, and the records, each at its
/// [`position`]. The records are a rowid table keyed by that place alone, so that the next
/// record of a trail goes at the end of its part's range, and those of the newest part at the
/// end of the table: SQLite then fills each page before it starts a new one, where a table
/// keyed by the scope's name and the sequence number (version 3) split its last page in
/// two, writing four pages, about once every five calls.
const AUDIT_TABLES: &str = "
CREATE TABLE ledger_scopes (
    number INTEGER PRIMARY KEY,
    scope TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    UNIQUE (scope, epoch)
);
CREATE TABLE ledger_audit (
    pos INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    kind TEXT NOT NULL,
    code TEXT,
    digest BLOB,
    principal TEXT NOT NULL,
    note TEXT,
    prev BLOB NOT NULL,
    hash BLOB NOT NULL,
    output BLOB
);
";

/// What version 2 adds to version 1: the digest of an outcome on the audit record that
/// settled it, and that record's place on the claim.
const FROM_VERSION_1: &str = "
ALTER TABLE ledger_audit ADD COLUMN output TEXT;
ALTER TABLE ledger_claims ADD COLUMN settled_seq INTEGER;
UPDATE ledger_meta SET value = 2 WHERE key = 'schema_version';
";

/// What version 3 changes from version 2: how an audit record's digests and hashes are stored
/// (see [`Packed`]). Records already written stay as they are; both forms are read.
const FROM_VERSION_2: &str = "UPDATE ledger_meta SET value = 3 WHERE key = 'schema_version';";

/// What version 4 changes from version 3: the audit records, keyed by scope and sequence
/// number until then, move to [`AUDIT_TABLES`], each record's stored values as they were
/// (the same bytes, the same hashes). Run after [`AUDIT_TABLES`] created the new tables with
/// the old one renamed `ledger_audit_3`.
const FROM_VERSION_3: &str = "
INSERT INTO ledger_scopes (scope, epoch)
    SELECT DISTINCT scope, seq >> 32 FROM ledger_audit_3 ORDER BY scope, seq >> 32;
INSERT INTO ledger_audit
    (pos, at, call_id, tool, kind, code, digest, principal, note, prev, hash, output)
    SELECT (s.number << 32) | (a.seq & 4294967295), a.at, a.call_id, a.tool, a.kind, a.code,
           a.digest, a.principal, a.note, a.prev, a.hash, a.output
    FROM ledger_audit_3 AS a JOIN ledger_scopes AS s ON s.scope = a.scope AND s.epoch = a.seq >> 32
    ORDER BY a.scope, a.seq;
";

/// Once every record has been moved ([`FROM_VERSION_3`]).
const FROM_VERSION_3_DONE: &str = "
DROP TABLE ledger_audit_3;
UPDATE ledger_meta SET value = 4 WHERE key = 'schema_version';
";

/// Brings a version 3 file's audit records to version 4 ([`FROM_VERSION_3`]).
fn from_version_3(tx: &Connection) -> Result<(), Error> {
    let bad: i64 = tx.query_row(
        "SELECT count(*) FROM ledger_audit WHERE typeof(seq) <> 'integer' OR seq < 1",
        [],
        |row| row.get(0),
    )?;
    if bad > 0 {
        return Err(data(format!(
            "{bad} of its audit records have a sequence number this crate did not write"
        )));
    }
    let parts: i64 = tx.query_row(
        "SELECT count(*) FROM (SELECT DISTINCT scope, seq >> 32 FROM ledger_audit)",
        [],
        |row| row.get(0),
    )?;
    if parts > MAX_PART {
        return Err(data(format!(
            "its audit trails have {parts} parts, more than {MAX_PART}"
        )));
    }
    tx.execute_batch("ALTER TABLE ledger_audit RENAME TO ledger_audit_3;")?;
    tx.execute_batch(AUDIT_TABLES)?;
    tx.execute_batch(FROM_VERSION_3)?;
    let (moved, old): (i64, i64) = tx.query_row(
        "SELECT (SELECT count(*) FROM ledger_audit), (SELECT count(*) FROM ledger_audit_3)",
        [],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    if moved != old {
        return Err(data(format!(
            "only {moved} of its {old} audit records could be moved to version 4"
        )));
    }
    tx.execute_batch(FROM_VERSION_3_DONE)?;
    Ok(())
}

/// Creates the tables on a file without them, brings those of an older version up to date,
/// or checks the version of those it has. One transaction, so two processes opening a new
/// file at once create the tables once.
fn schema(connection: &mut Connection) -> Result<(), Error> {
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let has_meta = tx
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ledger_meta'",
            [],
            |_| Ok(()),
        )
        .optional()?
        .is_some();
    if !has_meta {
        // Plain CREATE TABLE: a file that has a table of the same name is refused, not used.
        tx.execute_batch(TABLES)?;
        tx.execute_batch(AUDIT_TABLES)?;
        tx.execute_batch(
            "CREATE TABLE ledger_meta (key TEXT NOT NULL PRIMARY KEY, value INTEGER NOT NULL)",
        )?;
        tx.execute(
            "INSERT INTO ledger_meta (key, value) VALUES ('schema_version', ?1)",
            params![SqliteLedger::SCHEMA_VERSION],
        )?;
        tx.commit()?;
        return Ok(());
    }
    let version: Option<rusqlite::types::Value> = tx
        .query_row(
            "SELECT value FROM ledger_meta WHERE key = 'schema_version'",
            [],
            |row| row.get(0),
        )
        .optional()?;
    match version {
        Some(rusqlite::types::Value::Integer(SqliteLedger::SCHEMA_VERSION)) => Ok(()),
        Some(rusqlite::types::Value::Integer(old @ 1..=3)) => {
            if old == 1 {
                tx.execute_batch(FROM_VERSION_1)?;
            }
            if old <= 2 {
                tx.execute_batch(FROM_VERSION_2)?;
            }
            from_version_3(&tx)?;
            tx.commit()?;
            Ok(())
        }
        Some(rusqlite::types::Value::Integer(version))
            if version > SqliteLedger::SCHEMA_VERSION =>
        {
            Err(Error::Data(format!(
                "its tables have schema version {version}, written by a newer version of this \
                 crate (this one reads version {}); open it with that version",
                SqliteLedger::SCHEMA_VERSION
            )))
        }
        Some(version) => Err(Error::Data(format!(
            "its tables have an unknown schema version ({version:?}; this crate reads version {})",
            SqliteLedger::SCHEMA_VERSION
        ))),
        None => Err(Error::Data(
            "it has a ledger_meta table without a schema version: it is not a ledger".to_owned(),
        )),
    }
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

fn data(message: impl Into<String>) -> Error {
    Error::Data(message.into())
}

/// The stored claim of a key, as [`decide`] needs it.
struct Held {
    attempt: u32,
    binding: Binding,
    effect: Effect,
    outcome: Option<Recorded>,
    released: bool,
    lease_until: i64,
}

/// A digest or hash of an audit record as stored: SHA-256 in lowercase hex (every digest and
/// hash this crate makes) as its 32 bytes, anything else as the text it is. Half the bytes per
/// digest keeps more records on a page, so an append writes fewer pages. [`unpacked`] gives
/// back the same text from either form.
enum Packed<'a> {
    Bytes([u8; 32]),
    Text(&'a str),
}

impl<'a> Packed<'a> {
    /// Only lowercase hex is packed, so that the text read back is the text written.
    fn new(text: &'a str) -> Self {
        let mut bytes = [0; 32];
        if crate::digest::unhex_lowercase_into(text, &mut bytes) {
            Packed::Bytes(bytes)
        } else {
            Packed::Text(text)
        }
    }
}

impl rusqlite::ToSql for Packed<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Packed::Bytes(bytes) => ValueRef::Blob(bytes),
            Packed::Text(text) => ValueRef::Text(text.as_bytes()),
        }))
    }
}

/// What a record's `prev` is stored as when it is the hash of the record before it in the
/// scope (the genesis for the first): nothing, since that record has it.
const LINKED: ToSqlOutput<'static> = ToSqlOutput::Borrowed(ValueRef::Blob(&[]));

/// The text of a column written as [`Packed`] (or as text, by a version 2 file).
fn unpacked(row: &Row<'_>, column: usize) -> rusqlite::Result<Option<String>> {
    let invalid = |kind, reason: Box<dyn std::error::Error + Send + Sync>| {
        rusqlite::Error::FromSqlConversionFailure(column, kind, reason)
    };
    match row.get_ref(column)? {
        ValueRef::Null => Ok(None),
        ValueRef::Blob(bytes) if bytes.len() == 32 => Ok(Some(crate::digest::hex(bytes))),
        ValueRef::Text(text) => std::str::from_utf8(text)
            .map(|text| Some(text.to_owned()))
            .map_err(|e| invalid(rusqlite::types::Type::Text, e.into())),
        other => Err(invalid(
            other.data_type(),
            "neither text nor a 32-byte digest".into(),
        )),
    }
}

/// A column written as [`Packed`] that a row must have (a record's `hash` and `prev`, a
/// claim's digests).
fn unpacked_required(row: &Row<'_>, column: usize) -> rusqlite::Result<String> {
    unpacked(row, column)?.ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            column,
            rusqlite::types::Type::Null,
            "a digest or hash that must be there is missing".into(),
        )
    })
}

/// A record's stored `prev`: `None` when it was stored as [`LINKED`].
fn linked_prev(row: &Row<'_>, column: usize) -> rusqlite::Result<Option<String>> {
    match row.get_ref(column)? {
        ValueRef::Blob([]) => Ok(None),
        _ => unpacked_required(row, column).map(Some),
    }
}

/// How many low bits of an audit record's place hold (the low bits of) its sequence number.
const PART_BITS: u32 = 32;

/// The largest number a part of a trail may have, so that every place fits in an `i64`.
const MAX_PART: i64 = (1 << (63 - PART_BITS)) - 1;

/// The low bits of a place: those of the sequence number.
const IN_PART: u64 = (1 << PART_BITS) - 1;

/// Where the record `seq` of the trail part `number` is in `ledger_audit`.
///
/// Each scope's trail is kept in parts of 2^32 records, each numbered (in `ledger_scopes`)
/// when its first record is written; a record's place is its part's number followed by the
/// low 32 bits of its sequence number. The records of a part are one range of places, in
/// order, and the table is keyed by the place alone: appending a record to the newest part
/// adds it at the end of the table, where SQLite fills a page before it starts the next one.
fn position(number: i64, seq: u64) -> i64 {
    (number << PART_BITS) | (seq & IN_PART) as i64
}

/// The places of the records of the part `number`, first and last.
fn part_range(number: i64) -> (i64, i64) {
    let first = number << PART_BITS;
    (first, first | IN_PART as i64)
}

/// The sequence number of the record at `pos` in the part for `epoch` (the sequence numbers'
/// high bits).
fn seq_at(epoch: i64, pos: i64) -> Result<u64, Error> {
    if !(0..=MAX_PART).contains(&epoch) || pos < 0 {
        return Err(data(format!(
            "a stored audit trail has a part {epoch} at place {pos}"
        )));
    }
    Ok(((epoch as u64) << PART_BITS) | (pos as u64 & IN_PART))
}

/// The last record of `scope`'s trail in the file; `None` when it has none.
fn stored_head(tx: &Connection, scope: &str) -> Result<Option<Head>, Error> {
    let newest: Option<(i64, i64)> = tx
        .prepare_cached(
            "SELECT number, epoch FROM ledger_scopes WHERE scope = ?1 ORDER BY epoch DESC LIMIT 1",
        )?
        .query_row(params![scope], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    let Some((number, epoch)) = newest else {
        return Ok(None);
    };
    let (first, last) = part_range(number);
    let stored: Option<(i64, String)> = tx
        .prepare_cached(
            "SELECT pos, hash FROM ledger_audit WHERE pos BETWEEN ?1 AND ?2
             ORDER BY pos DESC LIMIT 1",
        )?
        .query_row(params![first, last], |row| {
            Ok((row.get(0)?, unpacked_required(row, 1)?))
        })
        .optional()?;
    let Some((pos, hash)) = stored else {
        return Err(data(format!(
            "the audit trail of scope {scope:?} has a part with no records"
        )));
    };
    Ok(Some(Head {
        number,
        seq: seq_at(epoch, pos)?,
        hash,
    }))
}

/// Numbers the part `epoch` of `scope`'s trail, which starts with the record being appended.
fn new_part(tx: &Connection, scope: &str, epoch: u64) -> Result<i64, Error> {
    let epoch = i64::try_from(epoch).map_err(|_| data("the audit trail is full"))?;
    let number: i64 = tx
        .prepare_cached(
            "INSERT INTO ledger_scopes (scope, epoch) VALUES (?1, ?2) RETURNING number",
        )?
        .query_row(params![scope, epoch], |row| row.get(0))?;
    if !(1..=MAX_PART).contains(&number) {
        return Err(data(format!(
            "the ledger has numbered {MAX_PART} parts of audit trails and has no number for \
             another"
        )));
    }
    Ok(number)
}

/// Appends `events` to `scope`'s chain, after its last record (from `heads` when it knows it);
/// the sequence number of the first appended (`None` when there are none). The new head is
/// kept in `heads` once the transaction commits.
fn append<'e>(
    tx: &Connection,
    heads: &mut Heads,
    scope: &str,
    at: i64,
    events: impl IntoIterator<Item = &'e AuditEvent>,
) -> Result<Option<u64>, Error> {
    let mut events = events.into_iter().peekable();
    if events.peek().is_none() {
        return Ok(None);
    }
    let mut last = heads.get(tx, scope)?;
    let first = last.as_ref().map_or(1, |head| head.seq + 1);
    let mut insert = tx.prepare_cached(
        "INSERT INTO ledger_audit
            (pos, at, call_id, tool, kind, code, digest, principal, note, prev, hash, output)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?;
    for e in events {
        let (seq, prev) = match &last {
            Some(head) => (
                head.seq
                    .checked_add(1)
                    .filter(|seq| i64::try_from(*seq).is_ok())
                    .ok_or_else(|| data("the audit trail is full"))?,
                head.hash.as_str(),
            ),
            None => (1, GENESIS),
        };
        let number = match &last {
            Some(head) if head.seq >> PART_BITS == seq >> PART_BITS => head.number,
            _ => new_part(tx, scope, seq >> PART_BITS)?,
        };
        let hash = record_hash(scope, seq, at, e, prev);
        insert.execute(params![
            position(number, seq),
            at,
            e.call_id,
            e.tool,
            e.kind.as_str(),
            e.code.map(Code::as_str),
            e.digest.as_deref().map(Packed::new),
            e.principal,
            e.note,
            // Always the hash of the record before (or the genesis): stored as "the one before".
            LINKED,
            Packed::new(&hash),
            e.output.as_deref().map(Packed::new),
        ])?;
        last = Some(Head { number, seq, hash });
    }
    if let Some(head) = last {
        heads.moved(scope, head);
    }
    Ok(Some(first))
}

/// Writes `outcome` into the claim of `key`, settled at `now` by the record `seq` of its
/// scope.
fn write_outcome(
    tx: &Connection,
    key: &ClaimKey,
    outcome: &Recorded,
    now: i64,
    seq: Option<u64>,
) -> Result<(), Error> {
    let seq = seq
        .and_then(|seq| i64::try_from(seq).ok())
        .ok_or_else(|| data("the audit trail is full"))?;
    tx.prepare_cached(
        "UPDATE ledger_claims SET status = ?4, body = ?5, detail = ?6, settled_at = ?7,
            settled_seq = ?8
         WHERE kind = ?1 AND key_scope = ?2 AND id = ?3",
    )?
    .execute(params![
        key.kind.as_str(),
        key.scope,
        key.id,
        outcome.status(),
        outcome.body(),
        outcome.detail(),
        now,
        seq,
    ])?;
    Ok(())
}

/// Takes one unit of each of the claim's quotas, all or none: `Some(name)` of the first one
/// used up.
fn take_quotas(tx: &Connection, claim: &Claim) -> Result<Option<String>, Error> {
    let mut used =
        tx.prepare_cached("SELECT used FROM ledger_counters WHERE scope = ?1 AND name = ?2")?;
    for quota in &claim.quotas {
        let count: i64 = used
            .query_row(params![claim.scope, quota.name], |row| row.get(0))
            .optional()?
            .unwrap_or(0);
        if u64::try_from(count).unwrap_or(0) >= quota.limit {
            return Ok(Some(quota.name.clone()));
        }
    }
    let mut take = tx.prepare_cached(
        "INSERT INTO ledger_counters (scope, name, used) VALUES (?1, ?2, 1)
         ON CONFLICT (scope, name) DO UPDATE SET used = used + 1",
    )?;
    for quota in &claim.quotas {
        take.execute(params![claim.scope, quota.name])?;
    }
    Ok(None)
}

fn load_held(tx: &Connection, key: &ClaimKey) -> Result<Option<Held>, Error> {
    struct Stored {
        attempt: i64,
        binding: Binding,
        effect: String,
        status: Option<String>,
        body: Option<String>,
        detail: Option<String>,
        released: bool,
        lease_until: i64,
    }
    let read = |row: &Row<'_>| {
        Ok(Stored {
            attempt: row.get(0)?,
            binding: Binding {
                tool: row.get(1)?,
                contract: unpacked_required(row, 2)?.into(),
                arguments: unpacked_required(row, 3)?.into(),
                principal: row.get(4)?,
            },
            status: row.get(5)?,
            body: row.get(6)?,
            detail: row.get(7)?,
            released: row.get(8)?,
            lease_until: row.get(9)?,
            effect: row.get(10)?,
        })
    };
    let found = tx
        .prepare_cached(
            "SELECT attempt, tool, contract, arguments, principal, status, body, detail,
                    released, lease_until, effect
             FROM ledger_claims WHERE kind = ?1 AND key_scope = ?2 AND id = ?3",
        )?
        .query_row(params![key.kind.as_str(), key.scope, key.id], read)
        .optional()?;
    let Some(stored) = found else {
        return Ok(None);
    };
    Ok(Some(Held {
        attempt: attempt_of(stored.attempt)?,
        binding: stored.binding,
        effect: parse_effect(&stored.effect).ok_or_else(|| {
            data(format!(
                "a stored claim has unknown effect {:?}",
                stored.effect
            ))
        })?,
        outcome: outcome_of(stored.status, stored.body, stored.detail)?,
        released: stored.released,
        lease_until: stored.lease_until,
    }))
}

fn seq_of(stored: i64) -> Result<u64, Error> {
    u64::try_from(stored).map_err(|_| data(format!("a stored audit record has seq {stored}")))
}

fn attempt_of(stored: i64) -> Result<u32, Error> {
    u32::try_from(stored)
        .ok()
        .filter(|attempt| *attempt > 0)
        .ok_or_else(|| data(format!("a stored claim has attempt {stored}")))
}

fn outcome_of(
    status: Option<String>,
    body: Option<String>,
    detail: Option<String>,
) -> Result<Option<Recorded>, Error> {
    match (status, body) {
        (None, _) => Ok(None),
        (Some(status), Some(body)) => Ok(Some(Recorded::from_parts(&status, body, detail)?)),
        (Some(_), None) => Err(data("a stored outcome has no body")),
    }
}

/// Inserts a new claim of `claim.key`, or takes over the key's stored claim with `take_over`;
/// whether a row was written (a new claim of a key that has one writes nothing).
fn write_claim(
    tx: &Connection,
    claim: &Claim,
    attempt: u32,
    effect: Effect,
    now: i64,
    take_over: bool,
) -> Result<bool, Error> {
    const NEW: &str = "INSERT INTO ledger_claims
            (kind, key_scope, id, attempt, tool, contract, arguments, principal, effect,
             call_id, scope, claimed_at, lease_until, status, body, detail, released,
             settled_at, settled_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,
                 NULL, NULL, NULL, 0, NULL, NULL)
         ON CONFLICT (kind, key_scope, id) DO NOTHING";
    const TAKE_OVER: &str = "INSERT INTO ledger_claims
            (kind, key_scope, id, attempt, tool, contract, arguments, principal, effect,
             call_id, scope, claimed_at, lease_until, status, body, detail, released,
             settled_at, settled_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,
                 NULL, NULL, NULL, 0, NULL, NULL)
         ON CONFLICT (kind, key_scope, id) DO UPDATE SET
            attempt = excluded.attempt, tool = excluded.tool,
            contract = excluded.contract, arguments = excluded.arguments,
            principal = excluded.principal, effect = excluded.effect,
            call_id = excluded.call_id, scope = excluded.scope,
            claimed_at = excluded.claimed_at, lease_until = excluded.lease_until,
            status = NULL, body = NULL, detail = NULL, released = 0, settled_at = NULL,
            settled_seq = NULL";
    let binding = &claim.binding;
    let written = tx
        .prepare_cached(if take_over { TAKE_OVER } else { NEW })?
        .execute(params![
            claim.key.kind.as_str(),
            claim.key.scope,
            claim.key.id,
            attempt,
            binding.tool,
            Packed::new(&binding.contract),
            Packed::new(&binding.arguments),
            binding.principal,
            effect.as_str(),
            claim.call_id,
            claim.scope,
            now,
            now.saturating_add(millis(claim.lease)),
        ])?;
    Ok(written == 1)
}

fn claim_in(conn: &mut Conn, claim: &Claim) -> Result<Claimed, Error> {
    let Conn { connection, heads } = conn;
    let tx = Write::begin(connection)?;
    heads.begin(&tx)?;
    // The time is read once the file is locked: waiting for the lock does not shorten a lease.
    let now = unix_millis(SystemTime::now());
    // Most claims are of new keys and take no quota: one statement claims them.
    let answer = if claim.quotas.is_empty() && write_claim(&tx, claim, 1, claim.effect, now, false)?
    {
        Claimed::New { attempt: 1 }
    } else {
        // A key claimed before, or a claim that takes quota: the claim is written only when the
        // held record allows it and the quotas have room.
        let fresh = |attempt, effect, take_over| -> Result<Claimed, Error> {
            Ok(match take_quotas(&tx, claim)? {
                Some(quota) => Claimed::Exhausted(quota),
                None => {
                    write_claim(&tx, claim, attempt, effect, now, take_over)?;
                    Claimed::New { attempt }
                }
            })
        };
        match load_held(&tx, &claim.key)? {
            None => fresh(1, claim.effect, false)?,
            Some(held) => {
                let passed = held.lease_until <= now;
                let effect = taken_over_effect(claim, held.effect, held.released);
                match decide(
                    claim,
                    &held.binding,
                    held.effect,
                    held.outcome,
                    held.released,
                    passed,
                ) {
                    None => fresh(held.attempt.saturating_add(1), effect, true)?,
                    Some(answer) => answer,
                }
            }
        }
    };
    let event = claim_event(claim, &answer);
    append(
        &tx,
        heads,
        &claim.scope,
        now,
        claim.audit.iter().chain([&event]),
    )?;
    tx.commit()?;
    heads.committed();
    Ok(answer)
}

fn settle_in(
    conn: &mut Conn,
    key: &ClaimKey,
    attempt: u32,
    outcome: &Recorded,
    audit: &[AuditEvent],
) -> Result<bool, Error> {
    let Conn { connection, heads } = conn;
    let tx = Write::begin(connection)?;
    heads.begin(&tx)?;
    let now = unix_millis(SystemTime::now());
    // Read, then written by its key (`write_outcome`): an `UPDATE … RETURNING` would gather
    // its one row in a temporary table first.
    let found: Option<(String, AuditEvent)> = tx
        .prepare_cached(
            "SELECT scope, call_id, tool, arguments, principal FROM ledger_claims
             WHERE kind = ?1 AND key_scope = ?2 AND id = ?3 AND attempt = ?4
               AND status IS NULL AND released = 0",
        )?
        .query_row(
            params![key.kind.as_str(), key.scope, key.id, attempt],
            |row| {
                Ok((
                    row.get(0)?,
                    AuditEvent {
                        call_id: row.get(1)?,
                        tool: row.get(2)?,
                        kind: AuditKind::Outcome,
                        code: None,
                        digest: Some(unpacked_required(row, 3)?.into()),
                        principal: row.get(4)?,
                        note: None,
                        output: None,
                    },
                ))
            },
        )
        .optional()?;
    let Some((scope, call)) = found else {
        return Ok(false);
    };
    // The claim notes the record that settled it, once that is appended.
    let (events, at) = settling(audit, outcome, || call);
    let first = append(&tx, heads, &scope, now, &events)?;
    write_outcome(
        &tx,
        key,
        outcome,
        now,
        first.and_then(|first| first.checked_add(at as u64)),
    )?;
    tx.commit()?;
    heads.committed();
    Ok(true)
}

fn reconcile_in(
    conn: &mut Conn,
    listed: &Unsettled,
    resolution: &Resolution,
) -> Result<Reconciled, Error> {
    struct Stored {
        call_id: String,
        tool: String,
        arguments: String,
        principal: String,
        scope: String,
        attempt: i64,
        claimed_at: i64,
        settled: bool,
    }
    let key = &listed.key;
    let Conn { connection, heads } = conn;
    let tx = Write::begin(connection)?;
    heads.begin(&tx)?;
    let now = unix_millis(SystemTime::now());
    let found = tx
        .prepare_cached(
            "SELECT call_id, tool, arguments, principal, scope, attempt, claimed_at,
                    status IS NOT NULL OR released <> 0
             FROM ledger_claims WHERE kind = ?1 AND key_scope = ?2 AND id = ?3",
        )?
        .query_row(params![key.kind.as_str(), key.scope, key.id], |row| {
            Ok(Stored {
                call_id: row.get(0)?,
                tool: row.get(1)?,
                arguments: unpacked_required(row, 2)?,
                principal: row.get(3)?,
                scope: row.get(4)?,
                attempt: row.get(5)?,
                claimed_at: row.get(6)?,
                settled: row.get(7)?,
            })
        })
        .optional()?;
    let Some(stored) = found else {
        return Ok(Reconciled::NotFound);
    };
    let attempt = attempt_of(stored.attempt)?;
    if let Some(answer) = Reconciled::check(listed, attempt, stored.claimed_at, stored.settled) {
        return Ok(answer);
    }
    let Stored {
        call_id,
        tool,
        arguments,
        principal,
        scope,
        ..
    } = stored;
    let recorded = resolution.recorded();
    let event = AuditEvent {
        call_id: call_id.into(),
        tool: tool.into(),
        kind: AuditKind::Reconciled,
        code: None,
        digest: Some(arguments.into()),
        principal: principal.into(),
        note: Some(resolution.as_str().to_owned()),
        output: recorded.as_ref().map(Recorded::digest),
    };
    let seq = append(&tx, heads, &scope, now, [&event])?;
    match &recorded {
        Some(recorded) => write_outcome(&tx, key, recorded, now, seq)?,
        None => {
            tx.prepare_cached(
                "UPDATE ledger_claims SET released = 1, settled_at = ?4
                 WHERE kind = ?1 AND key_scope = ?2 AND id = ?3",
            )?
            .execute(params![key.kind.as_str(), key.scope, key.id, now])?;
        }
    }
    tx.commit()?;
    heads.committed();
    Ok(Reconciled::Settled)
}

fn unsettled_in(conn: &mut Conn, scope: &str) -> Result<Vec<Unsettled>, Error> {
    let now = unix_millis(SystemTime::now());
    let mut statement = conn.connection.prepare_cached(
        "SELECT kind, key_scope, id, call_id, tool, contract, arguments, principal, attempt,
                claimed_at
         FROM ledger_claims
         WHERE scope = ?1 AND status IS NULL AND released = 0 AND lease_until <= ?2
         ORDER BY claimed_at, kind, key_scope, id",
    )?;
    let rows = statement.query_map(params![scope, now], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, String>(2)?,
            row.get::<_, String>(3)?,
            Binding {
                tool: row.get(4)?,
                contract: unpacked_required(row, 5)?.into(),
                arguments: unpacked_required(row, 6)?.into(),
                principal: row.get(7)?,
            },
            row.get::<_, i64>(8)?,
            row.get::<_, i64>(9)?,
        ))
    })?;
    let mut found = Vec::new();
    for row in rows {
        let (kind, key_scope, id, call_id, binding, attempt, claimed_at) = row?;
        let kind = KeyKind::parse(&kind)
            .ok_or_else(|| data(format!("a stored claim has unknown kind {kind:?}")))?;
        found.push(Unsettled {
            key: ClaimKey {
                kind,
                scope: key_scope.into(),
                id: id.into(),
            },
            call_id,
            binding,
            attempt: attempt_of(attempt)?,
            claimed_at: from_unix_millis(claimed_at),
        });
    }
    Ok(found)
}

fn trail_in(conn: &mut Conn, scope: &str) -> Result<Vec<AuditRecord>, Error> {
    // One read transaction: the outcomes and the trail as of one moment.
    let tx = conn.connection.transaction()?;
    let held = held_in(&tx, scope)?;
    let parts: Vec<(i64, i64)> = tx
        .prepare_cached("SELECT number, epoch FROM ledger_scopes WHERE scope = ?1 ORDER BY epoch")?
        .query_map(params![scope], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut statement = tx.prepare_cached(
        "SELECT pos, at, call_id, tool, kind, code, digest, principal, note, prev, hash, output
         FROM ledger_audit WHERE pos BETWEEN ?1 AND ?2 ORDER BY pos",
    )?;
    let mut records: Vec<AuditRecord> = Vec::new();
    for (number, epoch) in parts {
        let (first, last) = part_range(number);
        let rows = statement.query_map(params![first, last], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(4)?,
                row.get::<_, Option<String>>(5)?,
                AuditRecord {
                    scope: scope.to_owned(),
                    seq: 0,
                    at: row.get(1)?,
                    event: AuditEvent {
                        call_id: row.get(2)?,
                        tool: row.get(3)?,
                        kind: AuditKind::Refused,
                        code: None,
                        digest: unpacked(row, 6)?.map(Into::into),
                        principal: row.get(7)?,
                        note: row.get(8)?,
                        output: unpacked(row, 11)?,
                    },
                    prev: String::new(),
                    hash: unpacked_required(row, 10)?,
                },
                linked_prev(row, 9)?,
            ))
        })?;
        for row in rows {
            let (pos, kind, code, mut record, prev) = row?;
            record.seq = seq_at(epoch, pos)?;
            record.prev = match prev {
                Some(prev) => prev,
                // The hash of the record read before it: a record missing from the store shows
                // as a gap in the sequence numbers, which `verify` reports first.
                None => records
                    .last()
                    .map_or_else(|| GENESIS.to_owned(), |before| before.hash.clone()),
            };
            record.event.kind = AuditKind::parse(&kind)
                .ok_or_else(|| data(format!("a stored audit record has unknown kind {kind:?}")))?;
            record.event.code = match code {
                None => None,
                Some(code) => Some(code.parse::<Code>().map_err(|_| {
                    data(format!("a stored audit record has unknown code {code:?}"))
                })?),
            };
            records.push(record);
        }
    }
    drop(statement);
    held_outcomes(&mut records, held)?;
    Ok(records)
}

/// The outcomes held for the claims of `scope`, each with the record that settled it (when
/// the claim names one: see [`held_outcomes`] for those that do not). This
/// reads every claim, as [`unsettled_in`] does: the trail is read rarely, by an operator.
fn held_in(tx: &Connection, scope: &str) -> Result<Vec<HeldOutcome>, Error> {
    let mut statement = tx.prepare_cached(
        "SELECT settled_seq, call_id, status, body, detail FROM ledger_claims
         WHERE scope = ?1 AND status IS NOT NULL",
    )?;
    let rows = statement.query_map(params![scope], |row| {
        Ok((
            row.get::<_, Option<i64>>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, Option<String>>(2)?,
            row.get::<_, Option<String>>(3)?,
            row.get::<_, Option<String>>(4)?,
        ))
    })?;
    let mut held = Vec::new();
    for row in rows {
        let (seq, call_id, status, body, detail) = row?;
        let Some(outcome) = outcome_of(status, body, detail)? else {
            continue;
        };
        held.push(HeldOutcome {
            seq: seq.map(seq_of).transpose()?,
            call_id,
            outcome,
        });
    }
    Ok(held)
}

fn use_nonce_in(conn: &mut Conn, nonce: &str, expires: i64) -> Result<bool, Error> {
    let tx = Write::begin(&conn.connection)?;
    let now = unix_millis(SystemTime::now());
    // Each nonce is deleted once, after it expired: the table holds the unexpired ones.
    tx.prepare_cached("DELETE FROM ledger_nonces WHERE expires_at <= ?1")?
        .execute(params![now])?;
    let inserted = tx
        .prepare_cached(
            "INSERT INTO ledger_nonces (nonce, expires_at) VALUES (?1, ?2)
             ON CONFLICT (nonce) DO NOTHING",
        )?
        .execute(params![nonce, expires])?;
    tx.commit()?;
    Ok(inserted == 1)
}

impl Ledger for SqliteLedger {
    fn claim<'a>(&'a self, claim: &'a Claim) -> LedgerFuture<'a, Claimed> {
        Box::pin(self.run(
            "claim a call",
            move |conn| claim_in(conn, claim),
            move || {
                let claim = claim.clone();
                move |conn: &mut Conn| claim_in(conn, &claim)
            },
        ))
    }

    fn settle<'a>(
        &'a self,
        key: &'a ClaimKey,
        attempt: u32,
        outcome: &'a Recorded,
        audit: &'a [AuditEvent],
    ) -> LedgerFuture<'a, bool> {
        Box::pin(self.run(
            "record a call's outcome",
            move |conn| settle_in(conn, key, attempt, outcome, audit),
            move || {
                let (key, outcome, audit) = (key.clone(), outcome.clone(), audit.to_vec());
                move |conn: &mut Conn| settle_in(conn, &key, attempt, &outcome, &audit)
            },
        ))
    }

    fn append<'a>(&'a self, scope: &'a str, audit: &'a [AuditEvent]) -> LedgerFuture<'a, ()> {
        let (scope, audit) = (scope.to_owned(), audit.to_vec());
        Box::pin(self.run_owned("append to the audit trail", move |conn| {
            let Conn { connection, heads } = conn;
            let tx = Write::begin(connection)?;
            heads.begin(&tx)?;
            append(&tx, heads, &scope, unix_millis(SystemTime::now()), &audit)?;
            tx.commit()?;
            heads.committed();
            Ok(())
        }))
    }

    fn reconcile<'a>(
        &'a self,
        listed: &'a Unsettled,
        resolution: &'a Resolution,
    ) -> LedgerFuture<'a, Reconciled> {
        let (listed, resolution) = (listed.clone(), resolution.clone());
        Box::pin(self.run_owned("reconcile a claim", move |conn| {
            reconcile_in(conn, &listed, &resolution)
        }))
    }

    fn unsettled<'a>(&'a self, scope: &'a str) -> LedgerFuture<'a, Vec<Unsettled>> {
        let scope = scope.to_owned();
        Box::pin(self.run_owned("list unsettled claims", move |conn| {
            unsettled_in(conn, &scope)
        }))
    }

    fn trail<'a>(&'a self, scope: &'a str) -> LedgerFuture<'a, Vec<AuditRecord>> {
        let scope = scope.to_owned();
        Box::pin(self.run_owned("read the audit trail", move |conn| trail_in(conn, &scope)))
    }

    fn use_nonce<'a>(&'a self, nonce: &'a str, expires: SystemTime) -> LedgerFuture<'a, bool> {
        let (nonce, expires) = (nonce.to_owned(), unix_millis(expires));
        Box::pin(self.run_owned("use a nonce", move |conn| {
            use_nonce_in(conn, &nonce, expires)
        }))
    }

    fn store_run<'a>(
        &'a self,
        scope: &'a str,
        run: &'a str,
        state: Option<&'a str>,
    ) -> LedgerFuture<'a, ()> {
        let (scope, run, state) = (scope.to_owned(), run.to_owned(), state.map(str::to_owned));
        Box::pin(self.run_owned("store a run", move |conn| {
            match &state {
                Some(state) => conn
                    .connection
                    .prepare_cached(
                        "INSERT INTO ledger_runs (scope, run, state) VALUES (?1, ?2, ?3)
                         ON CONFLICT (scope, run) DO UPDATE SET state = excluded.state",
                    )?
                    .execute(params![scope, run, state])?,
                None => conn
                    .connection
                    .prepare_cached("DELETE FROM ledger_runs WHERE scope = ?1 AND run = ?2")?
                    .execute(params![scope, run])?,
            };
            Ok(())
        }))
    }

    fn load_run<'a>(&'a self, scope: &'a str, run: &'a str) -> LedgerFuture<'a, Option<String>> {
        let (scope, run) = (scope.to_owned(), run.to_owned());
        Box::pin(self.run_owned("load a run", move |conn| {
            Ok(conn
                .connection
                .prepare_cached("SELECT state FROM ledger_runs WHERE scope = ?1 AND run = ?2")?
                .query_row(params![scope, run], |row| row.get(0))
                .optional()?)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(call_id: &str) -> AuditEvent {
        AuditEvent {
            call_id: call_id.into(),
            tool: "refund".into(),
            kind: AuditKind::Admitted,
            code: None,
            digest: None,
            principal: "user-1".into(),
            note: None,
            output: None,
        }
    }

    /// Appends one record to each scope, in that order, in one transaction.
    fn append_each(conn: &mut Conn, scopes: &[&str], call_id: &str) -> Result<(), Error> {
        let Conn { connection, heads } = conn;
        let tx = Write::begin(connection)?;
        heads.begin(&tx)?;
        for scope in scopes {
            append(&tx, heads, scope, 0, [&event(call_id)])?;
        }
        tx.commit()?;
        heads.committed();
        Ok(())
    }

    #[test]
    fn the_heads_of_two_scopes_in_one_transaction_are_both_kept() {
        let path = std::env::temp_dir().join(format!(
            "tool-core-heads-{}-{:?}.db",
            std::process::id(),
            std::thread::current().id()
        ));
        let remove = || {
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
            }
        };
        // A file left by an earlier run that stopped halfway would hold its records.
        remove();
        let ledger = SqliteLedger::open(&path).expect("the ledger opens");
        let mut conn = lock(&ledger.connection);
        append_each(&mut conn, &["b"], "call_0").unwrap_or_else(|_| panic!("b is appended"));
        // "a" is appended to, then "b"'s head is read from the file: both are the heads now.
        for round in 1..=3 {
            let call = format!("call_{round}");
            append_each(&mut conn, &["a"], &call).unwrap_or_else(|_| panic!("a, round {round}"));
            let Conn { connection, heads } = &mut *conn;
            let tx = Write::begin(connection).unwrap();
            heads.begin(&tx).unwrap_or_else(|_| panic!("begins"));
            append(&tx, heads, "a", 0, [&event(&call)]).unwrap_or_else(|_| panic!("a again"));
            heads.by_scope.remove("b");
            assert!(
                heads
                    .get(&tx, "b")
                    .unwrap_or_else(|_| panic!("b"))
                    .is_some()
            );
            tx.commit().unwrap();
            heads.committed();
        }
        drop(conn);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let trail = rt.block_on(ledger.trail("a")).unwrap();
        assert_eq!(trail.len(), 6);
        assert_eq!(crate::ledger::verify(&trail, None).map(|_| ()), Ok(()));
        drop(ledger);
        remove();
    }
}
