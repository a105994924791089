//! The trusted context: who is calling, for which tenant and request, until when, and the
//! cancellation signal. Built by the application; nothing in it comes from model output.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::observe::{Event, Observer, Progress};
use crate::outcome::InvocationId;
#[cfg(feature = "sandbox")]
use crate::sandbox::{Authority, Command, Finished, SandboxError};

/// What the application knows and the model cannot change: the principal, tenant, request
/// id, the run's deadline, its cancellation signal and any typed values the application
/// attaches. Handed to authorization, approval and the handler.
///
/// Cloning is cheap. Inside a handler, the context also names the call being run
/// ([`call_id`](Self::call_id)) and can report [`progress`](Self::progress).
///
/// ```
/// use std::time::Duration;
/// use tool_core::Context;
///
/// #[derive(Debug)]
/// struct Roles(Vec<&'static str>);
///
/// let cx = Context::builder("user-17")
///     .tenant("acme")
///     .request_id("req-9f2")
///     .timeout(Duration::from_secs(30))
///     .extension(Roles(vec!["billing"]))
///     .build();
/// assert_eq!(cx.principal(), "user-17");
/// assert_eq!(cx.get::<Roles>().map(|r| r.0.len()), Some(1));
/// ```
#[derive(Clone)]
pub struct Context {
    trusted: Arc<Trusted>,
    call: Option<Arc<CallScope>>,
}

#[derive(Clone)]
struct Trusted {
    cancel: CancellationToken,
    principal: Arc<str>,
    tenant: Option<Arc<str>>,
    request_id: Option<String>,
    scope: Option<Arc<str>>,
    idempotency_key: Option<Arc<str>>,
    deadline: Option<Instant>,
    extensions: Arc<HashMap<TypeId, Box<dyn Any + Send + Sync>>>,
    /// What the application narrows every tool's authority to for this run.
    #[cfg(feature = "sandbox")]
    authority: Option<Arc<Authority>>,
}

/// `text`, or one shared empty string.
fn shared_or_empty(text: Option<&Arc<str>>) -> Arc<str> {
    static EMPTY: std::sync::OnceLock<Arc<str>> = std::sync::OnceLock::new();
    Arc::clone(text.unwrap_or_else(|| EMPTY.get_or_init(|| Arc::from(""))))
}

/// Why a wait bounded by the run ([`Context::bounded`]) ended early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// The run was cancelled.
    Cancelled,
    /// The run's deadline passed.
    Deadline,
}

impl Context {
    /// Starts a context for `principal` (a user, service or agent id the application has
    /// authenticated).
    pub fn builder(principal: impl Into<String>) -> ContextBuilder {
        ContextBuilder {
            trusted: Trusted {
                cancel: CancellationToken::new(),
                principal: Arc::from(principal.into()),
                tenant: None,
                request_id: None,
                scope: None,
                idempotency_key: None,
                deadline: None,
                extensions: Arc::new(HashMap::new()),
                #[cfg(feature = "sandbox")]
                authority: None,
            },
            timeout: None,
        }
    }

    /// The authenticated principal.
    pub fn principal(&self) -> &str {
        &self.trusted.principal
    }

    /// The tenant, if the application set one.
    pub fn tenant(&self) -> Option<&str> {
        self.trusted.tenant.as_deref()
    }

    /// The application's request id, if it set one.
    pub fn request_id(&self) -> Option<&str> {
        self.trusted.request_id.as_deref()
    }

    /// The scope of call ids and of the audit trail in a [ledger](crate::ledger): the one set
    /// with [`ContextBuilder::scope`], else the tenant, else `""`.
    pub fn scope(&self) -> &str {
        self.trusted
            .scope
            .as_deref()
            .or(self.trusted.tenant.as_deref())
            .unwrap_or("")
    }

    /// The [principal](Self::principal), shared.
    pub(crate) fn shared_principal(&self) -> &Arc<str> {
        &self.trusted.principal
    }

    /// The [scope](Self::scope), shared.
    pub(crate) fn shared_scope(&self) -> Arc<str> {
        let scope = self.trusted.scope.as_ref().or(self.trusted.tenant.as_ref());
        shared_or_empty(scope)
    }

    /// The [tenant](Self::tenant), shared, or `""`.
    pub(crate) fn shared_tenant(&self) -> Arc<str> {
        shared_or_empty(self.trusted.tenant.as_ref())
    }

