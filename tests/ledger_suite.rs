//! The rules every `Ledger` must keep, as tool-core ships them
//! ([`tool_core::testing::ledger_suite`]): each ledger's test file includes this module and
//! runs [`check`] on a fresh store.

pub(crate) use tool_core::testing::ledger_suite::*;
