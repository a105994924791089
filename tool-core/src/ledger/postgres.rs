//! The ledger in PostgreSQL: one database shared by every worker and every machine, so a call
//! is claimed once whichever process receives it, quotas are counted across all of them, and a
//! restarted process replays what its predecessor completed.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use deadpool_postgres::{
    Client, GenericClient, Manager, ManagerConfig, Pool, RecyclingMethod, Runtime, Transaction,
};
use tokio_postgres::error::SqlState;
use tokio_postgres::{NoTls, Row};

use super::audit::{AuditEvent, AuditKind, AuditRecord, GENESIS};
use super::{
    Binding, Claim, ClaimKey, Claimed, HeldOutcome, KeyKind, Ledger, LedgerError, LedgerFuture,
    Reconciled, Recorded, Resolution, Unsettled, claim_event, decide, from_unix_millis,
    held_outcomes, parse_effect, settling, settling_at, taken_over_effect, unix_millis,
};
use crate::Effect;
use crate::outcome::Code;

/// A [`Ledger`] in a PostgreSQL database (9.6 or newer), for many workers on many machines.
///
/// Every method is one transaction. Claims of the same key wait for each other on the claim's
/// row and quotas on their counters' rows; the second of two racing claims therefore reads what
/// the first committed and answers from it (in flight, replay, conflict) instead of failing.
/// Leases are timed by the database server's clock, so workers whose clocks disagree still
/// agree on when a claim's holder is taken for dead.
///
/// Audit records are appended without waiting for one another: each transaction adds its
/// records to the scope's pending records, and they are *sealed* into the scope's hash chain
/// (given their sequence numbers and hashes, in the order their transactions took their
/// places) in batches: after one append in 16 has committed, by a Tokio task the ledger
/// starts (one at a time, and not while another transaction is sealing that scope), and
/// always by [`trail`](Ledger::trail) before it reads. So the calls of one scope share no
/// lock while their commits wait for the disk, no call waits for a seal, and a trail read is
/// always whole and verifiable; a record is covered by the chain from the time it is sealed.
/// A seal that fails leaves the records pending for the next.
///
/// The common steps are one statement each, with its records: claiming a key that no claim
/// holds (for a call without quotas), replaying a settled call or refusing a conflicting
/// one, and settling a claim. The others (quotas, a claim in flight or interrupted) lock the
/// claim's row in a transaction first.
///
/// The database must be in the UTF8 encoding (others cannot hold every string a call may
/// carry); the ledger refuses to open in any other. Its statements take every value as a
/// parameter, so they mean the same whatever the sessions' `standard_conforming_strings`.
///
/// The tables are created on first use if they are missing, all named `tool_ledger_*`, with a
/// schema version that later versions of this crate check before touching them. Tables at
/// schema version 1 or 2 are brought to version 3 when the ledger opens: their records verify
/// as before, and the outcomes of claims settled before version 2 are not covered by the audit
/// trail (later ones are). Version 3 adds the table of pending records; a crate that reads
/// version 2 refuses version 3 tables.
///
/// PostgreSQL text cannot hold U+0000, which a model may well put in a call id or a tool name.
/// Such a string (and one that starts with U+FFFF) is stored escaped: U+FFFF, then the string
/// with each `\` written `\\` and each U+0000 written `\0`. The ledger reads back the string
/// that was written, so calls, replays and the audit trail are the same as in the other
/// ledgers; only SQL that reads the tables directly sees the escaped form. Every other string
/// is stored as it is.
///
/// Connections are made without TLS by [`connect`](Self::connect). An application that needs
/// TLS, other pool settings or another way to authenticate builds its own
/// [`deadpool_postgres::Pool`] and passes it to [`from_pool`](Self::from_pool).
///
/// # Retention
///
/// A settled claim is what makes a call id or an idempotency key replay its outcome instead of
/// running again, so nothing is forgotten by itself: [`purge`](Self::purge) removes the claims
/// settled longer ago than the retention the application chooses (which must be longer than
/// any client keeps retrying a call or an idempotency key), and the nonces whose expiry has
/// passed. Claims still waiting for their outcome or for reconciliation, quota counters and
/// stored runs are never purged; the audit trail is kept whole.
///
/// ```no_run
/// # async fn run() -> Result<(), tool_core::ledger::LedgerError> {
/// use std::sync::Arc;
/// use std::time::Duration;
/// use tool_core::ledger::PostgresLedger;
///
/// let ledger = Arc::new(PostgresLedger::connect("postgres://app@db.internal/app").await?);
/// # let registry = Arc::new(tool_core::Registry::new());
/// let runtime = tool_core::Runtime::builder(registry).ledger(Arc::clone(&ledger)).build();
/// // Once a day: forget calls settled more than 30 days ago.
/// let removed = ledger.purge(Duration::from_secs(30 * 24 * 3600)).await?;
/// # drop((runtime, removed)); Ok(()) }
/// ```
pub struct PostgresLedger {
    pool: Pool,
    /// Set while a seal runs in the background (see [`seal_later`](Self::seal_later)).
    sealing: Arc<AtomicBool>,
}

/// The mark that starts a stored string in which U+0000 is escaped (see [`stored`]).
const ESCAPED: char = '\u{FFFF}';

/// The schema this version of the crate reads and writes. Tables at version 1 or 2 are brought
/// to it (claims settled under version 1 have no audit record that covers their outcome).
const SCHEMA_VERSION: i32 = 3;

/// One append in this many seals its scope's pending records, when no other transaction is
/// sealing them: the chain stays a few batches behind the pending records, and a sealing
/// transaction's cost is shared by as many calls.
const SEAL_EVERY: i64 = 16;

