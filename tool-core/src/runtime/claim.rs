//! Stage 6b, with a [ledger](crate::ledger): the call is claimed before it runs (taking its
//! quotas in the same step) and its outcome recorded after; a call claimed before is replayed,
//! refused as a conflict, or refused while it is in flight or in doubt. Every decision goes
//! to the ledger's audit trail.

use std::sync::Arc;
use std::time::Duration;

use super::{CallRef, Shared};
use crate::canonical::{exact_json, exact_text};
use crate::context::Context;
use crate::contract::arguments::Arguments;
use crate::digest::sha256_shared;
use crate::ledger::{
    AuditEvent, AuditKind, Binding, Claim, ClaimKey, Claimed, KeyKind, Ledger, Quota, Recorded,
};
use crate::outcome::{Code, Failure, Output};
use crate::{Effect, registry::ToolInfo};

/// A claim this call holds: settle it when the call ends.
pub(super) struct Held {
    key: ClaimKey,
    attempt: u32,
    /// The names of the call's records, taken from its claim.
    call_id: Arc<str>,
    tool: Arc<str>,
    digest: Arc<str>,
    principal: Arc<str>,
}

/// What the ledger decided.
pub(super) enum Admission {
    /// Run the call, then [`settle`].
    Run(Held),
    /// The call completed before; this is its outcome.
    Replay(Result<Output, Failure>),
}

/// The decisions of one call before its claim, kept to be appended with it.
pub(super) struct Decisions {
    pub(super) events: Vec<AuditEvent>,
    /// The note of a refusal by authorization: the ids of the rules that refused.
    pub(super) denial: Option<String>,
}

impl Decisions {
    pub(super) fn new() -> Self {
        Decisions {
            events: Vec::new(),
            denial: None,
        }
    }

    pub(super) fn push(
        &mut self,
        cx: &Context,
        call_id: &Arc<str>,
        tool: &Arc<str>,
        kind: AuditKind,
        code: Option<Code>,
    ) {
        self.events.push(AuditEvent {
            call_id: Arc::clone(call_id),
            tool: Arc::clone(tool),
            kind,
            code,
            digest: None,
            principal: Arc::clone(cx.shared_principal()),
            note: None,
            output: None,
        });
    }

    /// Appends the decisions of a call refused before its claim, with the refusal.
    pub(super) async fn refused(
        mut self,
        ledger: &dyn Ledger,
        cx: &Context,
        call_id: &str,
        tool: &str,
        failure: &Failure,
    ) {
        let kind = match failure.code() {
            Code::Unauthorized => AuditKind::Denied,
            _ => AuditKind::Refused,
        };
        self.push(
            cx,
            &Arc::from(call_id),
            &Arc::from(tool),
            kind,
            Some(failure.code()),
        );
        if kind == AuditKind::Denied
            && let Some(event) = self.events.last_mut()
        {
            event.note = self.denial.take();
        }
        if let Err(error) = ledger.append(cx.scope(), &self.events).await {
            tracing::warn!(%error, code = failure.code().as_str(), "the refusal of a call could not be audited");
        }
    }
}

/// Refuses an empty call id when the call would be claimed under it (no idempotency key): the
/// ledger keys a call by its id, so every call without one would share one record, and a new
/// call would be refused as a conflict or answered with another's outcome.
pub(super) fn require_id(call_id: &str, cx: &Context) -> Result<(), Failure> {
    if call_id.is_empty() && cx.idempotency_key().is_none() {
        return Err(Failure::new(
            Code::MissingCallId,
            "the call has no call id, and calls are recorded by their id; this call was not run",
        )
        .with_detail("an empty call id with a ledger and no idempotency key"));
    }
    Ok(())
}

