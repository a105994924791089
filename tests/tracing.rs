//! Tracing: one span per call with its outcome; argument values never logged; what an MCP
//! server's advertised schemas lose, told to the operator; bearer tokens of an MCP server on
//! HTTP never logged. In a binary of
//! its own, because `tracing` caches per-callsite interest process-wide and concurrently
//! running tests without a subscriber would race with the one installed here.

use std::sync::{Arc, Mutex};

use examples::get_weather;
use serde_json::{Value, json};
use tool_core::mcp::McpServer;
use tool_core::{
    Code,
    registry::{DynamicTool, ToolError},
};
use tool_core::{Context, Registry, Runtime, ToolDef};

const VALID_WEATHER: &str = r#"{"city":"Paris","units":"celsius"}"#;

fn weather_runtime() -> Runtime {
    let mut registry = Registry::new();
    registry.register(ToolDef::new(get_weather)).unwrap();
    Runtime::new(registry)
}

fn user() -> Context {
    Context::builder("user-1").tenant("acme").build()
}

#[test]
fn a_call_is_traced_without_its_argument_values() {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let writer = {
        let buffer = Arc::clone(&buffer);
        move || SharedWriter(Arc::clone(&buffer))
    };
    let subscriber = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let runtime = weather_runtime();
            let secret = r#"{"city":"SECRET-CITY","units":"kelvin"}"#;
            let outcome = runtime
                .invoke("call_9", "get_weather", secret, &user())
                .await;
            assert_eq!(outcome.code(), Some(Code::InvalidArguments));
            let outcome = runtime
                .invoke("call_10", "get_weather", VALID_WEATHER, &user())
                .await;
            assert!(outcome.is_ok());
        });
    });
    let log = String::from_utf8(buffer.lock().unwrap().clone()).unwrap();
    assert!(
        log.contains(
            "execute_tool{gen_ai.tool.name=\"get_weather\" gen_ai.tool.call.id=\"call_9\""
        ),
        "{log}"
    );
    assert!(log.contains(r#"code="invalid_arguments""#), "{log}");
    assert!(log.contains(r#"keywords=["enum"]"#), "{log}");
    assert!(log.contains(r#"violations=["/units enum"]"#), "{log}");
    assert!(log.contains("gen_ai.tool.call.id=\"call_10\""), "{log}");
    assert!(log.contains("tool call succeeded"), "{log}");
    assert!(!log.contains("SECRET-CITY"), "{log}");
    assert!(!log.contains("kelvin"), "{log}");
}

/// What `f` logs at `DEBUG` and above, without colours.
fn logged(f: impl FnOnce()) -> String {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let writer = {
        let buffer = Arc::clone(&buffer);
        move || SharedWriter(Arc::clone(&buffer))
    };
    let subscriber = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    String::from_utf8(buffer.lock().unwrap().clone()).unwrap()
}

#[test]
fn an_mcp_server_logs_what_merging_a_root_union_loses_the_first_few_then_a_count() {
    // Eight variants, each with a field of its own that only it requires.
    let branches: Vec<Value> = (0..8)
        .map(|i| {
            let field = format!("f{i}");
            json!({
                "properties": { "kind": { "const": format!("v{i}") }, field.clone(): { "type": "string" } },
                "required": ["kind", field],
                "additionalProperties": false
            })
        })
        .collect();
    let tool = DynamicTool::new(
        "pick",
        "Picks.",
        json!({ "type": "object", "oneOf": branches }),
    );
    let mut registry = Registry::new();
    registry
        .register(ToolDef::dynamic(
            tool,
            |args: Value, _: &Context| async move { Ok::<_, ToolError>(args) },
        ))
        .unwrap()
        .register(ToolDef::new(get_weather))
        .unwrap();
    let mut losses = 0;
    let log = logged(|| {
        let server = McpServer::new(Runtime::new(registry), user);
        losses = server.losses().count();
    });
    assert_eq!(
        losses, 9,
        "the root oneOf and each branch's own required field"
    );
    assert!(log.contains(" INFO "), "{log}");
    assert!(log.contains("tool=\"pick\" losses=9"), "{log}");
    assert!(
        log.contains("oneOf at (root) is not shown to MCP clients"),
        "{log}"
    );
    assert_eq!(
        log.matches("required at (root) is not shown to MCP clients")
            .count(),
        4,
        "five losses named, the rest counted: {log}"
    );
    assert!(!log.contains("get_weather"), "{log}");
    assert_eq!(log.lines().count(), 1, "{log}");
}

/// A tool whose handler and policy quote its argument in their operator detail.
mod quoting {
    use tool_core::{Context, Denied, Tool, ToolDef, registry::ToolError};

    /// Looks up an account.
    #[derive(Tool, Debug)]
    pub(crate) struct LookUpAccount {
        pub(crate) account: String,
    }

    async fn look_up(args: LookUpAccount, _cx: &Context) -> Result<String, ToolError> {
        if args.account.starts_with("PANIC") {
            panic!("no handler for {}", args.account);
        }
        Err(ToolError::public("no such account")
            .with_detail(format!("billing API: account {} closed", args.account)))
    }

    pub(crate) fn def() -> ToolDef<LookUpAccount> {
        ToolDef::new(look_up).authorize(|args: &LookUpAccount, _cx: &Context| {
            if args.account.starts_with("DENY") {
                return Err(Denied::new(format!("{} is not yours", args.account)));
            }
            Ok(())
        })
    }
}

#[test]
fn names_the_model_chose_are_logged_at_debug_only() {
    let log = logged(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let secret = r#"{"city":"Paris","SECRET-KEY-NAME":1}"#;
            let outcome = weather_runtime()
                .invoke("call_11", "get_weather", secret, &user())
                .await;
            assert_eq!(outcome.code(), Some(Code::InvalidArguments));
        });
    });
    let above_debug: Vec<&str> = log
        .lines()
        .filter(|line| line.contains(" WARN ") || line.contains(" INFO "))
        .collect();
    assert!(
        above_debug
            .iter()
            .any(|line| line.contains("tool call refused") && line.contains("additionalProperties")),
        "{log}"
    );
    assert!(
        above_debug
            .iter()
            .all(|line| !line.contains("SECRET-KEY-NAME")),
        "{log}"
    );
    // The pointer naming it is there for the operator who asks for DEBUG.
    assert!(
        log.contains("/SECRET-KEY-NAME additionalProperties"),
        "{log}"
    );
}

#[test]
fn a_failures_detail_quoting_an_argument_is_logged_at_debug_only() {
    let mut codes = Vec::new();
    let log = logged(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut registry = Registry::new();
            registry.register(quoting::def()).unwrap();
            let runtime = Runtime::new(registry);
            for (call_id, account) in [
                ("call_1", "SECRET-ACCOUNT-1"),
                ("call_2", "DENY-SECRET-ACCOUNT-2"),
                ("call_3", "PANIC-SECRET-ACCOUNT-3"),
            ] {
                let arguments = json!({ "account": account }).to_string();
                let outcome = runtime
                    .invoke(call_id, "look_up_account", arguments.as_str(), &user())
                    .await;
                let failure = outcome.failure().unwrap();
                // The detail is the operator's, in the outcome, whole.
                assert!(failure.detail().unwrap().contains(account), "{failure:?}");
                codes.push((failure.code(), outcome.id()));
            }
        });
    });
    assert_eq!(
        codes.iter().map(|(code, _)| *code).collect::<Vec<_>>(),
        [
            Code::ExecutionFailed,
            Code::Unauthorized,
            Code::ExecutionFailed
        ]
    );
    let above_debug: Vec<&str> = log
        .lines()
        .filter(|line| line.contains(" WARN ") || line.contains(" INFO "))
        .collect();
    // Each failure has its line above DEBUG, with the code and what links it to the outcome.
    assert_eq!(above_debug.len(), 3, "{log}");
    for (line, (code, id)) in above_debug.iter().zip(&codes) {
        assert!(line.contains(&format!("code=\"{code}\"")), "{line}");
        assert!(line.contains(&format!("id={id}")), "{line}");
        assert!(
            line.contains("gen_ai.tool.name=\"look_up_account\""),
            "{line}"
        );
        assert!(!line.contains("SECRET"), "{line}");
    }
    assert!(above_debug[0].contains(" WARN "), "{log}");
    assert!(above_debug[1].contains(" INFO "), "{log}");
    // The detail itself is there for whoever turns DEBUG on.
    let debug: Vec<&str> = log
        .lines()
        .filter(|line| line.contains(" DEBUG "))
        .collect();
    for account in [
        "SECRET-ACCOUNT-1",
        "DENY-SECRET-ACCOUNT-2",
        "PANIC-SECRET-ACCOUNT-3",
    ] {
        assert!(
            debug.iter().any(|line| line.contains(account)),
            "{account}: {log}"
        );
    }
}

