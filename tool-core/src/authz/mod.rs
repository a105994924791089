//! Authorization: may this principal make this call.
//!
//! A policy ([`Authorize`]) sees one [`Request`]: the tool, the trusted
//! [`Context`], the call's validated arguments and the [resource](crate::contract::ResourceRef)
//! it acts on. It answers a [`Decision`], at once or after a wait (a grant table, a policy
//! service); the wait is bounded by the run's deadline and cancellation like every other stage.
//! Any `Fn(&ToolInfo, &Context) -> Result<(), Denied>` closure is a policy that answers at
//! once.
//!
//! # Order
//!
//! Every policy that applies to a call must allow it. They are asked one after the other, in
//! this order, and the first refusal ends the call as `unauthorized` (the later ones are not
//! asked):
//!
//! 1. the runtime-wide policies, in the order of their
//!    [`RuntimeBuilder::authorize`](crate::runtime::RuntimeBuilder::authorize) calls (each call
//!    adds one; none replaces another);
//! 2. the policies of the context's [tenant](crate::Context::tenant), in the order of their
//!    [`RuntimeBuilder::authorize_tenant`](crate::runtime::RuntimeBuilder::authorize_tenant)
//!    calls;
//! 3. the tool's own checks on its typed arguments
//!    ([`ToolDef::authorize`](crate::ToolDef::authorize)), in the order they were added.
//!
//! A policy that panics refuses the call; a run cancelled while a policy decides ends as
//! `cancelled`, and one whose deadline passes ends as `timeout`. Either way nothing runs.
//!
//! # What a principal is shown
//!
//! A policy may also say, before any call, whether a tool is [shown](Visibility) to a
//! principal at all ([`Authorize::visible`]). The tool lists given to a model
//! ([`Runtime::visible_tools`](crate::Runtime::visible_tools), used by agents and the MCP
//! server's `tools/list`) leave out the tools the runtime-wide or tenant policies hide. Hiding
//! is advice for the listing only: a call to a hidden tool is still decided by
//! [`Authorize::decide`]. A policy that cannot tell without the call's arguments shows the tool
//! (the default), so nothing it might allow is hidden.
//!
//! [`all`] and [`any`] combine policies into one; [`named`] gives a policy an id that the
//! decision carries, so the audit trail and the failure's detail say which rule decided.
//!
//! ```
//! use tool_core::authz::{self, Decision, DecisionFuture, Request};
//! use tool_core::{Context, Denied, Registry, Runtime, registry::ToolInfo};
//!
//! /// Reads a grant table (a database in a real application).
//! struct Grants;
//!
//! impl authz::Authorize for Grants {
//!     fn decide<'a>(&'a self, request: &'a Request<'a>) -> DecisionFuture<'a> {
//!         DecisionFuture::new(async move {
//!             let granted = request.context().principal() == "alice";
//!             if granted {
//!                 Decision::allow_by(["grants"])
//!             } else {
//!                 Decision::deny(Denied::new("no grant").with_policy_ids(["grants"]))
//!             }
//!         })
//!     }
//! }
//!
//! let runtime = Runtime::builder(Registry::new())
//!     .authorize(|_: &ToolInfo, cx: &Context| match cx.tenant() {
//!         Some(_) => Ok(()),
//!         None => Err(Denied::new("no tenant")),
//!     })
//!     .authorize(Grants)
//!     .authorize_tenant("acme", authz::any([authz::named("admins", |_: &ToolInfo, cx: &Context| {
//!         if cx.principal() == "root" { Ok(()) } else { Err(Denied::new("not an admin")) }
//!     })]))
//!     .build();
//! # let _ = runtime;
//! ```

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::context::Context;
use crate::contract::Arguments;
pub use crate::contract::ResourceRef;
use crate::outcome::Denied;
use crate::registry::ToolInfo;
use crate::registry::def::Effect;

/// One call as a policy sees it: validated, not yet approved or run.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    tool: &'a ToolInfo,
    cx: &'a Context,
    arguments: Arguments<'a>,
    resource: Option<&'a ResourceRef>,
}

