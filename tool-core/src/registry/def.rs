//! What a tool is before it is registered: its handler, its contract, its declared effect and
//! its limits ([`ToolDef`]), and what the registry then tells about it ([`ToolInfo`]).

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::RegistryError;
use super::kind::{AuthorizeFn, EffectFn, Entry, Erased, Typed};
use crate::context::Context;
use crate::outcome::Denied;
use crate::provenance::{Origin, Provenance};
use crate::{Tool, ToolOutput};

/// What a tool's handler does to the world. It decides what a stopped call means: stopping
/// read-only or idempotent work is a plain `timeout`/`cancelled`, stopping non-idempotent work
/// is `outcome_unknown` (it may have happened) and is never retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Effect {
    /// Reads only; safe to repeat.
    ReadOnly,
    /// Changes the world, but repeating it with the same arguments changes nothing more.
    Idempotent,
    /// Changes the world each time (sends, pays, creates). The default.
    #[default]
    NonIdempotent,
}

impl Effect {
    /// `"read_only"`, `"idempotent"` or `"non_idempotent"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Effect::ReadOnly => "read_only",
            Effect::Idempotent => "idempotent",
            Effect::NonIdempotent => "non_idempotent",
        }
    }

    /// The wider of two effects: non-idempotent over idempotent over read-only. What is
    /// safe for the wider effect is safe for both.
    pub const fn wider(self, other: Effect) -> Effect {
        match (self, other) {
            (Effect::NonIdempotent, _) | (_, Effect::NonIdempotent) => Effect::NonIdempotent,
            (Effect::Idempotent, _) | (_, Effect::Idempotent) => Effect::Idempotent,
            (Effect::ReadOnly, Effect::ReadOnly) => Effect::ReadOnly,
        }
    }
}

/// A handler error, with the two faces every failure has: a message the model may see and
/// detail for the operator.
///
/// Any `std::error::Error` converts into one with no public message (the model is told the
/// tool failed and given a reference; the error text goes to the operator), so handlers can
/// use `?` on their own errors. Use [`ToolError::public`] for a message meant for the model.
///
/// The detail may quote the arguments: it becomes the failure's
/// [`detail`](crate::Failure::detail), and the runtime logs it only at `DEBUG`. The `WARN`
/// line of a failed call carries its code, tool, call id and runtime id, never the detail.
pub struct ToolError {
    message: Option<String>,
    detail: Option<String>,
    /// The code the call ends with, when not `execution_failed`.
    code: Option<crate::outcome::Code>,
}

impl ToolError {
    /// An error whose `message` the model is shown, e.g. "no customer with that id". Keep it
    /// free of internals.
    pub fn public(message: impl Into<String>) -> Self {
        ToolError {
            message: Some(message.into()),
            detail: None,
            code: None,
        }
    }

    /// An error for the operator only; the model is told the tool failed.
    pub fn internal(detail: impl fmt::Display) -> Self {
        ToolError {
            message: None,
            detail: Some(detail.to_string()),
            code: None,
        }
    }

    /// Adds operator detail to a public error (logged only at `DEBUG`, see above).
    pub fn with_detail(mut self, detail: impl fmt::Display) -> Self {
        self.detail = Some(detail.to_string());
        self
    }

    /// The public message, if any.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// The operator detail, if any.
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// The code the call ends with: `execution_failed`, unless the error came from a
    /// sandboxed run (the `sandbox` feature's `SandboxError`), which keeps its own.
    pub fn code(&self) -> crate::outcome::Code {
        self.code.unwrap_or(crate::outcome::Code::ExecutionFailed)
    }
}

