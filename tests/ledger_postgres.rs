//! The PostgreSQL ledger on a real server (`TOOL_LEDGER_POSTGRES_URL`): the rules every store
//! keeps (`ledger_suite.rs`), a runtime replaying across a restart, worker processes
//! (`bin/ledger_worker.rs`) racing for the same calls, retention, the schema version, and a
//! broken store answering with errors rather than panics.
//!
//! Without `TOOL_LEDGER_POSTGRES_URL` each test that needs a server says it was skipped (and
//! fails if `REQUIRE_POSTGRES=1`). Every run uses names of its own, so runs can share a
//! database.

#[path = "ledger_suite.rs"]
mod suite;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use examples::{CreateInvoice, create_invoice};
use tests::workers::{Race, Scratch};
use tool_core::ledger::{AuditKind, Claimed, Ledger, PostgresLedger, Recorded, verify};
use tool_core::{Code, Context, Registry, Runtime, ToolDef, registry::ToolInfo};

const INVOICE: &str = r#"{"customerId":"cus_42","amount":120.5,"currency":"USD"}"#;
const OTHER_INVOICE: &str = r#"{"customerId":"cus_42","amount":99,"currency":"USD"}"#;

async fn ledger(url: &str) -> Arc<PostgresLedger> {
    match PostgresLedger::connect(url).await {
        Ok(ledger) => Arc::new(ledger),
        Err(error) => panic!("cannot open the ledger at TOOL_LEDGER_POSTGRES_URL: {error}"),
    }
}

/// A schema of its own on the test database, for tests that change or drop the ledger's
/// tables: the URL's connection settings with `search_path` set to it. Dropped by
/// [`Isolated::drop_schema`].
struct Isolated {
    config: tokio_postgres::Config,
    schema: String,
}

impl Isolated {
    async fn new(url: &str, name: &str) -> Isolated {
        Isolated::in_database(
            url.parse()
                .expect("TOOL_LEDGER_POSTGRES_URL is a connection string"),
            name,
        )
        .await
    }

    /// A schema of its own in the database `config` connects to.
    async fn in_database(config: tokio_postgres::Config, name: &str) -> Isolated {
        let schema = tests::unique_name(name).replace('-', "_");
        let isolated = Isolated { config, schema };
        isolated
            .sql(&format!("CREATE SCHEMA {}", isolated.schema))
            .await;
        isolated
    }

    /// A ledger on a pool built here, as an application with its own pool would.
    async fn ledger(&self) -> Result<PostgresLedger, tool_core::ledger::LedgerError> {
        let mut config = self.config.clone();
        config.options(format!("-c search_path={}", self.schema));
        let manager = deadpool_postgres::Manager::new(config, tokio_postgres::NoTls);
        let pool = deadpool_postgres::Pool::builder(manager)
            .max_size(4)
            .build()
            .expect("a pool");
        PostgresLedger::from_pool(pool).await
    }

    /// Runs `sql` in the schema, with backslashes in its string literals taken as they are
    /// (whatever the database's default).
    async fn sql(&self, sql: &str) {
        let (client, connection) = self
            .config
            .connect(tokio_postgres::NoTls)
            .await
            .expect("the test database accepts connections");
        let task = tokio::spawn(connection);
        // A statement of its own: a batch is read whole before any of it runs.
        client
            .batch_execute("SET standard_conforming_strings = on")
            .await
            .expect("a session setting");
        client
            .batch_execute(&format!("SET search_path = {}; {sql}", self.schema))
            .await
            .unwrap_or_else(|error| panic!("{sql}: {error:?}"));
        drop(client);
        let _ = task.await;
    }

    /// The one number `sql` selects, read in the schema.
    async fn number(&self, sql: &str) -> i64 {
        let mut config = self.config.clone();
        config.options(format!("-c search_path={}", self.schema));
        let (client, connection) = config
            .connect(tokio_postgres::NoTls)
            .await
            .expect("the test database accepts connections");
        let task = tokio::spawn(connection);
        let number = client
            .query_one(sql, &[])
            .await
            .unwrap_or_else(|error| panic!("{sql}: {error:?}"))
            .get(0);
        drop(client);
        let _ = task.await;
        number
    }

