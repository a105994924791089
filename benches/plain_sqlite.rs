//! The baseline the SQLite ledger is measured against: a hand-written rusqlite claim and
//! settle, in the same durability as `SqliteLedger`'s default (WAL, `synchronous = NORMAL`).
//! Per call, one transaction inserts the claim, a second one writes its result into it; no
//! audit records, no digests.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior, params};

/// One SQLite file with a claims table.
pub(crate) struct PlainSqlite {
    connection: Connection,
}

impl PlainSqlite {
    /// Opens (or creates) the file at `path` in WAL mode with `synchronous = NORMAL`.
    pub(crate) fn open(path: &Path) -> rusqlite::Result<PlainSqlite> {
        let connection = Connection::open(path)?;
        connection.busy_timeout(std::time::Duration::from_secs(5))?;
        let _mode: String =
            connection.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
        connection.pragma_update(None, "synchronous", "NORMAL")?;
        connection.execute_batch(
            "CREATE TABLE IF NOT EXISTS claims (
                scope TEXT NOT NULL,
                id TEXT NOT NULL,
                tool TEXT NOT NULL,
                arguments TEXT NOT NULL,
                claimed_at INTEGER NOT NULL,
                status TEXT,
                body TEXT,
                settled_at INTEGER,
                PRIMARY KEY (scope, id)
            ) WITHOUT ROWID",
        )?;
        Ok(PlainSqlite { connection })
    }

    /// Claims `id` in `scope` in one transaction, then settles it with `body` in a second;
    /// false when the id was claimed before.
    pub(crate) fn call(
        &mut self,
        scope: &str,
        id: &str,
        tool: &str,
        arguments: &str,
        body: &str,
    ) -> rusqlite::Result<bool> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let tx = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let inserted = tx
            .prepare_cached(
                "INSERT INTO claims (scope, id, tool, arguments, claimed_at)
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
            )?
            .execute(params![scope, id, tool, arguments, now])?;
        tx.commit()?;
        if inserted == 0 {
            return Ok(false);
        }
        let tx = self
            .connection
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.prepare_cached(
            "UPDATE claims SET status = 'ok', body = ?3, settled_at = ?4
             WHERE scope = ?1 AND id = ?2",
        )?
        .execute(params![scope, id, body, now])?;
        tx.commit()?;
        Ok(true)
    }
}