/// What version 2 adds to version 1: the digest of an outcome on the audit record that
/// settled it, and that record's place on the claim. Version 1 stored every string as it is
/// (it could hold no U+0000); those that start with [`ESCAPED`] are escaped as [`stored`]
/// escapes them, so they read back as written.
const FROM_VERSION_1: &str = r"
ALTER TABLE tool_ledger_audit ADD COLUMN output text;
ALTER TABLE tool_ledger_claims ADD COLUMN settled_seq int8;
CREATE FUNCTION pg_temp.tool_ledger_escape(text) RETURNS text LANGUAGE sql IMMUTABLE AS
    $$ SELECT CASE WHEN left($1, 1) = chr(65535)
        THEN chr(65535) || replace($1, '\', '\\') ELSE $1 END $$;
UPDATE tool_ledger_claims SET key_scope = pg_temp.tool_ledger_escape(key_scope),
    id = pg_temp.tool_ledger_escape(id), call_id = pg_temp.tool_ledger_escape(call_id),
    scope = pg_temp.tool_ledger_escape(scope), tool = pg_temp.tool_ledger_escape(tool),
    principal = pg_temp.tool_ledger_escape(principal), body = pg_temp.tool_ledger_escape(body),
    detail = pg_temp.tool_ledger_escape(detail)
    WHERE chr(65535) IN (left(key_scope, 1), left(id, 1), left(call_id, 1), left(scope, 1),
        left(tool, 1), left(principal, 1), left(body, 1), left(detail, 1));
UPDATE tool_ledger_audit SET scope = pg_temp.tool_ledger_escape(scope),
    call_id = pg_temp.tool_ledger_escape(call_id), tool = pg_temp.tool_ledger_escape(tool),
    principal = pg_temp.tool_ledger_escape(principal), note = pg_temp.tool_ledger_escape(note),
    digest = pg_temp.tool_ledger_escape(digest)
    WHERE chr(65535) IN (left(scope, 1), left(call_id, 1), left(tool, 1), left(principal, 1),
        left(note, 1), left(digest, 1));
UPDATE tool_ledger_audit_heads SET scope = pg_temp.tool_ledger_escape(scope)
    WHERE left(scope, 1) = chr(65535);
UPDATE tool_ledger_counters SET scope = pg_temp.tool_ledger_escape(scope),
    name = pg_temp.tool_ledger_escape(name)
    WHERE chr(65535) IN (left(scope, 1), left(name, 1));
UPDATE tool_ledger_nonces SET nonce = pg_temp.tool_ledger_escape(nonce)
    WHERE left(nonce, 1) = chr(65535);
UPDATE tool_ledger_runs SET scope = pg_temp.tool_ledger_escape(scope),
    run = pg_temp.tool_ledger_escape(run), state = pg_temp.tool_ledger_escape(state)
    WHERE chr(65535) IN (left(scope, 1), left(run, 1), left(state, 1));
DROP FUNCTION pg_temp.tool_ledger_escape(text);
UPDATE tool_ledger_schema SET version = 2;
";

/// The pending audit records, appended without the scope's head and sealed into its chain
/// later (see [`PostgresLedger`]): each transaction's records form a batch, numbered by a
/// sequence, in the order of `ord`. A record that settles a claim names it, so that sealing
/// notes the record's place on the claim.
const PENDING: &str = r#"
CREATE SEQUENCE tool_ledger_audit_batches;
CREATE TABLE tool_ledger_audit_pending (
    scope text COLLATE "C" NOT NULL,
    batch int8 NOT NULL,
    ord int8 NOT NULL,
    at int8 NOT NULL,
    call_id text NOT NULL,
    tool text NOT NULL,
    kind text NOT NULL,
    code text,
    digest text,
    principal text NOT NULL,
    note text,
    output text,
    settles_kind text,
    settles_scope text,
    settles_id text,
    PRIMARY KEY (scope, batch, ord)
);
"#;

/// What version 3 adds to version 2: the pending records.
const FROM_VERSION_2: &str = "UPDATE tool_ledger_schema SET version = 3;";

/// The key of the advisory lock that serializes schema creation across processes.
const SCHEMA_LOCK: i64 = 0x746f_6f6c_6c65_6467;

/// How many times a transaction is tried when the database aborts it for a deadlock or a
/// serialization failure, or when a racing worker claimed the same new key first.
const TRIES: usize = 8;

/// Leases are clamped to this many milliseconds (about 292 thousand years), so that adding one
/// to the server's clock cannot overflow.
const MAX_LEASE_MS: i64 = i64::MAX / 1000;

/// The server's clock, in milliseconds since the Unix epoch.
macro_rules! now_ms {
    () => {
        "(extract(epoch FROM clock_timestamp()) * 1000)::int8"
    };
}

const CREATE_SCHEMA: &str = r#"
CREATE TABLE tool_ledger_schema (
    version int4 NOT NULL
);
CREATE TABLE tool_ledger_claims (
    kind text COLLATE "C" NOT NULL,
    key_scope text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    attempt int8 NOT NULL,
    call_id text NOT NULL,
    scope text COLLATE "C" NOT NULL,
    tool text NOT NULL,
    contract text NOT NULL,
    arguments text NOT NULL,
    principal text NOT NULL,
    effect text NOT NULL,
    claimed_at int8 NOT NULL,
    lease_until int8 NOT NULL,
    status text,
    body text,
    detail text,
    released bool NOT NULL DEFAULT false,
    settled_at int8,
    settled_seq int8,
    PRIMARY KEY (kind, key_scope, id)
);
CREATE INDEX tool_ledger_claims_unsettled ON tool_ledger_claims (scope, lease_until)
    WHERE status IS NULL AND NOT released;
CREATE INDEX tool_ledger_claims_settled ON tool_ledger_claims (settled_at)
    WHERE settled_at IS NOT NULL;
CREATE TABLE tool_ledger_counters (
    scope text COLLATE "C" NOT NULL,
    name text COLLATE "C" NOT NULL,
    used int8 NOT NULL,
    PRIMARY KEY (scope, name)
);
CREATE TABLE tool_ledger_audit (
    scope text COLLATE "C" NOT NULL,
    seq int8 NOT NULL,
    at int8 NOT NULL,
    call_id text NOT NULL,
    tool text NOT NULL,
    kind text NOT NULL,
    code text,
    digest text,
    principal text NOT NULL,
    note text,
    prev text NOT NULL,
    hash text NOT NULL,
    output text,
    PRIMARY KEY (scope, seq)
);
CREATE TABLE tool_ledger_audit_heads (
    scope text COLLATE "C" PRIMARY KEY,
    seq int8 NOT NULL,
    hash text NOT NULL
);
CREATE TABLE tool_ledger_nonces (
    nonce text COLLATE "C" PRIMARY KEY,
    expires int8 NOT NULL
);
CREATE INDEX tool_ledger_nonces_expires ON tool_ledger_nonces (expires);
CREATE TABLE tool_ledger_runs (
    scope text COLLATE "C" NOT NULL,
    run text COLLATE "C" NOT NULL,
    state text NOT NULL,
    PRIMARY KEY (scope, run)
);
"#;

const SELECT_CLAIM: &str = concat!(
    "SELECT attempt, tool, contract, arguments, principal, status, body, detail, released, ",
    "lease_until <= ",
    now_ms!(),
    ", effect",
    " FROM tool_ledger_claims WHERE kind = $1 AND key_scope = $2 AND id = $3 FOR UPDATE"
);

const CLAIM_EXISTS: &str =
    "SELECT 1 FROM tool_ledger_claims WHERE kind = $1 AND key_scope = $2 AND id = $3";

const INSERT_CLAIM: &str = concat!(
    "INSERT INTO tool_ledger_claims (kind, key_scope, id, attempt, call_id, scope, tool, ",
    "contract, arguments, principal, effect, claimed_at, lease_until) ",
    "SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, clock.t, clock.t + $12 FROM (SELECT ",
    now_ms!(),
    " AS t) AS clock ON CONFLICT DO NOTHING"
);

/// Claims a key no claim holds, without quotas, and appends the claim's records `$12..$19`
/// (as [`INSERT_PENDING`] takes them) as one batch, in one statement. One row: the batch's
/// number when the key was free; else NULL, then the claim that holds the key as
/// [`SELECT_CLAIM`] reads it (all NULL if it was committed after the statement began).
const CLAIM_NEW: &str = concat!(
    "WITH clock AS (SELECT ",
    now_ms!(),
    " AS t), claimed AS (INSERT INTO tool_ledger_claims (kind, key_scope, id, attempt, call_id, ",
    "scope, tool, contract, arguments, principal, effect, claimed_at, lease_until) ",
    "SELECT $1, $2, $3, 1, $4, $5, $6, $7, $8, $9, $10, clock.t, clock.t + $11 FROM clock ",
    "ON CONFLICT DO NOTHING RETURNING claimed_at), ",
    "b AS (SELECT nextval('tool_ledger_audit_batches') AS batch, claimed_at AS at FROM claimed), ",
    "added AS (INSERT INTO tool_ledger_audit_pending (scope, batch, ord, at, call_id, tool, ",
    "kind, code, digest, principal, note, output) ",
    "SELECT $5, b.batch, r.ord, b.at, r.call_id, r.tool, r.kind, r.code, r.digest, ",
    "r.principal, r.note, r.output ",
    "FROM b, unnest($12::text[], $13::text[], $14::text[], $15::text[], $16::text[], ",
    "$17::text[], $18::text[], $19::text[]) WITH ORDINALITY ",
    "AS r(call_id, tool, kind, code, digest, principal, note, output, ord)) ",
    "SELECT (SELECT batch FROM b), h.attempt, h.tool, h.contract, h.arguments, h.principal, ",
    "h.status, h.body, h.detail, h.released, h.lease_until <= ",
    now_ms!(),
    ", h.effect FROM (SELECT 1) AS one LEFT JOIN tool_ledger_claims AS h ",
    "ON h.kind = $1 AND h.key_scope = $2 AND h.id = $3"
);

const TAKE_OVER_CLAIM: &str = concat!(
    "UPDATE tool_ledger_claims SET attempt = $4, call_id = $5, scope = $6, tool = $7, ",
    "contract = $8, arguments = $9, principal = $10, effect = $11, claimed_at = clock.t, ",
    "lease_until = clock.t + $12, status = NULL, body = NULL, detail = NULL, released = false, ",
    "settled_at = NULL, settled_seq = NULL FROM (SELECT ",
    now_ms!(),
    " AS t) AS clock WHERE kind = $1 AND key_scope = $2 AND id = $3"
);

/// Creates the scope's missing counters and locks all of them, in the order of `$2`.
const LOCK_COUNTERS: &str = concat!(
    "INSERT INTO tool_ledger_counters (scope, name, used) ",
    "SELECT $1, name, 0 FROM unnest($2::text[]) WITH ORDINALITY AS q(name, n) ORDER BY n ",
    "ON CONFLICT (scope, name) DO UPDATE SET used = tool_ledger_counters.used ",
    "RETURNING name, used"
);

const TAKE_COUNTERS: &str = concat!(
    "UPDATE tool_ledger_counters AS c SET used = c.used + q.n ",
    "FROM unnest($2::text[], $3::int8[]) AS q(name, n) ",
    "WHERE c.scope = $1 AND c.name = q.name"
);

/// Creates the scope's head if it is missing and locks it: sealers of one scope wait here.
const LOCK_HEAD: &str = concat!(
    "INSERT INTO tool_ledger_audit_heads (scope, seq, hash) VALUES ($1, 0, $2) ",
    "ON CONFLICT (scope) DO UPDATE SET seq = tool_ledger_audit_heads.seq ",
    "RETURNING seq, hash, ",
    now_ms!()
);

/// Locks the scope's head if no other transaction holds it; no row when one does (or when the
/// scope has no head yet).
const TRY_HEAD: &str =
    "SELECT seq, hash FROM tool_ledger_audit_heads WHERE scope = $1 FOR UPDATE SKIP LOCKED";

/// Creates the scope's head, unless another transaction did: no row then.
const NEW_HEAD: &str = concat!(
    "INSERT INTO tool_ledger_audit_heads (scope, seq, hash) VALUES ($1, 0, $2) ",
    "ON CONFLICT DO NOTHING RETURNING seq, hash"
);

/// Appends the records to the scope's pending ones, as one batch in their order, at the
/// server's time; the record at `ord = $10` settles the claim `($11, $12, $13)`. Returns the
/// batch's number (once per record).
const INSERT_PENDING: &str = concat!(
    "WITH b AS (SELECT nextval('tool_ledger_audit_batches') AS batch, ",
    now_ms!(),
    " AS at) INSERT INTO tool_ledger_audit_pending (scope, batch, ord, at, call_id, tool, kind, ",
    "code, digest, principal, note, output, settles_kind, settles_scope, settles_id) ",
    "SELECT $1, b.batch, r.ord, b.at, r.call_id, r.tool, r.kind, r.code, r.digest, ",
    "r.principal, r.note, r.output, ",
    "CASE WHEN r.ord = $10 THEN $11 END, CASE WHEN r.ord = $10 THEN $12 END, ",
    "CASE WHEN r.ord = $10 THEN $13 END ",
    "FROM b, unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], ",
    "$8::text[], $9::text[]) WITH ORDINALITY ",
    "AS r(call_id, tool, kind, code, digest, principal, note, output, ord) ",
    "RETURNING batch"
);

/// Takes the scope's pending records that are committed (and this transaction's own).
const TAKE_PENDING: &str = concat!(
    "DELETE FROM tool_ledger_audit_pending WHERE scope = $1 RETURNING batch, ord, at, call_id, ",
    "tool, kind, code, digest, principal, note, output, settles_kind, settles_scope, settles_id"
);

/// Adds sealed records to the chain, moves the head, and notes on each claim `($15, $16, $17)`
/// the record `$18` that settled it.
const INSERT_AUDIT: &str = concat!(
    "WITH added AS (INSERT INTO tool_ledger_audit ",
    "(scope, seq, at, call_id, tool, kind, code, digest, principal, note, prev, hash, output) ",
    "SELECT $1, r.seq, r.at, r.call_id, r.tool, r.kind, r.code, r.digest, r.principal, r.note, ",
    "r.prev, r.hash, r.output FROM unnest($2::int8[], $3::int8[], $4::text[], $5::text[], ",
    "$6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], ",
    "$13::text[]) ",
    "AS r(seq, at, call_id, tool, kind, code, digest, principal, note, prev, hash, output)), ",
    "settled AS (UPDATE tool_ledger_claims AS c SET settled_seq = s.seq ",
    "FROM unnest($15::text[], $16::text[], $17::text[], $18::int8[]) AS s(kind, key_scope, id, seq) ",
    "WHERE c.kind = s.kind AND c.key_scope = s.key_scope AND c.id = s.id) ",
    "UPDATE tool_ledger_audit_heads SET seq = $14, hash = $19 WHERE scope = $1"
);

/// Settles the claim `($1, $2, $3)` at attempt `$4`, if it is neither settled nor released,
/// and appends the settling records `$8..$15` in the same statement: the record
/// at `ord = $17` settles the claim, and the one at `ord = $16`, when there is one, is the
/// outcome record added for the claim's call, whose call id, tool, digest and principal are
/// the claim's. Returns the claim's scope and the batch's number; no row when the claim was
/// not settled.
const SETTLE_APPEND: &str = concat!(
    "WITH settled AS (UPDATE tool_ledger_claims SET status = $5, body = $6, detail = $7, ",
    "settled_at = ",
    now_ms!(),
    " WHERE kind = $1 AND key_scope = $2 AND id = $3 AND attempt = $4 ",
    "AND status IS NULL AND NOT released ",
    "RETURNING scope, call_id, tool, arguments, principal, settled_at), ",
    "b AS (SELECT nextval('tool_ledger_audit_batches') AS batch, s.* FROM settled AS s), ",
    "added AS (INSERT INTO tool_ledger_audit_pending (scope, batch, ord, at, call_id, tool, ",
    "kind, code, digest, principal, note, output, settles_kind, settles_scope, settles_id) ",
    "SELECT b.scope, b.batch, r.ord, b.settled_at, ",
    "CASE WHEN r.ord = $16 THEN b.call_id ELSE r.call_id END, ",
    "CASE WHEN r.ord = $16 THEN b.tool ELSE r.tool END, r.kind, r.code, ",
    "CASE WHEN r.ord = $16 THEN b.arguments ELSE r.digest END, ",
    "CASE WHEN r.ord = $16 THEN b.principal ELSE r.principal END, r.note, r.output, ",
    "CASE WHEN r.ord = $17 THEN $1 END, CASE WHEN r.ord = $17 THEN $2 END, ",
    "CASE WHEN r.ord = $17 THEN $3 END ",
    "FROM b, unnest($8::text[], $9::text[], $10::text[], $11::text[], $12::text[], ",
    "$13::text[], $14::text[], $15::text[]) WITH ORDINALITY ",
    "AS r(call_id, tool, kind, code, digest, principal, note, output, ord)) ",
    "SELECT scope, batch FROM b"
);

const RECONCILE: &str = concat!(
    "UPDATE tool_ledger_claims SET status = $4, body = $5, detail = $6, released = $7, ",
    "settled_at = ",
    now_ms!(),
    " WHERE kind = $1 AND key_scope = $2 AND id = $3 AND attempt = $8 AND claimed_at = $9 ",
    "AND status IS NULL AND NOT released RETURNING scope, call_id, tool, arguments, principal"
);

/// Why a reconciliation found nothing to settle.
const RECONCILE_MISSED: &str = concat!(
    "SELECT attempt, claimed_at, status IS NOT NULL OR released FROM tool_ledger_claims ",
    "WHERE kind = $1 AND key_scope = $2 AND id = $3"
);

const UNSETTLED: &str = concat!(
    "SELECT kind, key_scope, id, call_id, tool, contract, arguments, principal, attempt, ",
    "claimed_at FROM tool_ledger_claims WHERE scope = $1 AND status IS NULL AND NOT released ",
    "AND lease_until <= ",
    now_ms!(),
    " ORDER BY claimed_at, kind, key_scope, id"
);

const TRAIL: &str = concat!(
    "SELECT seq, at, call_id, tool, kind, code, digest, principal, note, output, prev, hash ",
    "FROM tool_ledger_audit WHERE scope = $1 ORDER BY seq"
);

/// The outcomes held for a scope's claims, with the records that settled them (when the claim
/// names one: see [`held_outcomes`] for those that do not). No index
/// serves it: the trail is read rarely, by an operator, and every index is one more write
/// per call.
const HELD: &str = concat!(
    "SELECT settled_seq, call_id, status, body, detail FROM tool_ledger_claims ",
    "WHERE scope = $1 AND status IS NOT NULL"
);

const USE_NONCE: &str =
    "INSERT INTO tool_ledger_nonces (nonce, expires) VALUES ($1, $2) ON CONFLICT DO NOTHING";

const STORE_RUN: &str = concat!(
    "INSERT INTO tool_ledger_runs (scope, run, state) VALUES ($1, $2, $3) ",
    "ON CONFLICT (scope, run) DO UPDATE SET state = EXCLUDED.state"
);

const REMOVE_RUN: &str = "DELETE FROM tool_ledger_runs WHERE scope = $1 AND run = $2";

const LOAD_RUN: &str = "SELECT state FROM tool_ledger_runs WHERE scope = $1 AND run = $2";

const PURGE_CLAIMS: &str = concat!(
    "DELETE FROM tool_ledger_claims WHERE settled_at IS NOT NULL AND settled_at < ",
    now_ms!(),
    " - $1 AND (status IS NOT NULL OR released)"
);

const PURGE_NONCES: &str = concat!("DELETE FROM tool_ledger_nonces WHERE expires < ", now_ms!());

/// Why one try of a transaction did not answer.
enum Fault {
    /// The database refused or could not be reached.
    Db(tokio_postgres::Error),
    /// No connection could be had from the pool.
    Pool(deadpool_postgres::PoolError),
    /// The database holds something this crate did not write.
    Ledger(LedgerError),
    /// Another worker claimed the same new key first: try again, and answer from its claim.
    Raced,
}

impl From<tokio_postgres::Error> for Fault {
    fn from(error: tokio_postgres::Error) -> Self {
        Fault::Db(error)
    }
}

impl From<deadpool_postgres::PoolError> for Fault {
    fn from(error: deadpool_postgres::PoolError) -> Self {
        Fault::Pool(error)
    }
}

impl From<LedgerError> for Fault {
    fn from(error: LedgerError) -> Self {
        Fault::Ledger(error)
    }
}

impl Fault {
    fn retryable(&self) -> bool {
        match self {
            Fault::Raced => true,
            Fault::Db(error) => matches!(
                error.code(),
                Some(&SqlState::T_R_SERIALIZATION_FAILURE | &SqlState::T_R_DEADLOCK_DETECTED)
            ),
            Fault::Pool(_) | Fault::Ledger(_) => false,
        }
    }

    fn into_error(self, what: &str) -> LedgerError {
        match self {
            Fault::Db(error) if error.code() == Some(&SqlState::CHARACTER_NOT_IN_REPERTOIRE) => {
                LedgerError::new(format!(
                    "postgres: {what}: {} (PostgreSQL text cannot hold the character U+0000)",
                    chain(&error)
                ))
            }
            Fault::Db(error) => LedgerError::new(format!("postgres: {what}: {}", chain(&error))),
            Fault::Pool(error) => LedgerError::new(format!(
                "postgres: {what}: no connection: {}",
                chain(&error)
            )),
            Fault::Ledger(error) => {
                LedgerError::new(format!("postgres: {what}: {}", error.message()))
            }
            Fault::Raced => LedgerError::new(format!(
                "postgres: {what}: other workers kept taking the same key first ({TRIES} tries)"
            )),
        }
    }
}

/// An error and its causes, one after the other: tokio-postgres keeps the server's message in
/// the cause.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let next = cause.to_string();
        if !text.ends_with(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = cause.source();
    }
    text
}