impl<'a> Request<'a> {
    /// A request for `tool` in `cx` with these (validated) arguments; the runtime makes them,
    /// and tests and benchmarks of a policy may too.
    pub fn new(
        tool: &'a ToolInfo,
        cx: &'a Context,
        arguments: Arguments<'a>,
        resource: Option<&'a ResourceRef>,
    ) -> Self {
        Request {
            tool,
            cx,
            arguments,
            resource,
        }
    }

    /// The tool called.
    pub fn tool(&self) -> &'a ToolInfo {
        self.tool
    }

    /// The trusted context: principal, tenant, the application's values.
    pub fn context(&self) -> &'a Context {
        self.cx
    }

    /// The call's arguments as they arrived, already checked against the tool's contract.
    pub fn arguments(&self) -> Arguments<'a> {
        self.arguments
    }

    /// The call's arguments as a JSON value (parsed again from the validated text, or a copy
    /// of the value they arrived as).
    pub fn arguments_json(&self) -> Value {
        self.arguments.to_value()
    }

    /// What the call acts on, when the tool names it (`#[tool(resource = "...")]`).
    pub fn resource(&self) -> Option<&'a ResourceRef> {
        self.resource
    }

    /// The tool's declared effect.
    pub fn effect(&self) -> Effect {
        self.tool.effect()
    }

    /// The same request, owning what it holds, for a policy that sends it elsewhere.
    pub fn to_owned_request(&self) -> OwnedRequest {
        OwnedRequest {
            tool: Arc::clone(&self.tool.name),
            effect: self.tool.effect(),
            context: self.cx.clone(),
            arguments: self.arguments_json(),
            resource: self.resource.cloned(),
        }
    }
}

/// A [`Request`] owning its parts, handed to [`from_async`] policies.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OwnedRequest {
    /// The tool's name.
    pub tool: Arc<str>,
    /// The tool's declared effect.
    pub effect: Effect,
    /// The trusted context.
    pub context: Context,
    /// The validated arguments.
    pub arguments: Value,
    /// What the call acts on, when the tool names it.
    pub resource: Option<ResourceRef>,
}

/// A policy's answer: allow, or a refusal; either names the rules that decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The call may proceed.
    Allow {
        /// The ids of the rules that allowed it (empty when the policy names none).
        policy_ids: Vec<String>,
    },
    /// The call is refused: the refusal's message for the model, its detail for the operator,
    /// its [`policy_ids`](Denied::policy_ids) for the audit trail.
    Deny(Denied),
}

impl Decision {
    /// Allow, naming no rule.
    pub fn allow() -> Self {
        Decision::Allow {
            policy_ids: Vec::new(),
        }
    }

    /// Allow, by the rules `ids`.
    pub fn allow_by<I, S>(ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Decision::Allow {
            policy_ids: ids.into_iter().map(Into::into).collect(),
        }
    }

    /// Refuse.
    pub fn deny(denied: Denied) -> Self {
        Decision::Deny(denied)
    }

    /// Whether the call may proceed.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Decision::Allow { .. })
    }

    /// The ids of the rules that decided.
    pub fn policy_ids(&self) -> &[String] {
        match self {
            Decision::Allow { policy_ids } => policy_ids,
            Decision::Deny(denied) => denied.policy_ids(),
        }
    }
}

impl From<Result<(), Denied>> for Decision {
    fn from(result: Result<(), Denied>) -> Self {
        match result {
            Ok(()) => Decision::allow(),
            Err(denied) => Decision::Deny(denied),
        }
    }
}

/// The future a policy returns: ready at once (no allocation) or a boxed wait.
#[must_use = "a decision does nothing unless awaited"]
pub struct DecisionFuture<'a>(Inner<'a>);

enum Inner<'a> {
    Ready(Option<Decision>),
    Pending(BoxFuture<'a, Decision>),
}

impl<'a> DecisionFuture<'a> {
    /// A decision made already.
    pub fn ready(decision: Decision) -> Self {
        DecisionFuture(Inner::Ready(Some(decision)))
    }

    /// A decision that needs a wait.
    pub fn new(future: impl Future<Output = Decision> + Send + 'a) -> Self {
        DecisionFuture(Inner::Pending(Box::pin(future)))
    }

    /// The decision when it was made already, else the wait.
    pub(crate) fn now(self) -> Result<Decision, Self> {
        match self.0 {
            Inner::Ready(Some(decision)) => Ok(decision),
            inner => Err(DecisionFuture(inner)),
        }
    }
}

