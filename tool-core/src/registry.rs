//! The registry: the allow-list of tools a model may call, each with its contract, its
//! handler and its policy settings.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::context::Context;
use crate::outcome::Failure;
use crate::policy::Denied;
use crate::contract::arguments::Arguments;
use crate::runtime::Shared;
use crate::{Argument, ArgumentErrors, Tool};

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
}

/// A handler error, with the two faces every failure has: a message the model may see and
/// detail for the operator.
///
/// Any `std::error::Error` converts into one with no public message (the model is told the
/// tool failed and given a reference; the error text goes to the operator), so handlers can
/// use `?` on their own errors. Use [`ToolError::public`] for a message meant for the model.
pub struct ToolError {
    message: Option<String>,
    detail: Option<String>,
}

impl ToolError {
    /// An error whose `message` the model is shown, e.g. "no customer with that id". Keep it
    /// free of internals.
    pub fn public(message: impl Into<String>) -> Self {
        ToolError {
            message: Some(message.into()),
            detail: None,
        }
    }

    /// An error for the operator only; the model is told the tool failed.
    pub fn internal(detail: impl fmt::Display) -> Self {
        ToolError {
            message: None,
            detail: Some(detail.to_string()),
        }
    }

    /// Adds operator detail to a public error.
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

    /// The JSON Schema the output is checked against, when the tool has one.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    /// The declared effect.
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
}

type AuthorizeFn<A> = Box<dyn Fn(&A, &Context) -> Result<(), Denied> + Send + Sync>;
type Build<A> = Box<
    dyn FnOnce(ToolInfo, Option<AuthorizeFn<A>>) -> Result<Box<dyn Erased>, RegistryError> + Send,
>;

/// A tool ready to register: the handler, its contract and its policy settings.
///
/// ```
/// use std::time::Duration;
/// use tool_core::{Argument, Context, Denied, Effect, Registry, Tool, ToolDef, ToolError};
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
    info: ToolInfo,
    authorize: Option<AuthorizeFn<A>>,
    build: Build<A>,
}

impl<A: Tool + Send + 'static> ToolDef<A> {
    /// A tool from its handler. Name, description and input schema come from `A`'s
    /// `#[derive(Tool)]`; the output schema from `O`, and every output is checked against it.
    pub fn new<O, E, H>(handler: H) -> Self
    where
        H: for<'a> Handler<'a, A, O, E>,
        O: Argument + Serialize + Send + 'static,
        E: Into<ToolError> + 'static,
    {
        let info = ToolInfo {
            name: Arc::from(A::NAME),
            description: A::description().to_owned(),
            input_schema: A::input_schema().clone(),
            output_schema: Some(crate::contract::schema::root_schema::<O>()),
            settings: Settings::default(),
        };
        ToolDef {
            info,
            authorize: None,
            build: Box::new(move |info, authorize| {
                let kind = Typed {
                    handler,
                    _marker: PhantomData,
                };
                Ok(Box::new(Entry {
                    info,
                    kind,
                    authorize,
                }))
            }),
        }
    }
}

impl ToolDef<Value> {
    /// A tool defined by a JSON Schema document rather than a Rust type (discovered over MCP,
    /// loaded from configuration). Its arguments are checked with the `jsonschema` crate; the
    /// schema is compiled when the tool is registered.
    pub fn dynamic<E, H>(tool: crate::DynamicTool, handler: H) -> Self
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
        };
        ToolDef {
            info,
            authorize: None,
            build: Box::new(move |info, authorize| {
                let kind = crate::dynamic::Dynamic::compile(&tool, handler)?;
                Ok(Box::new(Entry {
                    info,
                    kind,
                    authorize,
                }))
            }),
        }
    }
}

impl<A> ToolDef<A> {
    /// Declares the handler's effect (default [`Effect::NonIdempotent`]).
    pub fn effect(mut self, effect: Effect) -> Self {
        self.info.settings.effect = effect;
        self
    }

