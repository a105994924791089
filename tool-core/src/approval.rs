//! Approval receipts: a human's (or system's) sign-off bound to one exact call, verified by
//! the runtime when the call is dispatched.
//!
//! A receipt is an HMAC-SHA256 over the tool name, a hash of the tool's contract (its input
//! schema), the exact canonical arguments, the principal, the call id, an expiry and a
//! one-time nonce. Changed arguments, another principal or call, a changed contract, an expired
//! receipt or one used before are all refused.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Sha256;

use crate::Registry;
use crate::canonical::exact_json;
use crate::context::Context;
use crate::digest::{contract_hash, hex, unhex};
use crate::ledger::Ledger;
use crate::recent::Recent;
use crate::runtime::Runtime;
use crate::runtime::{Approval, ApprovalFuture, ApprovalRequest, Approver};
use crate::sync::lock;

/// A call waiting for approval: what the approver is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// The provider's call id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The arguments as proposed (JSON text).
    pub arguments: String,
    /// Who the call would run as.
    pub principal: String,
}

/// A signed approval of one exact call. Plain data: store it, send it, bring it back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// The tool.
    pub tool: String,
    /// SHA-256 (hex) of the tool's canonical input schema when approved.
    pub contract: String,
    /// The approved arguments in exact canonical form: RFC 8785 (sorted keys, no whitespace),
    /// except that every number keeps the exact value the handler receives. RFC 8785 writes
    /// numbers as doubles, which would let a receipt for `9007199254740992` approve
    /// `9007199254740993`; here integers keep all their digits, a float with no fractional
    /// part below 10^21 is written as the integer it is, negative zero as `-0`, and any other
    /// float as ECMAScript prints it. So `1.8e18` and `1800000000000000000` are one value (a
    /// handler receives the same number), `1800000000000000100` another.
    pub arguments: String,
    /// The principal the call runs as.
    pub principal: String,
    /// The provider's call id.
    pub call_id: String,
    /// Seconds since the Unix epoch after which the receipt is void.
    pub expires_at: u64,
    /// Makes each receipt usable once.
    pub nonce: String,
    /// Who approved (recorded, and covered by the signature).
    pub approved_by: String,
    /// HMAC-SHA256 (hex) over all the fields above.
    pub mac: String,
}

/// Why an approval could not be issued or a receipt was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReceiptError {
    /// The signing key is shorter than 32 bytes.
    WeakKey,
    /// The tool is not in the registry.
    UnknownTool(String),
    /// The arguments do not pass the tool's contract (re-checked when approving).
    InvalidArguments(String),
    /// The system's random source failed.
    Random(String),
}

impl fmt::Display for ReceiptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReceiptError::WeakKey => f.write_str("the receipt key must be at least 32 bytes"),
            ReceiptError::UnknownTool(tool) => write!(f, "unknown tool `{tool}`"),
            ReceiptError::InvalidArguments(errors) => {
                write!(
                    f,
                    "the arguments do not pass the tool's contract:\n{errors}"
                )
            }
            ReceiptError::Random(error) => write!(f, "no randomness for the nonce: {error}"),
        }
    }
}

impl std::error::Error for ReceiptError {}

/// Issues receipts and verifies them at dispatch.
///
/// Share one (`Arc<Approvals>`) between the code that asks a human and the runtime: install
/// [`Approvals::verifier`] as the runtime's [`Approver`], [`submit`](Self::submit) each
/// receipt (or [`deny`](Self::deny) the call), then run or resume the call.
///
/// # What is remembered, and for how long
///
/// Memory does not grow with the number of approvals made and used: every decision is
/// forgotten once it is used or void.
///
/// - An issued receipt is remembered (its nonce and expiry, a few dozen bytes) until it is
///   used or expires. A receipt is valid only at the `Approvals` that issued it: one it does
///   not remember (used before, issued by another instance or before a restart) is refused as
///   already used, never run. After a restart, approve the call again.
/// - A submitted receipt is kept until its call is dispatched (then it is used or refused) or
///   until it expires. [`submit`](Self::submit) checks the signature, the expiry and whether
///   the receipt can still be used; one that cannot is kept as a refusal of its call instead.
/// - A denial (or such a refusal) is kept until its call is dispatched, for at most the
///   [`DENIAL_RETENTION`](Self::DENIAL_RETENTION) most recent ones. A call whose denial was
///   forgotten is still refused when it is dispatched (it has no receipt), but
///   [`has_decision`](Self::has_decision) no longer reports it, so an agent asks again.
pub struct Approvals {
    key: Hmac<Sha256>,
    contracts: HashMap<String, String>,
    state: Mutex<State>,
    ledger: Option<Arc<dyn Ledger>>,
}