    /// The [idempotency key](Self::idempotency_key), shared.
    pub(crate) fn shared_idempotency_key(&self) -> Option<&Arc<str>> {
        self.trusted.idempotency_key.as_ref()
    }

    /// The application's idempotency key, if one was set.
    pub fn idempotency_key(&self) -> Option<&str> {
        self.trusted.idempotency_key.as_deref()
    }

    /// This context with `scope` as its [scope](Self::scope) (everything else shared).
    pub fn with_scope(&self, scope: impl Into<String>) -> Context {
        let mut trusted = (*self.trusted).clone();
        trusted.scope = Some(Arc::from(scope.into()));
        Context {
            trusted: Arc::new(trusted),
            call: self.call.clone(),
        }
    }

    /// This context with `key` as its idempotency key (everything else shared).
    pub fn with_idempotency_key(&self, key: impl Into<String>) -> Context {
        let mut trusted = (*self.trusted).clone();
        trusted.idempotency_key = Some(Arc::from(key.into()));
        Context {
            trusted: Arc::new(trusted),
            call: self.call.clone(),
        }
    }

    /// The run's deadline: no call starts after it and a running call is stopped at it.
    pub fn deadline(&self) -> Option<Instant> {
        self.trusted.deadline
    }

    /// A value the application attached with [`ContextBuilder::extension`].
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.trusted
            .extensions
            .get(&TypeId::of::<T>())
            .and_then(|value| value.downcast_ref())
    }

    /// The cancellation signal. Inside a handler this is the call's own token: it fires when
    /// the run is cancelled, when the call times out or the run's deadline passes, and when the
    /// call ends, so work the handler started (tasks, requests) can stop cooperatively. Every
    /// clone of the handler's context sees it, whenever it first asks: a task that is handed a
    /// clone and checks only after the call timed out finds it cancelled.
    pub fn cancellation(&self) -> &CancellationToken {
        match &self.call {
            // Made on first use: most handlers never ask.
            Some(call) => call.token.get_or_init(|| self.trusted.cancel.child_token()),
            None => &self.trusted.cancel,
        }
    }

    /// Whether cancellation has been signalled.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation().is_cancelled()
    }

    /// Completes when cancellation is signalled.
    pub async fn cancelled(&self) {
        self.cancellation().cancelled().await;
    }

    /// Awaits `future` unless the run is cancelled or its deadline passes first (cancellation
    /// wins a tie). Every wait inside a run goes through here: approvals, concurrency slots,
    /// model calls in the repair and agent loops.
    pub(crate) async fn bounded<F: Future>(&self, future: F) -> Result<F::Output, Stopped> {
        let deadline = async {
            match self.deadline() {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            () = self.cancelled() => Err(Stopped::Cancelled),
            () = deadline => Err(Stopped::Deadline),
            output = future => Ok(output),
        }
    }

    /// Inside a handler, the provider's id of the call being run; `None` outside a call.
    pub fn call_id(&self) -> Option<&str> {
        self.call.as_deref().map(|call| &*call.call_id)
    }

    /// Inside a handler, the runtime's id of the call being run.
    pub fn invocation_id(&self) -> Option<InvocationId> {
        self.call.as_deref().map(|call| call.id)
    }

    /// Reports progress of the call being run to the runtime's [`Observer`]: `progress` must
    /// grow with every report (`total`, when known, is the value at completion). Returns
    /// whether the report was delivered: reports that do not increase, that are not finite,
    /// that come from outside a handler or with no observer configured, or that come after the
    /// call's outcome was recorded are dropped.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        match &self.call {
            Some(call) => call.progress(progress, total, message),
            None => false,
        }
    }

    /// The same trusted values with another cancellation token, e.g. a child token that
    /// cancels one batch of calls without cancelling the whole run.
    pub fn with_cancellation(&self, token: CancellationToken) -> Context {
        let mut trusted = (*self.trusted).clone();
        trusted.cancel = token;
        Context {
            trusted: Arc::new(trusted),
            call: self.call.clone(),
        }
    }

    /// This context with its authority narrowed to what both it and `authority` allow (see
    /// [`Authority::narrow`]): a context can only narrow, never widen, what a tool may reach.
    #[cfg(feature = "sandbox")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sandbox")))]
    pub fn narrow(&self, authority: &Authority) -> Context {
        let mut trusted = (*self.trusted).clone();
        trusted.authority = Some(Arc::new(match &self.trusted.authority {
            Some(narrowed) => narrowed.narrow(authority),
            None => authority.clone(),
        }));
        Context {
            trusted: Arc::new(trusted),
            call: self.call.clone(),
        }
    }

    /// Inside a handler, the authority its programs run with: the tool's declared one,
    /// narrowed by this context. `None` outside a call and for a tool that declares none.
    #[cfg(feature = "sandbox")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sandbox")))]
    pub fn authority(&self) -> Option<Authority> {
        let declared = self.call.as_deref()?.authority.get()?.as_deref()?;
        Some(self.effective_authority(declared))
    }

    /// `declared` narrowed by this context.
    #[cfg(feature = "sandbox")]
    pub(crate) fn effective_authority(&self, declared: &Authority) -> Authority {
        match &self.trusted.authority {
            Some(narrowed) => declared.narrow(narrowed),
            None => declared.clone(),
        }
    }

    /// Runs `command` confined by the kernel to this call's [authority](Self::authority), and
    /// waits for it to end; the call's end (its outcome, timeout or cancellation) kills it and
    /// everything it started. See [`sandbox`](crate::sandbox).
    ///
    /// Fails with [`Code::SandboxUnavailable`](crate::Code::SandboxUnavailable) when the
    /// authority cannot be enforced here (nothing is started), and with
    /// [`Code::ResourceExhausted`](crate::Code::ResourceExhausted) when a limit stopped the
    /// program; with `?` in a handler, the call ends with that code.
    #[cfg(feature = "sandbox")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sandbox")))]
    pub async fn run(&self, command: Command) -> Result<Finished, SandboxError> {
        let authority = self.authority();
        crate::sandbox::run(command, authority.as_ref(), self.cancellation()).await
    }

    pub(crate) fn for_call(&self, scope: Arc<CallScope>) -> Context {
        Context {
            trusted: Arc::clone(&self.trusted),
            call: Some(scope),
        }
    }

    pub(crate) fn time_left(&self) -> Option<Duration> {
        self.trusted
            .deadline
            .map(|deadline| deadline.saturating_duration_since(Instant::now()))
    }
}

