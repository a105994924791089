//! The MCP server over Streamable HTTP: a gate (origin, bearer token, session owner, session
//! cap) in front of rmcp's Streamable HTTP service, which runs one [`McpServer`] per session.

mod auth;
mod body;
mod metadata;
mod origin;
mod session;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use http::header::{AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::request::Parts;
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, Implementation};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

pub use auth::{AuthError, Authenticate};

use self::auth::Bearer;
use self::metadata::{ProtectedResource, WELL_KNOWN};
use self::origin::Origin;
use self::session::{Authenticated, Cap, Caps, NewSession, Owner, SessionHandler, Sessions};
use super::McpServer;
use crate::context::Context;
use crate::runtime::Runtime;

const SESSION_HEADER: &str = "mcp-session-id";

type MakeRuntime = dyn Fn(&Context) -> Runtime + Send + Sync;
type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
type AuthenticateFn =
    dyn for<'a> Fn(&'a str, &'a Parts) -> BoxFuture<'a, Result<Context, AuthError>> + Send + Sync;

/// Serves tools over MCP's Streamable HTTP transport to clients that authenticate with a
/// bearer token. Needs the `mcp-http` cargo feature.
///
/// ```no_run
/// use tool_core::mcp::{AuthError, McpHttp};
/// use tool_core::{Context, Registry, Runtime};
/// use std::sync::Arc;
///
/// # async fn serve(registry: Registry) -> std::io::Result<()> {
/// let registry = Arc::new(registry);
/// let http = McpHttp::new(
///     // Called once per session, with the context of the token that opened it.
///     move |_cx: &Context| Runtime::new(Arc::clone(&registry)),
///     // Called for every request; the application knows its tokens.
///     |token: &str, _request: &http::request::Parts| match token {
///         "s3cr3t-alice" => Ok(Context::builder("alice").tenant("acme").build()),
///         _ => Err(AuthError::InvalidToken),
///     },
/// )
/// .allowed_origins(["https://app.example"]);
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// http.serve(listener).await
/// # }
/// ```
///
/// # What every request meets, in order
///
/// 1. **Origin.** A request whose `Origin` header is not on
///    [`allowed_origins`](McpHttp::allowed_origins) (empty by default) is refused with HTTP
///    403: this is the DNS-rebinding protection the MCP specification asks for, since a
///    browser page from anywhere can otherwise reach a server on `localhost`. A request
///    *without* `Origin` goes on: browsers send it with every `POST` and cross-origin
///    request, while command-line and desktop clients (the SDKs among them) send none, and
///    the token check below still applies to them.
/// 2. **Bearer token.** A missing `Authorization` header is HTTP 401 with
///    `WWW-Authenticate: Bearer`; a header that is not one `Bearer <token>` (RFC 6750
///    characters, at most 8 KiB) is 401 with `error="invalid_token"`, and so is a token
///    the application's [`Authenticate`] refuses ([`AuthError`] says which status and error
///    code). Every challenge names the server's protected-resource metadata
///    (`resource_metadata="…/.well-known/oauth-protected-resource/mcp"`, below). The body is
///    a small JSON object (`{"error": ..., "error_description": ...}`) that never contains
///    the token. The `Authorization` header is then removed from the request, so nothing
///    further on (rmcp, handlers, logs) sees it. Nothing here logs it.
/// 3. **Session owner.** A request naming a session (`Mcp-Session-Id`) is refused with HTTP
///    403 when its token's principal or tenant is not the session's (the context that opened
///    it), and with 404 when the session is not open here. Every request is authenticated
///    again: a token that expires mid-session stops working at once, and the client may go
///    on with a fresh token for the same principal and tenant.
/// 4. **Body cap.** The body is read whole before rmcp sees it; one over
///    [`max_body_bytes`](McpHttp::max_body_bytes) (1 MiB by default) is HTTP 413
///    (`body_too_large`), whether it announced its length or came in chunks, and one not in
///    whole within [`body_timeout`](McpHttp::body_timeout) (30 seconds by default) is HTTP
///    408 (`body_timeout`), after which the connection closes. A `POST` whose
///    body is declared JSON but is not is HTTP 400 with JSON-RPC error `-32700` (parse
///    error), and JSON that is no JSON-RPC message is 400 with `-32600`; rmcp answers 415 to
///    a body not declared `application/json`.
/// 5. **Session caps.** An `initialize`, which opens a session, is refused when its principal
///    already has [`max_sessions_per_principal`](McpHttp::max_sessions_per_principal) open
///    (8 by default; a principal is counted within its tenant) or its tenant
///    [`max_sessions_per_tenant`](McpHttp::max_sessions_per_tenant) (32 by default), both
///    with HTTP 429, or when the server has [`max_sessions`](McpHttp::max_sessions) open (64
///    by default), with HTTP 503. The body's `error` says which cap:
///    `too_many_principal_sessions`, `too_many_tenant_sessions` or `too_many_sessions`. So
///    one principal or tenant cannot take every place, and the others still get sessions.
///    A session ends when the client deletes it (`DELETE`, answered 204), after
///    [`idle_timeout`](McpHttp::idle_timeout) without a request (5 minutes by default), or
///    when the server stops; its place and the record of its owner go with it, so the server
///    never remembers more than `max_sessions` owners.
/// 6. **rmcp's transport**: the `Host` header against
///    [`allowed_hosts`](McpHttp::allowed_hosts) (loopback names by default; 403 otherwise),
///    then the MCP message itself.
///
/// A refusal leaves its connection fit for the client's next request: the body of a request
/// refused before step 4 is read and thrown away (up to `max_body_bytes`, and up to 1 MiB
/// past the cap for a body over it), for at most 5 seconds. Where it cannot be (a longer or
/// slower body, or a client waiting for `100 Continue`, which is not asked for its body), the
/// refusal says `Connection: close` and the connection closes after it.
///
/// # Authorization metadata
///
/// As MCP's authorization section asks, the router serves the OAuth 2.0 Protected Resource
/// Metadata of RFC 9728 at `/.well-known/oauth-protected-resource` followed by the endpoint's
/// path (`/.well-known/oauth-protected-resource/mcp` by default), the form the challenges
/// name, and at `/.well-known/oauth-protected-resource` alone (unless
/// [`root_metadata`](McpHttp::root_metadata) leaves it out, as all but one of several
/// endpoints merged into one application must):
///
/// ```json
/// {"resource": "https://mcp.example.com/mcp",
///  "authorization_servers": ["https://auth.example.com"],
///  "bearer_methods_supported": ["header"]}
/// ```
///
/// `resource` is [`resource`](McpHttp::resource) (or derived from the request's `Host`),
/// `authorization_servers` the issuers given to
/// [`authorization_servers`](McpHttp::authorization_servers) (left out when there are none),
/// and tokens are read from the `Authorization` header only. The document is public: it
/// needs no token and may be fetched from any origin. With `resource` given, it may be
/// cached for an hour; derived from `Host`, it says `Cache-Control: no-store` and
/// `Vary: Host`, so that no cache hands one `Host`'s document to another.
///
/// # One runtime per session
///
/// `initialize` opens a session: the application's `make_runtime` is called with the
/// authenticated context and the session gets an [`McpServer`] of its own over that runtime,
/// so call ids, quotas and the ledger scope are per session, as over stdio. Each `tools/call`
/// runs with the context of its own request's token (same principal and tenant, perhaps a
/// later expiry).
///
/// This server serves sessions only, so it serves the MCP revisions that open them with
/// `initialize`: 2024-11-05 to 2025-11-25. It does not serve 2026-07-28, whose requests need
/// no session: one that names it is refused with JSON-RPC error `-32022` (unsupported
/// protocol version) and HTTP 400, and its `data.supported` lists the versions served, as does
/// the answer to `server/discover`. A client that asks first (the Python SDK's `mcp.Client`
/// does by default) then falls back to `initialize` and a session.
///
/// [`into_router`](McpHttp::into_router) gives an [`axum::Router`] that serves the MCP
/// endpoint at [`path`](McpHttp::path) (`/mcp` by default) and the metadata above, to merge
/// into a larger application or wrap in layers of its own (TLS termination, rate limits,
/// tracing).
pub struct McpHttp {
    make_runtime: Arc<MakeRuntime>,
    authenticate: Arc<AuthenticateFn>,
    path: String,
    allowed_origins: Vec<String>,
    allowed_hosts: Option<Vec<String>>,
    resource: Option<Uri>,
    authorization_servers: Vec<String>,
    root_metadata: bool,
    max_body_bytes: usize,
    body_timeout: Duration,
    caps: Caps,
    idle_timeout: Option<Duration>,
    page_size: usize,
    implementation: Implementation,
    instructions: Option<String>,
}

