//! Paused runs kept in a [ledger](crate::ledger), so another process can resume them.

use crate::ledger::{Ledger, LedgerError};
use crate::model::Message;

/// Stores the transcript of a paused run (one that ended awaiting approval) in `ledger` under
/// `scope` and `run`, replacing what was stored there. Any process sharing the ledger can
/// [`load_run`] it and pass it to [`Agent::run`](super::Agent::run) to resume: calls that
/// already have a result are never run again, and with a ledger in the runtime, a call that
/// ran elsewhere is replayed rather than run twice.
pub async fn store_run(
    ledger: &dyn Ledger,
    scope: &str,
    run: &str,
    transcript: &[Message],
) -> Result<(), LedgerError> {
    let text = serde_json::to_string(transcript).map_err(|error| {
        LedgerError::new(format!("the transcript could not be written: {error}"))
    })?;
    ledger.store_run(scope, run, Some(&text)).await
}

/// The transcript stored by [`store_run`], if any. A stored text that is not a transcript is
/// an error, never a partial transcript.
pub async fn load_run(
    ledger: &dyn Ledger,
    scope: &str,
    run: &str,
) -> Result<Option<Vec<Message>>, LedgerError> {
    match ledger.load_run(scope, run).await? {
        None => Ok(None),
        Some(text) => serde_json::from_str(&text).map(Some).map_err(|error| {
            LedgerError::new(format!(
                "the stored run {run:?} is not a transcript: {error}"
            ))
        }),
    }
}

/// Removes a stored run (once it has been resumed and finished).
pub async fn remove_run(ledger: &dyn Ledger, scope: &str, run: &str) -> Result<(), LedgerError> {
    ledger.store_run(scope, run, None).await
}