/// Claims the call, whose effect is `effect`; quotas are taken in the same step.
#[allow(clippy::too_many_arguments)]
pub(super) async fn claim(
    shared: &Shared,
    ledger: &dyn Ledger,
    info: &ToolInfo,
    effect: Effect,
    call: &CallRef<'_>,
    contract: &Arc<str>,
    arguments: Arguments<'_>,
    cx: &Context,
    decisions: Decisions,
) -> Result<Admission, Failure> {
    let digest = arguments_digest(arguments);
    let scope = cx.shared_scope();
    let key = match cx.shared_idempotency_key() {
        Some(key) => ClaimKey::idempotency(cx.shared_tenant(), Arc::clone(key)),
        None => ClaimKey::call(Arc::clone(&scope), Arc::clone(call.call_id)),
    };
    let mut quotas = Vec::new();
    if let Some(limit) = info.settings.max_calls {
        quotas.push(Quota {
            name: format!("calls:{}", info.name),
            limit,
        });
    }
    if let Some(limit) = shared.max_calls {
        quotas.push(Quota {
            name: "calls".to_owned(),
            limit,
        });
    }
    let mut limit = info.settings.timeout.unwrap_or(shared.timeout);
    if let Some(left) = cx.time_left() {
        limit = limit.min(left);
    }
    // The authority the call runs with is part of what it is: the same call under another
    // authority is another call.
    let contract = match authority_digest(info, cx) {
        Some(authority) => sha256_shared(format!("{contract} authority {authority}").as_bytes()),
        None => Arc::clone(contract),
    };
    let claim = Claim {
        key,
        call_id: Arc::clone(call.call_id),
        scope,
        binding: Binding {
            tool: Arc::clone(&info.name),
            contract,
            arguments: digest,
            principal: Arc::clone(cx.shared_principal()),
        },
        effect,
        lease: limit.saturating_add(shared.lease_grace),
        rerun_interrupted: shared.rerun_interrupted,
        quotas,
        audit: decisions.events,
    };
    let claimed = ledger
        .claim(&claim)
        .await
        .map_err(|error| unavailable(&error.to_string()))?;
    let key = claim.key;
    // Named in refusals only.
    let what = || match key.kind {
        KeyKind::CallId => format!("call id {:?}", key.id),
        KeyKind::IdempotencyKey => "the idempotency key".to_owned(),
    };
    match claimed {
        Claimed::New { attempt } => Ok(Admission::Run(Held {
            key,
            attempt,
            call_id: claim.call_id,
            tool: claim.binding.tool,
            digest: claim.binding.arguments,
            principal: claim.binding.principal,
        })),
        Claimed::Replay(recorded) => Ok(Admission::Replay(match recorded {
            Recorded::Output(text) => Ok(Output { text }),
            Recorded::Failure {
                code,
                message,
                detail,
            } => {
                let failure = Failure::new(code, message);
                Err(match detail {
                    Some(detail) => failure.with_detail(detail),
                    None => failure,
                })
            }
        })),
        Claimed::Conflict { differs } => {
            let code = match key.kind {
                KeyKind::CallId => Code::CallIdConflict,
                KeyKind::IdempotencyKey => Code::IdempotencyConflict,
            };
            Err(Failure::new(
                code,
                format!(
                    "{} was already used for another call; this call was not run",
                    what()
                ),
            )
            .with_detail(format!(
                "the {differs} {} from the first claim",
                if differs == "arguments" { "differ" } else { "differs" }
            )))
        }
        Claimed::InFlight => Err(Failure::new(
            Code::CallInFlight,
            format!(
                "a call with {} is still running; this one was not run",
                what()
            ),
        )),
        Claimed::Unknown => Err(Failure::new(
            Code::OutcomeUnknown,
            format!(
                "an earlier attempt of this call with {} was interrupted; its effects may or may not have happened, so it is not run again until it is reconciled",
                what()
            ),
        )
        .with_detail("claimed without an outcome and its lease passed")),
        Claimed::Exhausted(quota) => Err(Failure::new(
            Code::BudgetExhausted,
            if quota == "calls" {
                "the call limit of this run is used up".to_owned()
            } else {
                format!("the call limit for `{}` is used up", info.name)
            },
        )),
    }
}

/// SHA-256 (hex) of the arguments' exact canonical JSON: from the text when they came as text,
/// through a `Value` only for text that [`exact_text`] leaves to it.
fn arguments_digest(arguments: Arguments<'_>) -> Arc<str> {
    let canonical = match arguments {
        Arguments::Text(raw) => exact_text(raw),
        Arguments::Json(value) => exact_json(value),
    };
    let canonical = canonical.unwrap_or_else(|| {
        let value = arguments.to_value();
        exact_json(&value).unwrap_or_else(|| value.to_string())
    });
    sha256_shared(canonical.as_bytes())
}

/// Records the outcome of a held claim with its `executed` and `outcome` records, and gives
/// back the call's result: the output text `result` carries, or its failure. A failure to
/// record is logged: the claim then stays without an outcome, and once its lease passes it is
/// in doubt, never run again by itself.
pub(super) async fn settle(
    ledger: &dyn Ledger,
    held: Held,
    info: &ToolInfo,
    result: Result<String, Failure>,
    cx: &Context,
) -> Result<Output, Failure> {
    // The output text is lent to the record, then taken back.
    let mut result = result;
    let recorded = match &mut result {
        Ok(text) => Recorded::Output(std::mem::take(text)),
        Err(failure) => Recorded::Failure {
            code: failure.code(),
            message: failure.message().to_owned(),
            detail: failure.detail().map(str::to_owned),
        },
    };
    let authority = authority_digest(info, cx).map(|digest| format!("authority {digest}"));
    let code = result.as_ref().err().map(Failure::code);
    let Held {
        key,
        attempt,
        call_id,
        tool,
        digest,
        principal,
    } = held;
    let executed = AuditEvent {
        call_id: Arc::clone(&call_id),
        tool: Arc::clone(&tool),
        kind: AuditKind::Executed,
        code: None,
        digest: Some(Arc::clone(&digest)),
        principal: Arc::clone(&principal),
        note: authority,
        output: None,
    };
    let audit = [
        executed,
        AuditEvent {
            call_id,
            tool,
            kind: AuditKind::Outcome,
            code,
            digest: Some(digest),
            principal,
            note: None,
            output: None,
        },
    ];
    match ledger.settle(&key, attempt, &recorded, &audit).await {
        Ok(true) => {}
        Ok(false) => tracing::warn!(
            attempt,
            "the call's claim was settled or taken over by someone else; its outcome was not recorded"
        ),
        Err(error) => tracing::warn!(
            %error,
            "the call's outcome could not be recorded; its claim stays in doubt until reconciled"
        ),
    }
    if let (Ok(text), Recorded::Output(lent)) = (&mut result, recorded) {
        *text = lent;
    }
    result.map(|text| Output { text })
}

/// The digest of the authority the call runs with (the tool's, narrowed by the context), if
/// the tool declares one.
#[cfg(feature = "sandbox")]
fn authority_digest(info: &ToolInfo, cx: &Context) -> Option<String> {
    let declared = info.authority()?;
    Some(cx.effective_authority(declared).digest())
}

#[cfg(not(feature = "sandbox"))]
fn authority_digest(_: &ToolInfo, _: &Context) -> Option<String> {
    None
}

fn unavailable(error: &str) -> Failure {
    Failure::new(
        Code::LedgerUnavailable,
        "the call could not be recorded before it ran, so it was not run",
    )
    .with_detail(format!("ledger: {error}"))
}

/// The grace period added to a call's time limit for its claim's lease by default.
pub(super) const DEFAULT_LEASE_GRACE: Duration = Duration::from_secs(10);
