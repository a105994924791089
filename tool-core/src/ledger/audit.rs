//! The audit trail: one record per stage decision, chained by hashes so that an edited,
//! removed, inserted or reordered record is found by [`verify`], and so is an edited outcome
//! that the ledger would replay.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::outcome::Code;
use sha2::{Digest as _, Sha256};

/// The `prev` of a scope's first record.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Which decision a record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AuditKind {
    /// The call was refused before it was claimed, or the claim was refused; `code` says why.
    Refused,
    /// The authorization policy and the tool's own check let the call through.
    Authorized,
    /// The authorization policy or the tool's own check refused the call.
    Denied,
    /// The approver signed the call off.
    Approved,
    /// The ledger admitted the call: it was claimed and will run.
    Admitted,
    /// The call completed before; its recorded outcome was returned and nothing ran.
    Replayed,
    /// The handler ran (its outcome follows in an `outcome` record).
    Executed,
    /// The call's terminal outcome: `code` is `None` for an output.
    Outcome,
    /// The application settled a claim without an outcome; `note` says how.
    Reconciled,
}

impl AuditKind {
    /// The kind as stored, e.g. `"admitted"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            AuditKind::Refused => "refused",
            AuditKind::Authorized => "authorized",
            AuditKind::Denied => "denied",
            AuditKind::Approved => "approved",
            AuditKind::Admitted => "admitted",
            AuditKind::Replayed => "replayed",
            AuditKind::Executed => "executed",
            AuditKind::Outcome => "outcome",
            AuditKind::Reconciled => "reconciled",
        }
    }

    /// The kind of a stored string.
    pub fn parse(text: &str) -> Option<AuditKind> {
        [
            AuditKind::Refused,
            AuditKind::Authorized,
            AuditKind::Denied,
            AuditKind::Approved,
            AuditKind::Admitted,
            AuditKind::Replayed,
            AuditKind::Executed,
            AuditKind::Outcome,
            AuditKind::Reconciled,
        ]
        .into_iter()
        .find(|kind| kind.as_str() == text)
    }
}

/// One decision about one call, as the runtime reports it. It holds no argument values: only
/// the SHA-256 digest of the validated arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEvent {
    /// The provider's call id.
    pub call_id: Arc<str>,
    /// The tool named by the call (it may not be registered, for `unknown_tool`).
    pub tool: Arc<str>,
    /// The decision.
    pub kind: AuditKind,
    /// The failure code, for refusals, denials and failed outcomes.
    pub code: Option<Code>,
    /// SHA-256 (hex) of the validated arguments, when they were valid.
    pub digest: Option<Arc<str>>,
    /// The principal the call was made for.
    pub principal: Arc<str>,
    /// A short note with no argument values: the attempt, what conflicted, a quota's name.
    pub note: Option<String>,
    /// On the record that settles a call (its `outcome` record, or the `reconciled` record
    /// that gives it one), the [digest](super::Recorded::digest) of the outcome recorded:
    /// the ledger fills it in. When a trail is read, the ledger puts here the digest of the
    /// outcome it holds now, so an outcome edited in the store no longer gives the record's
    /// hash and [`verify`] reports the record as edited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

/// An [`AuditEvent`] as appended: its place in its scope's chain, its time and its hashes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// The scope whose trail this is.
    pub scope: String,
    /// 1 for the scope's first record, then one more for each.
    pub seq: u64,
    /// When it was appended, in milliseconds since the Unix epoch.
    pub at: i64,
    /// The decision.
    #[serde(flatten)]
    pub event: AuditEvent,
    /// The `hash` of the record before it ([`GENESIS`] for the first).
    pub prev: String,
    /// SHA-256 (hex) over every field above.
    pub hash: String,
}

impl AuditRecord {
    /// The record that follows `prev` (`None` for a scope's first) in `scope`'s chain.
    pub fn chain(scope: &str, prev: Option<(u64, &str)>, at: i64, event: AuditEvent) -> Self {
        let (seq, prev) = match prev {
            Some((seq, hash)) => (seq + 1, hash.to_owned()),
            None => (1, GENESIS.to_owned()),
        };
        let mut record = AuditRecord {
            scope: scope.to_owned(),
            seq,
            at,
            event,
            prev,
            hash: String::new(),
        };
        record.hash = record.compute_hash();
        record
    }

    /// The hash the record's fields give, whatever its `hash` field says: SHA-256 over every
    /// field, each length-prefixed (and each optional one marked present or absent), so no
    /// two different records hash the same bytes. The `output` digest comes last and only
    /// when there is one, so records without it hash as they did before it existed.
    pub fn compute_hash(&self) -> String {
        record_hash(&self.scope, self.seq, self.at, &self.event, &self.prev)
    }
}