/// Runs `step` up to [`TRIES`] times while it fails in a way a retry can fix.
async fn retry<T, F, Fut>(what: &str, mut step: F) -> Result<T, LedgerError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Fault>>,
{
    let mut tries = 0;
    loop {
        tries += 1;
        match step().await {
            Ok(value) => return Ok(value),
            Err(fault) if fault.retryable() && tries < TRIES => {}
            Err(fault) => return Err(fault.into_error(what)),
        }
    }
}

fn corrupt(what: impl fmt::Display) -> Fault {
    Fault::Ledger(LedgerError::new(format!(
        "the ledger tables hold {what}, which this crate never writes"
    )))
}

/// A string as stored. PostgreSQL text cannot hold U+0000, and calls may: a model can put it
/// in a call id or a tool name, a handler in a failure's message. A string that holds one, or
/// that starts with [`ESCAPED`] (U+FFFF), is stored as U+FFFF followed by the string with each
/// `\` written `\\` and each U+0000 written `\0`; every other string is stored as it is.
/// [`loaded`] gives back the string written, so the ledger holds and returns the same strings
/// as the other ledgers, and no two strings are stored alike.
fn stored(text: &str) -> Cow<'_, str> {
    if !text.contains('\0') && !text.starts_with(ESCAPED) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    out.push(ESCAPED);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The string [`stored`] as `text`.