impl Future for DecisionFuture<'_> {
    type Output = Decision;

    fn poll(self: Pin<&mut Self>, task: &mut TaskContext<'_>) -> Poll<Decision> {
        match &mut self.get_mut().0 {
            Inner::Ready(decision) => match decision.take() {
                Some(decision) => Poll::Ready(decision),
                None => Poll::Ready(Decision::Deny(Denied::new(
                    "the policy's decision was awaited twice",
                ))),
            },
            Inner::Pending(future) => future.as_mut().poll(task),
        }
    }
}

impl std::fmt::Debug for DecisionFuture<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Inner::Ready(decision) => f.debug_tuple("Ready").field(decision).finish(),
            Inner::Pending(_) => f.write_str("Pending"),
        }
    }
}

/// Whether a tool is listed for a principal; see [`Authorize::visible`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Visibility {
    /// The tool is listed.
    Shown,
    /// The tool is left out of the lists given to the model and to MCP clients.
    Hidden,
}

impl Visibility {
    /// Whether the tool is listed.
    pub fn is_shown(self) -> bool {
        self == Visibility::Shown
    }
}

/// An authorization policy, consulted for every valid call before any approval or execution.
/// Any `Fn(&ToolInfo, &Context) -> Result<(), Denied>` closure is one; [`from_async`] makes one
/// of an async closure. See the [module docs](self) for the order policies are asked in.
///
/// A policy sees the tool, the trusted [`Context`], the validated arguments and the resource,
/// never the model's text.
pub trait Authorize: Send + Sync + 'static {
    /// Decides on one call. A refusal ends it as `unauthorized`, and so does a panic.
    fn decide<'a>(&'a self, request: &'a Request<'a>) -> DecisionFuture<'a>;

    /// Whether `tool` is listed for the principal of `cx`, before any call and without
    /// arguments. Answer [`Visibility::Hidden`] only when every call of the tool in `cx` would
    /// be refused; the default shows every tool. A closure policy, which sees no arguments,
    /// hides the tools it refuses (so it is also called each time tools are listed, once per
    /// tool). A policy that panics here hides the tool.
    fn visible(&self, tool: &ToolInfo, cx: &Context) -> Visibility {
        let _ = (tool, cx);
        Visibility::Shown
    }
}

impl<F> Authorize for F
where
    F: Fn(&ToolInfo, &Context) -> Result<(), Denied> + Send + Sync + 'static,
{
    fn decide<'a>(&'a self, request: &'a Request<'a>) -> DecisionFuture<'a> {
        DecisionFuture::ready(self(request.tool, request.cx).into())
    }

    fn visible(&self, tool: &ToolInfo, cx: &Context) -> Visibility {
        match self(tool, cx) {
            Ok(()) => Visibility::Shown,
            Err(_) => Visibility::Hidden,
        }
    }
}

impl Authorize for Box<dyn Authorize> {
    fn decide<'a>(&'a self, request: &'a Request<'a>) -> DecisionFuture<'a> {
        (**self).decide(request)
    }

    fn visible(&self, tool: &ToolInfo, cx: &Context) -> Visibility {
        (**self).visible(tool, cx)
    }
}

impl Authorize for Arc<dyn Authorize> {
    fn decide<'a>(&'a self, request: &'a Request<'a>) -> DecisionFuture<'a> {
        (**self).decide(request)
    }

    fn visible(&self, tool: &ToolInfo, cx: &Context) -> Visibility {
        (**self).visible(tool, cx)
    }
}

/// Boxes a policy, to put policies of different types in one [`all`] or [`any`].
pub fn boxed(policy: impl Authorize) -> Box<dyn Authorize> {
    Box::new(policy)
}

/// A policy of an async closure over an [`OwnedRequest`]; see [`from_async`].
pub struct FromAsync<F>(F);

/// A policy of an async closure: `authz::from_async(|request| async move { ... })`, the
/// closure taking an [`OwnedRequest`] and its future answering a [`Decision`].
pub fn from_async<F, Fut>(policy: F) -> FromAsync<F>
where
    F: Fn(OwnedRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Decision> + Send + 'static,
{
    FromAsync(policy)
}

impl<F, Fut> Authorize for FromAsync<F>
where
    F: Fn(OwnedRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Decision> + Send + 'static,
{
    fn decide<'a>(&'a self, request: &'a Request<'a>) -> DecisionFuture<'a> {
        DecisionFuture::new((self.0)(request.to_owned_request()))
    }
}

