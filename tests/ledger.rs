//! The ledger: the rules every store keeps (`ledger_suite.rs`), on the in-memory ledger, and
//! what the runtime does with one.

#[path = "ledger_suite.rs"]
mod suite;

use std::sync::Arc;

use tool_core::ledger::MemoryLedger;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_ledger_keeps_every_rule() {
    suite::check(Arc::new(MemoryLedger::new()), "memory").await;
}