/// What every session and every request of one server share.
pub(super) struct Shared {
    make_runtime: Arc<MakeRuntime>,
    page_size: usize,
    implementation: Implementation,
    instructions: Option<String>,
}

impl McpHttp {
    /// Default cap on a request body, in bytes (1 MiB).
    pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
    /// Default time a request body may take to arrive (30 seconds).
    pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
    /// Default cap on open sessions.
    pub const DEFAULT_MAX_SESSIONS: usize = 64;
    /// Default cap on the sessions one principal (of one tenant) has open.
    pub const DEFAULT_MAX_SESSIONS_PER_PRINCIPAL: usize = 8;
    /// Default cap on the sessions one tenant's principals have open together.
    pub const DEFAULT_MAX_SESSIONS_PER_TENANT: usize = 32;
    /// Default time a session may stay without a request before it is closed (5 minutes).
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

    /// A server whose sessions each run on a runtime from `make_runtime` (called once per
    /// session with the context of the token that opened it), for clients whose bearer
    /// tokens `authenticate` accepts.
    pub fn new(
        make_runtime: impl Fn(&Context) -> Runtime + Send + Sync + 'static,
        authenticate: impl Authenticate,
    ) -> McpHttp {
        let authenticate = Arc::new(authenticate);
        let authenticate: Arc<AuthenticateFn> = Arc::new(move |token, parts| {
            let authenticate = Arc::clone(&authenticate);
            Box::pin(async move { authenticate.authenticate(token, parts).await })
        });
        McpHttp {
            make_runtime: Arc::new(make_runtime),
            authenticate,
            path: "/mcp".to_owned(),
            allowed_origins: Vec::new(),
            allowed_hosts: None,
            resource: None,
            authorization_servers: Vec::new(),
            root_metadata: true,
            max_body_bytes: McpHttp::DEFAULT_MAX_BODY_BYTES,
            body_timeout: McpHttp::DEFAULT_BODY_TIMEOUT,
            caps: Caps {
                principal: McpHttp::DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
                tenant: McpHttp::DEFAULT_MAX_SESSIONS_PER_TENANT,
                server: McpHttp::DEFAULT_MAX_SESSIONS,
            },
            idle_timeout: Some(McpHttp::DEFAULT_IDLE_TIMEOUT),
            page_size: McpServer::DEFAULT_PAGE_SIZE,
            implementation: Implementation::new("tool-core", env!("CARGO_PKG_VERSION")),
            instructions: None,
        }
    }