fn loaded(text: String) -> Result<String, Fault> {
    let Some(rest) = text.strip_prefix(ESCAPED) else {
        return Ok(text);
    };
    let mut out = String::with_capacity(rest.len());
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('0') => out.push('\0'),
            _ => return Err(corrupt("an escaped string with a stray backslash")),
        }
    }
    Ok(out)
}

/// Column `i` of `row`, a string as [`stored`].
fn text(row: &Row, i: usize) -> Result<String, Fault> {
    loaded(row.try_get(i)?)
}

/// Column `i` of `row`, a string as [`stored`] or NULL.
fn opt_text(row: &Row, i: usize) -> Result<Option<String>, Fault> {
    row.try_get::<_, Option<String>>(i)?.map(loaded).transpose()
}

/// The audit event held in the eight columns of `row` from `first` on: call id, tool, kind,
/// code, digest, principal, note and output, in that order.
fn audit_event(row: &Row, first: usize) -> Result<AuditEvent, Fault> {
    let kind: String = row.try_get(first + 2)?;
    let code: Option<String> = row.try_get(first + 3)?;
    Ok(AuditEvent {
        call_id: text(row, first)?.into(),
        tool: text(row, first + 1)?.into(),
        kind: AuditKind::parse(&kind)
            .ok_or_else(|| corrupt(format_args!("an audit kind {kind:?}")))?,
        code: code
            .map(|code| {
                code.parse::<Code>()
                    .map_err(|_| corrupt(format_args!("a failure code {code:?} in the audit")))
            })
            .transpose()?,
        digest: opt_text(row, first + 4)?.map(Into::into),
        principal: text(row, first + 5)?.into(),
        note: opt_text(row, first + 6)?,
        output: row.try_get(first + 7)?,
    })
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis())
        .unwrap_or(i64::MAX)
        .min(MAX_LEASE_MS)
}

fn attempt_of(stored: i64) -> Result<u32, Fault> {
    u32::try_from(stored).map_err(|_| corrupt(format_args!("an attempt number {stored}")))
}

fn recorded(
    status: Option<String>,
    body: Option<String>,
    detail: Option<String>,
) -> Result<Option<Recorded>, Fault> {
    match status {
        None => Ok(None),
        Some(status) => Ok(Some(Recorded::from_parts(
            &status,
            body.unwrap_or_default(),
            detail,
        )?)),
    }
}

impl PostgresLedger {
    /// How many connections [`connect`](Self::connect) keeps at most.
    pub const DEFAULT_POOL_SIZE: usize = 16;

