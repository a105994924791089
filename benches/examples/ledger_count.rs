//! Runs the hand-written SQLite claim-and-settle transaction (`benches/plain_sqlite.rs`) N
//! times on a new file in the system's temporary folder, for instruction counts next to
//! `invoke_count sqlite N`: `ledger_count plain <N>`.

use std::hint::black_box;

use benches::INVOICE_VALID;

#[path = "../plain_sqlite.rs"]
mod plain_sqlite;

fn main() {
    let mut args = std::env::args().skip(1);
    let way = args.next().unwrap_or_default();
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
    assert_eq!(way, "plain", "usage: ledger_count plain <N>");
    let dir = std::env::temp_dir().join(format!("ledger-count-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let mut plain = plain_sqlite::PlainSqlite::open(&dir.join("plain.db")).expect("the file opens");
    for i in 0..n {
        let id = format!("call_{i}");
        let ok = plain
            .call(
                "bench",
                &id,
                "create_invoice",
                black_box(INVOICE_VALID),
                r#"{"ok":true}"#,
            )
            .expect("the transaction commits");
        assert!(ok);
    }
    drop(plain);
    let _ = std::fs::remove_dir_all(&dir);
}
