//! MCP (the Model Context Protocol) on both sides, built on [`rmcp`], the official Rust SDK.
//! Needs the `mcp` cargo feature.
//!
//! - [`McpServer`] serves a [`Runtime`](crate::Runtime)'s registry: `tools/list` advertises
//!   every tool, and `tools/call` runs through [`Runtime::invoke`](crate::Runtime::invoke), so an
//!   MCP client's calls meet the same allow-list, validation, policies and limits as any other.
//! - `McpHttp` (feature `mcp-http`) serves it over Streamable HTTP to clients that
//!   authenticate with a bearer token, one runtime per session.
//! - [`McpClient`] connects to an MCP server and registers its tools in a
//!   [`Registry`](crate::Registry) as [`DynamicTool`](crate::registry::DynamicTool)s whose handlers forward
//!   `tools/call` to the server, so an agent calls remote tools through the same pipeline.
//!
//! # Serving: what a client sees
//!
//! Each tool is advertised with its name, description, `inputSchema` (the canonical schema the
//! runtime enforces, unchanged but for a root union, below; a boolean schema becomes `{}` or
//! `{"not": {}}`), `outputSchema` when the tool has one **and its root is `"type": "object"`**
//! (MCP requires an object schema there; another output schema is not advertised, although
//! outputs are still checked against it), and annotations derived from the declared
//! [`Effect`](crate::Effect):
//!
//! | effect | `readOnlyHint` | `destructiveHint` | `idempotentHint` |
//! |---|---|---|---|
//! | `ReadOnly` | `true` | `false` | `true` |
//! | `Idempotent` | `false` | `true` | `true` |
//! | `NonIdempotent` | `false` | `true` | `false` |
//!
//! `destructiveHint` stays at MCP's default, `true`, for tools that write: an effect says
//! whether a call may be repeated, not whether it only adds. `openWorldHint` is not sent.
//!
//! A root `oneOf`, `anyOf` or `allOf` (a tool whose arguments are an internally tagged enum has
//! one) is not sent as it is: MCP requires an object schema, and clients backed by Anthropic's
//! API, such as Claude Code, refuse a union at the root. The branches are merged into one
//! object, as for the [providers](crate::providers): a property's schema is kept where the
//! branches agree, the tags become one `enum`, a property is required when every branch
//! requires it, and the object is closed when every branch is. Every other keyword is sent as
//! written. The merged object admits every call the union admits, and more: which properties
//! go with which tag is no longer said, and [`McpServer::losses`] lists what is not (also
//! logged at `INFO` when the server is built). Calls are still checked against the canonical
//! schema, so a call the union refuses is refused with the usual violations. A schema whose
//! root union cannot be merged keeps it, with a `WARN` log.
//!
//! `tools/list` is paginated ([`McpServer::page_size`], 50 by default); `nextCursor` is opaque
//! and only cursors the server issued are accepted: any other is a JSON-RPC `-32602` error
//! (`Invalid cursor`).
//!
//! A `tools/call` becomes `runtime.invoke(id, name, arguments, &cx)`, where `id` is the
//! JSON-RPC request id (a number in decimal, a string as is) and `cx` is a fresh context from
//! the application's factory, cancelled if the client sends `notifications/cancelled`. Absent
//! `arguments` are `{}`. The outcome becomes:
//!
//! | outcome | MCP reply |
//! |---|---|
//! | an output | a result: `content` holds one text block, the output's JSON text; `structuredContent` is the output when it is a JSON object (then an instance of the advertised `outputSchema`, if any, since outputs are checked against it) |
//! | `unknown_tool` | JSON-RPC error `-32602`, `Unknown tool: <name>` (a protocol error, as the spec lists it) |
//! | `duplicate_call_id` | JSON-RPC error `-32600` (MCP forbids reusing a request id within a session) |
//! | any other failure | a result with `isError: true` (see below) |
//!
//! Every other failure is a tool execution error, which MCP says clients should show the model
//! so it can correct itself: since revision 2025-11-25 that includes invalid arguments. Its one
//! text block is the failure's public [`message`](crate::Failure::message), which for
//! `invalid_arguments` is one line per violation (`- /amount: expected number, got string
//! "120.5"`), and its `_meta` holds the stable code: `{"tool-core/error": {"code":
//! "invalid_arguments"}}`. It has no `structuredContent`: MCP requires structured content to
//! match the tool's `outputSchema`, which describes outputs, and clients enforce it (the
//! official TypeScript SDK's client throws on a mismatch, so the model would never see the
//! violations). Arguments over the runtime's input cap are such a result too, with code
//! `input_too_large`: the model can fix them by sending less.
//! (A request longer than the stdio transport's own line limit, 16 MiB in rmcp, is discarded
//! by the transport before any of this runs, and gets no reply.) Operator detail ([`Failure::detail`](crate::Failure::detail))
//! never goes over the wire.
//!
//! One runtime holds one session's state (call ids, quotas), so serve one connection per
//! runtime; several connections should each get a runtime built from a shared
//! `Arc<Registry>`. Request ids are call ids, so a client that sends both `7` and `"7"` in
//! one session has the second refused as a duplicate.
//!
//! [`McpServer::serve_stdio`] serves one client over stdio and [`McpServer::serve`] over any
//! rmcp transport. With the `mcp-http` feature, [`McpHttp`] serves many clients over MCP's
//! Streamable HTTP transport, each authenticated by a bearer token the application maps to
//! its context, with one `McpServer` and one runtime per session.
//!
//! # Importing: what a server is trusted with
//!
//! [`McpClient::register_tools`] lists the server's tools (every page) and registers each as a
//! dynamic tool: its `inputSchema` (and `outputSchema`, when given) compiled with the
//! `jsonschema` crate, so arguments are checked locally before anything is sent. A tool whose
//! schema does not compile, whose name the registry refuses, or whose name is taken is skipped
//! and reported in [`Imported::skipped`], never an error for the whole import. A server's
//! annotations are hints from a party the application may not trust: every imported tool is
//! [`Effect::NonIdempotent`](crate::Effect::NonIdempotent) unless the application names it in
//! [`McpImport::trust_hints`]. Descriptions come from the server too and reach the model as
//! written.
//!
//! The server's schemas are compiled as any [`DynamicTool`](crate::registry::DynamicTool)'s: their
//! `$ref`s fetch nothing (no file is read, no request made, whatever `jsonschema` features the
//! build has), and a pattern that needs a backtracking engine skips the tool unless the
//! application allows it with [`McpImport::allow_backtracking`]. A listing is capped at 1,000
//! pages, 4,096 tools and 16 MiB of tool definitions ([`McpClient::list_tools`]).
//!
//! A forwarded call's result becomes the handler's output: `structuredContent` when present,
//! otherwise the text blocks joined by newlines as a JSON string, otherwise the content blocks
//! as a JSON array. A result with `isError: true` is an `execution_failed` outcome whose public
//! message is the server's text (cut to 2,000 bytes); a JSON-RPC error or a broken connection is
//! an `execution_failed` outcome with the reason as operator detail only.

mod advertise;
mod client;
mod cursor;
mod error;
#[cfg(feature = "mcp-http")]
mod http;
mod reply;
mod server;

pub use client::{Imported, McpClient, McpImport, SkippedTool};
pub use error::McpError;
pub use server::McpServer;

#[cfg(feature = "mcp-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
pub use http::{AuthError, Authenticate, McpHttp};

/// The MCP SDK this module is built on, for its transports and wire types.
pub use rmcp;