impl fmt::Debug for Context {
    /// Shows who and what, not the attached values (they may be secrets).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("principal", &self.trusted.principal)
            .field("tenant", &self.trusted.tenant)
            .field("request_id", &self.trusted.request_id)
            .field("deadline", &self.trusted.deadline)
            .field("cancelled", &self.trusted.cancel.is_cancelled())
            .field("call_id", &self.call_id())
            .field("extensions", &self.trusted.extensions.len())
            .finish()
    }
}

/// Builds a [`Context`].
pub struct ContextBuilder {
    trusted: Trusted,
    timeout: Option<Duration>,
}

impl ContextBuilder {
    /// The tenant the call acts for.
    pub fn tenant(mut self, tenant: impl Into<String>) -> Self {
        self.trusted.tenant = Some(Arc::from(tenant.into()));
        self
    }

    /// The application's id for the request or run.
    pub fn request_id(mut self, request_id: impl Into<String>) -> Self {
        self.trusted.request_id = Some(request_id.into());
        self
    }

    /// The scope of the run's call ids and audit trail in a [ledger](crate::ledger) (default:
    /// the tenant). Provider call ids are unique within a conversation, so a scope per
    /// conversation or run keeps two runs' ids apart.
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.trusted.scope = Some(Arc::from(scope.into()));
        self
    }

    /// The application's idempotency key for the call made with this context: claimed in the
    /// runtime's [ledger](crate::ledger) within the tenant instead of the call id, so the same
    /// key gives the same outcome across requests. One key names one call: use a context per
    /// keyed request ([`Context::with_idempotency_key`]).
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.trusted.idempotency_key = Some(Arc::from(key.into()));
        self
    }

    /// The run's deadline.
    pub fn deadline(mut self, deadline: impl Into<Instant>) -> Self {
        self.trusted.deadline = Some(deadline.into());
        self.timeout = None;
        self
    }

    /// A deadline `timeout` after [`build`](Self::build).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The cancellation token of the run; by default a fresh one that only
    /// [`Context::cancellation`] can trigger.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.trusted.cancel = token;
        self
    }

    /// Attaches a typed value (roles, a database handle, an API client) for policies and
    /// handlers to read with [`Context::get`]. One value per type; a second replaces the first.
    pub fn extension<T: Any + Send + Sync>(mut self, value: T) -> Self {
        if let Some(extensions) = Arc::get_mut(&mut self.trusted.extensions) {
            extensions.insert(TypeId::of::<T>(), Box::new(value));
        }
        self
    }

    /// Narrows the authority of every tool called with this context (a tenant's own
    /// workspace, lower limits): see [`Context::narrow`].
    #[cfg(feature = "sandbox")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sandbox")))]
    pub fn authority(mut self, authority: Authority) -> Self {
        self.trusted.authority = Some(Arc::new(match self.trusted.authority.take() {
            Some(narrowed) => narrowed.narrow(&authority),
            None => authority,
        }));
        self
    }

    /// The context.
    pub fn build(mut self) -> Context {
        if let Some(timeout) = self.timeout {
            self.trusted.deadline = Instant::now().checked_add(timeout);
        }
        Context {
            trusted: Arc::new(self.trusted),
            call: None,
        }
    }
}

