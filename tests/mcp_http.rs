//! MCP over Streamable HTTP (`tool_core::mcp::McpHttp`): what a request without a valid token,
//! from a foreign origin, with another tenant's token, with too large a body or beyond the
//! session cap gets (and that no tool runs for it), checked with a plain HTTP client; then the
//! official Python and TypeScript SDKs' Streamable HTTP clients against the same server (each
//! skipped, and said so, where its SDK is not installed, unless `REQUIRE_MCP_CLIENT=1`).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use examples::{create_invoice, get_weather};
use http::request::Parts;
use serde_json::{Value, json};
use tool_core::mcp::{AuthError, McpHttp};
use tool_core::{
    Context, Effect, Registry, Runtime, ToolDef,
    registry::{DynamicTool, ToolError},
};

const ALICE: &str = "alice-token";
const BOB: &str = "bob-token";
/// Carol, of Alice's tenant.
const CAROL: &str = "carol-token";
/// Alice again, but of another tenant.
const ALICE_GLOBEX: &str = "alice-globex-token";
const EXPIRED: &str = "expired-token";
/// A valid token that may not use this server.
const OUTSIDER: &str = "outsider-token";

const ACCEPT: &str = "application/json, text/event-stream";

/// How often the probe tool ran and the runtime factory was called.
#[derive(Default)]
struct Counters {
    probe: AtomicUsize,
    runtimes: AtomicUsize,
}

fn authenticate(token: &str, _request: &Parts) -> Result<Context, AuthError> {
    match token {
        ALICE => Ok(Context::builder("alice").tenant("acme").build()),
        BOB => Ok(Context::builder("bob").tenant("globex").build()),
        CAROL => Ok(Context::builder("carol").tenant("acme").build()),
        ALICE_GLOBEX => Ok(Context::builder("alice").tenant("globex").build()),
        EXPIRED => Err(AuthError::Expired),
        OUTSIDER => Err(AuthError::Forbidden),
        _ => Err(AuthError::InvalidToken),
    }
}

/// The example tools and `probe`, which counts its calls and answers with the context's
/// principal and tenant.
fn registry(counters: &Arc<Counters>) -> Registry {
    let probe = DynamicTool::new(
        "probe",
        "Says who is calling.",
        json!({ "type": "object", "properties": { "pad": { "type": "string" } } }),
    );
    let counters = Arc::clone(counters);
    let mut registry = Registry::new();
    registry
        .register(ToolDef::new(get_weather).effect(Effect::ReadOnly))
        .unwrap()
        .register(ToolDef::new(create_invoice))
        .unwrap()
        .register(
            ToolDef::dynamic(probe, move |_args: Value, cx: &Context| {
                counters.probe.fetch_add(1, Ordering::SeqCst);
                let who = json!({ "principal": cx.principal(), "tenant": cx.tenant() });
                async move { Ok::<_, ToolError>(who) }
            })
            .effect(Effect::ReadOnly),
        )
        .unwrap();
    registry
}

struct Server {
    url: String,
    counters: Arc<Counters>,
}

async fn start(configure: impl FnOnce(McpHttp) -> McpHttp) -> Server {
    start_slow(Duration::ZERO, configure).await
}

/// A server whose runtime factory takes `delay` (blocking its thread) after it counts a call.
async fn start_slow(delay: Duration, configure: impl FnOnce(McpHttp) -> McpHttp) -> Server {
    let counters = Arc::new(Counters::default());
    let registry = Arc::new(registry(&counters));
    let for_runtimes = Arc::clone(&counters);
    let http = McpHttp::new(
        move |_cx: &Context| {
            for_runtimes.runtimes.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(delay);
            Runtime::new(Arc::clone(&registry))
        },
        authenticate,
    )
    .allowed_origins(["https://app.example"]);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(configure(http).serve(listener));
    Server { url, counters }
}

/// One HTTP request to the endpoint.
#[derive(Default, Clone)]
struct Post<'a> {
    token: Option<&'a str>,
    authorization: Option<&'a str>,
    session: Option<&'a str>,
    origin: Option<&'a str>,
    headers: &'a [(&'a str, &'a str)],
}

struct Reply {
    status: u16,
    session: Option<String>,
    www_authenticate: Option<String>,
    /// The JSON-RPC message of an SSE or JSON reply, or the body as text.
    body: Value,
    text: String,
}

impl Server {
    async fn send(&self, method: reqwest::Method, post: &Post<'_>, body: Option<Value>) -> Reply {
        // The build has rustls without a default crypto provider (a feature another test
        // needs): name one, although nothing here uses TLS.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let mut request = client
            .request(method, &self.url)
            .header("accept", ACCEPT)
            .header("content-type", "application/json");
        if let Some(token) = post.token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        if let Some(authorization) = post.authorization {
            request = request.header("authorization", authorization);
        }
        if let Some(session) = post.session {
            request = request.header("mcp-session-id", session);
        }
        if let Some(origin) = post.origin {
            request = request.header("origin", origin);
        }
        for (name, value) in post.headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.body(body.to_string());
        }
        let mut response = request.send().await.unwrap();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned)
        };
        let status = response.status().as_u16();
        let session = header("mcp-session-id");
        let www_authenticate = header("www-authenticate");
        let sse = header("content-type").is_some_and(|kind| kind.starts_with("text/event-stream"));
        // An SSE stream may stay open after its reply: read until a JSON-RPC reply arrives.
        let mut text = String::new();
        while let Some(chunk) = response.chunk().await.unwrap() {
            text.push_str(&String::from_utf8_lossy(&chunk));
            if sse && rpc_reply(&text).is_some() {
                break;
            }
        }
        let body = if sse {
            rpc_reply(&text).unwrap_or(Value::Null)
        } else {
            serde_json::from_str(&text).unwrap_or(Value::Null)
        };
        Reply {
            status,
            session,
            www_authenticate,
            body,
            text,
        }
    }

    async fn post(&self, post: &Post<'_>, body: Value) -> Reply {
        self.send(reqwest::Method::POST, post, Some(body)).await
    }

    /// Opens a session with `token` and completes the handshake; its id.
    async fn open(&self, token: &str) -> String {
        let reply = self
            .post(
                &Post {
                    token: Some(token),
                    ..Post::default()
                },
                initialize(),
            )
            .await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        assert_eq!(
            reply.body["result"]["protocolVersion"], "2025-06-18",
            "{}",
            reply.text
        );
        let session = reply.session.expect("a session id");
        let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
        let post = Post {
            token: Some(token),
            session: Some(&session),
            ..Post::default()
        };
        assert_eq!(self.post(&post, initialized).await.status, 202);
        session
    }

    fn probes(&self) -> usize {
        self.counters.probe.load(Ordering::SeqCst)
    }
}

