//! The decisions around a valid call: may this principal make it ([`Authorize`]), and does a
//! human or system sign it off ([`Approver`]).

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use crate::context::Context;
use crate::outcome::InvocationId;
use crate::registry::ToolInfo;

/// A runtime-wide authorization policy, consulted for every valid call before any approval or
/// execution. Any `Fn(&ToolInfo, &Context) -> Result<(), Denied>` closure is one.
///
/// It sees the tool and the trusted [`Context`], never the model's text. Decisions that need
/// the typed arguments belong on the tool ([`ToolDef::authorize`](crate::ToolDef::authorize)).
/// The check is synchronous: load what it needs (roles, grants) into the context first.
pub trait Authorize: Send + Sync + 'static {
    /// `Ok` lets the call proceed; `Err` ends it as `unauthorized`.
    fn authorize(&self, tool: &ToolInfo, cx: &Context) -> Result<(), Denied>;
}

impl<F> Authorize for F
where
    F: Fn(&ToolInfo, &Context) -> Result<(), Denied> + Send + Sync + 'static,
{
    fn authorize(&self, tool: &ToolInfo, cx: &Context) -> Result<(), Denied> {
        self(tool, cx)
    }
}

/// A refusal by an authorization policy.
///
/// The reason is for the operator's logs. The model is told only that the call is not
/// authorized, unless a message is set with [`with_message`](Self::with_message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    reason: String,
    message: Option<Cow<'static, str>>,
}

impl Denied {
    /// A refusal; `reason` goes to the operator's logs only.
    pub fn new(reason: impl Into<String>) -> Self {
        Denied {
            reason: reason.into(),
            message: None,
        }
    }

    /// A message the model may see instead of the generic one, e.g. "amounts over 10000
    /// need a manager"; never put policy internals here.
    pub fn with_message(mut self, message: impl Into<Cow<'static, str>>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// The operator-facing reason.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The model-facing message, if one was set.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }
}

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "denied: {}", self.reason)
    }
}

/// A call waiting for sign-off: the exact arguments that will run, already validated.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    pub(crate) id: InvocationId,
    pub(crate) call_id: String,
    pub(crate) tool: String,
    pub(crate) arguments: Value,
}

impl ApprovalRequest {
    /// The runtime's id of the call.
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
    /// Do not run it; the reason goes to the operator's logs.
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
