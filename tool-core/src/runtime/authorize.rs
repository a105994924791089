//! Stage 4: may this principal make this call. The runtime's [`Authorize`] policies see the
//! tool, the trusted [`Context`], the validated arguments and the call's resource; then the
//! tool's own checks ([`ToolDef::authorize`](crate::ToolDef::authorize)) see the typed
//! arguments. The order is documented in [`authz`](crate::authz#order). Policies may wait;
//! the wait is bounded by the run's deadline and cancellation.

use std::collections::HashMap;
use std::pin::pin;

use futures_util::FutureExt as _;

use super::CallRef;
use crate::authz::{Authorize, Decision, Request, ResourceRef, ask};
use crate::context::{Context, Stopped};
use crate::contract::Arguments;
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

    fn is_empty(&self) -> bool {
        self.global.is_empty() && self.tenants.is_empty()
    }
}

/// Asks the runtime's policies about a valid call: `Ok` with the ids of the rules that
/// allowed it; a refusal puts the ids of the rules that refused in `denied_by`. A decision
/// made at once is taken at once; a wait ends with the run.
pub(super) async fn authorize(
    policies: &Policies,
    info: &ToolInfo,
    call: &CallRef<'_>,
    arguments: Arguments<'_>,
    resource: Option<&ResourceRef>,
    cx: &Context,
    denied_by: &mut Vec<String>,
) -> Result<Vec<String>, Failure> {
    if policies.is_empty() {
        return Ok(Vec::new());
    }
    let request = Request::new(info, cx, arguments, resource);
    let decide = async {
        let mut ids = Vec::new();
        for (policy, whose) in policies.of(cx) {
            match ask(policy, &request, whose).await {
                Decision::Allow { policy_ids } => ids.extend(policy_ids),
                Decision::Deny(denied) => return Err(denied),
            }
        }
        Ok(ids)
    };
    let mut decide = pin!(decide);
    // Policies that answer at once are not raced against the run's end, so a cancelled run
    // is refused by the stage that waits (admission), as without policies.
    let decided = match decide.as_mut().now_or_never() {
        Some(decided) => decided,
        None => cx.bounded(decide).await.map_err(|stop| {
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
        })?,
    };
    decided.map_err(|denied| {
        denied_by.extend(denied.policy_ids().iter().cloned());
        unauthorized(denied, info, call)
    })
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