fn rpc_reply(sse: &str) -> Option<Value> {
    sse.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message.get("id").is_some())
}

fn initialize() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "mcp-http-test", "version": "0" }
        }
    })
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": name, "arguments": arguments }
    })
}

#[tokio::test]
async fn a_missing_malformed_unknown_or_expired_token_is_401_and_runs_nothing() {
    let server = start(|http| http).await;
    let session = server.open(ALICE).await;
    let metadata = format!(
        "resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
        origin_of(&server)
    );
    let missing = format!("Bearer {metadata}");
    let invalid = format!(
        "Bearer error=\"invalid_token\", error_description=\"the access token is not valid\", \
         {metadata}"
    );
    let expired = format!(
        "Bearer error=\"invalid_token\", error_description=\"the access token expired\", \
         {metadata}"
    );
    let refused: [(Post<'_>, &str); 5] = [
        (Post::default(), &missing),
        (
            Post {
                authorization: Some("Basic YWxpY2U6cHc="),
                ..Post::default()
            },
            &invalid,
        ),
        (
            Post {
                authorization: Some("Bearer two words"),
                ..Post::default()
            },
            &invalid,
        ),
        (
            Post {
                token: Some("nobody-token"),
                ..Post::default()
            },
            &invalid,
        ),
        (
            Post {
                token: Some(EXPIRED),
                ..Post::default()
            },
            &expired,
        ),
    ];
    for (post, challenge) in refused {
        // In the open session, and as the request that would open one.
        for session in [Some(session.as_str()), None] {
            let post = Post {
                session,
                ..post.clone()
            };
            let reply = server.post(&post, call(1, "probe", json!({}))).await;
            assert_eq!(reply.status, 401, "{}", reply.text);
            assert_eq!(reply.www_authenticate.as_deref(), Some(challenge));
            assert!(reply.session.is_none());
            // Nothing of the credentials comes back.
            let secret = post.token.or(post.authorization).unwrap_or("Bearer");
            let secret = secret.strip_prefix("Bearer ").unwrap_or(secret);
            assert!(!reply.text.contains(secret), "{}", reply.text);
            let reply = server.post(&post, initialize()).await;
            assert_eq!(reply.status, 401, "{}", reply.text);
        }
    }
    assert_eq!(server.probes(), 0);
    assert_eq!(server.counters.runtimes.load(Ordering::SeqCst), 1);

    // The same call with the session's token runs.
    let post = Post {
        token: Some(ALICE),
        session: Some(&session),
        ..Post::default()
    };
    let reply = server.post(&post, call(1, "probe", json!({}))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(
        reply.body["result"]["structuredContent"],
        json!({ "principal": "alice", "tenant": "acme" }),
        "{}",
        reply.text
    );
    assert_eq!(server.probes(), 1);
}

#[tokio::test]
async fn a_foreign_origin_is_403_and_a_listed_or_absent_one_passes() {
    let server = start(|http| http).await;
    for origin in [
        "https://evil.example",
        "http://app.example",
        "null",
        "garbage",
    ] {
        let post = Post {
            token: Some(ALICE),
            origin: Some(origin),
            ..Post::default()
        };
        let reply = server.post(&post, initialize()).await;
        assert_eq!(reply.status, 403, "{origin}: {}", reply.text);
        assert_eq!(reply.body["error"], "forbidden_origin");
    }
    // Refused before the token is looked at: no token, still 403.
    let post = Post {
        origin: Some("https://evil.example"),
        ..Post::default()
    };
    assert_eq!(server.post(&post, initialize()).await.status, 403);
    assert_eq!(server.counters.runtimes.load(Ordering::SeqCst), 0);

    let session = server.open(ALICE).await;
    let post = Post {
        token: Some(ALICE),
        session: Some(&session),
        origin: Some("https://evil.example"),
        ..Post::default()
    };
    let reply = server.post(&post, call(1, "probe", json!({}))).await;
    assert_eq!(reply.status, 403, "{}", reply.text);
    assert_eq!(server.probes(), 0);
    let post = Post {
        origin: Some("https://app.example"),
        ..post
    };
    let reply = server.post(&post, call(2, "probe", json!({}))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(server.probes(), 1);
}

#[tokio::test]
async fn another_principals_or_tenants_token_is_403_in_an_existing_session() {
    let server = start(|http| http).await;
    let session = server.open(ALICE).await;
    for token in [BOB, ALICE_GLOBEX] {
        let post = Post {
            token: Some(token),
            session: Some(&session),
            ..Post::default()
        };
        let reply = server.post(&post, call(1, "probe", json!({}))).await;
        assert_eq!(reply.status, 403, "{token}: {}", reply.text);
        assert_eq!(reply.body["error"], "forbidden_session");
        // Nor may another tenant end the session.
        let reply = server.send(reqwest::Method::DELETE, &post, None).await;
        assert_eq!(reply.status, 403, "{}", reply.text);
    }
    assert_eq!(server.probes(), 0);

    // Bob's own session works, with Bob's context; Alice's still works with hers.
    let bobs = server.open(BOB).await;
    for (token, session, who) in [
        (
            BOB,
            &bobs,
            json!({ "principal": "bob", "tenant": "globex" }),
        ),
        (
            ALICE,
            &session,
            json!({ "principal": "alice", "tenant": "acme" }),
        ),
    ] {
        let post = Post {
            token: Some(token),
            session: Some(session),
            ..Post::default()
        };
        let reply = server.post(&post, call(1, "probe", json!({}))).await;
        assert_eq!(
            reply.body["result"]["structuredContent"], who,
            "{}",
            reply.text
        );
    }
    assert_eq!(server.probes(), 2);
    // One runtime per session.
    assert_eq!(server.counters.runtimes.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_unknown_session_is_404() {
    let server = start(|http| http).await;
    let post = Post {
        token: Some(ALICE),
        session: Some("not-a-session"),
        ..Post::default()
    };
    let reply = server.post(&post, call(1, "probe", json!({}))).await;
    assert_eq!(reply.status, 404, "{}", reply.text);
    assert_eq!(server.probes(), 0);
}

#[tokio::test]
async fn a_body_over_the_cap_is_413() {
    let server = start(|http| http.max_body_bytes(4096)).await;
    let session = server.open(ALICE).await;
    let post = Post {
        token: Some(ALICE),
        session: Some(&session),
        ..Post::default()
    };
    let reply = server
        .post(&post, call(1, "probe", json!({ "pad": "x".repeat(8192) })))
        .await;
    assert_eq!(reply.status, 413, "{}", reply.text);
    assert_eq!(server.probes(), 0);
    // Under the cap, the same call runs.
    let reply = server
        .post(&post, call(2, "probe", json!({ "pad": "x".repeat(1024) })))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(server.probes(), 1);
}

#[tokio::test]
async fn sessions_over_the_cap_are_503_until_one_ends() {
    let server = start(|http| http.max_sessions(2)).await;
    let first = server.open(ALICE).await;
    let _second = server.open(BOB).await;
    let post = Post {
        token: Some(ALICE),
        ..Post::default()
    };
    let reply = server.post(&post, initialize()).await;
    assert_eq!(reply.status, 503, "{}", reply.text);
    assert_eq!(reply.body["error"], "too_many_sessions");
    assert_eq!(server.counters.runtimes.load(Ordering::SeqCst), 2);

    // The client ends its session: its place is freed once the session's worker stops,
    // which happens after the reply to DELETE.
    let delete = Post {
        token: Some(ALICE),
        session: Some(&first),
        ..Post::default()
    };
    let reply = server.send(reqwest::Method::DELETE, &delete, None).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
    let mut opened = None;
    for _ in 0..200 {
        let reply = server.post(&post, initialize()).await;
        if reply.status == 200 {
            opened = reply.session;
            break;
        }
        assert_eq!(reply.status, 503, "{}", reply.text);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        opened.is_some(),
        "the ended session's place was never freed"
    );
    // And the ended session is gone.
    let reply = server.post(&delete, call(1, "probe", json!({}))).await;
    assert_eq!(reply.status, 404, "{}", reply.text);
}

/// Opens sessions with `token` until one is refused; how many opened, and the refusal.
async fn open_until_refused(server: &Server, token: &str, at_most: usize) -> (usize, Reply) {
    let post = Post {
        token: Some(token),
        ..Post::default()
    };
    for opened in 0..at_most {
        let reply = server.post(&post, initialize()).await;
        if reply.status != 200 {
            return (opened, reply);
        }
        assert!(reply.session.is_some(), "{}", reply.text);
    }
    panic!("{token} opened {at_most} sessions and none was refused");
}

#[tokio::test]
async fn one_principal_is_refused_at_its_cap_while_others_still_get_sessions() {
    // The defaults: one principal may hold this many sessions.
    let server = start(|http| http).await;
    let (opened, refused) = open_until_refused(&server, ALICE, 100).await;
    assert_eq!(opened, McpHttp::DEFAULT_MAX_SESSIONS_PER_PRINCIPAL);
    assert_eq!(opened, 8);
    assert_eq!(refused.status, 429, "{}", refused.text);
    assert_eq!(refused.body["error"], "too_many_principal_sessions");
    assert!(
        refused.body["error_description"]
            .as_str()
            .is_some_and(|text| text.contains("principal") && text.contains('8')),
        "{}",
        refused.text
    );
    // Only `initialize` takes a place: at its cap, the principal may still ask what the server
    // serves.
    let discover = json!({
        "jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": { "_meta": sessionless_meta() }
    });
    let post = Post {
        token: Some(ALICE),
        headers: &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "server/discover"),
        ],
        ..Post::default()
    };
    let reply = server.post(&post, discover).await;
    assert_eq!(reply.body["error"]["code"], -32022, "{}", reply.text);
    // Another principal, and the same principal name in another tenant, still get theirs.
    for token in [BOB, CAROL, ALICE_GLOBEX] {
        server.open(token).await;
    }
    assert_eq!(server.counters.runtimes.load(Ordering::SeqCst), opened + 3);
}

#[tokio::test]
async fn one_tenant_is_refused_at_its_cap_while_other_tenants_still_get_sessions() {
    let server = start(|http| http.max_sessions_per_tenant(3)).await;
    server.open(ALICE).await;
    server.open(CAROL).await;
    server.open(ALICE).await;
    for token in [ALICE, CAROL] {
        let post = Post {
            token: Some(token),
            ..Post::default()
        };
        let reply = server.post(&post, initialize()).await;
        assert_eq!(reply.status, 429, "{}", reply.text);
        assert_eq!(reply.body["error"], "too_many_tenant_sessions");
    }
    server.open(BOB).await;
    server.open(ALICE_GLOBEX).await;
    assert_eq!(server.counters.runtimes.load(Ordering::SeqCst), 5);
}

/// One official SDK's Streamable HTTP client, run on a script under `tests/mcp/`.
struct ClientCheck {
    sdk: &'static str,
    program: &'static str,
    script: &'static str,
    install: &'static str,
}

const PYTHON_CHECK: ClientCheck = ClientCheck {
    sdk: "the MCP Python SDK",
    program: "python3",
    script: "tests/mcp/http_client_check.py",
    install: "python3 -m pip install \"mcp>=1.12\"",
};

const TYPESCRIPT_CHECK: ClientCheck = ClientCheck {
    sdk: "the MCP TypeScript SDK",
    program: "node",
    script: "tests/mcp/http_client_check.mjs",
    install: "npm ci --prefix tests/mcp",
};

impl ClientCheck {
    /// Runs the script against a server of its own: it lists the tools and calls some with a
    /// valid token (the Python one also through `mcp.Client`'s default mode), reads the
    /// protected-resource metadata a 401 names with the SDK's OAuth helpers, and checks that
    /// the SDK fails without a token, with an expired one, with another tenant's token in its
    /// session and from a foreign origin. Without the SDK the
    /// check is skipped, and says so, unless `REQUIRE_MCP_CLIENT=1` (as in CI).
    async fn run(&self) {
        let repository: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let probe = tokio::process::Command::new(self.program)
            .args([self.script, "--probe"])
            .current_dir(&repository)
            .output()
            .await;
        let missing = match &probe {
            Ok(output) if output.status.success() => None,
            Ok(output) => Some(
                String::from_utf8_lossy(&output.stderr)
                    .trim()
                    .lines()
                    .last()
                    .unwrap_or("the probe failed")
                    .to_owned(),
            ),
            Err(error) => Some(format!("{} could not be run ({error})", self.program)),
        };
        if let Some(reason) = missing {
            assert!(
                std::env::var_os("REQUIRE_MCP_CLIENT").is_none_or(|v| v != "1"),
                "REQUIRE_MCP_CLIENT=1 but {} is missing: {reason}",
                self.sdk
            );
            let reason = reason
                .strip_prefix("http_client_check: ")
                .unwrap_or(&reason);
            let install = if reason.contains(self.install) {
                String::new()
            } else {
                format!("; to run it: {}", self.install)
            };
            // Straight to stderr: libtest captures `eprintln!` of a passing test.
            let _ = writeln!(
                std::io::stderr(),
                "skipped: the check of the Streamable HTTP server with {}: {reason}{install} \
                 (REQUIRE_MCP_CLIENT=1 makes a missing SDK a failure)",
                self.sdk
            );
            return;
        }

        let server = start(|http| http.authorization_servers(["https://auth.example"])).await;
        let output = tokio::process::Command::new(self.program)
            .arg(self.script)
            .current_dir(&repository)
            .env("MCP_HTTP_URL", &server.url)
            .env("MCP_TOKEN", ALICE)
            .env("MCP_OTHER_TENANT_TOKEN", BOB)
            .env("MCP_EXPIRED_TOKEN", EXPIRED)
            .env("MCP_ALLOWED_ORIGIN", "https://app.example")
            .env("MCP_FOREIGN_ORIGIN", "https://evil.example")
            .env(
                "MCP_EXPECTED_CALLER",
                r#"{"principal": "alice", "tenant": "acme"}"#,
            )
            .env("MCP_AUTHORIZATION_SERVER", "https://auth.example")
            .env("MCP_CHECK_TIMEOUT", "60")
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{} failed:\n{stdout}\n{}",
            self.script,
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            stdout.contains("http_client_check: all checks passed"),
            "{stdout}"
        );
        // The SDK takes the server's answer to its DELETE as the session ended.
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("Session termination failed"), "{stderr}");
        // The script calls `probe` once with its valid token; every refused attempt ran nothing.
        assert_eq!(server.probes(), 1, "{stdout}");
        println!("{stdout}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_sdk_over_streamable_http() {
    PYTHON_CHECK.run().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_typescript_sdk_over_streamable_http() {
    TYPESCRIPT_CHECK.run().await;
}

#[tokio::test]
async fn a_session_idle_past_the_timeout_is_closed_and_frees_its_place() {
    let server = start(|http| {
        http.max_sessions(1)
            .idle_timeout(Some(Duration::from_millis(200)))
    })
    .await;
    let idle = server.open(ALICE).await;
    let post = Post {
        token: Some(BOB),
        ..Post::default()
    };
    let mut opened = false;
    for _ in 0..200 {
        let reply = server.post(&post, initialize()).await;
        if reply.status == 200 {
            opened = true;
            break;
        }
        assert_eq!(reply.status, 503, "{}", reply.text);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(opened, "the idle session's place was never freed");
    let post = Post {
        token: Some(ALICE),
        session: Some(&idle),
        ..Post::default()
    };
    let reply = server.post(&post, call(1, "probe", json!({}))).await;
    assert_eq!(reply.status, 404, "{}", reply.text);
    assert_eq!(server.probes(), 0);
}

/// The 2026-07-28 request metadata: a request that carries it needs no session.
fn sessionless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "sessionless", "version": "0" }
    })
}

/// MCP revision 2026-07-28 lets a client call without a session; this server serves sessions
/// only, so it does not serve that revision: such a call is refused as of an unsupported
/// version, naming the versions served, and nothing runs.
#[tokio::test]
async fn a_call_outside_a_session_is_refused_and_runs_nothing() {
    let server = start(|http| http).await;
    let post = Post {
        token: Some(ALICE),
        headers: &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "probe"),
        ],
        ..Post::default()
    };
    let mut body = call(1, "probe", json!({}));
    body["params"]["_meta"] = sessionless_meta();
    let reply = server.post(&post, body).await;
    assert_eq!(reply.status, 400, "{}", reply.text);
    assert_eq!(reply.body["error"]["code"], -32022, "{}", reply.text);
    assert_eq!(
        reply.body["error"]["data"]["supported"],
        json!(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]),
        "{}",
        reply.text
    );
    assert!(reply.session.is_none());
    assert_eq!(server.probes(), 0);
    assert_eq!(server.counters.runtimes.load(Ordering::SeqCst), 0);
}