    /// Every call must be approved by the runtime's [`Approver`](crate::Approver) first.
    pub fn requires_approval(mut self) -> Self {
        self.info.settings.requires_approval = true;
        self
    }

    /// A tool-specific authorization check on the typed arguments, run after the runtime's
    /// policy. Replaces an earlier one.
    pub fn authorize<F>(mut self, check: F) -> Self
    where
        F: Fn(&A, &Context) -> Result<(), Denied> + Send + Sync + 'static,
    {
        self.authorize = Some(Box::new(check));
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
    /// `budget_exhausted`.
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

    /// The tool as it will be registered.
    pub fn info(&self) -> &ToolInfo {
        &self.info
    }
}

impl<A> fmt::Debug for ToolDef<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDef")
            .field("info", &self.info)
            .field("authorize", &self.authorize.is_some())
            .finish_non_exhaustive()
    }
}

/// A registration refused by [`Registry::register`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// A tool with this name is already registered.
    DuplicateName {
        /// The name.
        name: String,
    },
    /// The name is empty, too long or contains whitespace or control characters.
    InvalidName {
        /// The name.
        name: String,
    },
    /// A dynamic tool's schema does not compile.
    InvalidSchema {
        /// The tool.
        tool: String,
        /// `"input"` or `"output"`.
        which: &'static str,
        /// What the schema compiler said.
        reason: String,
    },
    /// A dynamic tool's schema declares a `$schema` dialect this crate does not validate.
    UnsupportedDialect {
        /// The tool.
        tool: String,
        /// The `$schema` value.
        dialect: String,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::DuplicateName { name } => {
                write!(f, "a tool named `{name}` is already registered")
            }
            RegistryError::InvalidName { name } => write!(
                f,
                "invalid tool name {name:?}: use 1 to 128 characters without whitespace or control characters"
            ),
            RegistryError::InvalidSchema {
                tool,
                which,
                reason,
            } => write!(
                f,
                "the {which} schema of `{tool}` does not compile: {reason}"
            ),
            RegistryError::UnsupportedDialect { tool, dialect } => write!(
                f,
                "the schema of `{tool}` declares $schema {dialect:?}; supported: Draft 4, 6, 7, 2019-09 and 2020-12 (the default when $schema is absent)"
            ),
        }
    }
}

impl std::error::Error for RegistryError {}

/// The allow-list: the only tools a model's call can reach, by exact name.
///
/// Build it once and share it (`Arc<Registry>`) between [`Runtime`](crate::Runtime)s.
#[derive(Default)]
pub struct Registry {
    index: HashMap<Arc<str>, usize, foldhash::fast::RandomState>,
    entries: Vec<Box<dyn Erased>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Adds a tool. Refused if the name is taken or invalid, or if a dynamic tool's schema
    /// does not compile.
    pub fn register<A>(&mut self, tool: ToolDef<A>) -> Result<&mut Self, RegistryError> {
        let name = Arc::clone(&tool.info.name);
        if name.is_empty()
            || name.len() > 128
            || name.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(RegistryError::InvalidName {
                name: name.to_string(),
            });
        }
        if self.index.contains_key(&name) {
            return Err(RegistryError::DuplicateName {
                name: name.to_string(),
            });
        }
        let entry = (tool.build)(tool.info, tool.authorize)?;
        self.index.insert(name, self.entries.len());
        self.entries.push(entry);
        Ok(self)
    }

    /// The tool registered under `name`.
    pub fn get(&self, name: &str) -> Option<&ToolInfo> {
        self.index(name).map(|index| self.entries[index].info())
    }

    /// The tools, in registration order.
    pub fn tools(&self) -> impl ExactSizeIterator<Item = &ToolInfo> + '_ {
        self.entries.iter().map(|entry| entry.info())
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn index(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    pub(crate) fn at(&self, index: usize) -> &dyn Erased {
        &*self.entries[index]
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.tools().map(ToolInfo::name))
            .finish()
    }
}