    /// Where the MCP endpoint is served (default `/mcp`; a leading `/` is added if missing).
    /// It is an axum route path: [`into_router`](Self::into_router) panics, as axum does, on
    /// one axum refuses (such as an unclosed `{`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        self
    }

    /// The web origins whose pages may call the server, as `scheme://host[:port]` (the port
    /// defaults to the scheme's), or `null`. A request with any other `Origin` is refused with
    /// HTTP 403; a request without one is let through (see [`McpHttp`]). An entry that is not
    /// an origin matches nothing. Empty by default: no browser page may call the server.
    pub fn allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// The `Host` values the server answers to (`host` or `host:port`), checked by rmcp:
    /// `localhost`, `127.0.0.1` and `::1` by default, which suits a server on loopback.
    /// A server reached under another name must list it.
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// The URL clients reach the MCP endpoint at (`https://mcp.example.com/mcp`), named as
    /// the `resource` of the protected-resource metadata and the one its address is derived
    /// from. Without it, the URL is `http://` followed by the request's `Host` (when it is one
    /// of [`allowed_hosts`](Self::allowed_hosts)) and [`path`](Self::path), which suits a
    /// server reached directly; behind TLS termination or a proxy, name it.
    /// [`into_router`](Self::into_router) panics when it has no scheme or no host.
    pub fn resource(mut self, resource: Uri) -> Self {
        self.resource = Some(resource);
        self
    }

    /// The issuer URLs of the OAuth authorization servers whose tokens this server accepts,
    /// listed as `authorization_servers` in the protected-resource metadata, where MCP clients
    /// look for them. Empty by default (the field is then left out): tokens come from
    /// elsewhere.
    pub fn authorization_servers(
        mut self,
        issuers: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.authorization_servers = issuers.into_iter().map(Into::into).collect();
        self
    }

    /// Whether the router also serves the protected-resource metadata at
    /// `/.well-known/oauth-protected-resource` alone, besides that path followed by
    /// [`path`](Self::path) (default `true`). There is one such root document per host, so
    /// of several endpoints merged into one application's router, all but one must leave it
    /// out: axum panics on a merge of two routers that serve the same path. (An endpoint at
    /// `/` has its document there whatever this says.)
    ///
    /// ```
    /// # use tool_core::mcp::{AuthError, McpHttp};
    /// # use tool_core::{Context, Registry, Runtime};
    /// # use std::sync::Arc;
    /// # let registry = Arc::new(Registry::new());
    /// # let other = Arc::clone(&registry);
    /// # let auth = |_: &str, _: &http::request::Parts| Err::<Context, _>(AuthError::InvalidToken);
    /// let tools = McpHttp::new(move |_cx: &Context| Runtime::new(Arc::clone(&registry)), auth)
    ///     .path("/tools");
    /// let admin = McpHttp::new(move |_cx: &Context| Runtime::new(Arc::clone(&other)), auth)
    ///     .path("/admin")
    ///     .root_metadata(false);
    /// let app = tools.into_router().merge(admin.into_router());
    /// # drop(app);
    /// ```
    pub fn root_metadata(mut self, serve: bool) -> Self {
        self.root_metadata = serve;
        self
    }

    /// The largest request body read, in bytes; a longer one is refused with HTTP 413
    /// (default [`DEFAULT_MAX_BODY_BYTES`](Self::DEFAULT_MAX_BODY_BYTES)). A request is held in
    /// memory whole, so this bounds what each request in flight may take.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// How long the body of an authenticated request may take to arrive whole, from when the
    /// server starts reading it (default
    /// [`DEFAULT_BODY_TIMEOUT`](Self::DEFAULT_BODY_TIMEOUT)). One that is not in by then is
    /// refused with HTTP 408 (`body_timeout`) and `Connection: close`, so that a slow client
    /// cannot hold the request's task for good.
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// How many sessions may be open at once on the server; a request that would open another
    /// is refused with HTTP 503 and `too_many_sessions` (default
    /// [`DEFAULT_MAX_SESSIONS`](Self::DEFAULT_MAX_SESSIONS); 0 counts as 1).
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.caps.server = sessions.max(1);
        self
    }

    /// How many sessions one principal may have open at once (a principal of one tenant:
    /// `alice` of `acme` and `alice` of `globex` are counted apart); a request that would open
    /// another is refused with HTTP 429 and `too_many_principal_sessions` (default
    /// [`DEFAULT_MAX_SESSIONS_PER_PRINCIPAL`](Self::DEFAULT_MAX_SESSIONS_PER_PRINCIPAL); 0
    /// counts as 1).
    pub fn max_sessions_per_principal(mut self, sessions: usize) -> Self {
        self.caps.principal = sessions.max(1);
        self
    }

    /// How many sessions the principals of one tenant may have open at once together; a
    /// request that would open another is refused with HTTP 429 and
    /// `too_many_tenant_sessions` (default
    /// [`DEFAULT_MAX_SESSIONS_PER_TENANT`](Self::DEFAULT_MAX_SESSIONS_PER_TENANT); 0 counts
    /// as 1). Sessions of contexts without a tenant meet only the other two caps.
    pub fn max_sessions_per_tenant(mut self, sessions: usize) -> Self {
        self.caps.tenant = sessions.max(1);
        self
    }

    /// How long a session may go without a request before it is closed (default
    /// [`DEFAULT_IDLE_TIMEOUT`](Self::DEFAULT_IDLE_TIMEOUT)); `None` keeps sessions until the
    /// client deletes them, which lets clients that vanish hold their slots.
    pub fn idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// How many tools one `tools/list` page holds ([`McpServer::page_size`]).
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }

    /// The name and version sent as `serverInfo` ([`McpServer::server_info`]).
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.implementation = Implementation::new(name, version);
        self
    }

    /// Instructions for the client, sent in the `initialize` result.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The MCP endpoint as an axum router, serving [`path`](Self::path), and the
    /// protected-resource metadata at `/.well-known/oauth-protected-resource` followed by
    /// [`path`](Self::path) and, unless [`root_metadata`](Self::root_metadata) says not to,
    /// at `/.well-known/oauth-protected-resource` alone (merge it into an application's
    /// router at the root, so that these stay where clients look for them).
    ///
    /// # Panics
    ///
    /// When [`path`](Self::path) is not an axum route path, or [`resource`](Self::resource)
    /// has no scheme or no host. Merging the router into one that serves one of its paths
    /// panics in axum: two endpoints merged into one router need paths of their own, and all
    /// but one of them [`root_metadata(false)`](Self::root_metadata).
    pub fn into_router(self) -> Router {
        if let Some(resource) = &self.resource {
            assert!(
                resource.scheme().is_some() && resource.authority().is_some(),
                "McpHttp::resource must be an absolute URL (scheme and host), not `{resource}`"
            );
        }
        let metadata = Arc::new(ProtectedResource::new(
            self.resource,
            self.path.clone(),
            self.authorization_servers,
            self.allowed_hosts.clone(),
        ));
        let shared = Arc::new(Shared {
            make_runtime: self.make_runtime,
            page_size: self.page_size,
            implementation: self.implementation,
            instructions: self.instructions,
        });
        let mut config =
            StreamableHttpServerConfig::default().with_max_request_body_bytes(self.max_body_bytes);
        if let Some(hosts) = self.allowed_hosts.clone() {
            config = config.with_allowed_hosts(hosts);
        }
        let mut sessions = LocalSessionManager::default();
        sessions.session_config.keep_alive = self.idle_timeout;
        let factory = Arc::clone(&shared);
        let service = StreamableHttpService::new(
            move || Ok(SessionHandler::new(Arc::clone(&factory))),
            Arc::new(sessions),
            config,
        );
        let gate = Arc::new(Gate {
            service,
            authenticate: self.authenticate,
            allowed_origins: self
                .allowed_origins
                .iter()
                .filter_map(|origin| Origin::parse(origin))
                .collect(),
            sessions: Arc::new(Sessions::new(self.caps)),
            max_body_bytes: self.max_body_bytes,
            body_timeout: self.body_timeout,
            metadata: Arc::clone(&metadata),
        });
        let document = move |headers: HeaderMap| {
            let metadata = Arc::clone(&metadata);
            async move { metadata.document(&headers) }
        };
        let mut router = Router::new().route(&self.path, any(admit)).with_state(gate);
        if self.root_metadata || self.path == "/" {
            router = router.route(WELL_KNOWN, get(document.clone()));
        }
        if self.path != "/" {
            router = router.route(&format!("{WELL_KNOWN}{}", self.path), get(document));
        }
        router
    }

    /// Serves the endpoint on `listener` until an I/O error ends it.
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        axum::serve(listener, self.into_router()).await
    }
}

