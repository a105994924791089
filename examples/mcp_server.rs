//! MCP server: the example tools served over stdio to any MCP client.
//!
//! Run with `cargo run --example mcp_server --features mcp` as the command of an MCP client (an
//! IDE, an agent, the Python SDK's `stdio_client`): it speaks JSON-RPC on stdin/stdout until the
//! client closes stdin. Logs go to stderr, because anything else on stdout would break the
//! protocol. Started by hand in a terminal, it says so in one line on stderr.
//!
//! It serves `get_weather` (read-only) and `create_invoice` (not idempotent), defined in
//! `examples/src/lib.rs`, through a `Runtime`: every `tools/call` is validated, authorized and
//! limited exactly as in the quickstart. Pages of `tools/list` hold one tool each, so a client
//! has to follow `nextCursor`, and arguments over 8 KiB are refused, to show both.
//!
//! With `--with-private-ref` it also serves `check_stock`, a tool defined by a JSON Schema
//! that `$ref`s a document only this server holds. The server validates its calls; a client
//! that cannot fetch the document cannot compile the schema (`tool_core::mcp::McpClient` reports
//! it as skipped).

use std::io::IsTerminal as _;
use std::time::Duration;

use examples::{create_invoice, get_weather};
use serde_json::{Value, json};
use tool_core::mcp::McpServer;
use tool_core::{
    Context, Effect, Registry, Runtime, ToolDef,
    registry::{DynamicTool, ToolError},
};
use tracing_subscriber::filter::LevelFilter;

/// Where `check_stock`'s schema points for the shape of a SKU.
const SKU_SCHEMA: &str = "https://schemas.example.com/sku.json";

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // At WARN, a failed call is logged with its code, tool and call id; its detail, which may
    // quote the arguments, only at DEBUG.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(LevelFilter::WARN)
        .init();

    let with_private_ref = std::env::args()
        .skip(1)
        .any(|arg| arg == "--with-private-ref");
    let registry = match registry(with_private_ref) {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("mcp_server: could not register the tools: {error}");
            std::process::exit(1);
        }
    };
    let runtime = Runtime::builder(registry).max_input_bytes(8 * 1024).build();
    // The client on the other end of stdio is whoever launched this process, so the trusted
    // context says so; nothing in it comes from the client.
    let server = McpServer::new(runtime, || {
        Context::builder("local-user")
            .timeout(Duration::from_secs(60))
            .build()
    })
    .page_size(1)
    .server_info("tool-core-example", env!("CARGO_PKG_VERSION"));

    // Started by hand, not by a client: say what this is, on stderr (stdout is the protocol).
    if std::io::stdin().is_terminal() {
        eprintln!(
            "mcp_server: an MCP server on stdio (JSON-RPC on stdin/stdout); run it as the command of an MCP client, or type a JSON-RPC `initialize` request; Ctrl-D ends it"
        );
    }
    if let Err(error) = server.serve_stdio().await {
        eprintln!("mcp_server: {error}");
        std::process::exit(1);
    }
}

fn registry(with_private_ref: bool) -> Result<Registry, tool_core::registry::RegistryError> {
    let mut registry = Registry::new();
    registry
        .register(
            ToolDef::new(get_weather)
                .effect(Effect::ReadOnly)
                .timeout(Duration::from_secs(2)),
        )?
        .register(ToolDef::new(create_invoice).effect(Effect::NonIdempotent))?;
    if with_private_ref {
        registry
            .register(ToolDef::dynamic(check_stock_tool(), check_stock).effect(Effect::ReadOnly))?;
    }
    Ok(registry)
}

/// A tool whose schema refers to a shared definition by URL, as schemas written by other
/// teams often do. This server holds the document; nothing is fetched.
fn check_stock_tool() -> DynamicTool {
    DynamicTool::new(
        "check_stock",
        "How many units of a SKU are in stock.",
        json!({
            "type": "object",
            "properties": { "sku": { "$ref": SKU_SCHEMA } },
            "required": ["sku"],
            "additionalProperties": false
        }),
    )
    .resource(
        SKU_SCHEMA,
        json!({ "type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$" }),
    )
}

async fn check_stock(args: Value, _cx: &Context) -> Result<Value, ToolError> {
    Ok(json!({ "sku": args["sku"], "inStock": 3 }))
}