#[cfg(feature = "sandbox")]
impl From<crate::sandbox::SandboxError> for ToolError {
    /// An error that ends the call with the sandbox's code and message.
    fn from(error: crate::sandbox::SandboxError) -> Self {
        ToolError {
            message: Some(error.message().to_owned()),
            detail: error.detail().map(str::to_owned),
            code: Some(error.code()),
        }
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for ToolError {
    fn from(error: E) -> Self {
        ToolError::internal(error)
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolError")
            .field("message", &self.message)
            .field("detail", &self.detail)
            .field("code", &self.code)
            .finish()
    }
}

/// A tool handler: an `async fn(Args, &Context) -> Result<Out, E>`.
///
/// Implemented for every function (or closure) of that shape whose future is `Send`; there is
/// no need to implement it by hand.
pub trait Handler<'a, A, O, E>: Send + Sync + 'static {
    /// The future the handler returns.
    type Future: Future<Output = Result<O, E>> + Send + 'a;

    /// Runs the handler.
    fn call(&self, args: A, cx: &'a Context) -> Self::Future;
}

impl<'a, F, Fut, A, O, E> Handler<'a, A, O, E> for F
where
    F: Fn(A, &'a Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, E>> + Send + 'a,
{
    type Future = Fut;

    fn call(&self, args: A, cx: &'a Context) -> Fut {
        self(args, cx)
    }
}

/// What the registry knows about a tool: its contract and its settings.
#[derive(Debug, Clone)]
pub struct ToolInfo {
    pub(crate) name: Arc<str>,
    pub(crate) description: String,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Option<Value>,
    pub(crate) settings: Settings,
    /// The entity type its calls act on (`#[tool(resource = "...")]`), and whether a call may
    /// name none.
    pub(crate) resource: Option<(&'static str, bool)>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    pub(crate) effect: Effect,
    pub(crate) requires_approval: bool,
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_concurrency: Option<usize>,
    pub(crate) max_calls: Option<u64>,
    pub(crate) max_input_bytes: Option<usize>,
    pub(crate) max_output_bytes: Option<usize>,
    pub(crate) origin: Origin,
    pub(crate) untrusted_output: bool,
    #[cfg(feature = "sandbox")]
    pub(crate) authority: Option<Arc<crate::sandbox::Authority>>,
}

impl ToolInfo {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the tool does, for the model.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The JSON Schema the arguments are checked against.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The entity type its calls act on, when one of its fields names it
    /// (`#[tool(resource = "...")]`); see [`Tool::resource`](crate::Tool::resource).
    pub fn resource_kind(&self) -> Option<&'static str> {
        self.resource.map(|(kind, _)| kind)
    }

    /// The JSON Schema the output is checked against, when the tool has one.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    /// The declared effect: for a tool whose calls' effects depend on their arguments
    /// ([`ToolDef::effect_from`]), the widest of them.
    pub fn effect(&self) -> Effect {
        self.settings.effect
    }

    /// Whether each call must be approved before it runs.
    pub fn requires_approval(&self) -> bool {
        self.settings.requires_approval
    }

    /// The tool's own timeout, if set (else the runtime's applies).
    pub fn timeout(&self) -> Option<Duration> {
        self.settings.timeout
    }

    /// Who writes the tool's outputs (see [`provenance`](crate::provenance)).
    pub fn origin(&self) -> &Origin {
        &self.settings.origin
    }

    /// Whether the application trusts the tool's outputs (see
    /// [`provenance`](crate::provenance)).
    pub fn trusted_output(&self) -> bool {
        !self.settings.untrusted_output
    }

    /// The authority the tool's programs run with, if it declares one (see
    /// [`sandbox`](crate::sandbox)).
    #[cfg(feature = "sandbox")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sandbox")))]
    pub fn authority(&self) -> Option<&crate::sandbox::Authority> {
        self.settings.authority.as_deref()
    }

    /// The provenance of the tool's outputs and of its own errors' messages.
    pub fn provenance(&self) -> Provenance {
        Provenance {
            origin: self.settings.origin.clone(),
            trusted: !self.settings.untrusted_output,
        }
    }
}

type Build<A> = Box<
    dyn FnOnce(
            ToolInfo,
            Vec<AuthorizeFn<A>>,
            Option<EffectFn<A>>,
        ) -> Result<Box<dyn Erased>, RegistryError>
        + Send,
>;

/// A tool ready to register: the handler, its contract and its policy settings.
///
/// ```
/// use std::time::Duration;
/// use tool_core::{Argument, Context, Denied, Effect, Registry, Tool, ToolDef, registry::ToolError};
///
/// /// Refunds a payment.
/// #[derive(Tool, Debug)]
/// struct Refund {
///     payment_id: String,
///     #[tool(range(exclusive_min = 0.0))]
///     amount: f64,
/// }
///
/// #[derive(Argument, serde::Serialize)]
/// struct Receipt {
///     refund_id: String,
/// }
///
/// async fn refund(args: Refund, _cx: &Context) -> Result<Receipt, ToolError> {
///     Ok(Receipt { refund_id: format!("re_{}", args.payment_id) })
/// }
///
/// let mut registry = Registry::new();
/// registry
///     .register(
///         ToolDef::new(refund)
///             .effect(Effect::NonIdempotent)
///             .timeout(Duration::from_secs(10))
///             .authorize(|args: &Refund, cx: &Context| {
///                 if args.amount > 500.0 && cx.get::<Manager>().is_none() {
///                     return Err(Denied::new("refund over 500 without a manager")
///                         .with_message("refunds over 500 need a manager"));
///                 }
///                 Ok(())
///             }),
///     )
///     .unwrap();
/// # struct Manager;
/// assert_eq!(registry.get("refund").unwrap().effect(), Effect::NonIdempotent);
/// ```
pub struct ToolDef<A> {
    pub(super) info: ToolInfo,
    pub(super) authorize: Vec<AuthorizeFn<A>>,
    pub(super) effect_of: Option<EffectFn<A>>,
    pub(super) build: Build<A>,
}

impl<A: Tool + Send + 'static> ToolDef<A> {
    /// A tool from its handler. Name, description and input schema come from `A`'s
    /// `#[derive(Tool)]`; the output schema from `O`, and every output is checked against it.
    pub fn new<O, E, H>(handler: H) -> Self
    where
        H: for<'a> Handler<'a, A, O, E>,
        O: ToolOutput + Send + 'static,
        E: Into<ToolError> + 'static,
    {
        let info = ToolInfo {
            name: Arc::from(A::NAME),
            description: A::description().to_owned(),
            input_schema: A::input_schema().clone(),
            output_schema: Some(crate::contract::schema::root_schema::<O>()),
            settings: Settings::default(),
            resource: A::RESOURCE.map(|kind| (kind, A::RESOURCE_OPTIONAL)),
        };
        ToolDef {
            info,
            authorize: Vec::new(),
            effect_of: None,
            build: Box::new(move |info, authorize, effect| {
                if let Some(reason) = A::contract_errors().first() {
                    return Err(super::RegistryError::InvalidContract {
                        tool: info.name.to_string(),
                        reason: reason.clone(),
                    });
                }
                let kind = Typed::new(handler);
                Ok(Box::new(Entry {
                    info,
                    kind,
                    authorize,
                    effect,
                }))
            }),
        }
    }
}

impl ToolDef<Value> {
    /// A tool defined by a JSON Schema document rather than a Rust type (discovered over MCP,
    /// loaded from configuration). Its arguments are checked with the `jsonschema` crate; the
    /// schema is compiled when the tool is registered.
    pub fn dynamic<E, H>(tool: crate::registry::DynamicTool, handler: H) -> Self
    where
        H: for<'a> Handler<'a, Value, Value, E>,
        E: Into<ToolError> + 'static,
    {
        let info = ToolInfo {
            name: Arc::from(tool.name.as_str()),
            description: tool.description.clone(),
            input_schema: tool.input_schema.clone(),
            output_schema: tool.output_schema.clone(),
            settings: Settings::default(),
            resource: None,
        };
        ToolDef {
            info,
            authorize: Vec::new(),
            effect_of: None,
            build: Box::new(move |info, authorize, effect| {
                let kind = super::dynamic::Dynamic::compile(&tool, handler)?;
                Ok(Box::new(Entry {
                    info,
                    kind,
                    authorize,
                    effect,
                }))
            }),
        }
    }
}

impl<A> ToolDef<A> {
    /// Declares the handler's effect (default [`Effect::NonIdempotent`]). With
    /// [`effect_from`](Self::effect_from), the widest effect a call may have.
    pub fn effect(mut self, effect: Effect) -> Self {
        self.info.settings.effect = effect;
        self
    }

    /// Decides each call's effect from its validated arguments, for a tool whose effect depends
    /// on them (a SQL tool that reads or writes, a file tool that lists or deletes). Replaces an
    /// earlier one.
    ///
    /// The call's effect then decides what stopping it means (a read-only call that times out
    /// is a plain `timeout`, safe to retry; a non-idempotent one is `outcome_unknown`) and how
    /// a [ledger](crate::ledger) treats it if its process dies mid-call. What the tool
    /// advertises ([`ToolInfo::effect`], the MCP annotations) stays the declared
    /// [`effect`](Self::effect), so declare the widest this function returns; the default,
    /// [`Effect::NonIdempotent`], is the widest of all.
    ///
    /// ```
    /// # use tool_core::{Context, Effect, Registry, Tool, ToolDef, registry::ToolError};
    /// /// Runs one SQL statement.
    /// #[derive(Tool, Debug)]
    /// struct RunSql {
    ///     /// `read` for a query, `write` for a statement that changes rows.
    ///     mode: Mode,
    ///     sql: String,
    /// }
    ///
    /// #[derive(tool_core::Argument, Debug, PartialEq)]
    /// #[serde(rename_all = "snake_case")]
    /// enum Mode { Read, Write }
    ///
    /// async fn run_sql(args: RunSql, _cx: &Context) -> Result<u64, ToolError> {
    ///     Ok(0)
    /// }
    ///
    /// let mut registry = Registry::new();
    /// registry
    ///     .register(ToolDef::new(run_sql).effect_from(|args: &RunSql| match args.mode {
    ///         // The handler runs reads in a read-only transaction, so this holds.
    ///         Mode::Read => Effect::ReadOnly,
    ///         Mode::Write => Effect::NonIdempotent,
    ///     }))
    ///     .unwrap();
    /// // Advertised as the widest: a write.
    /// assert_eq!(registry.get("run_sql").unwrap().effect(), Effect::NonIdempotent);
    /// ```
    ///
    /// The function sees arguments that passed validation and authorization, once per call,
    /// before approval; it should be cheap. If it panics, the call ends as `execution_failed`
    /// without running (nothing is claimed in a ledger). Make the handler enforce what it says
    /// (run a "read" in a read-only transaction), since a stopped call is treated as having
    /// had this effect.
    pub fn effect_from<F>(mut self, effect_of: F) -> Self
    where
        F: Fn(&A) -> Effect + Send + Sync + 'static,
    {
        self.effect_of = Some(Box::new(effect_of));
        self
    }

    /// Who writes the tool's outputs (default [`Origin::Local`]); the MCP client sets
    /// [`Origin::Mcp`] on the tools it imports.
    pub fn origin(mut self, origin: Origin) -> Self {
        self.info.settings.origin = origin;
        self
    }

    /// Whether the application trusts the tool's outputs (default `true`; `false` for tools
    /// imported from an MCP server unless the import trusts them). An untrusted output is
    /// sent to the model marked as data, not instructions (see [`provenance`](crate::provenance)).
    pub fn trusted_output(mut self, trusted: bool) -> Self {
        self.info.settings.untrusted_output = !trusted;
        self
    }

    /// Every call must be approved by the runtime's [`Approver`](crate::runtime::Approver) first.
    pub fn requires_approval(mut self) -> Self {
        self.info.settings.requires_approval = true;
        self
    }

    /// A tool-specific authorization check on the typed arguments, run after the runtime's
    /// policies (see [the order](crate::authz#order)). Each call adds a check; all must allow,
    /// in the order they were added. A check that panics refuses the call as `unauthorized`.
    pub fn authorize<F>(mut self, check: F) -> Self
    where
        F: Fn(&A, &Context) -> Result<(), Denied> + Send + Sync + 'static,
    {
        self.authorize.push(Box::new(check));
        self
    }

    /// How long one call may run (overrides the runtime's default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.info.settings.timeout = Some(timeout);
        self
    }

    /// At most `limit` calls of this tool run at once; others wait their turn. A limit of 0
    /// is taken as 1.
    pub fn max_concurrency(mut self, limit: usize) -> Self {
        self.info.settings.max_concurrency = Some(limit);
        self
    }

    /// At most `limit` calls of this tool run over the runtime's life; later ones end as
    /// `budget_exhausted`. See [Budgets](crate::runtime#budgets).
    pub fn max_calls(mut self, limit: u64) -> Self {
        self.info.settings.max_calls = Some(limit);
        self
    }

    /// Arguments longer than `bytes` (as JSON text) end as `input_too_large` (overrides the
    /// runtime's default).
    pub fn max_input_bytes(mut self, bytes: usize) -> Self {
        self.info.settings.max_input_bytes = Some(bytes);
        self
    }

    /// Outputs longer than `bytes` (as JSON text) end as `output_too_large` (overrides the
    /// runtime's default).
    pub fn max_output_bytes(mut self, bytes: usize) -> Self {
        self.info.settings.max_output_bytes = Some(bytes);
        self
    }

    /// Declares what the tool's work may reach: the programs its handler runs with
    /// [`Context::run`](crate::Context::run) are confined to it by the kernel (see
    /// [`sandbox`](crate::sandbox)). The trusted context may narrow it per call, never widen
    /// it; its digest is bound into each call's ledger claim and audit record.
    #[cfg(feature = "sandbox")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sandbox")))]
    pub fn authority(mut self, authority: crate::sandbox::Authority) -> Self {
        self.info.settings.authority = Some(Arc::new(authority));
        self
    }

    /// The tool as it will be registered.
    pub fn info(&self) -> &ToolInfo {
        &self.info
    }
}

impl<A> fmt::Debug for ToolDef<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDef")
            .field("info", &self.info)
            .field("authorize", &self.authorize.len())
            .field("effect_from", &self.effect_of.is_some())
            .finish_non_exhaustive()
    }
}
