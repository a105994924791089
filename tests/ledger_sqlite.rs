//! The SQLite ledger: the rules every store keeps (`ledger_suite.rs`), what survives closing
//! the file, what it refuses to open, and worker processes (`bin/ledger_worker.rs`) sharing
//! one file: racing for the same calls, and one killed in the middle of a call.

#[path = "ledger_suite.rs"]
mod suite;

use std::path::Path;
use std::pin::pin;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::{Duration, Instant};

use serde_json::Value;
use tests::workers::{Race, Scratch, lines, run, worker};
use tool_core::ledger::{
    AuditKind, ClaimKey, Claimed, GENESIS, Ledger, Reconciled, Recorded, Resolution, SqliteLedger,
    TrailError, verify,
};
use tool_core::{Code, Context, Registry, Runtime, Tool, ToolDef, registry::ToolError};

fn open(path: &Path) -> Arc<SqliteLedger> {
    Arc::new(SqliteLedger::open(path).expect("the ledger opens"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sqlite_ledger_keeps_every_rule() {
    let dir = Scratch::new("suite");
    suite::check(open(&dir.file("ledger.db")), "sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_and_trails_survive_reopening_the_file() {
    let dir = Scratch::new("reopen");
    let path = dir.file("ledger.db");
    let done = Recorded::Output(r#"{"refunded":true}"#.into());
    let settled = suite::claim("s", "call_1", "refund", "aa");
    let mut running = suite::claim("s", "call_2", "refund", "aa");
    running.lease = Duration::ZERO;
    let head = {
        let ledger = open(&path);
        assert_eq!(
            ledger.claim(&settled).await.unwrap(),
            Claimed::New { attempt: 1 }
        );
        assert!(ledger.settle(&settled.key, 1, &done, &[]).await.unwrap());
        assert_eq!(
            ledger.claim(&running).await.unwrap(),
            Claimed::New { attempt: 1 }
        );
        ledger.store_run("s", "run-1", Some("[1,2]")).await.unwrap();
        verify(&ledger.trail("s").await.unwrap(), None)
            .unwrap()
            .expect("the trail has records")
    };

    let ledger = open(&path);
    assert_eq!(ledger.claim(&settled).await.unwrap(), Claimed::Replay(done));
    assert_eq!(ledger.claim(&running).await.unwrap(), Claimed::Unknown);
    let unsettled = ledger.unsettled("s").await.unwrap();
    assert_eq!(unsettled.len(), 1, "{unsettled:?}");
    assert_eq!(unsettled[0].key, running.key);
    assert_eq!(
        ledger.load_run("s", "run-1").await.unwrap().as_deref(),
        Some("[1,2]")
    );
    // The chain goes on from where the first opening left it.
    let trail = ledger.trail("s").await.unwrap();
    assert!(trail.iter().any(|r| r.hash == head));
    assert!(trail.len() > 4, "{trail:?}");
    verify(&trail, Some(&head)).expect("the trail verifies across openings");
}

/// Two ledgers on one file take turns appending to one scope: each sees the other's records
/// (it keeps the head of a chain only while no other connection has written), so the chain
/// stays one and verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_connections_taking_turns_keep_one_chain() {
    let dir = Scratch::new("turns");
    let path = dir.file("ledger.db");
    let (first, second) = (open(&path), open(&path));
    let done = Recorded::Output("1".into());
    for i in 0..6 {
        let (claimer, settler) = if i % 2 == 0 {
            (&first, &second)
        } else {
            (&second, &first)
        };
        let claim = suite::claim("s", &format!("call_{i}"), "refund", "aa");
        assert_eq!(
            claimer.claim(&claim).await.unwrap(),
            Claimed::New { attempt: 1 }
        );
        assert!(settler.settle(&claim.key, 1, &done, &[]).await.unwrap());
        // A claim the same connection makes twice in a row, after the other one wrote.
        assert_eq!(
            settler.claim(&claim).await.unwrap(),
            Claimed::Replay(done.clone())
        );
    }
    for ledger in [&first, &second] {
        let trail = ledger.trail("s").await.unwrap();
        assert_eq!(trail.len(), 6 * 5, "{trail:#?}");
        verify(&trail, None).expect("the chain both connections wrote verifies");
        let seqs: Vec<u64> = trail.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, (1..=30).collect::<Vec<u64>>());
    }
}

/// Sends a message: the effect the runtime tests count.
#[derive(Tool, Debug)]
struct SendMessage {
    /// Who to send it to.
    to: String,
}

fn messenger(ledger: Arc<SqliteLedger>, sent: &Arc<AtomicUsize>) -> Runtime {
    let sent = Arc::clone(sent);
    let handler = move |args: SendMessage, _: &Context| {
        let n = sent.fetch_add(1, Ordering::SeqCst) + 1;
        async move { Ok::<_, ToolError>(serde_json::json!({ "to": args.to, "message": n })) }
    };
    let mut registry = Registry::new();
    registry.register(ToolDef::new(handler)).unwrap();
    Runtime::builder(registry).ledger(ledger).build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_runtime_replays_what_the_first_one_ran() {
    let dir = Scratch::new("restart");
    let path = dir.file("ledger.db");
    let sent = Arc::new(AtomicUsize::new(0));
    let cx = Context::builder("user-1").scope("conversation-1").build();
    let first = {
        let runtime = messenger(open(&path), &sent);
        let outcome = runtime
            .invoke("call_1", "send_message", r#"{"to":"ada"}"#, &cx)
            .await;
        assert!(outcome.is_ok(), "{outcome:?}");
        assert!(!outcome.is_replay());
        outcome.output().unwrap().as_str().to_owned()
    };
    assert_eq!(sent.load(Ordering::SeqCst), 1);

    // Another runtime on the same file, as after a restart.
    let runtime = messenger(open(&path), &sent);
    let again = runtime
        .invoke("call_1", "send_message", r#"{"to":"ada"}"#, &cx)
        .await;
    assert!(again.is_replay(), "{again:?}");
    assert_eq!(again.output().unwrap().as_str(), first);
    let other = runtime
        .invoke("call_1", "send_message", r#"{"to":"bob"}"#, &cx)
        .await;
    assert_eq!(other.code(), Some(Code::CallIdConflict));
    assert_eq!(sent.load(Ordering::SeqCst), 1, "nothing ran again");

    let trail = runtime
        .ledger()
        .unwrap()
        .trail("conversation-1")
        .await
        .unwrap();
    verify(&trail, None).expect("the trail verifies");
    let kinds: Vec<AuditKind> = trail.iter().map(|r| r.event.kind).collect();
    assert_eq!(
        kinds,
        [
            AuditKind::Authorized,
            AuditKind::Admitted,
            AuditKind::Executed,
            AuditKind::Outcome,
            AuditKind::Authorized,
            AuditKind::Replayed,
            AuditKind::Authorized,
            AuditKind::Refused,
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_file_refuses_the_call_and_runs_nothing() {
    let dir = Scratch::new("locked");
    let path = dir.file("ledger.db");
    let ledger = Arc::new(
        SqliteLedger::builder()
            .busy_timeout(Duration::from_millis(50))
            .open(&path)
            .unwrap(),
    );
    let sent = Arc::new(AtomicUsize::new(0));
    let runtime = messenger(Arc::clone(&ledger), &sent);
    let cx = Context::builder("user-1").scope("s").build();

    let mut other = rusqlite::Connection::open(&path).unwrap();
    let lock = other
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .unwrap();
    let outcome = runtime
        .invoke("call_1", "send_message", r#"{"to":"ada"}"#, &cx)
        .await;
    assert_eq!(outcome.code(), Some(Code::LedgerUnavailable), "{outcome:?}");
    let detail = outcome.failure().unwrap().detail().unwrap();
    assert!(detail.contains("locked"), "{detail}");
    assert_eq!(sent.load(Ordering::SeqCst), 0);
    drop(lock);

    // Nothing was recorded: the same call runs once the file is free.
    let outcome = runtime
        .invoke("call_1", "send_message", r#"{"to":"ada"}"#, &cx)
        .await;
    assert!(outcome.is_ok() && !outcome.is_replay(), "{outcome:?}");
    assert_eq!(sent.load(Ordering::SeqCst), 1);
}

#[test]
fn files_that_are_not_this_ledger_are_refused() {
    let dir = Scratch::new("refused");
    let garbage = dir.file("garbage.db");
    std::fs::write(
        &garbage,
        "not a database, just text that is long enough to be a header ",
    )
    .unwrap();
    let error = SqliteLedger::open(&garbage).unwrap_err();
    assert!(error.message().contains("not a database"), "{error}");

    let newer = dir.file("newer.db");
    drop(SqliteLedger::open(&newer).unwrap());
    let edit = rusqlite::Connection::open(&newer).unwrap();
    edit.execute(
        "UPDATE ledger_meta SET value = ?1 WHERE key = 'schema_version'",
        [SqliteLedger::SCHEMA_VERSION + 1],
    )
    .unwrap();
    let error = SqliteLedger::open(&newer).unwrap_err();
    assert!(error.message().contains("newer version"), "{error}");
    edit.execute(
        "UPDATE ledger_meta SET value = 'two' WHERE key = 'schema_version'",
        [],
    )
    .unwrap();
    let error = SqliteLedger::open(&newer).unwrap_err();
    assert!(
        error.message().contains("unknown schema version"),
        "{error}"
    );

    // An application's table of the same name is not taken for the ledger's.
    let foreign = dir.file("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE ledger_claims (x)")
        .unwrap();
    let error = SqliteLedger::open(&foreign).unwrap_err();
    assert!(error.message().contains("already exists"), "{error}");

    // Other tables of the application's are left alone.
    let shared = dir.file("shared.db");
    rusqlite::Connection::open(&shared)
        .unwrap()
        .execute_batch("CREATE TABLE orders (id INTEGER PRIMARY KEY)")
        .unwrap();
    SqliteLedger::open(&shared).expect("a file with other tables opens");
    SqliteLedger::open(&shared).expect("and opens again");

    let error = SqliteLedger::open(dir.file("missing/ledger.db")).unwrap_err();
    assert!(error.message().contains("could not be opened"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_this_crate_did_not_write_are_errors() {
    let dir = Scratch::new("tampered");
    let path = dir.file("ledger.db");
    let ledger = open(&path);
    let c = suite::claim("s", "call_1", "refund", "aa");
    assert_eq!(ledger.claim(&c).await.unwrap(), Claimed::New { attempt: 1 });
    let done = Recorded::Output("1".into());
    assert!(ledger.settle(&c.key, 1, &done, &[]).await.unwrap());

    let edit = rusqlite::Connection::open(&path).unwrap();
    edit.execute(
        &format!(
            "UPDATE ledger_audit SET principal = 'mallory' WHERE {}",
            at_seq(1)
        ),
        [],
    )
    .unwrap();
    let trail = ledger.trail("s").await.unwrap();
    assert_eq!(verify(&trail, None), Err(TrailError::Edited { seq: 1 }));

    edit.execute("UPDATE ledger_claims SET status = 'no_such_code'", [])
        .unwrap();
    let error = ledger.claim(&c).await.unwrap_err();
    assert!(error.message().contains("unknown code"), "{error}");
    let error = ledger.trail("s").await.unwrap_err();
    assert!(error.message().contains("unknown code"), "{error}");
    edit.execute("UPDATE ledger_claims SET status = 'ok'", [])
        .unwrap();
    edit.execute(
        &format!(
            "UPDATE ledger_audit SET kind = 'teleported' WHERE {}",
            at_seq(2)
        ),
        [],
    )
    .unwrap();
    let error = ledger.trail("s").await.unwrap_err();
    assert!(error.message().contains("unknown kind"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_stored_outcome_fails_verification_at_its_record() {
    let dir = Scratch::new("edited-outcome");
    let path = dir.file("ledger.db");
    let ledger = open(&path);
    let store = rusqlite::Connection::open(&path).unwrap();
    suite::edited_outcomes_fail_verification(&*ledger, |edit| {
        let (sql, id, value): (&str, &str, rusqlite::types::Value) = match edit {
            suite::Edit::Body(id, body) => (
                "UPDATE ledger_claims SET body = ?2 WHERE call_id = ?1",
                id,
                body.to_owned().into(),
            ),
            suite::Edit::Status(id, status) => (
                "UPDATE ledger_claims SET status = ?2 WHERE call_id = ?1",
                id,
                status.to_owned().into(),
            ),
            suite::Edit::SettledBy(id, seq) => (
                "UPDATE ledger_claims SET settled_seq = ?2 WHERE call_id = ?1",
                id,
                seq.map_or(rusqlite::types::Value::Null, Into::into),
            ),
            other => panic!("this store cannot make the edit {other:?}"),
        };
        assert_eq!(store.execute(sql, rusqlite::params![id, value]).unwrap(), 1);
        std::future::ready(())
    })
    .await;
}

/// Where the record `seq` of a file's first trail is: the first part of the trail
/// numbered 1, so its place is 2^32 + `seq`.
fn at_seq(seq: u64) -> String {
    format!("pos = {}", (1_u64 << 32) + seq)
}

/// Rewrites the audit records as versions 1 and 2 stored them: every digest and hash as its
/// hex text, and each record's `prev` spelled out (for trails of fewer than 2^32 records).
fn as_text() -> String {
    format!(
        "
    UPDATE ledger_audit SET
        digest = CASE WHEN typeof(digest) = 'blob' THEN lower(hex(digest)) ELSE digest END,
        output = CASE WHEN typeof(output) = 'blob' THEN lower(hex(output)) ELSE output END,
        hash = lower(hex(hash));
    UPDATE ledger_audit AS a SET prev = coalesce(
        (SELECT b.hash FROM ledger_audit AS b WHERE b.pos = a.pos - 1),
        '{GENESIS}');"
    )
}

/// Rewrites a file's tables as version 3 stored them: the audit records keyed by scope and
/// sequence number, with the values they have, and the claims' digests as text, in columns
/// declared as text.
const AS_VERSION_3: &str = "
    CREATE TABLE ledger_audit_3 (
        scope TEXT NOT NULL, seq INTEGER NOT NULL, at INTEGER NOT NULL, call_id TEXT NOT NULL,
        tool TEXT NOT NULL, kind TEXT NOT NULL, code TEXT, digest BLOB, principal TEXT NOT NULL,
        note TEXT, prev BLOB NOT NULL, hash BLOB NOT NULL, output BLOB,
        PRIMARY KEY (scope, seq)
    ) WITHOUT ROWID;
    INSERT INTO ledger_audit_3
        SELECT s.scope, (s.epoch << 32) | (a.pos & 4294967295), a.at, a.call_id, a.tool, a.kind,
               a.code, a.digest, a.principal, a.note, a.prev, a.hash, a.output
        FROM ledger_audit AS a JOIN ledger_scopes AS s ON s.number = a.pos >> 32;
    DROP TABLE ledger_audit;
    DROP TABLE ledger_scopes;
    ALTER TABLE ledger_audit_3 RENAME TO ledger_audit;
    CREATE TABLE ledger_claims_3 (
        kind TEXT NOT NULL, key_scope TEXT NOT NULL, id TEXT NOT NULL, attempt INTEGER NOT NULL,
        tool TEXT NOT NULL, contract TEXT NOT NULL, arguments TEXT NOT NULL,
        principal TEXT NOT NULL, effect TEXT NOT NULL, call_id TEXT NOT NULL,
        scope TEXT NOT NULL, claimed_at INTEGER NOT NULL, lease_until INTEGER NOT NULL,
        status TEXT, body TEXT, detail TEXT, released INTEGER NOT NULL DEFAULT 0,
        settled_at INTEGER, settled_seq INTEGER,
        PRIMARY KEY (kind, key_scope, id)
    ) WITHOUT ROWID;
    INSERT INTO ledger_claims_3
        SELECT kind, key_scope, id, attempt, tool,
               CASE WHEN typeof(contract) = 'blob' THEN lower(hex(contract)) ELSE contract END,
               CASE WHEN typeof(arguments) = 'blob' THEN lower(hex(arguments)) ELSE arguments END,
               principal, effect, call_id, scope, claimed_at, lease_until, status, body, detail,
               released, settled_at, settled_seq
        FROM ledger_claims;
    DROP TABLE ledger_claims;
    ALTER TABLE ledger_claims_3 RENAME TO ledger_claims;
    UPDATE ledger_meta SET value = 3 WHERE key = 'schema_version';";

/// The schema version a file's tables say they are at.
fn stored_version(path: &Path) -> i64 {
    rusqlite::Connection::open(path)
        .unwrap()
        .query_row(
            "SELECT value FROM ledger_meta WHERE key = 'schema_version'",
            [],
            |row| row.get(0),
        )
        .unwrap()
}

/// How each audit record of a file is stored: (its call id, type of digest, type of prev,
/// length of prev, type of hash, length of hash), in scope and sequence order.
type Form = (String, String, String, i64, String, i64);

fn stored_forms(path: &Path) -> Vec<Form> {
    let order = if stored_version(path) >= 4 {
        "pos"
    } else {
        "scope, seq"
    };
    let store = rusqlite::Connection::open(path).unwrap();
    let mut statement = store
        .prepare(&format!(
            "SELECT call_id, typeof(digest), typeof(prev), length(prev), typeof(hash),
                    length(hash)
             FROM ledger_audit ORDER BY {order}"
        ))
        .unwrap();
    statement
        .query_map([], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn digests_are_stored_as_bytes_and_read_back_as_written() {
    let dir = Scratch::new("packed");
    let path = dir.file("ledger.db");
    let ledger = open(&path);
    // A digest as this crate makes them (64 lowercase hex digits), one in capitals and one
    // that is not hex: only the first may be stored as bytes, or it would not read back.
    let digests = ["0f".repeat(32), "0F".repeat(32), "aa".to_owned()];
    for (n, digest) in digests.iter().enumerate() {
        let c = suite::claim("s", &format!("call_{n}"), "refund", digest);
        assert_eq!(ledger.claim(&c).await.unwrap(), Claimed::New { attempt: 1 });
        let done = Recorded::Output(n.to_string());
        assert!(ledger.settle(&c.key, 1, &done, &[]).await.unwrap());
    }
    let trail = ledger.trail("s").await.unwrap();
    verify(&trail, None).expect("the trail verifies");
    let forms = stored_forms(&path);
    assert_eq!(forms.len(), trail.len());
    let mut with_digest = [0; 3];
    for (record, form) in trail.iter().zip(&forms) {
        let n: usize = record.event.call_id["call_".len()..].parse().unwrap();
        assert_eq!(form.0, &*record.event.call_id);
        let stored = match record.event.digest.as_deref() {
            None => "null",
            Some(digest) => {
                assert_eq!(digest, digests[n], "record {}", record.seq);
                with_digest[n] += 1;
                if n == 0 { "blob" } else { "text" }
            }
        };
        let form = (
            form.1.as_str(),
            form.2.as_str(),
            form.3,
            form.4.as_str(),
            form.5,
        );
        assert_eq!(
            form,
            (stored, "blob", 0, "blob", 32),
            "record {}",
            record.seq
        );
    }
    assert!(with_digest.iter().all(|&n| n >= 1), "{with_digest:?}");

    // Edits to the stored bytes are found: a hash, the same once spelled out as text, a
    // link spelled out wrong (a link spelled out is used as it is), a hash that is no digest.
    let edit = rusqlite::Connection::open(&path).unwrap();
    edit.execute(
        &format!(
            "UPDATE ledger_audit SET hash = zeroblob(32) WHERE {}",
            at_seq(3)
        ),
        [],
    )
    .unwrap();
    let trail = ledger.trail("s").await.unwrap();
    assert_eq!(verify(&trail, None), Err(TrailError::Edited { seq: 3 }));
    edit.execute_batch(&as_text()).unwrap();
    let trail = ledger.trail("s").await.unwrap();
    assert_eq!(verify(&trail, None), Err(TrailError::Edited { seq: 3 }));
    edit.execute(
        &format!("UPDATE ledger_audit SET prev = 'x' WHERE {}", at_seq(2)),
        [],
    )
    .unwrap();
    let trail = ledger.trail("s").await.unwrap();
    assert_eq!(trail[1].prev, "x");
    assert_eq!(verify(&trail, None), Err(TrailError::Edited { seq: 2 }));
    edit.execute(
        &format!("UPDATE ledger_audit SET hash = x'00' WHERE {}", at_seq(1)),
        [],
    )
    .unwrap();
    let error = ledger.trail("s").await.unwrap_err();
    assert!(error.message().contains("32-byte digest"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_of_schema_version_3_is_brought_up_to_date() {
    let dir = Scratch::new("version-3");
    let path = dir.file("ledger.db");
    let ledger = open(&path);
    let mut calls = Vec::new();
    for scope in ["t", "s"] {
        for n in 0..3 {
            let c = suite::claim(scope, &format!("call_{n}"), "refund", &"ab".repeat(32));
            assert_eq!(ledger.claim(&c).await.unwrap(), Claimed::New { attempt: 1 });
            let done = Recorded::Output(n.to_string());
            assert!(ledger.settle(&c.key, 1, &done, &[]).await.unwrap());
            calls.push((c, done));
        }
    }
    let written = [
        ledger.trail("s").await.unwrap(),
        ledger.trail("t").await.unwrap(),
    ];
    drop(ledger);
    let edit = rusqlite::Connection::open(&path).unwrap();
    edit.execute_batch(AS_VERSION_3).unwrap();
    assert_eq!(stored_version(&path), 3);
    // A trail whose records are past 2^32 (one record here, its head).
    let far = (1_i64 << 32) + 5;
    edit.execute(
        "INSERT INTO ledger_audit (scope, seq, at, call_id, tool, kind, principal, prev, hash)
         VALUES ('u', ?1, 0, 'call_0', 'refund', 'admitted', 'user-1', x'', zeroblob(32))",
        [far],
    )
    .unwrap();
    let forms = stored_forms(&path);
    assert_eq!(forms.len(), written[0].len() + written[1].len() + 1);

    let ledger = open(&path);
    assert_eq!(stored_version(&path), SqliteLedger::SCHEMA_VERSION);
    // The records moved with the values they had: the same bytes in the same order.
    assert_eq!(stored_forms(&path), forms);
    let read = [
        ledger.trail("s").await.unwrap(),
        ledger.trail("t").await.unwrap(),
    ];
    assert_eq!(read, written, "the same records, field for field");
    for (c, done) in &calls {
        assert_eq!(
            ledger.claim(c).await.unwrap(),
            Claimed::Replay(done.clone())
        );
    }
    let heads = [
        verify(&read[0], None).unwrap().unwrap(),
        verify(&read[1], None).unwrap().unwrap(),
    ];
    for ((scope, head), before) in ["s", "t"].into_iter().zip(&heads).zip(&read) {
        let next = suite::claim(scope, "call_9", "refund", &"ab".repeat(32));
        assert_eq!(
            ledger.claim(&next).await.unwrap(),
            Claimed::New { attempt: 1 }
        );
        assert!(
            ledger
                .settle(&next.key, 1, &Recorded::Output("9".into()), &[])
                .await
                .unwrap()
        );
        let trail = ledger.trail(scope).await.unwrap();
        verify(&trail, Some(head)).expect("old and new records verify together");
        assert_eq!(trail[..before.len()], before[..]);
        // Its digests went into the columns version 3 declared as text, as bytes.
        assert_eq!(
            ledger.claim(&next).await.unwrap(),
            Claimed::Replay(Recorded::Output("9".into()))
        );
    }
    let stored: Vec<(String, String)> = edit
        .prepare(
            "SELECT id, typeof(arguments) FROM ledger_claims WHERE key_scope = 's' ORDER BY id",
        )
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        stored,
        [
            ("call_0".into(), "text".into()),
            ("call_1".into(), "text".into()),
            ("call_2".into(), "text".into()),
            ("call_9".into(), "blob".into()),
        ]
    );
    // The trail past 2^32 reads back and goes on from its head.
    let far = u64::try_from(far).unwrap();
    let next = suite::claim("u", "call_1", "refund", "aa");
    assert_eq!(
        ledger.claim(&next).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    let trail = ledger.trail("u").await.unwrap();
    let seqs: Vec<u64> = trail.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, [far, far + 1, far + 2]);
    assert_eq!(trail[0].hash, "00".repeat(32));
    assert_eq!(trail[1].prev, trail[0].hash);
    assert_eq!(trail[2].prev, trail[1].hash);
    assert_eq!(trail[2].compute_hash(), trail[2].hash);
    let tables: Vec<String> = edit
        .prepare("SELECT name FROM sqlite_master WHERE name LIKE 'ledger_audit%' ORDER BY name")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(tables, ["ledger_audit"]);

    // A record with a sequence number the crate would not write is not moved: the file is
    // refused, and left as it was.
    let odd = dir.file("odd.db");
    drop(open(&odd));
    let edit = rusqlite::Connection::open(&odd).unwrap();
    edit.execute_batch(AS_VERSION_3).unwrap();
    edit.execute(
        "INSERT INTO ledger_audit (scope, seq, at, call_id, tool, kind, principal, prev, hash)
         VALUES ('s', 0, 0, 'c', 't', 'admitted', 'p', x'', x'')",
        [],
    )
    .unwrap();
    let error = SqliteLedger::open(&odd).unwrap_err();
    assert!(error.message().contains("did not write"), "{error}");
    assert_eq!(stored_version(&odd), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_by_idempotency_key_notes_the_record_that_settled_it() {
    let dir = Scratch::new("tenant-key");
    let path = dir.file("ledger.db");
    let ledger = open(&path);
    // Records in the scope before, so that the settling record is not the first.
    let before = suite::claim("s", "call_0", "refund", "aa");
    assert_eq!(
        ledger.claim(&before).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    // The key is the tenant's; the records are the call's scope's.
    let mut keyed = suite::claim("s", "call_1", "refund", "aa");
    keyed.key = ClaimKey::idempotency("tenant-1", "order-7");
    assert_eq!(
        ledger.claim(&keyed).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    let done = Recorded::Output("7".into());
    assert!(ledger.settle(&keyed.key, 1, &done, &[]).await.unwrap());
    let trail = ledger.trail("s").await.unwrap();
    verify(&trail, None).expect("the trail verifies");
    let settling = trail
        .iter()
        .find(|r| r.event.kind == AuditKind::Outcome && &*r.event.call_id == "call_1")
        .expect("the outcome has its record");
    let noted: Option<i64> = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT settled_seq FROM ledger_claims WHERE key_scope = 'tenant-1'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(noted, Some(i64::try_from(settling.seq).unwrap()));
    assert_eq!(ledger.claim(&keyed).await.unwrap(), Claimed::Replay(done));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trail_goes_on_in_a_new_part_after_2_to_the_32_records() {
    let dir = Scratch::new("parts");
    let path = dir.file("ledger.db");
    let ledger = open(&path);
    let first = suite::claim("s", "call_1", "refund", "aa");
    assert_eq!(
        ledger.claim(&first).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    // The trail as if it held 2^32 - 1 records: its last one, at the end of its first part.
    let last = (1_u64 << 32) - 1;
    let edit = rusqlite::Connection::open(&path).unwrap();
    edit.execute_batch(&format!(
        "DELETE FROM ledger_audit WHERE pos <> {pos};
         UPDATE ledger_audit SET pos = {end} WHERE pos = {pos};",
        pos = (1_u64 << 32) + 1,
        end = (1_u64 << 32) + last,
    ))
    .unwrap();
    let moved = ledger.trail("s").await.unwrap();
    assert_eq!(moved.len(), 1);
    assert_eq!(moved[0].seq, last);

    let done = Recorded::Output("1".into());
    assert!(ledger.settle(&first.key, 1, &done, &[]).await.unwrap());
    let second = suite::claim("s", "call_2", "refund", "aa");
    assert_eq!(
        ledger.claim(&second).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    let trail = ledger.trail("s").await.unwrap();
    let seqs: Vec<u64> = trail.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, (last..last + 4).collect::<Vec<_>>());
    for pair in trail.windows(2) {
        assert_eq!(pair[1].prev, pair[0].hash, "record {}", pair[1].seq);
        assert_eq!(
            pair[1].compute_hash(),
            pair[1].hash,
            "record {}",
            pair[1].seq
        );
    }
    // The outcome is held against the record that settled it, in the second part.
    assert_eq!(ledger.claim(&first).await.unwrap(), Claimed::Replay(done));
    let parts: Vec<(i64, i64)> = edit
        .prepare("SELECT number, epoch FROM ledger_scopes WHERE scope = 's' ORDER BY epoch")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(parts, [(1, 0), (2, 1)]);
    let in_second: i64 = edit
        .query_row(
            "SELECT count(*) FROM ledger_audit WHERE pos >> 32 = 2",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(in_second, 5);

    // Read again by a new connection, which finds the head in the file.
    drop(ledger);
    let ledger = open(&path);
    let third = suite::claim("s", "call_3", "refund", "aa");
    assert_eq!(
        ledger.claim(&third).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    let trail = ledger.trail("s").await.unwrap();
    assert_eq!(trail.last().unwrap().seq, last + 7);
    assert_eq!(trail.last().unwrap().prev, trail[trail.len() - 2].hash);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_of_schema_version_2_is_read_as_it_was_written() {
    let dir = Scratch::new("version-2");
    let path = dir.file("ledger.db");
    let ledger = open(&path);
    for scope in ["s", "t"] {
        for n in 0..3 {
            let c = suite::claim(scope, &format!("call_{n}"), "refund", &"ab".repeat(32));
            assert_eq!(ledger.claim(&c).await.unwrap(), Claimed::New { attempt: 1 });
            let done = Recorded::Output(n.to_string());
            assert!(ledger.settle(&c.key, 1, &done, &[]).await.unwrap());
        }
    }
    let written = [
        ledger.trail("s").await.unwrap(),
        ledger.trail("t").await.unwrap(),
    ];
    drop(ledger);
    let edit = rusqlite::Connection::open(&path).unwrap();
    edit.execute_batch(&as_text()).unwrap();
    edit.execute_batch(AS_VERSION_3).unwrap();
    edit.execute(
        "UPDATE ledger_meta SET value = 2 WHERE key = 'schema_version'",
        [],
    )
    .unwrap();
    for form in stored_forms(&path) {
        assert_ne!(form.1, "blob");
        let form = (form.2.as_str(), form.3, form.4.as_str(), form.5);
        assert_eq!(form, ("text", 64, "text", 64));
    }

    let ledger = open(&path);
    let read = [
        ledger.trail("s").await.unwrap(),
        ledger.trail("t").await.unwrap(),
    ];
    assert_eq!(read, written, "the same records, field for field");
    let head = verify(&read[0], None).unwrap().unwrap();
    let next = suite::claim("s", "call_9", "refund", &"ab".repeat(32));
    assert_eq!(
        ledger.claim(&next).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    let trail = ledger.trail("s").await.unwrap();
    verify(&trail, Some(&head)).expect("old and new records verify together");
    assert_eq!(trail.len(), read[0].len() + 2);
    let last = stored_forms(&path)
        .into_iter()
        .nth(trail.len() - 1)
        .unwrap();
    assert_eq!(
        (last.2.as_str(), last.3, last.4.as_str(), last.5),
        ("blob", 0, "blob", 32)
    );
    assert_eq!(stored_version(&path), SqliteLedger::SCHEMA_VERSION);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_of_schema_version_1_is_brought_up_to_date() {
    let dir = Scratch::new("version-1");
    let path = dir.file("ledger.db");
    let ledger = open(&path);
    let c = suite::claim("s", "call_1", "refund", "aa");
    assert_eq!(ledger.claim(&c).await.unwrap(), Claimed::New { attempt: 1 });
    let done = Recorded::Output("1".into());
    assert!(ledger.settle(&c.key, 1, &done, &[]).await.unwrap());
    drop(ledger);
    // As version 1 wrote it: digests and hashes as text, no outcome digests, no settling
    // records on the claims.
    let edit = rusqlite::Connection::open(&path).unwrap();
    edit.execute_batch(&as_text()).unwrap();
    edit.execute_batch(AS_VERSION_3).unwrap();
    edit.execute_batch(
        "DELETE FROM ledger_audit WHERE output IS NOT NULL;
         ALTER TABLE ledger_audit DROP COLUMN output;
         ALTER TABLE ledger_claims DROP COLUMN settled_seq;
         UPDATE ledger_meta SET value = 1 WHERE key = 'schema_version';",
    )
    .unwrap();
    let before = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT count(*) FROM ledger_audit", [], |row| {
            row.get::<_, i64>(0)
        })
        .unwrap();
    assert_eq!(before, 2);

    let ledger = open(&path);
    let trail = ledger.trail("s").await.unwrap();
    let head = verify(&trail, None)
        .expect("version 1 records verify")
        .unwrap();
    assert_eq!(ledger.claim(&c).await.unwrap(), Claimed::Replay(done));
    let next = suite::claim("s", "call_2", "refund", "aa");
    assert_eq!(
        ledger.claim(&next).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    assert!(
        ledger
            .settle(&next.key, 1, &Recorded::Output("2".into()), &[])
            .await
            .unwrap()
    );
    let trail = ledger.trail("s").await.unwrap();
    verify(&trail, Some(&head)).expect("old and new records verify together");
    assert!(trail.last().unwrap().event.output.is_some());
    assert_eq!(stored_version(&path), SqliteLedger::SCHEMA_VERSION);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purge_forgets_settled_claims_only() {
    let dir = Scratch::new("purge");
    let ledger = open(&dir.file("ledger.db"));
    let settled = suite::claim("s", "call_1", "refund", "aa");
    let running = suite::claim("s", "call_2", "refund", "aa");
    for c in [&settled, &running] {
        assert_eq!(ledger.claim(c).await.unwrap(), Claimed::New { attempt: 1 });
    }
    let done = Recorded::Output("1".into());
    assert!(ledger.settle(&settled.key, 1, &done, &[]).await.unwrap());

    assert_eq!(ledger.purge(Duration::from_secs(3600)).await.unwrap(), 0);
    assert_eq!(ledger.claim(&settled).await.unwrap(), Claimed::Replay(done));
    assert_eq!(ledger.purge(Duration::ZERO).await.unwrap(), 1);
    // Forgotten: the same id is a new call. The running one is kept.
    assert_eq!(
        ledger.claim(&settled).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    assert_eq!(ledger.claim(&running).await.unwrap(), Claimed::InFlight);
    verify(&ledger.trail("s").await.unwrap(), None).expect("purging keeps the trail whole");
}

#[test]
fn outside_a_tokio_runtime_a_call_is_an_error() {
    let dir = Scratch::new("no-runtime");
    let ledger = open(&dir.file("ledger.db"));
    let mut trail = pin!(ledger.trail("s"));
    match trail
        .as_mut()
        .poll(&mut TaskContext::from_waker(Waker::noop()))
    {
        Poll::Ready(Err(error)) => assert!(error.message().contains("Tokio"), "{error}"),
        other => panic!("expected an error at once, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_racing_run_each_call_once_within_the_quota() {
    // 10,000 calls in all, as on PostgreSQL.
    const CALLS: u64 = 5_000;
    const UNIQUE: u64 = 4_000;
    const QUOTA: u64 = 3_000;
    let dir = Scratch::new("race");
    let path = dir.file("ledger.db");
    let ledger = open(&path);
    let store = format!("sqlite:{}", path.display());
    let total = Race {
        bin: env!("CARGO_BIN_EXE_ledger_worker"),
        store: &store,
        scope: "race",
        workers: 2,
        calls: CALLS,
        unique: UNIQUE,
        quota: QUOTA,
    }
    .run(&dir);

    let trail = ledger.trail("race").await.unwrap();
    verify(&trail, None).expect("the trail both processes wrote verifies");
    let admitted = trail
        .iter()
        .filter(|r| r.event.kind == AuditKind::Admitted)
        .count();
    assert_eq!(u64::try_from(admitted).unwrap(), total);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_worker_leaves_its_call_in_doubt_until_reconciled() {
    let dir = Scratch::new("crash");
    let path = dir.file("ledger.db");
    let ledger = open(&path);
    let store = format!("sqlite:{}", path.display());
    let log = dir.file("executions.log");
    let common = |command: &mut Command| {
        command
            .args(["--store", &store, "--scope", "crash", "--log"])
            .arg(&log)
            // The lease: 2 s (the time limit) and no grace.
            .args(["--timeout-ms", "2000", "--grace-ms", "0"]);
    };

    let mut hang = worker(env!("CARGO_BIN_EXE_ledger_worker"));
    hang.args(["hang", "--id", "call-1"]);
    common(&mut hang);
    let mut child = hang
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while lines(&log).is_empty() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the worker ended before its call started: {status}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the call never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(lines(&log), ["started call-1"]);

    // Once its lease passes, the claim is listed as unsettled.
    let key = ClaimKey::call("crash", "call-1");
    let waited = Instant::now();
    let unsettled = loop {
        let unsettled = ledger.unsettled("crash").await.unwrap();
        if !unsettled.is_empty() {
            break unsettled;
        }
        assert!(
            waited.elapsed() < Duration::from_secs(20),
            "the claim never became unsettled (was it settled?)"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(unsettled.len(), 1, "{unsettled:?}");
    assert_eq!(unsettled[0].key, key);
    assert_eq!(unsettled[0].attempt, 1);
    assert_eq!(&*unsettled[0].binding.tool, "charge");

    // A new process proposing the same call is told its outcome is unknown, and runs nothing.
    let mut invoke = worker(env!("CARGO_BIN_EXE_ledger_worker"));
    invoke.args(["invoke", "call-1"]);
    common(&mut invoke);
    let outcome = &run(&mut invoke)[0];
    assert_eq!(outcome["code"], "outcome_unknown", "{outcome}");
    assert_eq!(outcome["is_replay"], false);
    assert_eq!(lines(&log), ["started call-1"]);

    let receipt = r#"{"charged":7,"reconciled":true}"#;
    assert_eq!(
        ledger
            .reconcile(&unsettled[0], &Resolution::Completed(receipt.into()))
            .await
            .unwrap(),
        Reconciled::Settled
    );
    assert!(ledger.unsettled("crash").await.unwrap().is_empty());
    let outcome = &run(&mut invoke)[0];
    assert_eq!(outcome["code"], Value::Null, "{outcome}");
    assert_eq!(outcome["is_replay"], true);
    assert_eq!(outcome["output"], receipt);
    assert_eq!(lines(&log), ["started call-1"], "the call ran exactly once");

    let trail = ledger.trail("crash").await.unwrap();
    verify(&trail, None).expect("the trail verifies");
    let events: Vec<(AuditKind, Option<Code>)> =
        trail.iter().map(|r| (r.event.kind, r.event.code)).collect();
    assert_eq!(
        events,
        [
            (AuditKind::Authorized, None),
            (AuditKind::Admitted, None),
            (AuditKind::Authorized, None),
            (AuditKind::Refused, Some(Code::OutcomeUnknown)),
            (AuditKind::Reconciled, None),
            (AuditKind::Authorized, None),
            (AuditKind::Replayed, None),
        ]
    );
    assert_eq!(trail[4].event.note.as_deref(), Some("completed"));
}
