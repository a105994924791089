//! Approval receipts: a human's (or system's) sign-off bound to one exact call, verified by
//! the runtime when the call is dispatched.
//!
//! A receipt is an HMAC-SHA256 over the tool name, a hash of the tool's contract (its input
//! schema), the RFC 8785 canonical arguments, the principal, the call id, an expiry and a
//! one-time nonce. Changed arguments, another principal or call, a changed contract, an expired
//! receipt or one used before are all refused.

use std::collections::{HashMap, HashSet};
use std::fmt::{self, Write as _};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::canonical::canonical_json;
use crate::context::Context;
use crate::policy::{Approval, ApprovalFuture, ApprovalRequest, Approver};
use crate::registry::Registry;
use crate::runtime::Runtime;
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
    /// The approved arguments, RFC 8785 canonical JSON.
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
#[derive(Debug)]
pub struct Approvals {
    key: Hmac<Sha256>,
    contracts: HashMap<String, String>,
    receipts: Mutex<HashMap<String, Receipt>>,
    denials: Mutex<HashMap<String, String>>,
    used: Mutex<HashSet<String>>,
}

impl Approvals {
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
            receipts: Mutex::new(HashMap::new()),
            denials: Mutex::new(HashMap::new()),
            used: Mutex::new(HashSet::new()),
        })
    }

    /// Approves `pending` as `approver`, valid for `ttl`. The arguments are checked against
    /// the tool's contract again first.
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
        let arguments = serde_json::from_str::<Value>(&pending.arguments)
            .map(|value| canonical_json(&value))
            .map_err(|error| ReceiptError::InvalidArguments(error.to_string()))?;
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
        Ok(receipt)
    }

    /// Hands a receipt to the runtime for the call it names.
    pub fn submit(&self, receipt: Receipt) {
        lock(&self.receipts).insert(receipt.call_id.clone(), receipt);
    }

    /// Records that the call was refused; it ends as `approval_denied` with `reason` in the
    /// operator detail.
    pub fn deny(&self, call_id: impl Into<String>, reason: impl Into<String>) {
        lock(&self.denials).insert(call_id.into(), reason.into());
    }

    /// Whether a receipt or a denial was given for `call_id`.
    pub fn has_decision(&self, call_id: &str) -> bool {
        lock(&self.receipts).contains_key(call_id) || lock(&self.denials).contains_key(call_id)
    }

    /// The [`Approver`] to install in the runtime: it verifies the receipt submitted for each
    /// call.
    pub fn verifier(self: &Arc<Self>) -> ReceiptVerifier {
        ReceiptVerifier(Arc::clone(self))
    }

    fn mac(&self, receipt: &Receipt) -> Hmac<Sha256> {
        let mut mac = self.key.clone();
        for field in [
            "tool-core receipt v1",
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

    /// Why `receipt` does not authorize `request` by `principal`, if it does not.
    fn verify(&self, request: &ApprovalRequest, principal: &str) -> Approval {
        if let Some(reason) = lock(&self.denials).get(request.call_id()) {
            return Approval::Denied(reason.clone());
        }
        let Some(receipt) = lock(&self.receipts).get(request.call_id()).cloned() else {
            return Approval::Denied("no approval receipt for this call".into());
        };
        let signed = self
            .mac(&receipt)
            .verify_slice(&unhex(&receipt.mac).unwrap_or_default())
            .is_ok();
        if !signed {
            return Approval::Denied("the receipt's signature does not match".into());
        }
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
                receipt.arguments == canonical_json(request.arguments()),
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
            return Approval::Denied((*reason).into());
        }
        if now() >= receipt.expires_at {
            return Approval::Expired;
        }
        if !lock(&self.used).insert(receipt.nonce.clone()) {
            return Approval::Denied("the receipt was already used".into());
        }
        Approval::Approved
    }
}

/// Verifies receipts at dispatch; see [`Approvals::verifier`].
#[derive(Debug, Clone)]
pub struct ReceiptVerifier(Arc<Approvals>);

impl Approver for ReceiptVerifier {
    fn approve(&self, request: ApprovalRequest, cx: Context) -> ApprovalFuture {
        let decision = self.0.verify(&request, cx.principal());
        Box::pin(std::future::ready(decision))
    }
}

/// SHA-256 (hex) of a schema's canonical form.
pub(crate) fn contract_hash(schema: &Value) -> String {
    hex(&Sha256::digest(canonical_json(schema).as_bytes()))
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}