impl fmt::Debug for McpHttp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpHttp")
            .field("path", &self.path)
            .field("allowed_origins", &self.allowed_origins)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("root_metadata", &self.root_metadata)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("body_timeout", &self.body_timeout)
            .field("max_sessions", &self.caps.server)
            .field("max_sessions_per_principal", &self.caps.principal)
            .field("max_sessions_per_tenant", &self.caps.tenant)
            .field("idle_timeout", &self.idle_timeout)
            .finish_non_exhaustive()
    }
}

struct Gate {
    service: StreamableHttpService<SessionHandler, LocalSessionManager>,
    authenticate: Arc<AuthenticateFn>,
    allowed_origins: Vec<Origin>,
    sessions: Arc<Sessions>,
    max_body_bytes: usize,
    body_timeout: Duration,
    metadata: Arc<ProtectedResource>,
}

/// Steps 1 to 5 of [`McpHttp`]'s list, then rmcp.
async fn admit(State(gate): State<Arc<Gate>>, request: Request) -> Response {
    let (mut parts, body) = request.into_parts();
    let owner = match gate.check(&mut parts).await {
        Ok(owner) => owner,
        Err(refusal) => {
            return body::refuse_unread(refusal, &parts.headers, body, gate.max_body_bytes).await;
        }
    };
    // The whole body is read here, so that every later refusal (rmcp's among them) leaves the
    // connection ready for the client's next request.
    let body = match body::read(body, gate.max_body_bytes, gate.body_timeout).await {
        body::Read::Whole(bytes) => bytes,
        body::Read::TooLarge(rest) => {
            let refusal = refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                &format!("the request body is over {} bytes", gate.max_body_bytes),
            );
            return body::refuse_rest(refusal, rest, body::DRAIN_BYTES).await;
        }
        body::Read::Broken => {
            return body::closing(refuse(
                StatusCode::BAD_REQUEST,
                "broken_body",
                "the request body could not be read",
            ));
        }
        body::Read::TimedOut => {
            return body::closing(refuse(
                StatusCode::REQUEST_TIMEOUT,
                "body_timeout",
                &format!(
                    "the request body did not arrive within {} ms",
                    gate.body_timeout.as_millis()
                ),
            ));
        }
    };
    let opens_session = if parts.method == Method::POST && is_json(&parts.headers) {
        match serde_json::from_slice::<ClientJsonRpcMessage>(&body) {
            Ok(ClientJsonRpcMessage::Request(request)) => {
                matches!(request.request, ClientRequest::InitializeRequest(_))
            }
            Ok(_) => false,
            Err(_) if serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_err() => {
                return refuse_rpc(-32700, "Parse error: the body is not JSON");
            }
            Err(_) => {
                return refuse_rpc(
                    -32600,
                    "Invalid Request: the body is not a JSON-RPC request, notification or response",
                );
            }
        }
    } else {
        false
    };
    if parts.headers.contains_key(SESSION_HEADER) || !opens_session {
        let deletes = parts.method == Method::DELETE;
        let response = gate
            .service
            .handle(Request::from_parts(parts, Body::from(body)))
            .await
            .into_response();
        // rmcp says 202 to a session deleted; the Python SDK takes only 200 and 204 for done.
        if deletes && response.status() == StatusCode::ACCEPTED {
            let mut done = Response::new(Body::empty());
            *done.status_mut() = StatusCode::NO_CONTENT;
            return done;
        }
        return response;
    }
    let slot = match gate.sessions.reserve(owner) {
        Ok(slot) => Arc::new(slot),
        Err(cap) => return refuse_cap(cap),
    };
    parts.extensions.insert(NewSession(Arc::clone(&slot)));
    let response = gate
        .service
        .handle(Request::from_parts(parts, Body::from(body)))
        .await;
    if let Some(id) = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|id| id.to_str().ok())
    {
        slot.opened(id);
    }
    response.into_response()
}