struct SharedWriter(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for SharedWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Everything an MCP server on HTTP logs, at every level, while clients present good, unknown
/// and expired tokens: no token appears.
#[test]
fn an_mcp_http_server_never_logs_a_bearer_token() {
    use tool_core::mcp::{AuthError, McpHttp};

    const GOOD: &str = "good-SECRET-token";
    const UNKNOWN: &str = "unknown-SECRET-token";
    const EXPIRED: &str = "expired-SECRET-token";
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let writer = {
        let buffer = Arc::clone(&buffer);
        move || SharedWriter(Arc::clone(&buffer))
    };
    let subscriber = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let http = McpHttp::new(
                |_cx: &Context| weather_runtime(),
                |token: &str, _request: &http::request::Parts| match token {
                    GOOD => Ok(user()),
                    EXPIRED => Err(AuthError::Expired),
                    _ => Err(AuthError::InvalidToken),
                },
            );
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}/mcp", listener.local_addr().unwrap());
            tokio::spawn(http.serve(listener));
            let _ = rustls::crypto::ring::default_provider().install_default();
            let client = reqwest::Client::builder().no_proxy().build().unwrap();
            let post = |token: &str, session: Option<&str>, body: Value| {
                let mut request = client
                    .post(&url)
                    .header("accept", "application/json, text/event-stream")
                    .header("content-type", "application/json")
                    .header("authorization", format!("Bearer {token}"))
                    .body(body.to_string());
                if let Some(session) = session {
                    request = request.header("mcp-session-id", session);
                }
                request.send()
            };
            let initialize = json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": { "name": "t", "version": "0" } }
            });
            let opened = post(GOOD, None, initialize.clone()).await.unwrap();
            assert_eq!(opened.status(), 200);
            let session = opened.headers()["mcp-session-id"]
                .to_str()
                .unwrap()
                .to_owned();
            drop(opened);
            let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
            let reply = post(GOOD, Some(&session), initialized).await.unwrap();
            assert_eq!(reply.status(), 202);
            let call = json!({
                "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": { "name": "get_weather", "arguments": { "city": "Paris", "units": "celsius" } }
            });
            let reply = post(GOOD, Some(&session), call.clone()).await.unwrap();
            assert_eq!(reply.status(), 200);
            let text = reply.text().await.unwrap();
            assert!(text.contains("Paris"), "{text}");
            for token in [UNKNOWN, EXPIRED] {
                let reply = post(token, Some(&session), call.clone()).await.unwrap();
                assert_eq!(reply.status(), 401);
                let reply = post(token, None, initialize.clone()).await.unwrap();
                assert_eq!(reply.status(), 401);
            }
        });
    });
    let log = String::from_utf8(buffer.lock().unwrap().clone()).unwrap();
    // The capture works: the call was logged, with its request's details.
    assert!(log.contains("tool call succeeded"), "{log}");
    assert!(log.contains("CallToolRequest"), "{log}");
    assert!(!log.contains("SECRET"), "{log}");
}
