//! The MCP client side: a server's tools registered as dynamic tools whose handlers forward
//! `tools/call` to it.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ContentBlock,
    Implementation, PaginatedRequestParams, ProtocolVersion, Tool,
};
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::transport::IntoTransport;
use serde_json::Value;
use tokio::process::{Child, Command};

use super::McpError;
use crate::context::Context;
use crate::provenance::Origin;
use crate::registry::dynamic::DynamicTool;
use crate::{
    Effect, Registry, ToolDef,
    registry::{RegistryError, ToolError},
};

/// Pages of `tools/list` followed before the listing is declared endless.
const MAX_PAGES: usize = 1000;
/// Tools [`McpClient::list_tools`] keeps from one listing.
pub(super) const MAX_TOOLS: usize = 4096;
/// Bytes of tool definitions (their JSON text) [`McpClient::list_tools`] keeps from one
/// listing: 16 MiB.
pub(super) const MAX_LISTING_BYTES: usize = 16 << 20;
/// The longest error text from a server passed on to the model, in bytes.
const MAX_ERROR_TEXT: usize = 2000;

/// A connection to an MCP server, whose tools can be registered in a [`Registry`] and then
/// called through a [`Runtime`](crate::Runtime) like any other tool: arguments are checked
/// against the server's `inputSchema` before anything is sent, and the runtime's policies,
/// limits and timeouts apply. The [module docs](super) say what is trusted and what is not.
///
/// The connection lives as long as this value: keep it while the runtime may call the tools
/// (calls after it is dropped or [closed](Self::close) end as `execution_failed`).
///
/// ```no_run
/// use tokio::process::Command;
/// use tool_core::mcp::{McpClient, McpImport};
/// use tool_core::{Context, Registry, Runtime};
///
/// # async fn run() -> Result<(), tool_core::mcp::McpError> {
/// let client = McpClient::spawn(Command::new("weather-mcp-server")).await?;
/// let mut registry = Registry::new();
/// // The application vouches for this server's `get_weather` annotation, and no other.
/// let import = McpImport::new().prefix("weather.").trust_hints("get_weather");
/// let imported = client.register_tools(&mut registry, &import).await?;
/// for skipped in imported.skipped() {
///     eprintln!("not imported: {skipped}");
/// }
/// let runtime = Runtime::new(registry);
/// let cx = Context::builder("alice").build();
/// let outcome = runtime
///     .invoke("call_1", "weather.get_weather", r#"{"city":"Paris"}"#, &cx)
///     .await;
/// println!("{:?}", outcome.result());
/// client.close().await
/// # }
/// ```
pub struct McpClient {
    service: RunningService<RoleClient, ClientConfig>,
    child: Option<Child>,
}

impl McpClient {
    /// Connects over `transport` (any rmcp client transport: a pair of async reader and
    /// writer, a duplex stream...) and performs the `initialize` handshake.
    pub async fn connect<T, E, A>(transport: T) -> Result<Self, McpError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let config = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("tool-core", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        let service = config
            .serve(transport)
            .await
            .map_err(|error| McpError::Initialize {
                reason: error.to_string(),
            })?;
        Ok(McpClient {
            service,
            child: None,
        })
    }