    /// Drops the schema. A ledger may still be sealing audit records in a task of its own
    /// when a test is over, and a drop that deadlocks with it is tried again.
    async fn drop_schema(self) {
        let sql = format!("DROP SCHEMA {} CASCADE", self.schema);
        for _ in 0..10 {
            let (client, connection) = self
                .config
                .connect(tokio_postgres::NoTls)
                .await
                .expect("the test database accepts connections");
            let task = tokio::spawn(connection);
            let dropped = client.batch_execute(&sql).await;
            drop(client);
            let _ = task.await;
            match dropped {
                Ok(()) => return,
                Err(error)
                    if error.code()
                        == Some(&tokio_postgres::error::SqlState::T_R_DEADLOCK_DETECTED) => {}
                Err(error) => panic!("{sql}: {error:?}"),
            }
        }
        panic!("{sql}: deadlocked ten times");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postgres_ledger_keeps_every_rule() {
    let Some(url) = tests::postgres_url("the_postgres_ledger_keeps_every_rule") else {
        return;
    };
    suite::check(ledger(&url).await, &tests::unique_name("pg")).await;
}

/// A registry whose `create_invoice` counts its executions.
fn counted(executed: &Arc<AtomicUsize>) -> Registry {
    let counter = Arc::clone(executed);
    let handler = move |args: CreateInvoice, cx: &Context| {
        counter.fetch_add(1, Ordering::SeqCst);
        let cx = cx.clone();
        async move { create_invoice(args, &cx).await }
    };
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(handler))
        .expect("create_invoice registers");
    registry
}

fn runtime(registry: Registry, ledger: Arc<PostgresLedger>) -> Runtime {
    Runtime::builder(registry)
        .authorize(|_: &ToolInfo, _: &Context| Ok(()))
        .max_calls(2)
        .ledger(ledger)
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_runtime_replays_what_the_first_completed() {
    let Some(url) = tests::postgres_url("a_restarted_runtime_replays_what_the_first_completed")
    else {
        return;
    };
    let scope = tests::unique_name("restart");
    let cx = Context::builder("user-1").scope(&scope).build();
    let executed = Arc::new(AtomicUsize::new(0));

    let first_ledger = ledger(&url).await;
    let first = runtime(counted(&executed), Arc::clone(&first_ledger));
    let outcome = first.invoke("call_1", "create_invoice", INVOICE, &cx).await;
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(!outcome.is_replay());
    let output = outcome.output().expect("an output").as_str().to_owned();
    assert_eq!(executed.load(Ordering::SeqCst), 1);
    // The process goes away: its runtime, its ledger and the ledger's connections.
    drop(first);
    drop(first_ledger);

    let second_ledger = ledger(&url).await;
    let second = runtime(counted(&executed), Arc::clone(&second_ledger));
    let again = second
        .invoke("call_1", "create_invoice", INVOICE, &cx)
        .await;
    assert!(again.is_replay(), "{again:?}");
    assert_eq!(again.output().map(|o| o.as_str()), Some(output.as_str()));
    assert_eq!(executed.load(Ordering::SeqCst), 1, "the replay ran nothing");

    let reused = second
        .invoke("call_1", "create_invoice", OTHER_INVOICE, &cx)
        .await;
    assert_eq!(reused.code(), Some(Code::CallIdConflict), "{reused:?}");

    // The run's quota of two calls is counted in the database, across both processes.
    let next = second
        .invoke("call_2", "create_invoice", INVOICE, &cx)
        .await;
    assert!(next.is_ok() && !next.is_replay(), "{next:?}");
    let over = second
        .invoke("call_3", "create_invoice", INVOICE, &cx)
        .await;
    assert_eq!(over.code(), Some(Code::BudgetExhausted), "{over:?}");
    assert_eq!(executed.load(Ordering::SeqCst), 2);

    let trail = second_ledger.trail(&scope).await.expect("the trail");
    verify(&trail, None).expect("the trail verifies");
    let kinds: Vec<AuditKind> = trail.iter().map(|r| r.event.kind).collect();
    for kind in [
        AuditKind::Admitted,
        AuditKind::Executed,
        AuditKind::Outcome,
        AuditKind::Replayed,
        AuditKind::Refused,
    ] {
        assert!(kinds.contains(&kind), "{kind:?} is audited: {kinds:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purge_forgets_only_claims_settled_before_the_retention() {
    let Some(url) = tests::postgres_url("purge_forgets_only_claims_settled_before_the_retention")
    else {
        return;
    };
    let isolated = Isolated::new(&url, "purge").await;
    let ledger = isolated.ledger().await.expect("the ledger opens");
    let scope = "run-1";
    let settled = suite::claim(scope, "settled", "refund", "aa");
    let running = suite::claim(scope, "running", "refund", "aa");
    let mut lost = suite::claim(scope, "lost", "refund", "aa");
    lost.lease = Duration::ZERO;
    for c in [&settled, &running, &lost] {
        assert_eq!(ledger.claim(c).await.unwrap(), Claimed::New { attempt: 1 });
    }
    let done = Recorded::Output("1".into());
    assert!(ledger.settle(&settled.key, 1, &done, &[]).await.unwrap());
    let past = std::time::SystemTime::now() - Duration::from_secs(1);
    assert!(ledger.use_nonce("expired", past).await.unwrap());

    // Settled a moment ago: a day's retention keeps it.
    assert_eq!(ledger.purge(Duration::from_secs(86_400)).await.unwrap(), 0);
    assert_eq!(
        ledger.claim(&settled).await.unwrap(),
        Claimed::Replay(done.clone())
    );
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(ledger.purge(Duration::from_millis(5)).await.unwrap(), 1);
    // Forgotten: the same id is a new call; the claims without an outcome are kept.
    assert_eq!(
        ledger.claim(&settled).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    assert_eq!(ledger.claim(&running).await.unwrap(), Claimed::InFlight);
    assert_eq!(ledger.claim(&lost).await.unwrap(), Claimed::Unknown);
    // The expired nonce was forgotten with them.
    assert!(ledger.use_nonce("expired", past).await.unwrap());
    // The trail is kept whole.
    verify(&ledger.trail(scope).await.unwrap(), None).expect("the trail verifies");
    isolated.drop_schema().await;
}

/// Each settled claim names the audit record that settled it (its call's outcome record,
/// which holds the outcome's digest), whether the settlement brought its own outcome record
/// or the ledger added one; replays and refusals, answered without the claim's lock, are in
/// the trail too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_settled_claim_names_the_record_that_settled_it() {
    let Some(url) = tests::postgres_url("every_settled_claim_names_the_record_that_settled_it")
    else {
        return;
    };
    let isolated = Isolated::new(&url, "named").await;
    let ledger = isolated.ledger().await.expect("the ledger opens");
    let scope = "run-1";
    let done = Recorded::Output(r#"{"ok":true}"#.into());
    let calls = 40;
    for i in 0..calls {
        let id = format!("call_{i}");
        let claim = suite::claim(scope, &id, "refund", "aa");
        assert_eq!(
            ledger.claim(&claim).await.unwrap(),
            Claimed::New { attempt: 1 }
        );
        let event = |kind| suite::event(&id, "refund", kind, None);
        let audit = match i % 3 {
            0 => vec![],
            1 => vec![event(AuditKind::Executed), event(AuditKind::Outcome)],
            _ => vec![event(AuditKind::Outcome), event(AuditKind::Executed)],
        };
        assert!(ledger.settle(&claim.key, 1, &done, &audit).await.unwrap());
        assert_eq!(
            ledger.claim(&claim).await.unwrap(),
            Claimed::Replay(done.clone())
        );
        let other = suite::claim(scope, &id, "refund", "bb");
        assert!(matches!(
            ledger.claim(&other).await.unwrap(),
            Claimed::Conflict { .. }
        ));
    }
    let trail = ledger.trail(scope).await.expect("the trail");
    verify(&trail, None).expect("the trail verifies");
    let count = |kind| trail.iter().filter(|r| r.event.kind == kind).count();
    assert_eq!(count(AuditKind::Admitted), calls);
    assert_eq!(count(AuditKind::Replayed), calls);
    assert_eq!(count(AuditKind::Refused), calls);
    assert_eq!(count(AuditKind::Outcome), calls);
    let unnamed = isolated
        .number(&format!(
            "SELECT count(*) FROM tool_ledger_claims AS c WHERE c.status IS NOT NULL AND NOT \
             EXISTS (SELECT 1 FROM tool_ledger_audit AS a WHERE a.scope = c.scope AND \
             a.seq = c.settled_seq AND a.call_id = c.call_id AND a.kind = 'outcome' AND \
             a.principal = c.principal AND a.output = {})",
            literal(&done.digest())
        ))
        .await;
    assert_eq!(
        unnamed, 0,
        "claims that name no settling record, or the wrong one"
    );
    drop(ledger);
    isolated.drop_schema().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_stored_outcome_fails_verification_at_its_record() {
    let Some(url) =
        tests::postgres_url("an_edited_stored_outcome_fails_verification_at_its_record")
    else {
        return;
    };
    let isolated = Isolated::new(&url, "edited").await;
    let ledger = isolated.ledger().await.expect("the ledger opens");
    suite::edited_outcomes_fail_verification(&ledger, |edit| {
        let (column, id, value) = match edit {
            suite::Edit::Body(id, body) => ("body", id, literal(body)),
            suite::Edit::Status(id, status) => ("status", id, literal(status)),
            suite::Edit::SettledBy(id, seq) => (
                "settled_seq",
                id,
                seq.map_or_else(|| "NULL".to_owned(), |seq| seq.to_string()),
            ),
            other => panic!("this store cannot make the edit {other:?}"),
        };
        let sql = format!(
            "UPDATE tool_ledger_claims SET {column} = {value} WHERE call_id = {}",
            literal(&stored(id))
        );
        let isolated = &isolated;
        async move { isolated.sql(&sql).await }
    })
    .await;
    drop(ledger);
    isolated.drop_schema().await;
}

/// `text` as an SQL string literal.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// A string as the PostgreSQL ledger stores it: one with U+0000 is escaped after a U+FFFF.
fn stored(text: &str) -> String {
    if !text.contains('\0') && !text.starts_with('\u{ffff}') {
        return text.to_owned();
    }
    let escaped = text.replace('\\', "\\\\").replace('\0', "\\0");
    format!("\u{ffff}{escaped}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_of_schema_version_1_are_brought_up_to_date() {
    let Some(url) = tests::postgres_url("tables_of_schema_version_1_are_brought_up_to_date") else {
        return;
    };
    let isolated = Isolated::new(&url, "version1").await;
    brought_up_to_date_from_version_1(isolated).await;
}

/// A database whose sessions read backslashes in string literals as escapes
/// (`standard_conforming_strings = off`, as before PostgreSQL 9.1) holds the ledger, and its
/// tables are brought up to date from version 1 as in any other, and every rule holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_without_standard_conforming_strings_is_brought_up_to_date() {
    let Some(url) =
        tests::postgres_url("a_database_without_standard_conforming_strings_is_brought_up_to_date")
    else {
        return;
    };
    let database = Database::new(&url, "scs", "").await;
    database
        .admin(&format!(
            "ALTER DATABASE {} SET standard_conforming_strings = off",
            database.name
        ))
        .await;
    let isolated = Isolated::in_database(database.config(), "version1").await;
    let (client, connection) = database
        .config()
        .connect(tokio_postgres::NoTls)
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    let scs = client
        .query_one("SHOW standard_conforming_strings", &[])
        .await
        .unwrap();
    assert_eq!(scs.get::<_, String>(0), "off");
    drop(client);
    let _ = task.await;
    brought_up_to_date_from_version_1(isolated).await;
    // And every rule holds there.
    let isolated = Isolated::in_database(database.config(), "rules").await;
    suite::check(Arc::new(isolated.ledger().await.unwrap()), "scs").await;
    isolated.drop_schema().await;
    database.drop().await;
}

/// A database in another encoding than UTF-8 cannot hold every string a call may carry (nor
/// U+FFFF, which marks an escaped one): the ledger refuses it when it opens, and says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_not_in_utf8_is_refused() {
    let Some(url) = tests::postgres_url("a_database_not_in_utf8_is_refused") else {
        return;
    };
    let database = Database::new(
        &url,
        "latin1",
        "ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0",
    )
    .await;
    let isolated = Isolated::in_database(database.config(), "latin1").await;
    let error = isolated
        .ledger()
        .await
        .expect_err("a LATIN1 database is refused");
    assert!(
        error.message().contains("LATIN1") && error.message().contains("UTF8"),
        "{error}"
    );
    isolated.drop_schema().await;
    database.drop().await;
}

/// A database of its own on the test server, created with `options`, for tests that change
/// database-wide settings. Dropped by [`Database::drop`].
struct Database {
    admin: tokio_postgres::Config,
    name: String,
}

impl Database {
    async fn new(url: &str, name: &str, options: &str) -> Database {
        let database = Database {
            admin: url
                .parse()
                .expect("TOOL_LEDGER_POSTGRES_URL is a connection string"),
            name: tests::unique_name(&format!("tool_ledger_{name}")).replace('-', "_"),
        };
        database
            .admin(&format!("CREATE DATABASE {} {options}", database.name))
            .await;
        database
    }

    /// The connection settings of the test URL, in this database.
    fn config(&self) -> tokio_postgres::Config {
        let mut config = self.admin.clone();
        config.dbname(&self.name);
        config
    }

    /// Runs `sql` in the test URL's own database.
    async fn admin(&self, sql: &str) {
        let (client, connection) = self
            .admin
            .connect(tokio_postgres::NoTls)
            .await
            .expect("the test database accepts connections");
        let task = tokio::spawn(connection);
        client
            .batch_execute(sql)
            .await
            .unwrap_or_else(|error| panic!("{sql}: {error:?}"));
        drop(client);
        let _ = task.await;
    }

    async fn drop(self) {
        self.admin(&format!("DROP DATABASE {} WITH (FORCE)", self.name))
            .await;
    }
}

/// Writes calls to `isolated` as the current version does, turns its tables into what version
/// 1 wrote, and opens them again: the ledger brings them up to date.
async fn brought_up_to_date_from_version_1(isolated: Isolated) {
    let ledger = isolated.ledger().await.expect("the ledger opens");
    let c = suite::claim("s", "call_1", "refund", "aa");
    assert_eq!(ledger.claim(&c).await.unwrap(), Claimed::New { attempt: 1 });
    let done = Recorded::Output("1".into());
    assert!(ledger.settle(&c.key, 1, &done, &[]).await.unwrap());
    // Version 1 stored every string as it is, this one too.
    let marked = suite::claim("t", "\u{ffff}ca\\ll", "refund", "aa");
    assert_eq!(
        ledger.claim(&marked).await.unwrap(),
        Claimed::New { attempt: 1 }
    );
    // Reading the trails seals their pending records into the chains.
    for scope in ["s", "t"] {
        verify(&ledger.trail(scope).await.unwrap(), None).expect("the trail verifies");
    }
    drop(ledger);
    // As version 1 wrote them: no outcome digests, no settling records on the claims, no
    // escaped strings, no pending records.
    isolated
        .sql(
            r"UPDATE tool_ledger_claims SET id = substr(replace(id, '\\', '\'), 2),
                 call_id = substr(replace(call_id, '\\', '\'), 2)
                 WHERE left(id, 1) = chr(65535);
             UPDATE tool_ledger_audit SET call_id = substr(replace(call_id, '\\', '\'), 2)
                 WHERE left(call_id, 1) = chr(65535);
             DELETE FROM tool_ledger_audit WHERE output IS NOT NULL;
             UPDATE tool_ledger_audit_heads SET seq = 2,
                 hash = (SELECT hash FROM tool_ledger_audit WHERE scope = 's' AND seq = 2)
                 WHERE scope = 's';
             ALTER TABLE tool_ledger_audit DROP COLUMN output;
             ALTER TABLE tool_ledger_claims DROP COLUMN settled_seq;
             DROP TABLE tool_ledger_audit_pending;
             DROP SEQUENCE tool_ledger_audit_batches;
             UPDATE tool_ledger_schema SET version = 1;",
        )
        .await;

    let ledger = isolated.ledger().await.expect("version 1 opens");
    assert_eq!(ledger.claim(&marked).await.unwrap(), Claimed::InFlight);
    let marked_trail = ledger.trail("t").await.unwrap();
    verify(&marked_trail, None).expect("escaped in place, the records verify");
    assert_eq!(&*marked_trail[0].event.call_id, "\u{ffff}ca\\ll");
    let trail = ledger.trail("s").await.unwrap();
    assert_eq!(trail.len(), 2, "{trail:#?}");
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
    drop(ledger);
    isolated
        .ledger()
        .await
        .expect("and opens again at the new version");
    isolated.drop_schema().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_of_another_schema_version_are_refused() {
    let Some(url) = tests::postgres_url("tables_of_another_schema_version_are_refused") else {
        return;
    };
    let isolated = Isolated::new(&url, "version").await;
    isolated.ledger().await.expect("the tables are created");
    isolated.ledger().await.expect("and found again");
    isolated
        .sql("UPDATE tool_ledger_schema SET version = 99")
        .await;
    let error = isolated.ledger().await.expect_err("version 99 is refused");
    assert!(
        error.message().contains("schema version 99"),
        "{}",
        error.message()
    );
    isolated.drop_schema().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_store_refuses_calls_and_runs_nothing() {
    let Some(url) = tests::postgres_url("a_broken_store_refuses_calls_and_runs_nothing") else {
        return;
    };
    let isolated = Isolated::new(&url, "broken").await;
    let ledger = Arc::new(isolated.ledger().await.expect("the ledger opens"));
    let executed = Arc::new(AtomicUsize::new(0));
    let runtime = runtime(counted(&executed), Arc::clone(&ledger));
    let cx = Context::builder("user-1").scope("run-1").build();

    // PostgreSQL text cannot hold U+0000, but a call id that does is claimed like any other.
    for _ in 0..2 {
        let outcome = runtime
            .invoke("call\0with-nul", "create_invoice", INVOICE, &cx)
            .await;
        assert!(outcome.is_ok(), "{outcome:?}");
    }
    assert_eq!(
        executed.load(Ordering::SeqCst),
        1,
        "run once, then replayed"
    );
    // And a refused call's name too: its refusal is audited.
    let outcome = runtime.invoke("call\0x", "no\0such", "{}", &cx).await;
    assert_eq!(outcome.code(), Some(Code::UnknownTool), "{outcome:?}");
    let trail = ledger.trail("run-1").await.unwrap();
    verify(&trail, None).expect("the trail verifies");
    let last = trail.last().expect("the refusal is audited");
    assert_eq!(
        (&*last.event.call_id, &*last.event.tool),
        ("call\0x", "no\0such")
    );
    assert_eq!(last.event.code, Some(Code::UnknownTool));

    isolated.sql("DROP TABLE tool_ledger_claims").await;
    let outcome = runtime
        .invoke("call_1", "create_invoice", INVOICE, &cx)
        .await;
    assert_eq!(outcome.code(), Some(Code::LedgerUnavailable), "{outcome:?}");
    let detail = outcome.failure().and_then(|f| f.detail()).unwrap_or("");
    assert!(detail.contains("tool_ledger_claims"), "{detail}");
    assert_eq!(executed.load(Ordering::SeqCst), 1, "nothing more ran");
    isolated.drop_schema().await;
}

#[tokio::test]
async fn an_unreachable_database_is_an_error() {
    // Port 1 on the loopback: nothing listens there, so the connection is refused at once.
    let error = PostgresLedger::connect("postgres://nobody@127.0.0.1:1/none?connect_timeout=5")
        .await
        .expect_err("nothing listens on port 1");
    assert!(error.message().starts_with("postgres: "), "{error}");
    let error = PostgresLedger::connect("postgres://nobody@[::1")
        .await
        .expect_err("not a connection string");
    assert!(error.message().contains("not valid"), "{error}");
}

/// Four processes, each with its own connections, propose 10,000 calls over 2,000 ids (every
/// id by every worker, 500 more duplicates each) under a run quota of 1,500: each id runs at
/// most once, exactly the quota runs, and every call that ran replays its recorded outcome.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_processes_racing_run_each_call_once_within_the_quota() {
    const CALLS: u64 = 2_500;
    const UNIQUE: u64 = 2_000;
    const QUOTA: u64 = 1_500;
    let Some(url) =
        tests::postgres_url("four_processes_racing_run_each_call_once_within_the_quota")
    else {
        return;
    };
    let dir = Scratch::new("pg-race");
    let scope = tests::unique_name("race");
    let store = format!("postgres:{url}");
    let total = Race {
        bin: env!("CARGO_BIN_EXE_ledger_worker"),
        store: &store,
        scope: &scope,
        workers: 4,
        calls: CALLS,
        unique: UNIQUE,
        quota: QUOTA,
    }
    .run(&dir);

    let ledger = ledger(&url).await;
    let trail = ledger.trail(&scope).await.expect("the trail");
    verify(&trail, None).expect("the trail the four processes wrote verifies");
    let admitted = trail
        .iter()
        .filter(|r| r.event.kind == AuditKind::Admitted)
        .count();
    assert_eq!(u64::try_from(admitted).ok(), Some(total));
    let refused = trail
        .iter()
        .filter(|r| r.event.code == Some(Code::BudgetExhausted))
        .count();
    assert!(refused > 0, "the quota refused calls");
}