/// A client that asks `server/discover` first (the Python SDK's default) learns only the
/// versions served, all of which open sessions with `initialize`, and so falls back to it.
#[tokio::test]
async fn discover_names_only_the_versions_served() {
    let server = start(|http| http).await;
    let post = Post {
        token: Some(ALICE),
        headers: &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "server/discover"),
        ],
        ..Post::default()
    };
    let discover = json!({
        "jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": { "_meta": sessionless_meta() }
    });
    let reply = server.post(&post, discover).await;
    let supported = reply
        .body
        .pointer("/error/data/supported")
        .or_else(|| reply.body.pointer("/result/supportedVersions"))
        .cloned();
    assert_eq!(
        supported,
        Some(json!([
            "2024-11-05",
            "2025-03-26",
            "2025-06-18",
            "2025-11-25"
        ])),
        "{}",
        reply.text
    );
    assert!(reply.session.is_none());
    // The version the client falls back to opens a session.
    let mut initialize = initialize();
    initialize["params"]["protocolVersion"] = json!("2025-11-25");
    let reply = server
        .post(
            &Post {
                token: Some(ALICE),
                ..Post::default()
            },
            initialize,
        )
        .await;
    assert_eq!(
        reply.body["result"]["protocolVersion"], "2025-11-25",
        "{}",
        reply.text
    );
    assert!(reply.session.is_some());
}