/// A registered tool with its type erased, as the runtime drives it.
pub(crate) trait Erased: Send + Sync + 'static {
    fn info(&self) -> &ToolInfo;

    /// The input stages only: byte cap and validation.
    fn check(&self, shared: &Shared, arguments: Arguments<'_>) -> Result<(), Failure>;

    fn run<'a>(
        &'a self,
        shared: &'a Shared,
        call: &'a crate::runtime::CallRef<'a>,
        arguments: Arguments<'a>,
        cx: &'a Context,
    ) -> futures_util::future::BoxFuture<'a, Result<crate::Output, Failure>>;
}

/// How one kind of tool parses, executes and checks output; the pipeline is generic over it.
pub(crate) trait Kind: Send + Sync + 'static {
    type Args: Send + 'static;
    type Out: Send + 'static;

    fn parse(&self, arguments: Arguments<'_>) -> Result<Self::Args, ArgumentErrors>;

    fn execute<'a>(
        &'a self,
        args: Self::Args,
        cx: &'a Context,
    ) -> impl Future<Output = Result<Self::Out, ToolError>> + Send + 'a;

    /// The output as JSON text of at most `limit` bytes, checked against the output schema.
    fn output(&self, out: Self::Out, limit: usize) -> Result<String, OutputError>;
}

pub(crate) enum OutputError {
    Serialize(serde_json::Error),
    TooLarge,
    Invalid(ArgumentErrors),
}

/// Serializes `value` as compact JSON of at most `limit` bytes.
pub(crate) fn to_text<T: Serialize + ?Sized>(
    value: &T,
    limit: usize,
) -> Result<String, OutputError> {
    let text = serde_json::to_string(value).map_err(OutputError::Serialize)?;
    if text.len() > limit {
        return Err(OutputError::TooLarge);
    }
    Ok(text)
}

pub(crate) struct Entry<K: Kind> {
    pub(crate) info: ToolInfo,
    pub(crate) kind: K,
    pub(crate) authorize: Option<AuthorizeFn<K::Args>>,
}

impl<K: Kind> Erased for Entry<K> {
    fn info(&self) -> &ToolInfo {
        &self.info
    }

    fn check(&self, shared: &Shared, arguments: Arguments<'_>) -> Result<(), Failure> {
        crate::runtime::check_input(self, shared, arguments).map(drop)
    }

    fn run<'a>(
        &'a self,
        shared: &'a Shared,
        call: &'a crate::runtime::CallRef<'a>,
        arguments: Arguments<'a>,
        cx: &'a Context,
    ) -> futures_util::future::BoxFuture<'a, Result<crate::Output, Failure>> {
        Box::pin(crate::runtime::pipeline(self, shared, call, arguments, cx))
    }
}

struct Typed<A, O, E, H> {
    handler: H,
    _marker: PhantomData<fn(A) -> (O, E)>,
}

impl<A, O, E, H> Kind for Typed<A, O, E, H>
where
    A: Tool + Send + 'static,
    O: Argument + Serialize + Send + 'static,
    E: Into<ToolError> + 'static,
    H: for<'a> Handler<'a, A, O, E>,
{
    type Args = A;
    type Out = O;

    fn parse(&self, arguments: Arguments<'_>) -> Result<A, ArgumentErrors> {
        match arguments {
            Arguments::Text(raw) => A::parse_arguments(raw),
            Arguments::Json(value) => A::parse_value(value),
        }
    }

    fn execute<'a>(
        &'a self,
        args: A,
        cx: &'a Context,
    ) -> impl Future<Output = Result<O, ToolError>> + Send + 'a {
        let future = self.handler.call(args, cx);
        async move { future.await.map_err(Into::into) }
    }

    fn output(&self, out: O, limit: usize) -> Result<String, OutputError> {
        let text = to_text(&out, limit)?;
        // The serialized form is what the model receives, so that is what is checked.
        crate::contract::validate::parse_str::<O>(&text).map_err(OutputError::Invalid)?;
        Ok(text)
    }
}
