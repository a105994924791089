//! Stage 5: a human or system signs off calls to tools that require it
//! ([`ToolDef::requires_approval`](crate::ToolDef::requires_approval)). The [`Approver`] sees
//! the validated arguments; the wait is bounded by the run's deadline and cancellation.
//! [`Approvals`](crate::approval::Approvals) is an approver with signed, single-use receipts.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use super::{CallRef, Shared};
use crate::context::{Context, Stopped};
use crate::contract::arguments::Arguments;
use crate::outcome::{Code, Failure, InvocationId};
use crate::registry::ToolInfo;

/// A call waiting for sign-off: the exact arguments that will run, already validated.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    pub(crate) id: InvocationId,
    pub(crate) call_id: String,
    pub(crate) tool: String,
    pub(crate) arguments: Value,
}

impl ApprovalRequest {
    /// The runtime's id of the call: the reference that the message of an approval refusal
    /// names, and the outcome's [`id`](crate::Outcome::id).
    pub fn id(&self) -> InvocationId {
        self.id
    }

    /// The provider's id of the call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The tool to run.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The validated arguments, as JSON.
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }
}

/// An approver's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Approval {
    /// Run the call.
    Approved,
    /// Do not run it; the reason becomes the failure's operator
    /// [`detail`](crate::Failure::detail). The model is told only that the call was not
    /// approved, with the request's [`id`](ApprovalRequest::id) as its reference.
    Denied(String),
    /// The approval window closed without a decision.
    Expired,
}

/// The future an [`Approver`] returns.
pub type ApprovalFuture = Pin<Box<dyn Future<Output = Approval> + Send + 'static>>;

/// Signs off calls to tools registered with
/// [`ToolDef::requires_approval`](crate::ToolDef::requires_approval). Any
/// `Fn(ApprovalRequest, Context) -> impl Future<Output = Approval>` closure is one.
///
/// Waiting for a decision is bounded by the run's deadline (ending as `approval_expired`) and
/// its cancellation. Without an approver such calls are refused as `approval_denied`.
pub trait Approver: Send + Sync + 'static {
    /// Decides on one call.
    fn approve(&self, request: ApprovalRequest, cx: Context) -> ApprovalFuture;
}

impl<F, Fut> Approver for F
where
    F: Fn(ApprovalRequest, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Approval> + Send + 'static,
{
    fn approve(&self, request: ApprovalRequest, cx: Context) -> ApprovalFuture {
        Box::pin(self(request, cx))
    }
}

/// Asks the approver about one call, waiting at most until the run ends. Each refusal's
/// message names the call's reference, which is also the id of the request the approver was
/// asked ([`ApprovalRequest::id`]), so the operator finds one from the other.
pub(super) async fn approve(
    shared: &Shared,
    info: &ToolInfo,
    call: &CallRef<'_>,
    arguments: Arguments<'_>,
    cx: &Context,
) -> Result<(), Failure> {
    let Some(approver) = &shared.approver else {
        return Err(Failure::new(
            Code::ApprovalDenied,
            format!(
                "`{}` needs approval and none was given (reference {})",
                info.name, call.id
            ),
        )
        .with_detail("the tool requires approval and the runtime has no approver"));
    };
    let request = ApprovalRequest {
        id: call.id,
        call_id: call.call_id.to_string(),
        tool: info.name.to_string(),
        arguments: arguments.to_value(),
    };
    let decision = cx
        .bounded(approver.approve(request, cx.clone()))
        .await
        .map_err(|stop| {
            let (code, what) = match stop {
                Stopped::Cancelled => (Code::Cancelled, "the run was cancelled"),
                Stopped::Deadline => (Code::ApprovalExpired, "the run's deadline passed"),
            };
            Failure::new(
                code,
                format!(
                    "{what} while the call awaited approval (reference {})",
                    call.id
                ),
            )
            .with_detail(format!(
                "{what} before the approver decided on request {}",
                call.id
            ))
        })?;
    match decision {
        Approval::Approved => Ok(()),
        Approval::Denied(reason) => Err(Failure::new(
            Code::ApprovalDenied,
            format!(
                "the call to `{}` was not approved (reference {})",
                info.name, call.id
            ),
        )
        .with_detail(reason)),
        Approval::Expired => Err(Failure::new(
            Code::ApprovalExpired,
            format!(
                "the approval for `{}` expired (reference {})",
                info.name, call.id
            ),
        )
        .with_detail(format!(
            "the approval window of request {} closed without a decision",
            call.id
        ))),
    }
}