#[tokio::test]
async fn a_token_the_application_forbids_here_is_403_insufficient_scope() {
    let server = start(|http| http).await;
    let session = server.open(ALICE).await;
    for session in [Some(session.as_str()), None] {
        let post = Post {
            token: Some(OUTSIDER),
            session,
            ..Post::default()
        };
        let reply = server.post(&post, call(1, "probe", json!({}))).await;
        assert_eq!(reply.status, 403, "{}", reply.text);
        let expected = format!(
            "Bearer error=\"insufficient_scope\", \
             error_description=\"the access token does not give access to this server\", \
             resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
            origin_of(&server)
        );
        assert_eq!(reply.www_authenticate.as_deref(), Some(expected.as_str()));
        assert_eq!(reply.body["error"], "insufficient_scope");
        assert!(!reply.text.contains(OUTSIDER));
    }
    assert_eq!(server.probes(), 0);
}

/// A response read off a raw HTTP/1.1 connection.
#[derive(Debug)]
struct RawReply {
    status: u16,
    /// Header names in lowercase.
    headers: Vec<(String, String)>,
    body: String,
}

impl RawReply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    fn closes(&self) -> bool {
        self.header("connection")
            .is_some_and(|value| value.eq_ignore_ascii_case("close"))
    }
}

/// One HTTP/1.1 connection, kept alive between requests.
struct Raw {
    stream: tokio::net::TcpStream,
    /// What was read past the last response.
    buffer: Vec<u8>,
}