impl fmt::Debug for ContextBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContextBuilder")
            .field("principal", &self.trusted.principal)
            .finish_non_exhaustive()
    }
}

/// The call a handler is running, shared between its context and the runtime.
pub(crate) struct CallScope {
    pub(crate) id: InvocationId,
    pub(crate) call_id: Arc<str>,
    pub(crate) tool: Arc<str>,
    token: OnceLock<CancellationToken>,
    observer: Option<Arc<dyn Observer>>,
    progress: Mutex<ProgressState>,
    /// The tool's declared authority, set by the runtime before the handler runs.
    #[cfg(feature = "sandbox")]
    authority: OnceLock<Option<Arc<Authority>>>,
}

#[derive(Default)]
struct ProgressState {
    last: Option<f64>,
    seq: u64,
    closed: bool,
}

impl CallScope {
    pub(crate) fn new(
        id: InvocationId,
        call_id: Arc<str>,
        tool: Arc<str>,
        observer: Option<Arc<dyn Observer>>,
    ) -> Self {
        CallScope {
            id,
            call_id,
            tool,
            token: OnceLock::new(),
            observer,
            progress: Mutex::new(ProgressState::default()),
            #[cfg(feature = "sandbox")]
            authority: OnceLock::new(),
        }
    }

    /// Sets the tool's declared authority for the handler, once: later calls change nothing.
    #[cfg(feature = "sandbox")]
    pub(crate) fn declare(&self, authority: Option<Arc<Authority>>) {
        let _ = self.authority.set(authority);
    }

    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let Some(observer) = &self.observer else {
            // Nobody to deliver to.
            return false;
        };
        if !progress.is_finite() || total.is_some_and(|total| !total.is_finite()) {
            return false;
        }
        // Held while the event is delivered, so no report can follow `close`.
        let mut state = crate::sync::lock(&self.progress);
        if state.closed || state.last.is_some_and(|last| progress <= last) {
            return false;
        }
        state.last = Some(progress);
        state.seq += 1;
        observer.on_event(Event::Progress(&Progress {
            id: self.id,
            call_id: &self.call_id,
            tool: &self.tool,
            seq: state.seq,
            progress,
            total,
            message,
        }));
        true
    }

    /// Tells work the handler started that the call is over: every context of this call,
    /// including clones that have not asked for the token yet, sees it cancelled from now on.
    /// `scope` is the runtime's handle; the handler's own context must be dropped first.
    pub(crate) fn cancel(scope: &Arc<CallScope>) {
        match scope.token.get() {
            Some(token) => token.cancel(),
            // A clone still alive may ask later: it must find the token already cancelled.
            None if Arc::strong_count(scope) > 1 => {
                scope.token.get_or_init(CancellationToken::new).cancel();
            }
            // Nothing else holds this call's context, so nobody can ask (and most handlers
            // never do): no token to make.
            None => {}
        }
    }

    /// No progress is delivered after this returns.
    pub(crate) fn close(&self) {
        if self.observer.is_none() {
            return;
        }
        let mut state = crate::sync::lock(&self.progress);
        state.closed = true;
    }
}