impl Gate {
    /// Steps 1 to 3, which need only the request's head: the owner of the context its token
    /// gives (added to its extensions), or the refusal.
    async fn check(&self, parts: &mut Parts) -> Result<Owner, Response> {
        if !origin::allowed(&parts.headers, &self.allowed_origins) {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                "forbidden_origin",
                "the request's Origin is not allowed",
            ));
        }
        let cx = match auth::bearer(&parts.headers) {
            Bearer::Missing => {
                let response = refuse(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "a bearer token is required",
                );
                return Err(self.challenge(response, &parts.headers, None));
            }
            Bearer::Malformed => {
                return Err(self.refuse_token(AuthError::InvalidToken, &parts.headers));
            }
            Bearer::Token(token) => {
                let token = token.to_owned();
                match (self.authenticate)(&token, parts).await {
                    Ok(cx) => cx,
                    Err(error) => return Err(self.refuse_token(error, &parts.headers)),
                }
            }
        };
        parts.headers.remove(AUTHORIZATION);
        let owner = Owner::of(&cx);
        parts.extensions.insert(Authenticated(cx));
        if let Some(id) = parts.headers.get(SESSION_HEADER) {
            match id.to_str().ok().and_then(|id| self.sessions.owner(id)) {
                None => {
                    return Err(refuse(
                        StatusCode::NOT_FOUND,
                        "session_not_found",
                        "no such session is open",
                    ));
                }
                Some(session_owner) if session_owner != owner => {
                    return Err(refuse(
                        StatusCode::FORBIDDEN,
                        "forbidden_session",
                        "the session belongs to another principal or tenant",
                    ));
                }
                Some(_) => {}
            }
        }
        Ok(owner)
    }
}