impl Raw {
    async fn connect(server: &Server) -> Raw {
        let address = server
            .url
            .strip_prefix("http://")
            .and_then(|rest| rest.split('/').next())
            .unwrap();
        Raw {
            stream: tokio::net::TcpStream::connect(address).await.unwrap(),
            buffer: Vec::new(),
        }
    }

    /// Sends `head` (the request line and headers, without the blank line) and `body`; an
    /// error if the connection is gone.
    async fn send(&mut self, head: &str, body: &[u8]) -> std::io::Result<()> {
        use tokio::io::AsyncWriteExt as _;
        self.stream
            .write_all(format!("{head}\r\n\r\n").as_bytes())
            .await?;
        self.stream.write_all(body).await?;
        self.stream.flush().await
    }

    async fn fill(&mut self) -> std::io::Result<bool> {
        use tokio::io::AsyncReadExt as _;
        let mut chunk = [0u8; 8192];
        let read = tokio::time::timeout(Duration::from_secs(10), self.stream.read(&mut chunk))
            .await
            .map_err(|_| std::io::Error::other("no answer within 10 s"))??;
        self.buffer.extend_from_slice(&chunk[..read]);
        Ok(read > 0)
    }

    /// The next response, or why none came (the connection closed or was reset first).
    async fn reply(&mut self) -> Result<RawReply, String> {
        let end = loop {
            if let Some(end) = self.buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                break end;
            }
            match self.fill().await {
                Ok(true) => {}
                Ok(false) => return Err("the connection closed before a response".to_owned()),
                Err(error) => return Err(format!("no response: {error}")),
            }
        };
        let head = String::from_utf8_lossy(&self.buffer[..end]).into_owned();
        self.buffer.drain(..end + 4);
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|line| line.split(' ').nth(1))
            .and_then(|code| code.parse().ok())
            .ok_or_else(|| format!("not a status line: {head}"))?;
        let headers: Vec<(String, String)> = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
            .collect();
        let mut reply = RawReply {
            status,
            headers,
            body: String::new(),
        };
        if reply
            .header("transfer-encoding")
            .is_some_and(|value| value.eq_ignore_ascii_case("chunked"))
        {
            loop {
                let line_end = loop {
                    if let Some(at) = self.buffer.windows(2).position(|w| w == b"\r\n") {
                        break at;
                    }
                    if !self.fill().await.map_err(|error| error.to_string())? {
                        return Err("the connection closed inside a chunked body".to_owned());
                    }
                };
                let size = String::from_utf8_lossy(&self.buffer[..line_end]).into_owned();
                let size = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16)
                    .map_err(|_| format!("not a chunk size: {size}"))?;
                while self.buffer.len() < line_end + 2 + size + 2 {
                    if !self.fill().await.map_err(|error| error.to_string())? {
                        return Err("the connection closed inside a chunk".to_owned());
                    }
                }
                let chunk = &self.buffer[line_end + 2..line_end + 2 + size];
                reply.body.push_str(&String::from_utf8_lossy(chunk));
                self.buffer.drain(..line_end + 2 + size + 2);
                if size == 0 {
                    break;
                }
            }
        } else {
            let length: usize = reply
                .header("content-length")
                .and_then(|value| value.parse().ok())
                .unwrap_or(0);
            while self.buffer.len() < length {
                if !self.fill().await.map_err(|error| error.to_string())? {
                    return Err("the connection closed inside a body".to_owned());
                }
            }
            reply.body = String::from_utf8_lossy(&self.buffer[..length]).into_owned();
            self.buffer.drain(..length);
        }
        Ok(reply)
    }
}