/// The decisions waiting to be used, under one lock so a check and its removal are one step.
struct State {
    /// Nonce → expiry of each receipt issued and not yet used.
    issued: HashMap<String, u64, foldhash::fast::RandomState>,
    /// Call id → the receipt submitted for it.
    submitted: HashMap<String, Receipt, foldhash::fast::RandomState>,
    /// Call id → why it will be refused.
    refused: Recent<Refusal>,
    /// Expired receipts are swept when `issued` reaches this size, so sweeping costs O(1) per
    /// approval.
    sweep_at: usize,
}

/// A decision that refuses its call when it is dispatched.
enum Refusal {
    /// Denied, with the reason for the operator.
    Denied(String),
    /// The receipt submitted for it had expired.
    Expired,
}

/// The least size of `issued` at which expired receipts are swept.
const SWEEP_FLOOR: usize = 1024;

impl State {
    /// Forgets the receipts that expired, issued or submitted.
    fn sweep(&mut self, now: u64) {
        self.issued.retain(|_, expires_at| now < *expires_at);
        self.submitted.retain(|_, receipt| now < receipt.expires_at);
        self.sweep_at = (self.issued.len() * 2).max(SWEEP_FLOOR);
    }
}

impl fmt::Debug for Approvals {
    /// Shows the tools and how many decisions are held, never the key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.state);
        f.debug_struct("Approvals")
            .field("tools", &self.contracts.len())
            .field("issued", &state.issued.len())
            .field("submitted", &state.submitted.len())
            .finish_non_exhaustive()
    }
}

impl Approvals {
    /// How many denials are kept waiting for their calls: the most recent 10,000.
    pub const DENIAL_RETENTION: usize = 10_000;