impl<F> std::fmt::Debug for FromAsync<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FromAsync")
    }
}

/// A policy with an id: a decision that names no rule names this one.
pub struct Named<P> {
    id: String,
    policy: P,
}

/// Gives `policy` the id `id`, carried by its decisions that name no rule of their own.
pub fn named<P: Authorize>(id: impl Into<String>, policy: P) -> Named<P> {
    Named {
        id: id.into(),
        policy,
    }
}

impl<P: Authorize> Authorize for Named<P> {
    fn decide<'a>(&'a self, request: &'a Request<'a>) -> DecisionFuture<'a> {
        let decision = self.policy.decide(request);
        let id = &self.id;
        let name = |decision: Decision| match decision {
            Decision::Allow { policy_ids } if policy_ids.is_empty() => Decision::Allow {
                policy_ids: vec![id.clone()],
            },
            Decision::Deny(denied) if denied.policy_ids().is_empty() => {
                Decision::Deny(denied.with_policy_ids([id.clone()]))
            }
            other => other,
        };
        match decision.0 {
            Inner::Ready(Some(decision)) => DecisionFuture::ready(name(decision)),
            _ => DecisionFuture::new(async move { name(decision.await) }),
        }
    }

    fn visible(&self, tool: &ToolInfo, cx: &Context) -> Visibility {
        self.policy.visible(tool, cx)
    }
}

impl<P> std::fmt::Debug for Named<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Named").field("id", &self.id).finish()
    }
}

/// Policies that must all allow; see [`all`].
pub struct All<P>(Vec<P>);

/// Policies that must all allow, asked in order; the first refusal is the decision (the rest
/// are not asked). An allow names the rules of every policy. No policies at all allow.
///
/// A tool is [hidden](Authorize::visible) when any of the policies hides it.
pub fn all<P: Authorize>(policies: impl IntoIterator<Item = P>) -> All<P> {
    All(policies.into_iter().collect())
}

impl<P: Authorize> Authorize for All<P> {
    fn decide<'a>(&'a self, request: &'a Request<'a>) -> DecisionFuture<'a> {
        let mut ids = Vec::new();
        let mut order = self.0.iter();
        while let Some(policy) = order.next() {
            let decision = match policy.decide(request).now() {
                Ok(decision) => decision,
                // From the first policy that waits on, the rest is asked in a future.
                Err(wait) => {
                    return DecisionFuture::new(async move {
                        let mut decision = wait.await;
                        loop {
                            match decision {
                                Decision::Allow { policy_ids } => ids.extend(policy_ids),
                                deny @ Decision::Deny(_) => return deny,
                            }
                            let Some(policy) = order.next() else {
                                return Decision::Allow { policy_ids: ids };
                            };
                            decision = policy.decide(request).await;
                        }
                    });
                }
            };
            match decision {
                Decision::Allow { policy_ids } => ids.extend(policy_ids),
                deny @ Decision::Deny(_) => return DecisionFuture::ready(deny),
            }
        }
        DecisionFuture::ready(Decision::Allow { policy_ids: ids })
    }

    fn visible(&self, tool: &ToolInfo, cx: &Context) -> Visibility {
        if self.0.iter().all(|p| p.visible(tool, cx).is_shown()) {
            Visibility::Shown
        } else {
            Visibility::Hidden
        }
    }
}

/// The refusals of an [`any`]'s policies so far.
#[derive(Default)]
struct Refusals {
    details: Vec<String>,
    ids: Vec<String>,
    message: Option<String>,
}

impl Refusals {
    fn push(&mut self, denied: &Denied) {
        self.details.push(denied.detail().to_owned());
        self.ids.extend(denied.policy_ids().iter().cloned());
        if self.message.is_none() {
            self.message = denied.message().map(str::to_owned);
        }
    }

