//! MCP server over Streamable HTTP: the example tools served to clients that present a bearer
//! token, one runtime per session.
//!
//! Run with `cargo run --example mcp_http_server --features mcp-http` and point an MCP client
//! at `http://127.0.0.1:8080/mcp` with the header `Authorization: Bearer demo-token-alice`.
//! `MCP_HTTP_ADDR` changes the address (`127.0.0.1:0` picks a free port).
//!
//! The tokens are a demonstration: two fixed tokens, printed at start, stand for what an
//! application would check against its identity provider or database. `MCP_DEMO_TOKENS`
//! replaces them, as `token=principal@tenant` pairs separated by commas. Each token maps to the
//! trusted context (principal and tenant) the session's calls run with; a session opened with
//! one tenant's token cannot be used with another's.
//!
//! Browser pages may call the server only from the origins listed (the MCP Inspector's default
//! address); requests from any other origin are refused, which is what protects a server on
//! `localhost` from DNS rebinding.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use examples::{create_invoice, get_weather};
use tool_core::mcp::{AuthError, McpHttp};
use tool_core::{Context, Effect, Registry, Runtime, ToolDef};
use tracing_subscriber::filter::LevelFilter;

/// The demonstration tokens used when `MCP_DEMO_TOKENS` is not set.
const DEMO_TOKENS: &str = "demo-token-alice=alice@acme,demo-token-bob=bob@globex";

#[tokio::main]
async fn main() {
    // At WARN, a failed call is logged with its code, tool and call id; its detail, which may
    // quote the arguments, only at DEBUG.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(LevelFilter::WARN)
        .init();

    let registry = match registry() {
        Ok(registry) => Arc::new(registry),
        Err(error) => {
            eprintln!("mcp_http_server: could not register the tools: {error}");
            std::process::exit(1);
        }
    };
    let from_env = std::env::var("MCP_DEMO_TOKENS").ok();
    let tokens = match parse_tokens(from_env.as_deref().unwrap_or(DEMO_TOKENS)) {
        Ok(tokens) => tokens,
        Err(pair) => {
            eprintln!("mcp_http_server: MCP_DEMO_TOKENS: `{pair}` is not token=principal@tenant");
            std::process::exit(2);
        }
    };
    let addr = std::env::var("MCP_HTTP_ADDR").unwrap_or_else(|_| "127.0.0.1:8080".to_owned());
    let listener = match tokio::net::TcpListener::bind(&addr).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("mcp_http_server: cannot listen on {addr}: {error}");
            std::process::exit(1);
        }
    };
    let local = listener.local_addr().map_or(addr, |addr| addr.to_string());
    println!("MCP endpoint: http://{local}/mcp");
    if from_env.is_none() {
        println!("DEMO ONLY, not for real use: fixed tokens, printed here so you can try them");
        for (token, (principal, tenant)) in &tokens {
            println!("  Authorization: Bearer {token}   ({principal} of tenant {tenant})");
        }
    }

    let tokens = Arc::new(tokens);
    let http = McpHttp::new(
        move |_cx: &Context| {
            Runtime::builder(Arc::clone(&registry))
                .max_input_bytes(8 * 1024)
                .build()
        },
        move |token: &str, _request: &http::request::Parts| {
            let (principal, tenant) = tokens.get(token).ok_or(AuthError::InvalidToken)?;
            Ok(Context::builder(principal.as_str())
                .tenant(tenant.as_str())
                .timeout(Duration::from_secs(60))
                .build())
        },
    )
    .allowed_origins(["http://localhost:6274", "http://127.0.0.1:6274"])
    .server_info("tool-core-example", env!("CARGO_PKG_VERSION"));

    if let Err(error) = http.serve(listener).await {
        eprintln!("mcp_http_server: {error}");
        std::process::exit(1);
    }
}

/// `token=principal@tenant` pairs separated by commas; the first pair that is not, on error.
fn parse_tokens(text: &str) -> Result<HashMap<String, (String, String)>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (token, who) = pair.split_once('=').ok_or_else(|| pair.to_owned())?;
            let (principal, tenant) = who.split_once('@').ok_or_else(|| pair.to_owned())?;
            if token.is_empty() || principal.is_empty() || tenant.is_empty() {
                return Err(pair.to_owned());
            }
            Ok((token.to_owned(), (principal.to_owned(), tenant.to_owned())))
        })
        .collect()
}

fn registry() -> Result<Registry, tool_core::registry::RegistryError> {
    let mut registry = Registry::new();
    registry
        .register(
            ToolDef::new(get_weather)
                .effect(Effect::ReadOnly)
                .timeout(Duration::from_secs(2)),
        )?
        .register(ToolDef::new(create_invoice).effect(Effect::NonIdempotent))?;
    Ok(registry)
}