/// The request head of a POST to the endpoint with a JSON body of `length` bytes.
fn raw_post(server: &Server, length: usize, extra: &[&str]) -> String {
    let address = server.url.strip_prefix("http://").unwrap();
    let (host, path) = address.split_once('/').unwrap();
    let mut head = format!(
        "POST /{path} HTTP/1.1\r\nHost: {host}\r\nAccept: {ACCEPT}\r\nContent-Length: {length}"
    );
    for line in extra {
        head.push_str("\r\n");
        head.push_str(line);
    }
    head
}

/// A JSON-RPC call of about `size` bytes.
fn padded_call(size: usize) -> Vec<u8> {
    call(1, "probe", json!({ "pad": "x".repeat(size) }))
        .to_string()
        .into_bytes()
}

#[tokio::test]
async fn a_refused_request_leaves_its_connection_usable_or_says_it_closes() {
    let server = start(|http| http.max_body_bytes(64 * 1024).max_sessions(3)).await;
    let bearer = format!("Authorization: Bearer {ALICE}");
    let json = "Content-Type: application/json";
    let session = server.open(ALICE).await;
    server.open(BOB).await;
    server.open(ALICE_GLOBEX).await;
    let in_session = format!("Mcp-Session-Id: {session}");
    let bobs = format!("Authorization: Bearer {BOB}");
    // (what, extra headers, body size, the status expected). Every body here is one the
    // server reads to its end (at most `max_body_bytes`, or 1 MiB past it), sent at once:
    // each connection must stay open.
    let cases: Vec<(&str, Vec<&str>, usize, u16)> = vec![
        ("no token, a small body", vec![json], 16, 401),
        (
            "an unknown session, a small body",
            vec![json, &bearer, "Mcp-Session-Id: nope"],
            16,
            404,
        ),
        (
            "a foreign origin, a small body",
            vec![json, &bearer, "Origin: https://evil.example"],
            16,
            403,
        ),
        ("no token", vec![json], 32 * 1024, 401),
        (
            "an unknown token",
            vec![json, "Authorization: Bearer nobody"],
            32 * 1024,
            401,
        ),
        (
            "a foreign origin",
            vec![json, &bearer, "Origin: https://evil.example"],
            32 * 1024,
            403,
        ),
        (
            "another tenant's session",
            vec![json, &bobs, &in_session],
            32 * 1024,
            403,
        ),
        (
            "an unknown session",
            vec![json, &bearer, "Mcp-Session-Id: nope"],
            32 * 1024,
            404,
        ),
        (
            "a body over the cap",
            vec![json, &bearer, &in_session],
            96 * 1024,
            413,
        ),
        (
            "a content type that is not JSON",
            vec!["Content-Type: text/plain", &bearer, &in_session],
            32 * 1024,
            415,
        ),
        ("the session cap", vec![json, &bearer], 32 * 1024, 503),
    ];
    for (what, extra, size, status) in cases {
        let mut body = padded_call(size);
        if status == 503 {
            body = initialize().to_string().into_bytes();
        }
        let mut raw = Raw::connect(&server).await;
        raw.send(&raw_post(&server, body.len(), &extra), &body)
            .await
            .unwrap();
        let first = raw
            .reply()
            .await
            .unwrap_or_else(|error| panic!("{what}: {error}"));
        assert_eq!(first.status, status, "{what}: {first:?}");
        assert!(
            !first.closes(),
            "{what}: the body was read, yet the connection closes: {first:?}"
        );
        // The connection must serve the next request, here a DELETE.
        let address = server.url.strip_prefix("http://").unwrap();
        let (host, path) = address.split_once('/').unwrap();
        let head =
            format!("DELETE /{path} HTTP/1.1\r\nHost: {host}\r\n{bearer}\r\nMcp-Session-Id: nope");
        let second = match raw.send(&head, b"").await {
            Ok(()) => raw.reply().await,
            Err(error) => Err(error.to_string()),
        };
        let second = second.unwrap_or_else(|error| {
            panic!("{what}: the next request on the refused request's connection got no answer: {error}")
        });
        assert_eq!(second.status, 404, "{what}: {second:?}");
    }
    // A client waiting for `100 Continue` before it sends its body is not asked for it: the
    // refusal comes at once, and says the connection closes.
    let mut raw = Raw::connect(&server).await;
    let head = raw_post(&server, 4096, &[json, "Expect: 100-continue"]);
    raw.send(&head, b"").await.unwrap();
    let reply = raw.reply().await.unwrap();
    assert_eq!(reply.status, 401, "{reply:?}");
    assert!(reply.closes(), "{reply:?}");
    assert_eq!(server.probes(), 0);
}