    /// Starts `command` as a stdio MCP server and connects to it. Its stdin and stdout become
    /// the connection; its stderr is left as the command has it (inherited by default). The
    /// process is killed if this client is dropped without [`close`](Self::close).
    pub async fn spawn(mut command: Command) -> Result<Self, McpError> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|error| McpError::Spawn {
            reason: error.to_string(),
        })?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(McpError::Spawn {
                reason: "the process has no stdin or stdout pipe".to_owned(),
            });
        };
        let mut client = McpClient::connect((stdout, stdin)).await?;
        client.child = Some(child);
        Ok(client)
    }

    /// The server's name and version from the handshake.
    pub fn server_info(&self) -> Option<Implementation> {
        self.service
            .peer()
            .peer_info()
            .and_then(|info| info.server_info.clone())
    }

    /// The rmcp peer, for requests this type does not wrap.
    pub fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    /// Every tool the server lists, following `nextCursor` to the end.
    ///
    /// A listing is bounded, whatever the server sends:
    ///
    /// - at most 1,000 pages, and no cursor twice, else [`McpError::EndlessListing`];
    /// - at most 4,096 tools and 16 MiB of tool definitions in all (each tool counted as the
    ///   length of its JSON text), else [`McpError::ListingTooLarge`].
    ///
    /// The listing stops at the first page that goes beyond a cap and what was read is
    /// dropped, so at most the caps plus one page (which rmcp's stdio transport limits to a
    /// 16 MiB message) are held at once. Nothing is kept between calls.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, McpError> {
        let mut tools = Vec::new();
        let mut bytes = 0_usize;
        let mut seen = HashSet::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let params = cursor
                .clone()
                .map(|cursor| PaginatedRequestParams::default().with_cursor(Some(cursor)));
            let page = self
                .service
                .peer()
                .list_tools(params)
                .await
                .map_err(|error| McpError::Request {
                    method: "tools/list",
                    reason: error.to_string(),
                })?;
            for tool in page.tools {
                bytes = bytes.saturating_add(json_len(&tool));
                tools.push(tool);
                if tools.len() > MAX_TOOLS || bytes > MAX_LISTING_BYTES {
                    return Err(McpError::ListingTooLarge {
                        tools: tools.len(),
                        bytes,
                    });
                }
            }
            match page.next_cursor {
                None => return Ok(tools),
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(McpError::EndlessListing {
                        pages: seen.len() + 1,
                    });
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(McpError::EndlessListing { pages: MAX_PAGES })
    }

    /// Lists the server's tools and registers each in `registry` as a dynamic tool that
    /// forwards calls to the server. Tools that cannot be registered (a schema that does not
    /// compile, a name refused or taken) are skipped and reported; only a failure to list is
    /// an error.
    pub async fn register_tools(
        &self,
        registry: &mut Registry,
        import: &McpImport,
    ) -> Result<Imported, McpError> {
        let mut imported = Imported {
            registered: Vec::new(),
            skipped: Vec::new(),
        };
        for tool in self.list_tools().await? {
            let name = format!("{}{}", import.prefix, tool.name);
            match registry.register(self.tool_def(&tool, import)) {
                Ok(_) => imported.registered.push(name),
                Err(error) => imported.skipped.push(SkippedTool { name, error }),
            }
        }
        Ok(imported)
    }

    /// The definition [`register_tools`](Self::register_tools) registers for `tool`: its
    /// schemas, its effect (see [`McpImport::trust_hints`]) and a handler that forwards
    /// `tools/call` to this server.
    pub fn tool_def(&self, tool: &Tool, import: &McpImport) -> ToolDef<Value> {
        let mut dynamic = DynamicTool::new(
            format!("{}{}", import.prefix, tool.name),
            tool.description.as_deref().unwrap_or_default(),
            Value::Object(tool.input_schema.as_ref().clone()),
        );
        if let Some(schema) = &tool.output_schema {
            dynamic = dynamic.output_schema(Value::Object(schema.as_ref().clone()));
        }
        if let Some(&limit) = import.backtracking.get(tool.name.as_ref()) {
            dynamic = dynamic.allow_backtracking(limit);
        }
        let peer = self.service.peer().clone();
        let remote: Arc<str> = Arc::from(tool.name.as_ref());
        let handler = move |args: Value, _cx: &Context| {
            let peer = peer.clone();
            let remote = Arc::clone(&remote);
            async move { forward(&peer, &remote, args).await }
        };
        let trusted = import.trusted.contains(tool.name.as_ref());
        let server = import
            .server
            .clone()
            .or_else(|| self.server_info().map(|info| info.name))
            .unwrap_or_else(|| "unnamed".to_owned());
        let def = ToolDef::dynamic(dynamic, handler)
            .effect(effect(tool, trusted))
            .origin(Origin::Mcp(server))
            .trusted_output(import.trusted_output.contains(tool.name.as_ref()));
        match &import.configure {
            Some(configure) => configure(tool.name.as_ref(), def),
            None => def,
        }
    }

    /// Closes the connection and, for a spawned server, waits up to five seconds for it to
    /// exit before killing it.
    pub async fn close(mut self) -> Result<(), McpError> {
        let closed = self.service.close().await;
        if let Some(mut child) = self.child.take()
            && tokio::time::timeout(Duration::from_secs(5), child.wait())
                .await
                .is_err()
        {
            // The error is that the process is already gone, which is the aim.
            let _ = child.kill().await;
        }
        closed.map(drop).map_err(|error| McpError::Serve {
            reason: error.to_string(),
        })
    }
}

impl fmt::Debug for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClient")
            .field("server_info", &self.server_info().map(|info| info.name))
            .field("child", &self.child.as_ref().and_then(Child::id))
            .finish()
    }
}

