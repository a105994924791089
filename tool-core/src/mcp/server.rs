//! The MCP server: a [`Runtime`]'s registry served to MCP clients.

use std::collections::HashSet;
use std::fmt;
use std::pin::pin;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation, ListToolsResult,
    NumberOrString, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::IntoTransport;
use rmcp::{ServerHandler, ServiceExt};
use serde_json::Value;

use super::McpError;
use crate::context::Context;
use crate::providers::Loss;
use crate::runtime::Runtime;

type ContextFactory = dyn Fn() -> Context + Send + Sync;

/// Serves a [`Runtime`]'s tools over MCP: `tools/list` advertises them and every `tools/call`
/// runs through [`Runtime::invoke`] with a trusted [`Context`] the application builds. The
/// [module docs](super) say exactly what goes over the wire.
///
/// ```no_run
/// use tool_core::mcp::McpServer;
/// use tool_core::{Context, Registry, Runtime};
///
/// # async fn serve(registry: Registry) -> Result<(), tool_core::mcp::McpError> {
/// let runtime = Runtime::new(registry);
/// // The client on the other end of stdio is whoever launched this process: the
/// // application decides who that is, never the client.
/// McpServer::new(runtime, || Context::builder("local-user").build())
///     .serve_stdio()
///     .await
/// # }
/// ```
#[derive(Clone)]
pub struct McpServer {
    runtime: Runtime,
    context: Arc<ContextFactory>,
    tools: Arc<[Tool]>,
    /// What each tool's `inputSchema` does not say, in the order of `tools`.
    losses: Arc<[Vec<Loss>]>,
    page_size: usize,
    implementation: Implementation,
    instructions: Option<String>,
    /// Random, per server: JSON-RPC ids restart with every session, so with a ledger the
    /// calls of one session are claimed in a scope of their own.
    session: Arc<str>,
}

impl McpServer {
    /// Default number of tools in one `tools/list` page.
    pub const DEFAULT_PAGE_SIZE: usize = 50;

    /// A server for `runtime`'s registry. `context` is called once per `tools/call` and
    /// builds the trusted context the call runs with (principal, tenant, deadline...); it is
    /// called for each `tools/list` page too, which lists only the tools the runtime's
    /// policies show that principal ([`Runtime::visible_tools`]).
    ///
    /// The JSON-RPC request id is the call id. Clients number their requests afresh in every
    /// session, so when the runtime has a [ledger](crate::ledger) each server (one per
    /// session) claims its calls under a scope of its own: the context's scope followed by
    /// `/mcp-session-` and a random id. A resent request is still answered from the ledger
    /// within the session; another session's request with the same id is another call.
    pub fn new(runtime: Runtime, context: impl Fn() -> Context + Send + Sync + 'static) -> Self {
        let (tools, losses): (Vec<Tool>, Vec<Vec<Loss>>) = runtime
            .registry()
            .tools()
            .map(super::advertise::tool)
            .unzip();
        McpServer {
            runtime,
            context: Arc::new(context),
            tools: tools.into(),
            losses: losses.into(),
            page_size: McpServer::DEFAULT_PAGE_SIZE,
            implementation: Implementation::new("tool-core", env!("CARGO_PKG_VERSION")),
            instructions: None,
            session: session_id().into(),
        }
    }