/// A client that sends `initialize` and resets its connection while the server is opening the
/// session (its runtime is being made) leaves no session behind holding a place: the
/// principal can open sessions again, more than its cap of them having gone that way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_initialize_whose_client_goes_away_leaves_no_place_taken() {
    let server = start_slow(Duration::from_millis(300), |http| {
        http.max_sessions_per_principal(2).idle_timeout(None)
    })
    .await;
    let bearer = format!("Authorization: Bearer {ALICE}");
    let body = initialize().to_string();
    for attempt in 1..=5 {
        let mut raw = Raw::connect(&server).await;
        raw.send(
            &raw_post(
                &server,
                body.len(),
                &["Content-Type: application/json", &bearer],
            ),
            body.as_bytes(),
        )
        .await
        .unwrap();
        // Once the server is making the session's runtime, the client is gone.
        let mut waited = 0;
        while server.counters.runtimes.load(Ordering::SeqCst) < attempt {
            waited += 1;
            assert!(waited < 500, "attempt {attempt} never reached initialize");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        raw.stream.set_zero_linger().unwrap();
        drop(raw);
    }
    // The sessions given up are closed once their runtime is made: the principal opens
    // sessions again, up to its cap.
    let post = Post {
        token: Some(ALICE),
        ..Post::default()
    };
    let mut opened = 0;
    for _ in 0..100 {
        let reply = server.post(&post, initialize()).await;
        if reply.status == 200 {
            opened += 1;
            if opened == 2 {
                break;
            }
            continue;
        }
        assert_eq!(reply.status, 429, "{}", reply.text);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(opened, 2, "the sessions given up still hold their places");
}

/// `http://host:port` of the server.
fn origin_of(server: &Server) -> &str {
    server.url.strip_suffix("/mcp").unwrap()
}

async fn get_json(url: &str) -> (u16, Value) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let response = client.get(url).send().await.unwrap();
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let text = response.text().await.unwrap();
    if status == 200 {
        assert_eq!(kind.as_deref(), Some("application/json"), "{text}");
    }
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The `resource_metadata` URL of a `Bearer` challenge.
fn resource_metadata(challenge: &str) -> Option<&str> {
    challenge
        .split("resource_metadata=\"")
        .nth(1)?
        .split('"')
        .next()
}

#[tokio::test]
async fn the_protected_resource_metadata_is_served_and_named_in_every_challenge() {
    let server = start(|http| {
        http.authorization_servers(["https://auth.example", "https://login.example/tenant"])
    })
    .await;
    let origin = origin_of(&server);
    let expected = json!({
        "resource": server.url,
        "authorization_servers": ["https://auth.example", "https://login.example/tenant"],
        "bearer_methods_supported": ["header"],
    });
    // The path-suffixed form (RFC 9728 section 3.1) and the root form.
    for url in [
        format!("{origin}/.well-known/oauth-protected-resource/mcp"),
        format!("{origin}/.well-known/oauth-protected-resource"),
    ] {
        let (status, document) = get_json(&url).await;
        assert_eq!(status, 200, "{url}");
        assert_eq!(document, expected, "{url}");
    }

    let suffixed = format!("{origin}/.well-known/oauth-protected-resource/mcp");
    // No token, a bad token, a token the application refuses here.
    for (token, status, error) in [
        (None, 401, None),
        (Some("nobody-token"), 401, Some("invalid_token")),
        (Some(EXPIRED), 401, Some("invalid_token")),
        (Some(OUTSIDER), 403, Some("insufficient_scope")),
    ] {
        let post = Post {
            token,
            ..Post::default()
        };
        let reply = server.post(&post, initialize()).await;
        assert_eq!(reply.status, status, "{}", reply.text);
        let challenge = reply.www_authenticate.unwrap();
        assert!(challenge.starts_with("Bearer "), "{challenge}");
        assert_eq!(resource_metadata(&challenge), Some(suffixed.as_str()));
        if let Some(error) = error {
            assert!(
                challenge.contains(&format!("error=\"{error}\"")),
                "{challenge}"
            );
        }
        // The challenge's URL leads to the document.
        let (status, document) = get_json(resource_metadata(&challenge).unwrap()).await;
        assert_eq!(status, 200);
        assert_eq!(document["resource"], server.url.as_str());
    }
    assert_eq!(server.probes(), 0);
}

#[tokio::test]
async fn a_configured_resource_url_is_the_one_the_metadata_names() {
    let server = start(|http| http.resource("https://mcp.example/mcp".parse().unwrap())).await;
    let (status, document) = get_json(&format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        origin_of(&server)
    ))
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        document,
        json!({ "resource": "https://mcp.example/mcp", "bearer_methods_supported": ["header"] })
    );
    let reply = server.post(&Post::default(), initialize()).await;
    assert_eq!(reply.status, 401);
    assert_eq!(
        reply.www_authenticate.as_deref(),
        Some(
            "Bearer resource_metadata=\"https://mcp.example/.well-known/oauth-protected-resource/mcp\""
        )
    );
}