/// Whether the request says its body is JSON (rmcp answers 415 to any other).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// A body that is not a JSON-RPC message: HTTP 400 with a JSON-RPC error of no id, as the
/// Streamable HTTP transport allows.
fn refuse_rpc(code: i32, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": code, "message": message },
    });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A refusal before rmcp: a status and a JSON body with a stable error code.
fn refuse(status: StatusCode, error: &str, description: &str) -> Response {
    let body = serde_json::json!({ "error": error, "error_description": description });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn refuse_cap(cap: Cap) -> Response {
    let (status, error, description) = match cap {
        Cap::Principal(cap) => (
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_principal_sessions",
            format!("the principal has as many sessions open as it may ({cap})"),
        ),
        Cap::Tenant(cap) => (
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_tenant_sessions",
            format!("the tenant has as many sessions open as it may ({cap})"),
        ),
        Cap::Server(cap) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "too_many_sessions",
            format!("the server has as many sessions open as it allows ({cap})"),
        ),
    };
    refuse(status, error, &description)
}

impl Gate {
    fn refuse_token(&self, error: AuthError, headers: &HeaderMap) -> Response {
        let response = refuse(error.status(), error.code(), error.description());
        self.challenge(response, headers, Some(error))
    }

    /// Adds the `WWW-Authenticate: Bearer` challenge: the error, if any, and where the
    /// protected-resource metadata is (RFC 9728).
    fn challenge(
        &self,
        mut response: Response,
        headers: &HeaderMap,
        error: Option<AuthError>,
    ) -> Response {
        let mut params = Vec::new();
        if let Some(error) = error {
            params.push(format!("error=\"{}\"", error.code()));
            params.push(format!("error_description=\"{}\"", error.description()));
        }
        if let Some(url) = self.metadata.document_url(headers) {
            params.push(format!("resource_metadata=\"{url}\""));
        }
        let challenge = if params.is_empty() {
            "Bearer".to_owned()
        } else {
            format!("Bearer {}", params.join(", "))
        };
        let challenge = HeaderValue::from_str(&challenge)
            .unwrap_or_else(|_| HeaderValue::from_static("Bearer"));
        response.headers_mut().insert(WWW_AUTHENTICATE, challenge);
        response
    }
}