    /// Connects to the database at `url` (a `postgres://` URL or a `key=value` connection
    /// string, as libpq reads them), without TLS, and creates the ledger's tables if they are
    /// missing.
    ///
    /// The pool keeps at most [`DEFAULT_POOL_SIZE`](Self::DEFAULT_POOL_SIZE) connections; a
    /// connection attempt gives up after 10 seconds (unless the URL sets `connect_timeout`),
    /// and a call waits at most 30 seconds for a free connection. A URL that requires TLS
    /// (`sslmode=require`) fails to connect: build a pool with a TLS connector and pass it to
    /// [`from_pool`](Self::from_pool).
    pub async fn connect(url: &str) -> Result<Self, LedgerError> {
        let mut config: tokio_postgres::Config = url.parse().map_err(|error| {
            LedgerError::new(format!(
                "postgres: the connection string is not valid: {}",
                chain(&error)
            ))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(Self::DEFAULT_POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .create_timeout(Some(Duration::from_secs(15)))
            .wait_timeout(Some(Duration::from_secs(30)))
            .build()
            .map_err(|error| {
                LedgerError::new(format!(
                    "postgres: cannot build the connection pool: {error}"
                ))
            })?;
        PostgresLedger::from_pool(pool).await
    }

    /// The ledger on a pool the application built (with its TLS connector, its pool size, its
    /// timeouts); creates the ledger's tables if they are missing.
    ///
    /// Fails when the database cannot be reached, when it is not in the UTF8 encoding, or
    /// when it holds ledger tables of another schema version than this crate's.
    pub async fn from_pool(pool: Pool) -> Result<Self, LedgerError> {
        let ledger = PostgresLedger {
            pool,
            sealing: Arc::new(AtomicBool::new(false)),
        };
        retry("opening the ledger", || ledger.ensure_schema()).await?;
        Ok(ledger)
    }

    /// Removes the claims settled (or reconciled) more than `older_than` ago by the database
    /// server's clock, and the nonces whose expiry has passed. Returns how many claims were
    /// removed.
    ///
    /// A removed claim is forgotten: its call id or idempotency key, claimed again, runs the
    /// call again. Choose `older_than` longer than any client retries a call or reuses an
    /// idempotency key. Claims without an outcome are never removed, whatever their age: they
    /// wait for their outcome or for [`reconcile`](Ledger::reconcile).
    pub async fn purge(&self, older_than: Duration) -> Result<u64, LedgerError> {
        let older_than = millis(older_than);
        retry("purging settled claims", || async move {
            let client = self.pool.get().await?;
            let purge = client.prepare_cached(PURGE_CLAIMS).await?;
            let removed = client.execute(&purge, &[&older_than]).await?;
            let nonces = client.prepare_cached(PURGE_NONCES).await?;
            client.execute(&nonces, &[]).await?;
            Ok(removed)
        })
        .await
    }

    async fn ensure_schema(&self) -> Result<(), Fault> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
            .await?;
        let encoding: String = tx
            .query_one("SELECT current_setting('server_encoding')", &[])
            .await?
            .try_get(0)?;
        if encoding != "UTF8" {
            return Err(Fault::Ledger(LedgerError::new(format!(
                "the database is in the {encoding} encoding, which cannot hold every string a \
                 call may carry; the ledger needs a database in UTF8 (CREATE DATABASE ... \
                 ENCODING 'UTF8')"
            ))));
        }
        let exists: bool = tx
            .query_one("SELECT to_regclass('tool_ledger_schema') IS NOT NULL", &[])
            .await?
            .try_get(0)?;
        if exists {
            let versions: Vec<i32> = tx
                .query("SELECT version FROM tool_ledger_schema", &[])
                .await?
                .iter()
                .map(|row| row.try_get(0))
                .collect::<Result<_, _>>()?;
            return match versions.as_slice() {
                [SCHEMA_VERSION] => Ok(()),
                [version @ (1 | 2)] => {
                    if *version == 1 {
                        // The upgrade's literals hold backslashes, which a database whose
                        // sessions default to `standard_conforming_strings = off` would read as
                        // escapes. Set apart from the upgrade: a batch is parsed whole before
                        // it runs.
                        tx.batch_execute("SET LOCAL standard_conforming_strings = on")
                            .await?;
                        tx.batch_execute(FROM_VERSION_1).await?;
                    }
                    tx.batch_execute(PENDING).await?;
                    tx.batch_execute(FROM_VERSION_2).await?;
                    tx.commit().await?;
                    Ok(())
                }
                [version] => Err(Fault::Ledger(LedgerError::new(format!(
                    "the ledger tables in this database are at schema version {version}; \
                     this version of tool-core reads and writes version {SCHEMA_VERSION}"
                )))),
                _ => Err(corrupt(format_args!(
                    "{} schema versions in tool_ledger_schema",
                    versions.len()
                ))),
            };
        }
        tx.batch_execute(CREATE_SCHEMA).await?;
        tx.batch_execute(PENDING).await?;
        tx.execute(
            "INSERT INTO tool_ledger_schema (version) VALUES ($1)",
            &[&SCHEMA_VERSION],
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Claims a key that no claim holds, for a claim without quotas, in one statement that also
    /// appends its records: `None`, and nothing written, when a claim holds the key.
    async fn claim_new(&self, client: &Client, claim: &Claim) -> Result<Option<Claimed>, Fault> {
        let answer = Claimed::New { attempt: 1 };
        let mut columns = PendingColumns::default();
        for event in &claim.audit {
            columns.push(event);
        }
        columns.push(&claim_event(claim, &answer));
        let b = &claim.binding;
        let c = &columns;
        let insert = client.prepare_cached(CLAIM_NEW).await?;
        let row = client
            .query_opt(
                &insert,
                &[
                    &claim.key.kind.as_str(),
                    &stored(&claim.key.scope),
                    &stored(&claim.key.id),
                    &stored(&claim.call_id),
                    &stored(&claim.scope),
                    &stored(&b.tool),
                    &stored(&b.contract),
                    &stored(&b.arguments),
                    &stored(&b.principal),
                    &claim.effect.as_str(),
                    &millis(claim.lease),
                    &c.call_id,
                    &c.tool,
                    &c.kind,
                    &c.code,
                    &c.digest,
                    &c.principal,
                    &c.note,
                    &c.output,
                ],
            )
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        if let Some(batch) = row.try_get::<_, Option<i64>>(0)? {
            if batch % SEAL_EVERY == 0 {
                self.seal_later(claim.scope.to_string());
            }
            return Ok(Some(answer));
        }
        if row.try_get::<_, Option<i64>>(1)?.is_none() {
            // Held by a claim committed after the statement began: read it under its lock.
            return Ok(None);
        }
        // A replay or a conflict is answered without the claim's lock: a settled claim's
        // outcome, and any claim's binding, stay as they are until the claim is purged (only
        // an unsettled or released claim is taken over, and only by the same binding). Any
        // other answer is made under the lock.
        let answer = match Held::read(&row, 1)?.decide(claim) {
            Some(answer @ (Claimed::Replay(_) | Claimed::Conflict { .. })) => answer,
            _ => return Ok(None),
        };
        let mut columns = PendingColumns::default();
        for event in claim.audit.iter().chain([&claim_event(claim, &answer)]) {
            columns.push(event);
        }
        let batch = insert_pending(client, &claim.scope, &columns, None).await?;
        if batch.is_some_and(|batch| batch % SEAL_EVERY == 0) {
            self.seal_later(claim.scope.to_string());
        }
        Ok(Some(answer))
    }

    /// Seals `scope`'s pending records in a task of its own, after the statement that
    /// appended to them committed, so that no call waits for a seal. Sealing is not part of what
    /// was asked: the records are committed already, and a seal that fails, or is not started
    /// because another is running, leaves them pending for the next one (at the latest the one
    /// [`trail`](Ledger::trail) makes before it reads).
    fn seal_later(&self, scope: String) {
        if self.sealing.swap(true, Ordering::AcqRel) {
            return;
        }
        // Clears the flag however the task ends, even if its runtime drops it unfinished.
        struct Done(Arc<AtomicBool>);
        impl Drop for Done {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let done = Done(Arc::clone(&self.sealing));
        let pool = self.pool.clone();
        let task = async move {
            let _done = done;
            let sealed: Result<(), Fault> = async {
                let mut client = pool.get().await?;
                let tx = client.transaction().await?;
                seal(&tx, &scope, false).await?;
                tx.commit().await?;
                Ok(())
            }
            .await;
            // A failed seal only leaves the records pending: nothing to report to anyone.
            drop(sealed);
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(task);
        }
    }

    // READ COMMITTED with row locks rather than SERIALIZABLE: a claim locks its key's row
    // (`FOR UPDATE`), its counters and its scope's audit head, so a racing claim waits and then
    // reads what the first committed. Under SERIALIZABLE the hot rows (one run's counters and
    // audit head, a retried key) would abort one of every two racing transactions with 40001
    // and make both start over. The one race the locks cannot cover, two first claims of a
    // key that has no row yet, is settled by the primary key: the loser's insert does nothing,
    // its transaction is dropped (with the quotas it took) and tried again, and then finds
    // the winner's row.
    async fn claim_once(&self, claim: &Claim) -> Result<Claimed, Fault> {
        let mut client = self.pool.get().await?;
        if claim.quotas.is_empty()
            && let Some(claimed) = self.claim_new(&client, claim).await?
        {
            return Ok(claimed);
        }
        let tx = client.transaction().await?;
        let kind = claim.key.kind.as_str();
        let (key_scope, id) = (stored(&claim.key.scope), stored(&claim.key.id));
        let key: [&(dyn tokio_postgres::types::ToSql + Sync); 3] = [&kind, &key_scope, &id];
        let select = tx.prepare_cached(SELECT_CLAIM).await?;
        let held = tx.query_opt(&select, &key).await?;
        let (attempt, take_over, effect) = match held {
            None => (1, false, claim.effect),
            Some(row) => {
                let mut held = Held::read(&row, 0)?;
                match held.decide(claim) {
                    Some(answer) => return answer_claim(tx, claim, answer).await,
                    None => (
                        held.attempt.saturating_add(1),
                        true,
                        taken_over_effect(claim, held.effect, held.released),
                    ),
                }
            }
        };
        let answer = match take_quotas(&tx, claim).await? {
            Some(quota) => {
                if !take_over {
                    // A claim committed since this transaction looked: answer from it.
                    let exists = tx.prepare_cached(CLAIM_EXISTS).await?;
                    if tx.query_opt(&exists, &key).await?.is_some() {
                        return Err(Fault::Raced);
                    }
                }
                Claimed::Exhausted(quota)
            }
            None => {
                let write = tx
                    .prepare_cached(if take_over {
                        TAKE_OVER_CLAIM
                    } else {
                        INSERT_CLAIM
                    })
                    .await?;
                let b = &claim.binding;
                let written = tx
                    .execute(
                        &write,
                        &[
                            &kind,
                            &key_scope,
                            &id,
                            &i64::from(attempt),
                            &stored(&claim.call_id),
                            &stored(&claim.scope),
                            &stored(&b.tool),
                            &stored(&b.contract),
                            &stored(&b.arguments),
                            &stored(&b.principal),
                            &effect.as_str(),
                            &millis(claim.lease),
                        ],
                    )
                    .await?;
                if written != 1 {
                    // Another worker inserted the key after this one looked; its row is
                    // committed now, so the next try answers from it. Dropping the
                    // transaction gives back the quotas taken.
                    return Err(Fault::Raced);
                }
                Claimed::New { attempt }
            }
        };
        answer_claim(tx, claim, answer).await
    }

    async fn settle_once(
        &self,
        key: &ClaimKey,
        attempt: u32,
        outcome: &Recorded,
        audit: &[AuditEvent],
    ) -> Result<bool, Fault> {
        let client = self.pool.get().await?;
        // The record added for the claim's call, if `audit` has no outcome record, takes the
        // call's fields from the claim in the statement: these are placeholders.
        let added = settling_at(audit) == audit.len();
        let (events, at) = settling(audit, outcome, || AuditEvent {
            call_id: "".into(),
            tool: "".into(),
            kind: AuditKind::Outcome,
            code: None,
            digest: None,
            principal: "".into(),
            note: None,
            output: None,
        });
        let mut columns = PendingColumns::default();
        for event in &events {
            columns.push(event);
        }
        let ord = i64::try_from(at + 1).map_err(|_| corrupt("more audit records than 2^63"))?;
        let settle = client.prepare_cached(SETTLE_APPEND).await?;
        let c = &columns;
        let row = client
            .query_opt(
                &settle,
                &[
                    &key.kind.as_str(),
                    &stored(&key.scope),
                    &stored(&key.id),
                    &i64::from(attempt),
                    &outcome.status(),
                    &stored(outcome.body()),
                    &outcome.detail().map(stored),
                    &c.call_id,
                    &c.tool,
                    &c.kind,
                    &c.code,
                    &c.digest,
                    &c.principal,
                    &c.note,
                    &c.output,
                    &added.then_some(ord),
                    &ord,
                ],
            )
            .await?;
        let Some(row) = row else {
            return Ok(false);
        };
        let batch: i64 = row.try_get(1)?;
        if batch % SEAL_EVERY == 0 {
            self.seal_later(text(&row, 0)?);
        }
        Ok(true)
    }

    async fn append_once(&self, scope: &str, audit: &[AuditEvent]) -> Result<(), Fault> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        append_in(&tx, scope, audit.iter().cloned(), None).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn reconcile_once(
        &self,
        listed: &Unsettled,
        resolution: &Resolution,
    ) -> Result<Reconciled, Fault> {
        let key = &listed.key;
        let (key_scope, id) = (stored(&key.scope), stored(&key.id));
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let outcome = resolution.recorded();
        let reconcile = tx.prepare_cached(RECONCILE).await?;
        let row = tx
            .query_opt(
                &reconcile,
                &[
                    &key.kind.as_str(),
                    &key_scope,
                    &id,
                    &outcome.as_ref().map(Recorded::status),
                    &outcome.as_ref().map(|o| stored(o.body())),
                    &outcome.as_ref().and_then(Recorded::detail).map(stored),
                    &outcome.is_none(),
                    &i64::from(listed.attempt),
                    &unix_millis(listed.claimed_at),
                ],
            )
            .await?;
        let Some(row) = row else {
            let missed = tx.prepare_cached(RECONCILE_MISSED).await?;
            let Some(row) = tx
                .query_opt(&missed, &[&key.kind.as_str(), &key_scope, &id])
                .await?
            else {
                return Ok(Reconciled::NotFound);
            };
            let attempt = attempt_of(row.try_get(0)?)?;
            // `None`: the listed attempt is waiting after all, so it changed since the update
            // looked; try again.
            return Reconciled::check(listed, attempt, row.try_get(1)?, row.try_get(2)?)
                .ok_or(Fault::Raced);
        };
        let scope = text(&row, 0)?;
        let event = AuditEvent {
            call_id: text(&row, 1)?.into(),
            tool: text(&row, 2)?.into(),
            kind: AuditKind::Reconciled,
            code: None,
            digest: Some(text(&row, 3)?.into()),
            principal: text(&row, 4)?.into(),
            note: Some(resolution.as_str().to_owned()),
            output: outcome.as_ref().map(Recorded::digest),
        };
        let settles = outcome.as_ref().map(|_| (key, 0));
        append_in(&tx, &scope, [event], settles).await?;
        tx.commit().await?;
        Ok(Reconciled::Settled)
    }

    async fn unsettled_once(&self, scope: &str) -> Result<Vec<Unsettled>, Fault> {
        let client = self.pool.get().await?;
        let unsettled = client.prepare_cached(UNSETTLED).await?;
        let rows = client.query(&unsettled, &[&stored(scope)]).await?;
        rows.iter()
            .map(|row| {
                let kind: String = row.try_get(0)?;
                let kind = KeyKind::parse(&kind)
                    .ok_or_else(|| corrupt(format_args!("a key kind {kind:?}")))?;
                Ok(Unsettled {
                    key: ClaimKey {
                        kind,
                        scope: text(row, 1)?.into(),
                        id: text(row, 2)?.into(),
                    },
                    call_id: text(row, 3)?,
                    binding: Binding {
                        tool: text(row, 4)?.into(),
                        contract: text(row, 5)?.into(),
                        arguments: text(row, 6)?.into(),
                        principal: text(row, 7)?.into(),
                    },
                    attempt: attempt_of(row.try_get(8)?)?,
                    claimed_at: from_unix_millis(row.try_get(9)?),
                })
            })
            .collect()
    }

    async fn trail_once(&self, scope: &str) -> Result<Vec<AuditRecord>, Fault> {
        let mut client = self.pool.get().await?;
        let client = client.transaction().await?;
        let scope_stored = stored(scope);
        // Every committed record is sealed first; the head stays locked until the trail is
        // read, so none is sealed in between.
        seal(&client, scope, true).await?;
        // The outcomes next: a sealed record that settled one is noted on its claim in the
        // sealing transaction, so the trail read after has it.
        let held = client.prepare_cached(HELD).await?;
        let held = client
            .query(&held, &[&scope_stored])
            .await?
            .iter()
            .map(|row| {
                let seq: Option<i64> = row.try_get(0)?;
                Ok(HeldOutcome {
                    seq: seq
                        .map(|seq| {
                            u64::try_from(seq)
                                .map_err(|_| corrupt(format_args!("a settling record {seq}")))
                        })
                        .transpose()?,
                    call_id: text(row, 1)?,
                    outcome: recorded(row.try_get(2)?, opt_text(row, 3)?, opt_text(row, 4)?)?
                        .ok_or_else(|| corrupt("a held outcome without a status"))?,
                })
            })
            .collect::<Result<Vec<_>, Fault>>()?;
        let trail = client.prepare_cached(TRAIL).await?;
        let rows = client.query(&trail, &[&scope_stored]).await?;
        let mut records = rows
            .iter()
            .map(|row| {
                let seq: i64 = row.try_get(0)?;
                Ok(AuditRecord {
                    scope: scope.to_owned(),
                    seq: u64::try_from(seq)
                        .map_err(|_| corrupt(format_args!("an audit sequence number {seq}")))?,
                    at: row.try_get(1)?,
                    event: audit_event(row, 2)?,
                    prev: row.try_get(10)?,
                    hash: row.try_get(11)?,
                })
            })
            .collect::<Result<Vec<_>, Fault>>()?;
        client.commit().await?;
        held_outcomes(&mut records, held)?;
        Ok(records)
    }

    async fn use_nonce_once(&self, nonce: &str, expires: SystemTime) -> Result<bool, Fault> {
        let client = self.pool.get().await?;
        let insert = client.prepare_cached(USE_NONCE).await?;
        let inserted = client
            .execute(&insert, &[&stored(nonce), &unix_millis(expires)])
            .await?;
        Ok(inserted == 1)
    }

    async fn store_run_once(
        &self,
        scope: &str,
        run: &str,
        state: Option<&str>,
    ) -> Result<(), Fault> {
        let client = self.pool.get().await?;
        let (scope, run) = (stored(scope), stored(run));
        match state {
            Some(state) => {
                let store = client.prepare_cached(STORE_RUN).await?;
                client
                    .execute(&store, &[&scope, &run, &stored(state)])
                    .await?;
            }
            None => {
                let remove = client.prepare_cached(REMOVE_RUN).await?;
                client.execute(&remove, &[&scope, &run]).await?;
            }
        }
        Ok(())
    }

    async fn load_run_once(&self, scope: &str, run: &str) -> Result<Option<String>, Fault> {
        let client = self.pool.get().await?;
        let load = client.prepare_cached(LOAD_RUN).await?;
        let row = client
            .query_opt(&load, &[&stored(scope), &stored(run)])
            .await?;
        Ok(match row {
            Some(row) => Some(text(&row, 0)?),
            None => None,
        })
    }
}

/// Takes one unit of each of the claim's quotas, all or none: `Some(name)` of the first quota
/// (in the claim's order) that is used up, and then nothing is taken.
async fn take_quotas(tx: &Transaction<'_>, claim: &Claim) -> Result<Option<String>, Fault> {
    if claim.quotas.is_empty() {
        return Ok(None);
    }
    // Counters are locked in name order, so claims with overlapping quotas cannot deadlock.
    let mut wanted: BTreeMap<&str, i64> = BTreeMap::new();
    for quota in &claim.quotas {
        *wanted.entry(quota.name.as_str()).or_default() += 1;
    }
    let names: Vec<Cow<'_, str>> = wanted.keys().map(|name| stored(name)).collect();
    let counts: Vec<i64> = wanted.values().copied().collect();
    let scope = stored(&claim.scope);
    let lock = tx.prepare_cached(LOCK_COUNTERS).await?;
    let mut used: BTreeMap<String, i64> = BTreeMap::new();
    for row in tx.query(&lock, &[&scope, &names]).await? {
        used.insert(text(&row, 0)?, row.try_get(1)?);
    }
    for quota in &claim.quotas {
        let taken = used.get(&quota.name).copied().unwrap_or(0);
        if u64::try_from(taken).unwrap_or(0) >= quota.limit {
            return Ok(Some(quota.name.clone()));
        }
    }
    // Planned for its values each time, as the seal's statement is (see `seal`): a plan
    // made once, while the counters table was small, would scan all of it.
    use tokio_postgres::types::Type;
    tx.execute_typed(
        TAKE_COUNTERS,
        &[
            (&scope, Type::TEXT),
            (&names, Type::TEXT_ARRAY),
            (&counts, Type::INT8_ARRAY),
        ],
    )
    .await?;
    Ok(None)
}

/// Writes the claim's audit records, its answer last, and commits.
async fn answer_claim(
    tx: Transaction<'_>,
    claim: &Claim,
    answer: Claimed,
) -> Result<Claimed, Fault> {
    let event = claim_event(claim, &answer);
    append_in(
        &tx,
        &claim.scope,
        claim.audit.iter().cloned().chain([event]),
        None,
    )
    .await?;
    tx.commit().await?;
    Ok(answer)
}

/// Appends `events` to `scope`'s pending records inside `tx`, as one batch, without waiting
/// for other appends. With `settles`, the event at that index settles that claim: sealing
/// notes its place on the claim. One append in [`SEAL_EVERY`] then seals the scope's pending
/// records, unless another transaction is sealing them.
async fn append_in(
    tx: &Transaction<'_>,
    scope: &str,
    events: impl IntoIterator<Item = AuditEvent>,
    settles: Option<(&ClaimKey, usize)>,
) -> Result<(), Fault> {
    let mut columns = PendingColumns::default();
    for event in events {
        columns.push(&event);
    }
    if columns.kind.is_empty() {
        return Ok(());
    }
    let Some(batch) = insert_pending(tx, scope, &columns, settles).await? else {
        return Ok(());
    };
    if batch % SEAL_EVERY == 0 {
        seal(tx, scope, false).await?;
    }
    Ok(())
}

/// Appends `columns` to `scope`'s pending records as one batch ([`INSERT_PENDING`]), in `tx`
/// or, given a client, in a statement of its own; with `settles`, the record at that index
/// settles that claim. Returns the batch's number.
async fn insert_pending(
    tx: &impl GenericClient,
    scope: &str,
    columns: &PendingColumns,
    settles: Option<(&ClaimKey, usize)>,
) -> Result<Option<i64>, Fault> {
    let ord = settles.and_then(|(_, at)| i64::try_from(at + 1).ok());
    let insert = tx.prepare_cached(INSERT_PENDING).await?;
    let c = columns;
    let rows = tx
        .query(
            &insert,
            &[
                &stored(scope),
                &c.call_id,
                &c.tool,
                &c.kind,
                &c.code,
                &c.digest,
                &c.principal,
                &c.note,
                &c.output,
                &ord,
                &settles.map(|(key, _)| key.kind.as_str()),
                &settles.map(|(key, _)| stored(&key.scope)),
                &settles.map(|(key, _)| stored(&key.id)),
            ],
        )
        .await?;
    match rows.first() {
        Some(row) => Ok(Some(row.try_get(0)?)),
        None => Ok(None),
    }
}

/// A claim as [`SELECT_CLAIM`] reads it.
struct Held {
    attempt: u32,
    binding: Binding,
    outcome: Option<Recorded>,
    released: bool,
    lease_passed: bool,
    effect: Effect,
}

impl Held {
    /// The claim in the eleven columns of `row` from `first` on, in the order of
    /// [`SELECT_CLAIM`].
    fn read(row: &Row, first: usize) -> Result<Held, Fault> {
        let effect: String = row.try_get(first + 10)?;
        Ok(Held {
            attempt: attempt_of(row.try_get(first)?)?,
            binding: Binding {
                tool: text(row, first + 1)?.into(),
                contract: text(row, first + 2)?.into(),
                arguments: text(row, first + 3)?.into(),
                principal: text(row, first + 4)?.into(),
            },
            outcome: recorded(
                row.try_get(first + 5)?,
                opt_text(row, first + 6)?,
                opt_text(row, first + 7)?,
            )?,
            released: row.try_get(first + 8)?,
            lease_passed: row.try_get(first + 9)?,
            effect: parse_effect(&effect)
                .ok_or_else(|| corrupt(format_args!("an effect {effect:?}")))?,
        })
    }

    /// What [`decide`] answers `claim` with this claim holding its key (the outcome, if any,
    /// is moved into the answer).
    fn decide(&mut self, claim: &Claim) -> Option<Claimed> {
        decide(
            claim,
            &self.binding,
            self.effect,
            self.outcome.take(),
            self.released,
            self.lease_passed,
        )
    }
}

/// Seals `scope`'s pending records (those committed, and `tx`'s own) into its chain, in the
/// order of their batches, and notes on each claim a record settles that record's place.
/// With `wait`, waits for the head while another transaction holds it; without, leaves the
/// records to that transaction or a later one.
async fn seal(tx: &Transaction<'_>, scope: &str, wait: bool) -> Result<(), Fault> {
    let stored_scope = stored(scope);
    let head = if wait {
        let lock = tx.prepare_cached(LOCK_HEAD).await?;
        Some(tx.query_one(&lock, &[&stored_scope, &GENESIS]).await?)
    } else {
        let try_head = tx.prepare_cached(TRY_HEAD).await?;
        match tx.query_opt(&try_head, &[&stored_scope]).await? {
            Some(row) => Some(row),
            None => {
                let new_head = tx.prepare_cached(NEW_HEAD).await?;
                tx.query_opt(&new_head, &[&stored_scope, &GENESIS]).await?
            }
        }
    };
    let Some(head) = head else {
        return Ok(());
    };
    let seq: i64 = head.try_get(0)?;
    let hash: String = head.try_get(1)?;
    let mut prev = match seq {
        0 => None,
        seq => Some((
            u64::try_from(seq)
                .map_err(|_| corrupt(format_args!("an audit head at sequence number {seq}")))?,
            hash,
        )),
    };
    let take = tx.prepare_cached(TAKE_PENDING).await?;
    let mut pending = tx
        .query(&take, &[&stored_scope])
        .await?
        .iter()
        .map(|row| {
            let settles = match row.try_get::<_, Option<String>>(11)? {
                None => None,
                Some(kind) => Some((kind, text(row, 12)?, text(row, 13)?)),
            };
            Ok(Pending {
                batch: row.try_get(0)?,
                ord: row.try_get(1)?,
                at: row.try_get(2)?,
                event: audit_event(row, 3)?,
                settles,
            })
        })
        .collect::<Result<Vec<_>, Fault>>()?;
    if pending.is_empty() {
        return Ok(());
    }
    pending.sort_by_key(|p| (p.batch, p.ord));
    let mut columns = AuditColumns::default();
    // The claims settled, each with its latest settling record.
    let mut settled: BTreeMap<(String, String, String), i64> = BTreeMap::new();
    for p in pending {
        let record = AuditRecord::chain(
            scope,
            prev.as_ref().map(|(s, h)| (*s, h.as_str())),
            p.at,
            p.event,
        );
        prev = Some((record.seq, record.hash.clone()));
        let seq =
            i64::try_from(record.seq).map_err(|_| corrupt("an audit sequence number past 2^63"))?;
        if let Some(key) = p.settles {
            settled.insert(key, seq);
        }
        columns.push(record)?;
    }
    let Some((last, head)) = prev else {
        return Ok(());
    };
    let last = i64::try_from(last).map_err(|_| corrupt("an audit sequence number past 2^63"))?;
    let mut keys: (Vec<String>, Vec<String>, Vec<String>, Vec<i64>) = Default::default();
    for ((kind, key_scope, id), seq) in settled {
        keys.0.push(kind);
        keys.1.push(stored(&key_scope).into_owned());
        keys.2.push(stored(&id).into_owned());
        keys.3.push(seq);
    }
    // Planned afresh each time, not prepared once: the claims it notes are found by their
    // primary key only if the plan knows how large the claims table has grown. A plan made
    // once, while the table was small, scans the whole table at every seal.
    use tokio_postgres::types::Type;
    let c = &columns;
    tx.execute_typed(
        INSERT_AUDIT,
        &[
            (&stored_scope, Type::TEXT),
            (&c.seq, Type::INT8_ARRAY),
            (&c.at, Type::INT8_ARRAY),
            (&c.call_id, Type::TEXT_ARRAY),
            (&c.tool, Type::TEXT_ARRAY),
            (&c.kind, Type::TEXT_ARRAY),
            (&c.code, Type::TEXT_ARRAY),
            (&c.digest, Type::TEXT_ARRAY),
            (&c.principal, Type::TEXT_ARRAY),
            (&c.note, Type::TEXT_ARRAY),
            (&c.prev, Type::TEXT_ARRAY),
            (&c.hash, Type::TEXT_ARRAY),
            (&c.output, Type::TEXT_ARRAY),
            (&last, Type::INT8),
            (&keys.0, Type::TEXT_ARRAY),
            (&keys.1, Type::TEXT_ARRAY),
            (&keys.2, Type::TEXT_ARRAY),
            (&keys.3, Type::INT8_ARRAY),
            (&head, Type::TEXT),
        ],
    )
    .await?;
    Ok(())
}

/// A pending record as sealing reads it.
struct Pending {
    batch: i64,
    ord: i64,
    at: i64,
    event: AuditEvent,
    /// The claim it settles: kind, key scope and id, as written.
    settles: Option<(String, String, String)>,
}

/// Pending records column by column, for one `INSERT ... SELECT FROM unnest(...)`.
#[derive(Default)]
struct PendingColumns {
    call_id: Vec<String>,
    tool: Vec<String>,
    kind: Vec<&'static str>,
    code: Vec<Option<&'static str>>,
    digest: Vec<Option<String>>,
    principal: Vec<String>,
    note: Vec<Option<String>>,
    output: Vec<Option<String>>,
}

impl PendingColumns {
    fn push(&mut self, e: &AuditEvent) {
        let owned = |text: &str| stored(text).into_owned();
        self.call_id.push(owned(&e.call_id));
        self.tool.push(owned(&e.tool));
        self.kind.push(e.kind.as_str());
        self.code.push(e.code.map(Code::as_str));
        self.digest.push(e.digest.as_deref().map(owned));
        self.principal.push(owned(&e.principal));
        self.note.push(e.note.as_deref().map(owned));
        self.output.push(e.output.clone());
    }
}

/// Audit records column by column, for one `INSERT ... SELECT FROM unnest(...)`.
#[derive(Default)]
struct AuditColumns {
    seq: Vec<i64>,
    at: Vec<i64>,
    call_id: Vec<String>,
    tool: Vec<String>,
    kind: Vec<&'static str>,
    code: Vec<Option<&'static str>>,
    digest: Vec<Option<String>>,
    principal: Vec<String>,
    note: Vec<Option<String>>,
    prev: Vec<String>,
    hash: Vec<String>,
    output: Vec<Option<String>>,
}

impl AuditColumns {
    fn push(&mut self, record: AuditRecord) -> Result<(), Fault> {
        let seq =
            i64::try_from(record.seq).map_err(|_| corrupt("an audit sequence number past 2^63"))?;
        let e = record.event;
        self.seq.push(seq);
        self.at.push(record.at);
        self.call_id.push(stored(&e.call_id).into_owned());
        self.tool.push(stored(&e.tool).into_owned());
        self.kind.push(e.kind.as_str());
        self.code.push(e.code.map(Code::as_str));
        self.digest
            .push(e.digest.as_deref().map(|d| stored(d).into_owned()));
        self.principal.push(stored(&e.principal).into_owned());
        self.note
            .push(e.note.as_deref().map(|n| stored(n).into_owned()));
        self.prev.push(record.prev);
        self.hash.push(record.hash);
        self.output.push(e.output);
        Ok(())
    }
}

impl fmt::Debug for PostgresLedger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = self.pool.status();
        f.debug_struct("PostgresLedger")
            .field("connections", &status.size)
            .field("max_connections", &status.max_size)
            .finish_non_exhaustive()
    }
}

impl Ledger for PostgresLedger {
    fn claim<'a>(&'a self, claim: &'a Claim) -> LedgerFuture<'a, Claimed> {
        Box::pin(retry("claiming a call", move || self.claim_once(claim)))
    }

    fn settle<'a>(
        &'a self,
        key: &'a ClaimKey,
        attempt: u32,
        outcome: &'a Recorded,
        audit: &'a [AuditEvent],
    ) -> LedgerFuture<'a, bool> {
        Box::pin(retry("recording an outcome", move || {
            self.settle_once(key, attempt, outcome, audit)
        }))
    }

    fn append<'a>(&'a self, scope: &'a str, audit: &'a [AuditEvent]) -> LedgerFuture<'a, ()> {
        Box::pin(async move {
            if audit.is_empty() {
                return Ok(());
            }
            retry("appending to the audit trail", move || {
                self.append_once(scope, audit)
            })
            .await
        })
    }

    fn reconcile<'a>(
        &'a self,
        listed: &'a Unsettled,
        resolution: &'a Resolution,
    ) -> LedgerFuture<'a, Reconciled> {
        Box::pin(retry("reconciling a claim", move || {
            self.reconcile_once(listed, resolution)
        }))
    }

    fn unsettled<'a>(&'a self, scope: &'a str) -> LedgerFuture<'a, Vec<Unsettled>> {
        Box::pin(retry("listing unsettled claims", move || {
            self.unsettled_once(scope)
        }))
    }

    fn trail<'a>(&'a self, scope: &'a str) -> LedgerFuture<'a, Vec<AuditRecord>> {
        Box::pin(retry("reading the audit trail", move || {
            self.trail_once(scope)
        }))
    }

    fn use_nonce<'a>(&'a self, nonce: &'a str, expires: SystemTime) -> LedgerFuture<'a, bool> {
        Box::pin(retry("using a nonce", move || {
            self.use_nonce_once(nonce, expires)
        }))
    }

    fn store_run<'a>(
        &'a self,
        scope: &'a str,
        run: &'a str,
        state: Option<&'a str>,
    ) -> LedgerFuture<'a, ()> {
        Box::pin(retry("storing a run", move || {
            self.store_run_once(scope, run, state)
        }))
    }

    fn load_run<'a>(&'a self, scope: &'a str, run: &'a str) -> LedgerFuture<'a, Option<String>> {
        Box::pin(retry("loading a run", move || {
            self.load_run_once(scope, run)
        }))
    }
}
