//! Stage 0: the call id is short enough and was not used in this runtime (among the ids it
//! remembers). See [Call ids](super::Runtime#call-ids).

use std::sync::Arc;

use super::Shared;
use crate::outcome::{Code, Failure};

/// Refuses a call id that is too long or reused; remembers a new one. An empty id (providers
/// that send none) is not checked.
pub(super) fn correlate(shared: &Shared, call_id: &Arc<str>) -> Result<(), Failure> {
    if call_id.len() > shared.max_call_id_bytes {
        // Refused before it is remembered or echoed in a message.
        return Err(Failure::new(
            Code::CallIdTooLong,
            format!(
                "the call id is {} bytes long, over the limit of {} bytes; this call was not run",
                call_id.len(),
                shared.max_call_id_bytes
            ),
        ));
    }
    // With a ledger, the claim answers a reused id.
    if !call_id.is_empty() && shared.ledger.is_none() {
        let mut seen = crate::sync::lock(&shared.seen);
        if seen.contains(call_id) {
            return Err(Failure::new(
                Code::DuplicateCallId,
                format!("call id {call_id:?} was already used; this call was not run"),
            ));
        }
        seen.insert(Arc::clone(call_id), ());
    }
    Ok(())
}