/// The hash of the record of `e` at `seq` in `scope`'s chain, after the record whose hash is
/// `prev`: what [`AuditRecord::compute_hash`] gives for that record, from borrowed fields.
pub(crate) fn record_hash(scope: &str, seq: u64, at: i64, e: &AuditEvent, prev: &str) -> String {
    fn field(hasher: &mut Sha256, value: Option<&[u8]>) {
        match value {
            None => hasher.update([0]),
            Some(bytes) => {
                hasher.update([1]);
                hasher.update((bytes.len() as u64).to_be_bytes());
                hasher.update(bytes);
            }
        }
    }
    let mut hasher = Sha256::new();
    hasher.update(b"tool-core audit record v1");
    field(&mut hasher, Some(scope.as_bytes()));
    field(&mut hasher, Some(&seq.to_be_bytes()));
    field(&mut hasher, Some(&at.to_be_bytes()));
    field(&mut hasher, Some(e.call_id.as_bytes()));
    field(&mut hasher, Some(e.tool.as_bytes()));
    field(&mut hasher, Some(e.kind.as_str().as_bytes()));
    field(&mut hasher, e.code.map(|code| code.as_str().as_bytes()));
    field(&mut hasher, e.digest.as_deref().map(str::as_bytes));
    field(&mut hasher, Some(e.principal.as_bytes()));
    field(&mut hasher, e.note.as_deref().map(str::as_bytes));
    field(&mut hasher, Some(prev.as_bytes()));
    if let Some(output) = &e.output {
        field(&mut hasher, Some(output.as_bytes()));
    }
    crate::digest::hex(&hasher.finalize())
}

/// Why a trail does not verify: the first record at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrailError {
    /// The record's fields do not give its hash: it was edited.
    Edited {
        /// Its sequence number.
        seq: u64,
    },
    /// A record is missing, or one was inserted: the sequence numbers do not follow.
    Gap {
        /// The number expected.
        expected: u64,
        /// The number found.
        found: u64,
    },
    /// The record does not name the hash of the one before it: records were removed,
    /// inserted or reordered.
    Unlinked {
        /// Its sequence number.
        seq: u64,
    },
    /// The record belongs to another scope.
    OtherScope {
        /// Its sequence number.
        seq: u64,
    },
    /// The last record is not the head the caller kept: records were removed from the end.
    Truncated {
        /// The last sequence number found.
        last: u64,
    },
}

impl fmt::Display for TrailError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrailError::Edited { seq } => write!(f, "record {seq} was edited"),
            TrailError::Gap { expected, found } => write!(
                f,
                "record {expected} is missing or out of place (found {found})"
            ),
            TrailError::Unlinked { seq } => {
                write!(f, "record {seq} does not follow the record before it")
            }
            TrailError::OtherScope { seq } => write!(f, "record {seq} belongs to another scope"),
            TrailError::Truncated { last } => {
                write!(
                    f,
                    "the trail ends at record {last}, before the expected head"
                )
            }
        }
    }
}

impl std::error::Error for TrailError {}

/// Checks a scope's whole trail, from its first record, and returns the hash of its last
/// (`None` for an empty trail).
///
/// Pass the head you kept from an earlier check as `expected_head` to also detect records
/// removed from the end: a trail is verified against itself, so only a head kept outside it
/// can show that its last records are gone.
///
/// ```
/// use tool_core::ledger::{AuditEvent, AuditKind, AuditRecord, TrailError, verify};
///
/// let event = |kind| AuditEvent {
///     call_id: "call_1".into(),
///     tool: "refund".into(),
///     kind,
///     code: None,
///     digest: None,
///     principal: "user-1".into(),
///     note: None,
///     output: None,
/// };
/// let first = AuditRecord::chain("run-1", None, 0, event(AuditKind::Admitted));
/// let second = AuditRecord::chain("run-1", Some((first.seq, &first.hash)), 1, event(AuditKind::Outcome));
/// let mut trail = vec![first, second];
/// let head = verify(&trail, None).unwrap();
/// assert_eq!(head.as_deref(), Some(trail[1].hash.as_str()));
///
/// trail[0].event.principal = "someone-else".into();
/// assert_eq!(verify(&trail, None), Err(TrailError::Edited { seq: 1 }));
/// ```
pub fn verify(
    records: &[AuditRecord],
    expected_head: Option<&str>,
) -> Result<Option<String>, TrailError> {
    let mut prev: Option<&AuditRecord> = None;
    for record in records {
        let expected = prev.map_or(1, |p| p.seq + 1);
        if record.seq != expected {
            return Err(TrailError::Gap {
                expected,
                found: record.seq,
            });
        }
        if let Some(p) = prev
            && p.scope != record.scope
        {
            return Err(TrailError::OtherScope { seq: record.seq });
        }
        let link = prev.map_or(GENESIS, |p| p.hash.as_str());
        if record.compute_hash() != record.hash {
            return Err(TrailError::Edited { seq: record.seq });
        }
        if record.prev != link {
            return Err(TrailError::Unlinked { seq: record.seq });
        }
        prev = Some(record);
    }
    let head = prev.map(|p| p.hash.clone());
    if let Some(expected) = expected_head
        && head.as_deref() != Some(expected)
    {
        // The expected head must be in the trail; if it is, records after it are fine.
        if !records.iter().any(|r| r.hash == expected) {
            return Err(TrailError::Truncated {
                last: prev.map_or(0, |p| p.seq),
            });
        }
    }
    Ok(head)
}