    /// The refusal when every policy refused: their details and rule ids joined, the first
    /// model-facing message.
    fn decision(self) -> Decision {
        let detail = if self.details.is_empty() {
            "no policy of an `any` allowed the call (it has none)".to_owned()
        } else {
            self.details.join("; ")
        };
        let mut denied = Denied::new(detail).with_policy_ids(self.ids);
        if let Some(message) = self.message {
            denied = denied.with_message(message);
        }
        Decision::Deny(denied)
    }
}

impl<P> std::fmt::Debug for All<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("All").field(&self.0.len()).finish()
    }
}

/// Policies of which one must allow; see [`any`].
pub struct Any<P>(Vec<P>);

/// Policies of which one must allow, asked in order; the first allow is the decision (the
/// rest are not asked). When all refuse, the refusal joins their details and rule ids and
/// keeps the first model-facing message. No policies at all refuse.
///
/// A tool is [hidden](Authorize::visible) when every policy hides it (so also when there are
/// none, as every call would be refused).
pub fn any<P: Authorize>(policies: impl IntoIterator<Item = P>) -> Any<P> {
    Any(policies.into_iter().collect())
}

impl<P: Authorize> Authorize for Any<P> {
    fn decide<'a>(&'a self, request: &'a Request<'a>) -> DecisionFuture<'a> {
        let mut refusals = Refusals::default();
        let mut order = self.0.iter();
        while let Some(policy) = order.next() {
            match policy.decide(request).now() {
                Ok(allow @ Decision::Allow { .. }) => return DecisionFuture::ready(allow),
                Ok(Decision::Deny(denied)) => refusals.push(&denied),
                // From the first policy that waits on, the rest is asked in a future.
                Err(wait) => {
                    return DecisionFuture::new(async move {
                        let mut decision = wait.await;
                        loop {
                            match decision {
                                allow @ Decision::Allow { .. } => return allow,
                                Decision::Deny(denied) => refusals.push(&denied),
                            }
                            let Some(policy) = order.next() else {
                                return refusals.decision();
                            };
                            decision = policy.decide(request).await;
                        }
                    });
                }
            }
        }
        DecisionFuture::ready(refusals.decision())
    }

    fn visible(&self, tool: &ToolInfo, cx: &Context) -> Visibility {
        if self.0.iter().any(|p| p.visible(tool, cx).is_shown()) {
            Visibility::Shown
        } else {
            Visibility::Hidden
        }
    }
}

impl<P> std::fmt::Debug for Any<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Any").field(&self.0.len()).finish()
    }
}

/// Asks one policy, a panic while deciding turned into a refusal.
pub(crate) async fn ask(policy: &dyn Authorize, request: &Request<'_>, whose: &str) -> Decision {
    match ask_now(policy, request, whose) {
        Ok(decision) => decision,
        Err(wait) => waited(wait, whose).await,
    }
}

/// Asks one policy, a panic counting as a refusal: its decision if it made one at once, else
/// the wait for it.
pub(crate) fn ask_now<'r>(
    policy: &'r dyn Authorize,
    request: &'r Request<'r>,
    whose: &str,
) -> Result<Decision, DecisionFuture<'r>> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| policy.decide(request))) {
        Ok(future) => future.now(),
        Err(payload) => Ok(panicked(whose, &*payload)),
    }
}

/// Waits for a policy's decision, a panic while polling counting as a refusal.
pub(crate) async fn waited(wait: DecisionFuture<'_>, whose: &str) -> Decision {
    AssertUnwindSafe(wait)
        .catch_unwind()
        .await
        .unwrap_or_else(|payload| panicked(whose, &*payload))
}

#[cold]
fn panicked(whose: &str, payload: &(dyn std::any::Any + Send)) -> Decision {
    Decision::Deny(Denied::new(format!(
        "{whose} authorization policy panicked: {}",
        crate::registry::kind::panic_text(payload)
    )))
}

/// Asks one policy whether `tool` is listed in `cx`, a panic counting as hidden.
pub(crate) fn shown(policy: &dyn Authorize, tool: &ToolInfo, cx: &Context) -> bool {
    std::panic::catch_unwind(AssertUnwindSafe(|| policy.visible(tool, cx)))
        .is_ok_and(Visibility::is_shown)
}

#[cfg(feature = "cedar")]
#[cfg_attr(docsrs, doc(cfg(feature = "cedar")))]
pub mod cedar;
