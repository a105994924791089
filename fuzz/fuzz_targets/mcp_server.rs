//! The MCP server's request handling: raw JSON-RPC bytes into `McpServer::serve` over an
//! in-memory duplex pipe, serving the example tools (as `examples/mcp_server.rs` does) and a
//! dynamic tool with a `$ref`.
//!
//! Input: byte 0 holds flags (bit 0: send the bytes as they are, with no `initialize`
//! handshake first; bits 1-2: page size 1 to 4); the rest is written to the server, then the
//! pipe is closed. Time is tokio's paused clock, so timeouts and slow handlers cost nothing.
//!
//! Checked: the server stops once the client has gone (no hang: a virtual hour is the bound),
//! and everything it wrote is JSON-RPC 2.0, one JSON object per line.

#![no_main]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use examples::{create_invoice, get_weather};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tool_core::mcp::McpServer;
use tool_core::{Context, Effect, Registry, Runtime, ToolDef, registry::{DynamicTool, ToolError}};

const SKU: &str = "https://schemas.example.com/sku.json";

fn registry() -> &'static Arc<Registry> {
    static REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let check_stock = DynamicTool::new(
            "check_stock",
            "How many units of a SKU are in stock.",
            json!({
                "type": "object",
                "properties": { "sku": { "$ref": SKU } },
                "required": ["sku"],
                "additionalProperties": false
            }),
        )
        .resource(SKU, json!({ "type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$" }));
        let mut registry = Registry::new();
        registry
            .register(
                ToolDef::new(get_weather)
                    .effect(Effect::ReadOnly)
                    .timeout(Duration::from_secs(2)),
            )
            .and_then(|r| r.register(ToolDef::new(create_invoice).effect(Effect::NonIdempotent)))
            .and_then(|r| r.register(ToolDef::dynamic(check_stock, check).effect(Effect::ReadOnly)))
            .expect("the example tools register");
        Arc::new(registry)
    })
}

async fn check(args: Value, _cx: &Context) -> Result<Value, ToolError> {
    Ok(json!({ "sku": args["sku"], "inStock": 3 }))
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a tokio runtime");
    }
    RUNTIME.with(|runtime| runtime.block_on(future))
}

const HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n"
);

fuzz_target!(|data: &[u8]| {
    let data = &data[..data.len().min(tool_fuzz::MAX_INPUT)];
    let Some((&flags, body)) = data.split_first() else {
        return;
    };
    let output = block_on(async {
        let runtime = Runtime::builder(Arc::clone(registry()))
            .max_input_bytes(8 * 1024)
            .build();
        let server = McpServer::new(runtime, || {
            Context::builder("local-user")
                .timeout(Duration::from_secs(60))
                .build()
        })
        .page_size(1 + usize::from((flags >> 1) & 3))
        .server_info("fuzz", "0");
        let (client, end) = tokio::io::duplex(1 << 16);
        let serving = tokio::spawn(server.serve(end));
        let (mut read, mut write) = tokio::io::split(client);
        let reader = tokio::spawn(async move {
            let mut output = Vec::new();
            let _ = read.read_to_end(&mut output).await;
            output
        });
        if flags & 1 == 0 {
            let _ = write.write_all(HANDSHAKE.as_bytes()).await;
        }
        let _ = write.write_all(body).await;
        let _ = write.shutdown().await;
        drop(write);
        let stopped = tokio::time::timeout(Duration::from_secs(3600), serving).await;
        assert!(stopped.is_ok(), "the server still runs an hour after the client left");
        tokio::time::timeout(Duration::from_secs(3600), reader)
            .await
            .expect("the server's output ends")
            .expect("the reader task ends")
    });
    let text = String::from_utf8(output).expect("the server writes UTF-8");
    for line in text.lines() {
        let message: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("the server wrote a line that is not JSON ({e}): {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "not JSON-RPC 2.0: {line}");
    }
});