#[tokio::test]
async fn a_body_that_is_not_json_is_400_and_runs_nothing() {
    let server = start(|http| http).await;
    let session = server.open(ALICE).await;
    let mut raw = Raw::connect(&server).await;
    let bearer = format!("Authorization: Bearer {ALICE}");
    let in_session = format!("Mcp-Session-Id: {session}");
    for (body, code) in [
        (&b"this is not JSON"[..], -32700),
        (
            &b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": "[..],
            -32700,
        ),
        (&b"{\"not\": \"a JSON-RPC message\"}"[..], -32600),
        (&b"[1, 2]"[..], -32600),
    ] {
        for session in [Some(in_session.as_str()), None] {
            let mut extra = vec!["Content-Type: application/json", bearer.as_str()];
            extra.extend(session);
            raw.send(&raw_post(&server, body.len(), &extra), body)
                .await
                .unwrap();
            let reply = raw.reply().await.unwrap();
            assert_eq!(reply.status, 400, "{reply:?}");
            let error: Value = serde_json::from_str(&reply.body).unwrap();
            assert_eq!(error["error"]["code"], code, "{reply:?}");
            assert_eq!(error["id"], Value::Null, "{reply:?}");
            assert!(!reply.closes(), "{reply:?}");
        }
    }
    assert_eq!(server.probes(), 0);
    assert_eq!(server.counters.runtimes.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_chunked_body_over_the_cap_gets_a_413_the_client_can_read() {
    let server = start(|http| http.max_body_bytes(4096)).await;
    let session = server.open(ALICE).await;
    let address = server.url.strip_prefix("http://").unwrap();
    let (host, path) = address.split_once('/').unwrap();
    let head = format!(
        "POST /{path} HTTP/1.1\r\nHost: {host}\r\nAccept: {ACCEPT}\r\n\
         Content-Type: application/json\r\nAuthorization: Bearer {ALICE}\r\n\
         Mcp-Session-Id: {session}\r\nTransfer-Encoding: chunked"
    );
    let message = padded_call(256 * 1024);
    let mut chunked = Vec::new();
    for chunk in message.chunks(8192) {
        chunked.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        chunked.extend_from_slice(chunk);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let mut raw = Raw::connect(&server).await;
    // The whole body is sent before anything is read, as most clients do.
    raw.send(&head, &chunked)
        .await
        .unwrap_or_else(|error| panic!("the connection broke while the body was sent: {error}"));
    let reply = raw
        .reply()
        .await
        .unwrap_or_else(|error| panic!("no 413 to read: {error}"));
    assert_eq!(reply.status, 413, "{reply:?}");
    let body: Value = serde_json::from_str(&reply.body).unwrap();
    assert_eq!(body["error"], "body_too_large", "{reply:?}");
    // The body was read to its end: the connection goes on.
    assert!(!reply.closes(), "{reply:?}");
    let small = call(2, "probe", json!({})).to_string();
    let head = head.replace(
        "Transfer-Encoding: chunked",
        &format!("Content-Length: {}", small.len()),
    );
    raw.send(&head, small.as_bytes()).await.unwrap();
    let reply = raw.reply().await.unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.body.contains("\"principal\":\"alice\""), "{reply:?}");
    assert_eq!(server.probes(), 1);
}

/// A refused request whose body does not come within the drain's time bound is answered all
/// the same, saying that the connection closes.
#[tokio::test]
async fn a_refused_request_whose_body_stalls_is_answered_with_connection_close() {
    let server = start(|http| http).await;
    let mut raw = Raw::connect(&server).await;
    let head = raw_post(&server, 4096, &["Content-Type: application/json"]);
    raw.send(&head, b"{\"jsonrpc\": ").await.unwrap();
    let started = std::time::Instant::now();
    let reply = raw.reply().await.unwrap();
    assert_eq!(reply.status, 401, "{reply:?}");
    assert!(reply.closes(), "{reply:?}");
    assert!(started.elapsed() < Duration::from_secs(9));
    assert!(
        raw.fill().await.is_ok_and(|more| !more),
        "the connection stays open"
    );
}

/// An authenticated request whose body stops coming is answered 408 once the body's time is
/// up, saying that the connection closes, and nothing runs for it.
#[tokio::test]
async fn an_authenticated_body_that_stalls_is_408_and_closes_its_connection() {
    let server = start(|http| http.body_timeout(Duration::from_millis(500))).await;
    let session = server.open(ALICE).await;
    let bearer = format!("Authorization: Bearer {ALICE}");
    let in_session = format!("Mcp-Session-Id: {session}");
    // In a session, and an `initialize` that would open one.
    for extra in [
        vec!["Content-Type: application/json", &bearer, &in_session],
        vec!["Content-Type: application/json", &bearer],
    ] {
        let mut raw = Raw::connect(&server).await;
        raw.send(&raw_post(&server, 4096, &extra), b"{\"jsonrpc\": ")
            .await
            .unwrap();
        let started = std::time::Instant::now();
        let reply = raw
            .reply()
            .await
            .unwrap_or_else(|error| panic!("no answer to a stalled body: {error}"));
        assert_eq!(reply.status, 408, "{reply:?}");
        let body: Value = serde_json::from_str(&reply.body).unwrap();
        assert_eq!(body["error"], "body_timeout", "{reply:?}");
        assert!(reply.closes(), "{reply:?}");
        assert!(started.elapsed() < Duration::from_secs(5), "{reply:?}");
        assert!(
            raw.fill().await.is_ok_and(|more| !more),
            "the connection stays open"
        );
    }
    assert_eq!(server.probes(), 0);
    assert_eq!(server.counters.runtimes.load(Ordering::SeqCst), 1);
}

/// Two endpoints merged into one application, the second leaving the root metadata out:
/// each serves its sessions and its own metadata, and the root document is the first's.
#[tokio::test]
async fn two_endpoints_merge_into_one_router() {
    let counters = Arc::new(Counters::default());
    let registry = Arc::new(registry(&counters));
    let endpoint = |path: &str| {
        let registry = Arc::clone(&registry);
        McpHttp::new(
            move |_cx: &Context| Runtime::new(Arc::clone(&registry)),
            authenticate,
        )
        .path(path)
    };
    let app = endpoint("/tools")
        .into_router()
        .merge(endpoint("/admin").root_metadata(false).into_router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });

    for path in ["/tools", "/admin"] {
        let (status, document) = get_json(&format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ))
        .await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(document["resource"], format!("{origin}{path}"), "{path}");
        let server = Server {
            url: format!("{origin}{path}"),
            counters: Arc::clone(&counters),
        };
        let session = server.open(ALICE).await;
        let post = Post {
            token: Some(ALICE),
            session: Some(&session),
            ..Post::default()
        };
        let reply = server.post(&post, call(1, "probe", json!({}))).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.text);
        // A session is its endpoint's only.
        let other = if path == "/tools" { "/admin" } else { "/tools" };
        let elsewhere = Server {
            url: format!("{origin}{other}"),
            counters: Arc::clone(&counters),
        };
        let reply = elsewhere.post(&post, call(2, "probe", json!({}))).await;
        assert_eq!(reply.status, 404, "{path}: {}", reply.text);
    }
    let (status, document) =
        get_json(&format!("{origin}/.well-known/oauth-protected-resource")).await;
    assert_eq!(status, 200);
    assert_eq!(document["resource"], format!("{origin}/tools"));
    assert_eq!(counters.probe.load(Ordering::SeqCst), 2);
}
