//! One MCP session: the runtime built for it at `initialize`, who it belongs to, and the slot
//! it holds among the server's sessions until it ends.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use http::request::Parts;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, InitializeRequestParams, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::{RequestContext, RoleServer};

use super::Shared;
use crate::context::Context;
use crate::mcp::McpServer;
use crate::sync::lock;

/// Who a session belongs to: the principal and tenant of the context it was opened with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Owner {
    principal: String,
    tenant: Option<String>,
}

impl Owner {
    pub(super) fn of(cx: &Context) -> Owner {
        Owner {
            principal: cx.principal().to_owned(),
            tenant: cx.tenant().map(str::to_owned),
        }
    }
}

/// The caps on open sessions: per principal (of a tenant), per tenant, and for the server.
#[derive(Debug, Clone, Copy)]
pub(super) struct Caps {
    pub(super) principal: usize,
    pub(super) tenant: usize,
    pub(super) server: usize,
}

/// The cap a new session would go past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cap {
    Principal(usize),
    Tenant(usize),
    Server(usize),
}

/// The sessions open or opening, counted per owner, per tenant and in all. Every entry belongs
/// to a [`Slot`] and goes with it, so the book never holds more than the server's cap.
#[derive(Default)]
struct Book {
    owners: HashMap<String, Owner>,
    per_owner: HashMap<Owner, usize>,
    per_tenant: HashMap<String, usize>,
    open: usize,
}

/// The live sessions by `Mcp-Session-Id`, and the places taken under the caps.
pub(super) struct Sessions {
    caps: Caps,
    book: Mutex<Book>,
}

impl Sessions {
    pub(super) fn new(caps: Caps) -> Sessions {
        Sessions {
            caps,
            book: Mutex::default(),
        }
    }

    /// Who the session `id` belongs to, if it is open here.
    pub(super) fn owner(&self, id: &str) -> Option<Owner> {
        lock(&self.book).owners.get(id).cloned()
    }

    /// A place for a session of `owner`, or the first cap (principal, tenant, server) it
    /// would go past.
    pub(super) fn reserve(self: &Arc<Self>, owner: Owner) -> Result<Slot, Cap> {
        let mut book = lock(&self.book);
        let caps = self.caps;
        if book.per_owner.get(&owner).copied().unwrap_or(0) >= caps.principal {
            return Err(Cap::Principal(caps.principal));
        }
        if let Some(tenant) = &owner.tenant
            && book.per_tenant.get(tenant).copied().unwrap_or(0) >= caps.tenant
        {
            return Err(Cap::Tenant(caps.tenant));
        }
        if book.open >= caps.server {
            return Err(Cap::Server(caps.server));
        }
        book.open += 1;
        *book.per_owner.entry(owner.clone()).or_default() += 1;
        if let Some(tenant) = &owner.tenant {
            *book.per_tenant.entry(tenant.clone()).or_default() += 1;
        }
        Ok(Slot {
            sessions: Arc::clone(self),
            owner,
            id: OnceLock::new(),
        })
    }
}

/// The request's authenticated context, put in the request's extensions by the gate.
#[derive(Clone)]
pub(super) struct Authenticated(pub(super) Context);

/// A place among the server's sessions, taken by a request that may open one. The session's
/// handler keeps it for as long as the session lives; the last holder to drop it frees the
/// place and forgets the session's owner.
pub(super) struct Slot {
    sessions: Arc<Sessions>,
    owner: Owner,
    id: OnceLock<String>,
}

impl Slot {
    /// Records the session `id` this slot now holds.
    pub(super) fn opened(&self, id: &str) {
        lock(&self.sessions.book)
            .owners
            .insert(id.to_owned(), self.owner.clone());
        let _ = self.id.set(id.to_owned());
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut book = lock(&self.sessions.book);
        if let Some(id) = self.id.get() {
            book.owners.remove(id);
        }
        book.open = book.open.saturating_sub(1);
        if let Some(count) = book.per_owner.get_mut(&self.owner) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                book.per_owner.remove(&self.owner);
            }
        }
        if let Some(tenant) = &self.owner.tenant
            && let Some(count) = book.per_tenant.get_mut(tenant)
        {
            *count = count.saturating_sub(1);
            if *count == 0 {
                book.per_tenant.remove(tenant);
            }
        }
    }
}

/// The slot of a request with no `Mcp-Session-Id`, in its extensions.
#[derive(Clone)]
pub(super) struct NewSession(pub(super) Arc<Slot>);

struct Open {
    server: McpServer,
    _slot: Arc<Slot>,
}

/// The rmcp handler of one session. rmcp makes one whenever it needs a handler (also to look a
/// tool up), so it is cheap until `initialize` builds the session's runtime.
pub(super) struct SessionHandler {
    shared: Arc<Shared>,
    open: OnceLock<Open>,
}

impl SessionHandler {
    pub(super) fn new(shared: Arc<Shared>) -> SessionHandler {
        SessionHandler {
            shared,
            open: OnceLock::new(),
        }
    }

    fn server(&self) -> Result<&McpServer, ErrorData> {
        self.open.get().map(|open| &open.server).ok_or_else(|| {
            ErrorData::invalid_request("this server serves sessions: send initialize first", None)
        })
    }
}

fn parts(context: &RequestContext<RoleServer>) -> Option<&Parts> {
    context.extensions.get::<Parts>()
}

fn unauthenticated() -> ErrorData {
    // Every request passes the gate, which adds the context; this is never sent unless rmcp
    // stops handing requests their HTTP parts.
    ErrorData::internal_error("the request carries no authenticated context", None)
}

impl ServerHandler for SessionHandler {
    fn get_info(&self) -> ServerConfig {
        match self.open.get() {
            Some(open) => open.server.get_info(),
            None => {
                let config =
                    ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
                        .with_server_info(self.shared.implementation.clone());
                match &self.shared.instructions {
                    Some(instructions) => config.with_instructions(instructions.clone()),
                    None => config,
                }
            }
        }
    }

    // Sessions are opened by `initialize`, which MCP revisions from 2026-07-28 no longer have:
    // advertising those would send clients down a sessionless path this server refuses.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.open.get()?.server.get_tool(name)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let parts = parts(&context).ok_or_else(unauthenticated)?;
        let cx = parts
            .extensions
            .get::<Authenticated>()
            .ok_or_else(unauthenticated)?;
        let slot = parts.extensions.get::<NewSession>().ok_or_else(|| {
            ErrorData::invalid_request("initialize opens a session: send it without one", None)
        })?;
        if self.open.get().is_some() {
            return Err(ErrorData::invalid_request(
                "the session is already initialized",
                None,
            ));
        }
        let runtime = (self.shared.make_runtime)(&cx.0);
        let session_cx = cx.0.clone();
        let mut server = McpServer::new(runtime, move || session_cx.clone())
            .page_size(self.shared.page_size)
            .server_info(
                self.shared.implementation.name.clone(),
                self.shared.implementation.version.clone(),
            );
        if let Some(instructions) = &self.shared.instructions {
            server = server.instructions(instructions.clone());
        }
        let _ = self.open.set(Open {
            server,
            _slot: Arc::clone(&slot.0),
        });
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.server()?.list_tools(request, context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let server = self.server()?;
        // The context of this request's token: the gate checked it names the session's owner.
        let cx = parts(&context)
            .and_then(|parts| parts.extensions.get::<Authenticated>())
            .ok_or_else(unauthenticated)?
            .0
            .clone();
        server.call_with(request, context, cx).await
    }
}