    /// Receipts signed with `key` (at least 32 bytes, kept secret) for the tools of
    /// `registry`.
    pub fn new(key: impl Into<Vec<u8>>, registry: &Registry) -> Result<Self, ReceiptError> {
        let key = key.into();
        if key.len() < 32 {
            return Err(ReceiptError::WeakKey);
        }
        let key = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| ReceiptError::WeakKey)?;
        let contracts = registry
            .tools()
            .map(|info| (info.name().to_owned(), contract_hash(info.input_schema())))
            .collect();
        Ok(Approvals {
            key,
            contracts,
            state: Mutex::new(State {
                issued: HashMap::default(),
                submitted: HashMap::default(),
                refused: Recent::new(Approvals::DENIAL_RETENTION),
                sweep_at: SWEEP_FLOOR,
            }),
            ledger: None,
        })
    }

    /// Uses each receipt's nonce once in `ledger` instead of in this instance's memory, so
    /// every instance sharing the key and the ledger (other processes, a restarted one)
    /// accepts a receipt any of them issued, and only once in all. A receipt is then refused
    /// as used only when the ledger has seen its nonce; its signature and expiry are checked
    /// as before.
    pub fn with_ledger<L: Ledger>(mut self, ledger: Arc<L>) -> Self {
        self.ledger = Some(ledger);
        self
    }

    /// Approves `pending` as `approver`, valid for `ttl`. The arguments are checked against
    /// the tool's contract again first. The receipt is remembered until it is used or expires
    /// (see [`Approvals`]).
    pub fn approve(
        &self,
        runtime: &Runtime,
        pending: &PendingApproval,
        approver: &str,
        ttl: Duration,
    ) -> Result<Receipt, ReceiptError> {
        let contract = self
            .contracts
            .get(&pending.tool)
            .ok_or_else(|| ReceiptError::UnknownTool(pending.tool.clone()))?;
        runtime
            .check(&pending.tool, pending.arguments.as_str())
            .map_err(|failure| ReceiptError::InvalidArguments(failure.message().to_owned()))?;
        let value = serde_json::from_str::<Value>(&pending.arguments)
            .map_err(|error| ReceiptError::InvalidArguments(error.to_string()))?;
        let arguments = exact_json(&value).ok_or_else(|| {
            ReceiptError::InvalidArguments("the arguments nest too deeply".to_owned())
        })?;
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce).map_err(|error| ReceiptError::Random(error.to_string()))?;
        let mut receipt = Receipt {
            tool: pending.tool.clone(),
            contract: contract.clone(),
            arguments,
            principal: pending.principal.clone(),
            call_id: pending.call_id.clone(),
            expires_at: now().saturating_add(ttl.as_secs()),
            nonce: hex(&nonce),
            approved_by: approver.to_owned(),
            mac: String::new(),
        };
        receipt.mac = hex(&self.mac(&receipt).finalize().into_bytes());
        let now = now();
        let mut state = lock(&self.state);
        if state.issued.len() >= state.sweep_at {
            state.sweep(now);
        }
        state
            .issued
            .insert(receipt.nonce.clone(), receipt.expires_at);
        Ok(receipt)
    }

    /// Hands a receipt to the runtime for the call it names. It is kept until that call is
    /// dispatched or the receipt expires.
    ///
    /// A receipt that can no longer be used is not kept: its call is refused instead, as
    /// `approval_expired` if it expired, otherwise as `approval_denied` with the reason in the
    /// operator detail (its signature does not match, or this instance does not remember
    /// issuing it: used before, or issued elsewhere). Such refusals are kept like denials.
    pub fn submit(&self, receipt: Receipt) {
        let signed = self.signed(&receipt);
        let now = now();
        let mut state = lock(&self.state);
        let refusal = if !signed {
            Some(Refusal::Denied(
                "the receipt's signature does not match".into(),
            ))
        } else if now >= receipt.expires_at {
            state.issued.remove(&receipt.nonce);
            Some(Refusal::Expired)
        } else if self.ledger.is_none() && !state.issued.contains_key(&receipt.nonce) {
            Some(Refusal::Denied("the receipt was already used".into()))
        } else {
            None
        };
        match refusal {
            // A forged receipt names any call id it likes, of any length: only one a runtime
            // could be asked to run is worth remembering.
            Some(_) if !signed && receipt.call_id.len() > Runtime::DEFAULT_MAX_CALL_ID_BYTES => {}
            Some(refusal) => {
                state.submitted.remove(&receipt.call_id);
                state
                    .refused
                    .insert(receipt.call_id.as_str().into(), refusal);
            }
            None => {
                state.refused.remove(&receipt.call_id);
                state.submitted.insert(receipt.call_id.clone(), receipt);
            }
        }
    }

    /// Records that the call was refused; it ends as `approval_denied` with `reason` in the
    /// operator detail. The denial is kept until the call is dispatched, among the
    /// [`DENIAL_RETENTION`](Self::DENIAL_RETENTION) most recent ones.
    pub fn deny(&self, call_id: impl Into<String>, reason: impl Into<String>) {
        let call_id: String = call_id.into();
        let mut state = lock(&self.state);
        state.submitted.remove(&call_id);
        state
            .refused
            .insert(call_id.into(), Refusal::Denied(reason.into()));
    }

    /// Whether a receipt or a denial is waiting for `call_id`. Both are forgotten once the
    /// call is dispatched; an expired receipt is no decision (and is forgotten here).
    pub fn has_decision(&self, call_id: &str) -> bool {
        let mut state = lock(&self.state);
        match state.refused.get(call_id) {
            Some(Refusal::Denied(_)) => return true,
            Some(Refusal::Expired) => {
                state.refused.remove(call_id);
                return false;
            }
            None => {}
        }
        match state.submitted.get(call_id) {
            Some(receipt) if now() >= receipt.expires_at => {
                if let Some(receipt) = state.submitted.remove(call_id) {
                    state.issued.remove(&receipt.nonce);
                }
                false
            }
            Some(_) => true,
            None => false,
        }
    }

    /// The [`Approver`] to install in the runtime: it verifies the receipt submitted for each
    /// call.
    pub fn verifier(self: &Arc<Self>) -> ReceiptVerifier {
        ReceiptVerifier(Arc::clone(self))
    }

    fn mac(&self, receipt: &Receipt) -> Hmac<Sha256> {
        let mut mac = self.key.clone();
        for field in [
            // v2: the arguments are in exact canonical form (v1 rounded numbers to doubles).
            "tool-core receipt v2",
            &receipt.tool,
            &receipt.contract,
            &receipt.arguments,
            &receipt.principal,
            &receipt.call_id,
            &receipt.expires_at.to_string(),
            &receipt.nonce,
            &receipt.approved_by,
        ] {
            // Length-prefixed, so no two different field lists sign the same bytes.
            mac.update(&(field.len() as u64).to_be_bytes());
            mac.update(field.as_bytes());
        }
        mac
    }

    /// Whether the receipt's signature is ours over its fields.
    fn signed(&self, receipt: &Receipt) -> bool {
        self.mac(receipt)
            .verify_slice(&unhex(&receipt.mac).unwrap_or_default())
            .is_ok()
    }

    /// Whether the decision for `request` authorizes it when run by `principal`. The decision
    /// is used up either way: the call id runs once. With a ledger, the last step (using the
    /// nonce) is left to the caller.
    fn verify(&self, request: &ApprovalRequest, principal: &str) -> Verdict {
        match self.check(request, principal) {
            Ok(receipt) => match &self.ledger {
                Some(ledger) => {
                    lock(&self.state).issued.remove(&receipt.nonce);
                    Verdict::UseNonce(Arc::clone(ledger), receipt)
                }
                // Taken out as it is checked, so two calls cannot both use it.
                None => match lock(&self.state).issued.remove(&receipt.nonce) {
                    Some(_) => Verdict::Decided(Approval::Approved),
                    None => {
                        Verdict::Decided(Approval::Denied("the receipt was already used".into()))
                    }
                },
            },
            Err(decision) => Verdict::Decided(decision),
        }
    }

    /// Every check of the receipt submitted for `request` but its nonce's use.
    fn check(&self, request: &ApprovalRequest, principal: &str) -> Result<Receipt, Approval> {
        let (refused, receipt) = {
            let mut state = lock(&self.state);
            (
                state.refused.remove(request.call_id()),
                state.submitted.remove(request.call_id()),
            )
        };
        match refused {
            Some(Refusal::Denied(reason)) => return Err(Approval::Denied(reason)),
            Some(Refusal::Expired) => return Err(Approval::Expired),
            None => {}
        }
        let Some(receipt) = receipt else {
            return Err(Approval::Denied("no approval receipt for this call".into()));
        };
        if !self.signed(&receipt) {
            return Err(Approval::Denied(
                "the receipt's signature does not match".into(),
            ));
        }
        let arguments = exact_json(request.arguments());
        let checks = [
            (
                receipt.tool == request.tool(),
                "the receipt is for another tool",
            ),
            (
                self.contracts.get(request.tool()) == Some(&receipt.contract),
                "the tool's contract changed since approval",
            ),
            (
                arguments.as_deref() == Some(receipt.arguments.as_str()),
                "the arguments differ from the approved ones",
            ),
            (
                receipt.principal == principal,
                "the receipt is for another principal",
            ),
            (
                receipt.call_id == request.call_id(),
                "the receipt is for another call",
            ),
        ];
        if let Some((_, reason)) = checks.iter().find(|(ok, _)| !ok) {
            return Err(Approval::Denied((*reason).into()));
        }
        let now = now();
        if now >= receipt.expires_at {
            lock(&self.state).issued.remove(&receipt.nonce);
            return Err(Approval::Expired);
        }
        Ok(receipt)
    }
}

/// Verifies receipts at dispatch; see [`Approvals::verifier`].
#[derive(Debug, Clone)]
pub struct ReceiptVerifier(Arc<Approvals>);

impl Approver for ReceiptVerifier {
    fn approve(&self, request: ApprovalRequest, cx: Context) -> ApprovalFuture {
        match self.0.verify(&request, cx.principal()) {
            Verdict::Decided(decision) => Box::pin(std::future::ready(decision)),
            Verdict::UseNonce(ledger, receipt) => Box::pin(async move {
                let expires = UNIX_EPOCH + Duration::from_secs(receipt.expires_at);
                match ledger.use_nonce(&receipt.nonce, expires).await {
                    Ok(true) => Approval::Approved,
                    Ok(false) => Approval::Denied("the receipt was already used".into()),
                    Err(error) => Approval::Denied(format!(
                        "the receipt's use could not be recorded in the ledger: {error}"
                    )),
                }
            }),
        }
    }
}

/// What verifying a receipt decided, or the nonce left to use in the ledger.
enum Verdict {
    Decided(Approval),
    UseNonce(Arc<dyn Ledger>, Receipt),
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}