    /// How many tools one `tools/list` page holds (default 50; 0 counts as 1).
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }

    /// The name and version sent as `serverInfo` (default `tool-core` and its version).
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.implementation = Implementation::new(name, version);
        self
    }

    /// Instructions for the client, sent in the `initialize` result.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Every tool of the registry as it is advertised, in registration order (`tools/list`
    /// leaves out those hidden from the session's principal).
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// What the advertised input schemas do not say of the canonical ones, with the name of
    /// each loss's tool: the branches of a root union merged into one object, which MCP
    /// clients require (see the [module docs](super)). Empty when every tool is advertised
    /// with its canonical schema. Calls are checked against the canonical schema either way.
    ///
    /// ```
    /// use tool_core::mcp::McpServer;
    /// use tool_core::{Context, Registry, Runtime, ToolDef, registry::{DynamicTool, ToolError}};
    /// use serde_json::{Value, json};
    ///
    /// let edit = DynamicTool::new("edit", "Edits a line.", json!({
    ///     "type": "object",
    ///     "oneOf": [
    ///         { "properties": { "op": { "const": "insert" }, "line": { "type": "integer" },
    ///                           "text": { "type": "string" } },
    ///           "required": ["op", "line", "text"], "additionalProperties": false },
    ///         { "properties": { "op": { "const": "delete" }, "line": { "type": "integer" } },
    ///           "required": ["op", "line"], "additionalProperties": false }
    ///     ]
    /// }));
    /// let mut registry = Registry::new();
    /// registry.register(ToolDef::dynamic(edit, |args: Value, _: &Context| async move {
    ///     Ok::<_, ToolError>(args)
    /// }))?;
    /// let server = McpServer::new(Runtime::new(registry), || Context::builder("me").build());
    ///
    /// let schema = &server.tools()[0].input_schema;
    /// assert_eq!(schema["properties"]["op"], json!({ "type": "string", "enum": ["insert", "delete"] }));
    /// assert_eq!(schema["required"], json!(["op", "line"]));
    /// let losses: Vec<String> = server.losses().map(|(_, loss)| loss.to_string()).collect();
    /// assert_eq!(losses[0], "oneOf at (root) is not shown to MCP clients \
    ///     (the root cannot be a union: its branches are merged into one object)");
    /// # Ok::<(), tool_core::registry::RegistryError>(())
    /// ```
    pub fn losses(&self) -> impl Iterator<Item = (&str, &Loss)> + '_ {
        self.tools
            .iter()
            .zip(self.losses.iter())
            .flat_map(|(tool, losses)| losses.iter().map(move |loss| (tool.name.as_ref(), loss)))
    }

    /// The runtime calls run through.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Serves one client over this process's stdin and stdout until the client closes them.
    /// Nothing else may write to stdout meanwhile: log to stderr.
    pub async fn serve_stdio(self) -> Result<(), McpError> {
        self.serve(rmcp::transport::stdio()).await
    }

    /// Serves one client over `transport` (any rmcp transport: a pair of async reader and
    /// writer, a duplex stream...) until it closes.
    pub async fn serve<T, E, A>(self, transport: T) -> Result<(), McpError>
    where
        T: IntoTransport<RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let running =
            ServiceExt::serve(self, transport)
                .await
                .map_err(|error| McpError::Initialize {
                    reason: error.to_string(),
                })?;
        running
            .waiting()
            .await
            .map(drop)
            .map_err(|error| McpError::Serve {
                reason: error.to_string(),
            })
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(self.implementation.clone());
        match &self.instructions {
            Some(instructions) => config.with_instructions(instructions.clone()),
            None => config,
        }
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|tool| tool.name == name).cloned()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let cursor = request.as_ref().and_then(|params| params.cursor.as_deref());
        // Only the tools the principal's policies show; the registry's order is the tools'.
        let cx = (self.context)();
        let shown: HashSet<&str> = self
            .runtime
            .visible_tools(&cx)
            .into_iter()
            .map(|info| &*info.name)
            .collect();
        let tools: Vec<&Tool> = self
            .tools
            .iter()
            .filter(|tool| shown.contains(tool.name.as_ref()))
            .collect();
        let Some((range, next)) = super::cursor::page(cursor, self.page_size, tools.len()) else {
            return Err(ErrorData::invalid_params("Invalid cursor", None));
        };
        let page = tools.get(range).unwrap_or_default();
        let mut result =
            ListToolsResult::with_all_items(page.iter().map(|tool| (*tool).clone()).collect());
        result.next_cursor = next;
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let base = (self.context)();
        self.call_with(request, context, base).await
    }
}

impl McpServer {
    /// Runs one `tools/call` with `base` as the trusted context (before the session's scope and
    /// the client's cancellation are added).
    pub(crate) async fn call_with(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        mut base: Context,
    ) -> Result<CallToolResponse, ErrorData> {
        let call_id = match &context.id {
            NumberOrString::Number(number) => number.to_string(),
            NumberOrString::String(string) => string.to_string(),
        };
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        // The application's context, with a child token the client's cancellation can fire
        // without cancelling anything else of the application's.
        if self.runtime.ledger().is_some() {
            // A client's request ids are unique only within its session.
            base = base.with_scope(format!("{}/mcp-session-{}", base.scope(), self.session));
        }
        let token = base.cancellation().child_token();
        let cx = base.with_cancellation(token.clone());
        let invoke = self
            .runtime
            .invoke(&call_id, &request.name, &arguments, &cx);
        // The client's trace continues here when it sent its `traceparent` in `_meta`.
        #[cfg(feature = "otel")]
        let invoke = {
            use tracing::Instrument as _;
            let span = tracing::info_span!(
                "tools/call",
                otel.name = "tools/call",
                otel.kind = "server",
                mcp.method.name = "tools/call",
            );
            let meta = request.meta.as_deref().unwrap_or(&context.meta);
            if let Some(traceparent) = meta.get_traceparent() {
                crate::observe::continue_trace(&span, traceparent, meta.get_tracestate());
            }
            invoke.instrument(span)
        };
        let mut invoke = pin!(invoke);
        let outcome = tokio::select! {
            outcome = &mut invoke => outcome,
            () = context.ct.cancelled() => {
                token.cancel();
                invoke.await
            }
        };
        super::reply::reply(outcome).map(CallToolResponse::from)
    }
}

/// 128 random bits as hex; a time-based id if the system has no randomness to give.
fn session_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = now.to_le_bytes();
    }
    crate::ledger::sha256_hex(&bytes)[..32].to_owned()
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("runtime", &self.runtime)
            .field("page_size", &self.page_size)
            .field("server_info", &self.implementation.name)
            .finish_non_exhaustive()
    }
}
