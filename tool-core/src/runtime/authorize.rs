//! Stage 4: may this principal make this call. The runtime's [`Authorize`] policies see the
//! tool, the trusted [`Context`], the validated arguments and the call's resource; then the
//! tool's own checks ([`ToolDef::authorize`](crate::ToolDef::authorize)) see the typed
//! arguments. The order is documented in [`authz`](crate::authz#order). Policies may wait;
//! the wait is bounded by the run's deadline and cancellation.

use std::collections::HashMap;

use futures_util::future::BoxFuture;

use super::CallRef;
use crate::authz::{self, Authorize, Decision, Request};
use crate::context::{Context, Stopped};
use crate::outcome::{Code, Denied, Failure};
use crate::registry::ToolInfo;

/// The runtime's policies: runtime-wide ones, then per tenant, each in the order added.
#[derive(Default)]
pub(super) struct Policies {
    pub(super) global: Vec<Box<dyn Authorize>>,
    pub(super) tenants: HashMap<String, Vec<Box<dyn Authorize>>>,
}

impl Policies {
    /// The policies of a call in `cx`, in the order they are asked, with whose they are.
    fn of<'p>(&'p self, cx: &Context) -> impl Iterator<Item = (&'p dyn Authorize, &'static str)> {
        let tenant = cx
            .tenant()
            .and_then(|tenant| self.tenants.get(tenant))
            .map(Vec::as_slice)
            .unwrap_or_default();
        let global = self.global.iter().map(|p| (&**p, "the runtime's"));
        global.chain(tenant.iter().map(|p| (&**p, "the tenant's")))
    }

    /// Whether every runtime-wide and tenant policy shows `info` in `cx`.
    pub(super) fn shown(&self, info: &ToolInfo, cx: &Context) -> bool {
        self.of(cx)
            .all(|(policy, _)| crate::authz::shown(policy, info, cx))
    }

    pub(super) fn is_empty(&self) -> bool {
        self.global.is_empty() && self.tenants.is_empty()
    }
}

/// What the runtime's policies said of a call: their decision when every one made it at once,
/// else the wait for the rest, boxed so the rare wait does not enlarge every call's future.
pub(super) enum Asked<'r> {
    /// `Ok` with the ids of the rules that allowed the call, or the refusal.
    Now(Result<Vec<String>, Denied>),
    /// A policy needs a wait: the decision of it and of those after it (a refusal as
    /// `Err(Ok(denied))`), or `Err(Err(stopped))` when the run ended first.
    Later(BoxFuture<'r, Result<Vec<String>, Result<Denied, Stopped>>>),
}

/// Asks the runtime's policies about a valid call, in order, the first refusal deciding. A
/// decision made at once is taken at once, without a future; from the first policy that needs
/// a wait on, the rest is [`Asked::Later`]. Policies that answer at once are not raced
/// against the run's end, so a cancelled run is refused by the stage that waits (admission),
/// as without policies.
pub(super) fn ask<'r>(
    policies: &'r Policies,
    request: &'r Request<'r>,
    cx: &'r Context,
) -> Asked<'r> {
    let mut ids = Vec::new();
    let mut order = policies.of(cx);
    while let Some((policy, whose)) = order.next() {
        let decision = match authz::ask_now(policy, request, whose) {
            Ok(decision) => decision,
            Err(wait) => {
                let rest = async move {
                    let mut decision = authz::waited(wait, whose).await;
                    loop {
                        match decision {
                            Decision::Allow { policy_ids } => ids.extend(policy_ids),
                            Decision::Deny(denied) => return Err(Ok(denied)),
                        }
                        let Some((policy, whose)) = order.next() else {
                            return Ok(ids);
                        };
                        decision = authz::ask(policy, request, whose).await;
                    }
                };
                let bounded =
                    async move { cx.bounded(rest).await.unwrap_or_else(|stop| Err(Err(stop))) };
                return Asked::Later(Box::pin(bounded));
            }
        };
        match decision {
            Decision::Allow { policy_ids } if ids.is_empty() => ids = policy_ids,
            Decision::Allow { policy_ids } => ids.extend(policy_ids),
            Decision::Deny(denied) => return Asked::Now(Err(denied)),
        }
    }
    Asked::Now(Ok(ids))
}

/// The failure of a call whose run ended while its policies were deciding.
#[cold]
pub(super) fn stopped(stop: Stopped, info: &ToolInfo, call: &CallRef<'_>) -> Failure {
    let what = match stop {
        Stopped::Cancelled => "the run was cancelled",
        Stopped::Deadline => "the run's deadline passed",
    };
    let code = match stop {
        Stopped::Cancelled => Code::Cancelled,
        Stopped::Deadline => Code::Timeout,
    };
    Failure::new(
        code,
        format!(
            "{what} while the call was being authorized (reference {})",
            call.id
        ),
    )
    .with_detail(format!(
        "{what} before the authorization policies of `{}` decided",
        info.name
    ))
}

/// The audit note naming the rules that decided (their ids only, never argument values).
pub(super) fn audit_note(ids: &[String]) -> Option<String> {
    match ids {
        [] => None,
        ids => Some(format!("policies: {}", ids.join(", "))),
    }
}

/// The failure for a refusal: the policy's message for the model if it set one, its reason for
/// the operator, with the ids of the rules that refused.
pub(super) fn unauthorized(denied: Denied, info: &ToolInfo, call: &CallRef<'_>) -> Failure {
    let message = match denied.message() {
        Some(message) => format!("{message} (reference {})", call.id),
        None => format!(
            "not authorized to call `{}` (reference {})",
            info.name, call.id
        ),
    };
    let detail = match denied.policy_ids() {
        [] => denied.detail().to_owned(),
        ids => format!("{} (policies: {})", denied.detail(), ids.join(", ")),
    };
    Failure::new(Code::Unauthorized, message).with_detail(detail)
}