/// The length of `tool`'s JSON text, without building it.
fn json_len(tool: &Tool) -> usize {
    struct Count(usize);
    impl io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0 = self.0.saturating_add(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Serializing a parsed `Tool` into a sink that accepts everything cannot fail.
    let _ = serde_json::to_writer(&mut count, tool);
    count.0
}

/// The effect an imported tool is registered with: its annotations decide only for tools the
/// application trusts.
fn effect(tool: &Tool, trusted: bool) -> Effect {
    let hints = tool.annotations.as_ref().filter(|_| trusted);
    match hints {
        Some(hints) if hints.read_only_hint == Some(true) => Effect::ReadOnly,
        Some(hints) if hints.idempotent_hint == Some(true) => Effect::Idempotent,
        _ => Effect::NonIdempotent,
    }
}

/// Sends one checked call to the server and turns its result into an output or an error.
async fn forward(peer: &Peer<RoleClient>, name: &str, args: Value) -> Result<Value, ToolError> {
    let Value::Object(arguments) = args else {
        return Err(ToolError::public(
            "the arguments of an MCP tool must be a JSON object",
        ));
    };
    let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
    let result = peer.call_tool(params).await.map_err(|error| {
        ToolError::internal(format!("mcp tools/call of `{name}` failed: {error}"))
    })?;
    if result.is_error == Some(true) {
        let text = texts(&result.content).unwrap_or_default();
        let message = if text.is_empty() {
            format!("the MCP server reported an error from `{name}`")
        } else {
            cut(text, MAX_ERROR_TEXT)
        };
        return Err(ToolError::public(message)
            .with_detail(format!("mcp server returned isError for `{name}`")));
    }
    Ok(output(result))
}

/// The output of a successful result (see the module docs).
fn output(result: CallToolResult) -> Value {
    if let Some(structured) = result.structured_content {
        return structured;
    }
    match texts(&result.content) {
        Some(text) => Value::String(text),
        None => serde_json::to_value(&result.content).unwrap_or(Value::Null),
    }
}

/// The text blocks joined by newlines, when every block is text.
fn texts(content: &[ContentBlock]) -> Option<String> {
    let mut joined = String::new();
    for (i, block) in content.iter().enumerate() {
        let text = block.as_text()?;
        if i > 0 {
            joined.push('\n');
        }
        joined.push_str(&text.text);
    }
    Some(joined)
}

/// `text` cut to at most `max` bytes on a character boundary, marked when cut.
fn cut(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// How an MCP server's tools are imported by [`McpClient::register_tools`].
#[derive(Clone, Default)]
pub struct McpImport {
    trusted: HashSet<String>,
    trusted_output: HashSet<String>,
    server: Option<String>,
    backtracking: HashMap<String, usize>,
    prefix: String,
    configure: Option<Arc<Configure>>,
}

type Configure = dyn Fn(&str, ToolDef<Value>) -> ToolDef<Value> + Send + Sync;

impl McpImport {
    /// Every tool imported as [`Effect::NonIdempotent`], under the server's names.
    pub fn new() -> Self {
        McpImport::default()
    }

    /// Trusts the annotations of the tool the server calls `name`: `readOnlyHint: true`
    /// makes it [`Effect::ReadOnly`], else `idempotentHint: true` makes it
    /// [`Effect::Idempotent`]. Tools not named here are [`Effect::NonIdempotent`] whatever
    /// the server claims.
    pub fn trust_hints(mut self, name: impl Into<String>) -> Self {
        self.trusted.insert(name.into());
        self
    }

    /// Trusts the outputs of the tool the server calls `name`. Outputs of tools not named here
    /// are untrusted: the model is sent them marked as data, not instructions (see
    /// [`provenance`](crate::provenance)).
    pub fn trust_output(mut self, name: impl Into<String>) -> Self {
        self.trusted_output.insert(name.into());
        self
    }

    /// The name results of these tools are recorded under ([`Origin::Mcp`]); by default the
    /// name the server gives itself when the connection opens.
    pub fn server_name(mut self, name: impl Into<String>) -> Self {
        self.server = Some(name.into());
        self
    }

    /// Lets the schemas of the tool the server calls `name` use patterns that need a
    /// backtracking engine (lookaround, backreferences), each match giving up after `limit`
    /// backtracking steps. Other tools with such patterns are skipped. See
    /// [`DynamicTool::allow_backtracking`] for what the limit does and does not bound.
    pub fn allow_backtracking(mut self, name: impl Into<String>, limit: usize) -> Self {
        self.backtracking.insert(name.into(), limit);
        self
    }

    /// Registers every tool under `prefix` followed by the server's name (e.g.
    /// `"weather."`), so tools of several servers cannot collide. Calls are forwarded under
    /// the server's own name.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Adjusts each definition before it is registered (a timeout, approval, call quotas),
    /// given the server's name of the tool. Replaces an earlier adjustment.
    pub fn configure<F>(mut self, configure: F) -> Self
    where
        F: Fn(&str, ToolDef<Value>) -> ToolDef<Value> + Send + Sync + 'static,
    {
        self.configure = Some(Arc::new(configure));
        self
    }
}

impl fmt::Debug for McpImport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpImport")
            .field("trusted", &self.trusted)
            .field("trusted_output", &self.trusted_output)
            .field("server", &self.server)
            .field("backtracking", &self.backtracking)
            .field("prefix", &self.prefix)
            .field("configure", &self.configure.is_some())
            .finish()
    }
}

/// What [`McpClient::register_tools`] did with each tool the server listed.
#[derive(Debug, Clone)]
pub struct Imported {
    registered: Vec<String>,
    skipped: Vec<SkippedTool>,
}

impl Imported {
    /// The names the tools were registered under, in the server's order.
    pub fn registered(&self) -> &[String] {
        &self.registered
    }

    /// The tools that were not registered, with the reason.
    pub fn skipped(&self) -> &[SkippedTool] {
        &self.skipped
    }
}

/// A listed tool that was not registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedTool {
    name: String,
    error: RegistryError,
}

impl SkippedTool {
    /// The name it would have been registered under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Why the registry refused it.
    pub fn error(&self) -> &RegistryError {
        &self.error
    }
}

impl fmt::Display for SkippedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.name, self.error)
    }
}
