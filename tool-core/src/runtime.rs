//! The runtime: one entry point, [`Runtime::invoke`], that turns a proposed call into exactly
//! one [`Outcome`] through a fixed order of stages.
//!
//! | # | stage | refuses with |
//! |---|---|---|
//! | 0 | correlate: the call id is short enough and was not used in this runtime (within the retention) | `call_id_too_long`, `duplicate_call_id` |
//! | 1 | resolve the name in the [`Registry`] (the allow-list) | `unknown_tool` |
//! | 2 | input byte cap | `input_too_large` |
//! | 3 | parse and validate into the tool's argument type, every violation | `invalid_arguments` |
//! | 4 | authorize: the runtime's [`Authorize`] policy, then the tool's typed check | `unauthorized` |
//! | 5 | approve, for tools that require it | `approval_denied`, `approval_expired` |
//! | 6 | admit: cancellation, deadline, concurrency caps (waiting), call quotas | `cancelled`, `timeout`, `budget_exhausted` |
//! | 7 | execute under the timeout and cancellation; panics are caught | `execution_failed`, `timeout`, `cancelled`, `outcome_unknown` |
//! | 8 | serialize the output under its byte cap, then validate that text against the output schema | `output_too_large`, `invalid_output` |
//! | 9 | record: trace the outcome and hand it to the [`Observer`] | |
//!
//! Each stage sees only calls every earlier stage let through: an invalid call is never
//! authorized, an unauthorized one never approved or run. From stage 3 on, stages receive the
//! typed value, never the model's text.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use futures_util::FutureExt as _;
use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::time::Instant;
use tracing::Instrument as _;

use crate::context::{CallScope, Context};
use crate::contract::arguments::{Arguments, deeper_than};
use crate::contract::error::{ArgumentErrors, Keyword, Violation};
use crate::observe::{Event, Observer};
use crate::outcome::{Code, Failure, InvocationId, Outcome, Output};
use crate::policy::{Approval, ApprovalRequest, Approver, Authorize, Denied};
use crate::recent::Recent;
use crate::registry::{Effect, Entry, Kind, OutputError, Registry, ToolInfo};

/// Turns proposed tool calls into outcomes, enforcing the registry, the policies and the limits.
///
/// A runtime holds the state of one session or run: the call ids seen (each may be used
/// once), the call quotas, the concurrency caps. Create one per run from a shared
/// `Arc<Registry>`; cloning a runtime shares its state. It must be used inside a Tokio runtime
/// (timeouts use Tokio's timer).
///
/// # Call ids
///
/// A call id is at most [`DEFAULT_MAX_CALL_ID_BYTES`](Self::DEFAULT_MAX_CALL_ID_BYTES) (256)
/// bytes long unless [`RuntimeBuilder::max_call_id_bytes`] says otherwise; a longer one ends
/// as `call_id_too_long` before anything else is looked at, and is not remembered. Provider
/// ids are far shorter (OpenAI allows 64 characters); over MCP the JSON-RPC request id is the
/// call id, so the same limit holds there.
///
/// To refuse a reused id, the runtime remembers the most recent
/// [`DEFAULT_CALL_ID_RETENTION`](Self::DEFAULT_CALL_ID_RETENTION) (16,384) distinct call ids
/// ([`RuntimeBuilder::call_id_retention`]): at most about 4 MiB with ids of the maximum length.
/// An id is forgotten once that many newer ids were seen; a duplicate of a forgotten id is not
/// recognized and runs as a new call. The check catches a provider or client resending a
/// recent call, not a replay from long ago: a tool whose effect must happen once per id
/// needs its own durable record (an idempotency key in its store).
///
/// ```
/// use tool_core::{Context, Registry, Runtime, ToolDef, ToolError};
/// # use tool_core::{Argument, Tool};
/// # /// Current weather.
/// # #[derive(Tool, Debug)]
/// # struct GetWeather { city: String }
/// # #[derive(Argument, serde::Serialize)]
/// # struct Weather { celsius: f64 }
///
/// async fn get_weather(args: GetWeather, _cx: &Context) -> Result<Weather, ToolError> {
///     Ok(Weather { celsius: 21.5 })
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let mut registry = Registry::new();
/// registry.register(ToolDef::new(get_weather)).unwrap();
/// let runtime = Runtime::new(registry);
/// let cx = Context::builder("user-1").build();
///
/// let outcome = runtime.invoke("call_1", "get_weather", r#"{"city":"Paris"}"#, &cx).await;
/// assert_eq!(outcome.output().unwrap().as_str(), r#"{"celsius":21.5}"#);
///
/// let outcome = runtime.invoke("call_2", "get_wether", "{}", &cx).await;
/// assert_eq!(outcome.code(), "unknown_tool");
/// # });
/// ```
#[derive(Clone)]
pub struct Runtime {
    shared: Arc<Shared>,
}

pub(crate) struct Shared {
    registry: Arc<Registry>,
    tools: Vec<ToolState>,
    timeout: Duration,
    max_input_bytes: usize,
    max_output_bytes: usize,
    concurrency: Option<Semaphore>,
    max_calls: Option<u64>,
    calls: AtomicU64,
    max_call_id_bytes: usize,
    seen: Mutex<Recent<()>>,
    authorize: Option<Box<dyn Authorize>>,
    approver: Option<Box<dyn Approver>>,
    observer: Option<Arc<dyn Observer>>,
    seed: u64,
    counter: AtomicU64,
}

struct ToolState {
    concurrency: Option<Semaphore>,
    calls: AtomicU64,
}

/// The call being run, as the stages see it.
pub(crate) struct CallRef<'a> {
    id: InvocationId,
    call_id: &'a Arc<str>,
    state: &'a ToolState,
}

impl Runtime {
    /// Default time one call may run: 30 seconds.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
    /// Default cap on arguments and on outputs, as JSON text: 1 MiB.
    pub const DEFAULT_MAX_BYTES: usize = 1 << 20;
    /// Default cap on the length of a call id: 256 bytes.
    pub const DEFAULT_MAX_CALL_ID_BYTES: usize = 256;
    /// Default number of distinct call ids remembered to refuse a reuse: the most recent
    /// 16,384.
    pub const DEFAULT_CALL_ID_RETENTION: usize = 16_384;

    /// A runtime with the default limits and no policies (every valid call is authorized,
    /// tools requiring approval are refused).
    pub fn new(registry: impl Into<Arc<Registry>>) -> Self {
        Runtime::builder(registry).build()
    }

    /// Configures a runtime.
    pub fn builder(registry: impl Into<Arc<Registry>>) -> RuntimeBuilder {
        RuntimeBuilder {
            registry: registry.into(),
            timeout: Runtime::DEFAULT_TIMEOUT,
            max_input_bytes: Runtime::DEFAULT_MAX_BYTES,
            max_output_bytes: Runtime::DEFAULT_MAX_BYTES,
            max_concurrency: None,
            max_calls: None,
            max_call_id_bytes: Runtime::DEFAULT_MAX_CALL_ID_BYTES,
            call_id_retention: Runtime::DEFAULT_CALL_ID_RETENTION,
            authorize: None,
            approver: None,
            observer: None,
        }
    }

    /// The registry this runtime serves.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// Runs one proposed call through every stage (see the [module docs](self)) and returns
    /// its single outcome. Never panics, whatever the input or the handler does.
    ///
    /// `call_id` is the provider's id for the call, echoed in the outcome. A non-empty id is
    /// accepted once among the recent ids the runtime remembers, and only up to its length
    /// limit (see [Call ids](Runtime#call-ids)). An empty id (providers that send none) is not
    /// checked.
    pub async fn invoke<'a>(
        &self,
        call_id: &str,
        tool: &str,
        arguments: impl Into<Arguments<'a>>,
        cx: &Context,
    ) -> Outcome {
        let started = Instant::now();
        let shared = &*self.shared;
        let id = InvocationId(
            shared
                .seed
                .wrapping_add(shared.counter.fetch_add(1, Ordering::Relaxed)),
        );
        let span = tracing::info_span!(
            "tool_call",
            tool = %tool,
            call_id = %truncate(call_id, shared.max_call_id_bytes),
            id = %id,
            outcome = tracing::field::Empty,
            elapsed_us = tracing::field::Empty,
        );
        let call_id: Arc<str> = Arc::from(call_id);
        let index = shared.registry.index(tool);
        let result = self
            .run(id, &call_id, index, tool, arguments.into(), cx)
            .instrument(span.clone())
            .await;
        let tool = match index {
            Some(index) => Arc::clone(&shared.registry.at(index).info().name),
            None => Arc::from(tool),
        };
        let outcome = Outcome {
            id,
            call_id,
            tool,
            result,
            elapsed: started.elapsed(),
        };
        record(&span, &outcome);
        if let Some(observer) = &shared.observer {
            observer.on_event(Event::Outcome(&outcome));
        }
        outcome
    }

    /// Runs only the input stages (resolve, input byte cap, validation) on a proposal: no
    /// policy is consulted, nothing is executed or recorded, and the call id is not used up.
    /// The repair loop uses it to decide whether to ask the model again.
    pub fn check<'a>(
        &self,
        tool: &str,
        arguments: impl Into<Arguments<'a>>,
    ) -> Result<(), Failure> {
        let shared = &*self.shared;
        match shared.registry.index(tool) {
            Some(index) => shared.registry.at(index).check(shared, arguments.into()),
            None => Err(unknown_tool(&shared.registry, tool)),
        }
    }

    async fn run(
        &self,
        id: InvocationId,
        call_id: &Arc<str>,
        index: Option<usize>,
        tool: &str,
        arguments: Arguments<'_>,
        cx: &Context,
    ) -> Result<Output, Failure> {
        let shared = &*self.shared;
        if call_id.len() > shared.max_call_id_bytes {
            // Refused before it is remembered or echoed in a message.
            return Err(Failure::new(
                Code::CallIdTooLong,
                format!(
                    "the call id is {} bytes long, over the limit of {} bytes; this call was not run",
                    call_id.len(),
                    shared.max_call_id_bytes
                ),
            ));
        }
        if !call_id.is_empty() {
            let mut seen = crate::sync::lock(&shared.seen);
            if seen.contains(call_id) {
                return Err(Failure::new(
                    Code::DuplicateCallId,
                    format!("call id {call_id:?} was already used; this call was not run"),
                ));
            }
            seen.insert(Arc::clone(call_id), ());
        }
        let Some(index) = index else {
            return Err(unknown_tool(&shared.registry, tool));
        };
        let entry = shared.registry.at(index);
        let call = CallRef {
            id,
            call_id,
            state: &shared.tools[index],
        };
        entry.run(shared, &call, arguments, cx).await
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("registry", &self.shared.registry)
            .field("timeout", &self.shared.timeout)
            .field("max_calls", &self.shared.max_calls)
            .finish_non_exhaustive()
    }
}

fn unknown_tool(registry: &Registry, tool: &str) -> Failure {
    let mut message = format!("unknown tool {:?}", truncate(tool, 64));
    if !registry.is_empty() {
        message.push_str("; available: ");
        for (i, info) in registry.tools().take(32).enumerate() {
            if i > 0 {
                message.push_str(", ");
            }
            message.push_str(info.name());
        }
        if registry.len() > 32 {
            message.push_str(", …");
        }
    }
    Failure::new(Code::UnknownTool, message)
}

fn truncate(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Stage 9: one span field and one event per call. Argument values are never logged: for
/// invalid arguments only the pointers and keywords are.
fn record(span: &tracing::Span, outcome: &Outcome) {
    span.record("outcome", outcome.code());
    span.record("elapsed_us", outcome.elapsed().as_micros() as u64);
    match outcome.failure() {
        None => tracing::debug!(parent: span, "tool call succeeded"),
        Some(failure) => {
            let code = failure.code().as_str();
            if let Some(errors) = failure.errors() {
                // Rendered only if a subscriber takes the event.
                let violations = Locations(errors);
                tracing::info!(parent: span, code, violations = ?violations, "tool call refused");
            } else if matches!(failure.code(), Code::ExecutionFailed | Code::OutcomeUnknown) {
                tracing::warn!(parent: span, code, detail = failure.detail(), "tool call failed");
            } else {
                tracing::info!(parent: span, code, detail = failure.detail(), "tool call refused");
            }
        }
    }
}

/// The pointer and keyword of each violation, without the values: `["/units enum"]`.
struct Locations<'a>(&'a crate::ArgumentErrors);

impl std::fmt::Debug for Locations<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(
                self.0
                    .iter()
                    .map(|v| format!("{} {}", v.pointer(), v.keyword())),
            )
            .finish()
    }
}

/// Stages 2 to 8 for one tool kind.
pub(crate) async fn pipeline<K: Kind>(
    entry: &Entry<K>,
    shared: &Shared,
    call: &CallRef<'_>,
    arguments: Arguments<'_>,
    cx: &Context,
) -> Result<Output, Failure> {
    let info = &entry.info;
    let settings = &info.settings;

    let args = check_input(entry, shared, arguments)?;

    if let Some(policy) = &shared.authorize {
        policy
            .authorize(info, cx)
            .map_err(|denied| unauthorized(denied, info, call))?;
    }
    if let Some(check) = &entry.authorize {
        check(&args, cx).map_err(|denied| unauthorized(denied, info, call))?;
    }

    if settings.requires_approval {
        // Boxed so the rare wait does not enlarge every call's future.
        Box::pin(approve(shared, info, call, arguments, cx)).await?;
    }

    let _permits = admit(shared, info, call, cx).await?;

    let out = execute(entry, shared, call, args, cx).await?;

    let limit = settings.max_output_bytes.unwrap_or(shared.max_output_bytes);
    let text = entry.kind.output(out, limit).map_err(|error| {
        let (code, detail) = match error {
            OutputError::TooLarge => {
                return Failure::new(
                    Code::OutputTooLarge,
                    format!(
                        "`{}` produced an output over the limit of {limit} bytes (reference {})",
                        info.name, call.id
                    ),
                );
            }
            OutputError::Serialize(error) => (
                Code::InvalidOutput,
                format!("output could not be serialized: {error}"),
            ),
            OutputError::Invalid(errors) => (
                Code::InvalidOutput,
                format!("output breaks the output schema:\n{errors}"),
            ),
        };
        Failure::new(
            code,
            format!(
                "`{}` produced an output that breaks its contract (reference {})",
                info.name, call.id
            ),
        )
        .with_detail(detail)
    })?;
    Ok(Output { text })
}

/// Stages 2 and 3: the input byte cap, then parsing and validation.
pub(crate) fn check_input<K: Kind>(
    entry: &Entry<K>,
    shared: &Shared,
    arguments: Arguments<'_>,
) -> Result<K::Args, Failure> {
    let limit = entry
        .info
        .settings
        .max_input_bytes
        .unwrap_or(shared.max_input_bytes);
    // Measuring the length walks the value recursively, so its depth is bounded first.
    if let Arguments::Json(value) = arguments
        && deeper_than(value, crate::MAX_DEPTH)
    {
        let too_deep = Violation::new(
            String::new(),
            Keyword::Syntax,
            format!("nesting deeper than {} levels", crate::MAX_DEPTH),
        );
        return Err(Failure::invalid(
            Code::InvalidArguments,
            ArgumentErrors::new(vec![too_deep]),
        ));
    }
    if arguments.len_up_to(limit) > limit {
        return Err(Failure::new(
            Code::InputTooLarge,
            format!("arguments are over the limit of {limit} bytes; send less data"),
        ));
    }
    entry
        .kind
        .parse(arguments)
        .map_err(|errors| Failure::invalid(Code::InvalidArguments, errors))
}

fn unauthorized(denied: Denied, info: &ToolInfo, call: &CallRef<'_>) -> Failure {
    let message = match denied.message() {
        Some(message) => format!("{message} (reference {})", call.id),
        None => format!(
            "not authorized to call `{}` (reference {})",
            info.name, call.id
        ),
    };
    Failure::new(Code::Unauthorized, message).with_detail(denied.reason())
}

async fn approve(
    shared: &Shared,
    info: &ToolInfo,
    call: &CallRef<'_>,
    arguments: Arguments<'_>,
    cx: &Context,
) -> Result<(), Failure> {
    let Some(approver) = &shared.approver else {
        return Err(Failure::new(
            Code::ApprovalDenied,
            format!("`{}` needs approval and none was given", info.name),
        )
        .with_detail("the tool requires approval and the runtime has no approver"));
    };
    let request = ApprovalRequest {
        id: call.id,
        call_id: call.call_id.to_string(),
        tool: info.name.to_string(),
        arguments: arguments.to_value(),
    };
    let decision = bounded(cx, approver.approve(request, cx.clone()))
        .await
        .map_err(|stop| match stop {
            Stop::Cancelled => {
                stop.failure("the run was cancelled while the call awaited approval")
            }
            Stop::Deadline => Failure::new(
                Code::ApprovalExpired,
                "the run's deadline passed while the call awaited approval",
            ),
        })?;
    match decision {
        Approval::Approved => Ok(()),
        Approval::Denied(reason) => Err(Failure::new(
            Code::ApprovalDenied,
            format!("the call to `{}` was not approved", info.name),
        )
        .with_detail(reason)),
        Approval::Expired => Err(Failure::new(
            Code::ApprovalExpired,
            format!("the approval for `{}` expired", info.name),
        )),
    }
}

/// Why waiting ended early.
enum Stop {
    Cancelled,
    Deadline,
}

impl Stop {
    fn failure(self, message: &'static str) -> Failure {
        match self {
            Stop::Cancelled => Failure::new(Code::Cancelled, message),
            Stop::Deadline => Failure::new(Code::Timeout, message),
        }
    }
}

/// Awaits `future` unless the run is cancelled or its deadline passes first.
async fn bounded<F: Future>(cx: &Context, future: F) -> Result<F::Output, Stop> {
    let deadline = async {
        match cx.deadline() {
            Some(deadline) => tokio::time::sleep_until(deadline).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        () = cx.cancelled() => Err(Stop::Cancelled),
        () = deadline => Err(Stop::Deadline),
        output = future => Ok(output),
    }
}

struct Permits<'a> {
    _tool: Option<SemaphorePermit<'a>>,
    _global: Option<SemaphorePermit<'a>>,
}

/// Stage 6: nothing starts after cancellation or the deadline; wait for a concurrency slot;
/// then take one unit of each quota.
async fn admit<'s>(
    shared: &'s Shared,
    info: &ToolInfo,
    call: &CallRef<'s>,
    cx: &Context,
) -> Result<Permits<'s>, Failure> {
    if cx.is_cancelled() {
        return Err(Failure::new(
            Code::Cancelled,
            "the run was cancelled before the call started",
        ));
    }
    if cx.time_left() == Some(Duration::ZERO) {
        return Err(Failure::new(
            Code::Timeout,
            "the run's deadline passed before the call started",
        ));
    }
    let waiting = "the run ended while the call waited for a free slot";
    let tool = match &call.state.concurrency {
        Some(semaphore) => Some(
            acquire(cx, semaphore)
                .await
                .map_err(|s| s.failure(waiting))?,
        ),
        None => None,
    };
    let global = match &shared.concurrency {
        Some(semaphore) => Some(
            acquire(cx, semaphore)
                .await
                .map_err(|s| s.failure(waiting))?,
        ),
        None => None,
    };
    if !take(&call.state.calls, info.settings.max_calls) {
        return Err(Failure::new(
            Code::BudgetExhausted,
            format!("the call limit for `{}` is used up", info.name),
        ));
    }
    if !take(&shared.calls, shared.max_calls) {
        if info.settings.max_calls.is_some() {
            call.state.calls.fetch_sub(1, Ordering::Relaxed);
        }
        return Err(Failure::new(
            Code::BudgetExhausted,
            "the call limit of this run is used up",
        ));
    }
    Ok(Permits {
        _tool: tool,
        _global: global,
    })
}

async fn acquire<'s>(cx: &Context, semaphore: &'s Semaphore) -> Result<SemaphorePermit<'s>, Stop> {
    if let Ok(permit) = semaphore.try_acquire() {
        return Ok(permit);
    }
    // Boxed so the rare wait does not enlarge every call's future.
    match Box::pin(bounded(cx, semaphore.acquire())).await? {
        Ok(permit) => Ok(permit),
        // The runtime never closes its semaphores.
        Err(_) => Err(Stop::Cancelled),
    }
}

/// Takes one unit of a quota; `false` when it is used up.
fn take(used: &AtomicU64, limit: Option<u64>) -> bool {
    match limit {
        // Nothing to count against.
        None => true,
        Some(limit) => used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < limit).then_some(n + 1)
            })
            .is_ok(),
    }
}

/// Stage 7: run the handler under the timeout and the run's cancellation, catching panics.
async fn execute<K: Kind>(
    entry: &Entry<K>,
    shared: &Shared,
    call: &CallRef<'_>,
    args: K::Args,
    cx: &Context,
) -> Result<K::Out, Failure> {
    enum Ended<T> {
        Done(T),
        Cancelled,
        TimedOut,
    }
    let info = &entry.info;
    let scope = Arc::new(CallScope::new(
        call.id,
        Arc::clone(call.call_id),
        Arc::clone(&info.name),
        shared.observer.clone(),
    ));
    let call_cx = cx.for_call(Arc::clone(&scope));
    let mut limit = info.settings.timeout.unwrap_or(shared.timeout);
    if let Some(left) = cx.time_left() {
        limit = limit.min(left);
    }
    let ended = {
        let mut work = pin!(AssertUnwindSafe(entry.kind.execute(args, &call_cx)).catch_unwind());
        // Most handlers finish on their first poll: they never arm a timer or a waiter.
        match std::future::poll_fn(|task| Poll::Ready(work.as_mut().poll(task))).await {
            Poll::Ready(result) => Ended::Done(result),
            Poll::Pending => {
                tokio::select! {
                    biased;
                    result = work => Ended::Done(result),
                    () = cx.cancelled() => Ended::Cancelled,
                    () = tokio::time::sleep(limit) => Ended::TimedOut,
                }
            }
        }
    };
    // The call is over: tell anything the handler started, and accept no more progress.
    drop(call_cx);
    CallScope::cancel(&scope);
    scope.close();

    let stopped = |code: Code, what: &str| {
        if info.settings.effect == Effect::NonIdempotent {
            Failure::new(
                Code::OutcomeUnknown,
                format!(
                    "`{}` was stopped ({what}) while running; its effects may or may not have happened, so do not assume either (reference {})",
                    info.name, call.id
                ),
            )
            .with_detail(format!("{code} of non-idempotent work"))
        } else {
            Failure::new(
                code,
                format!(
                    "`{}` was stopped: {what} (reference {})",
                    info.name, call.id
                ),
            )
        }
    };
    match ended {
        Ended::Done(Ok(Ok(out))) => Ok(out),
        Ended::Done(Ok(Err(error))) => {
            let message = match error.message() {
                Some(message) => format!("{message} (reference {})", call.id),
                None => format!("`{}` failed (reference {})", info.name, call.id),
            };
            let failure = Failure::new(Code::ExecutionFailed, message);
            Err(match error.detail() {
                Some(detail) => failure.with_detail(detail),
                None => failure,
            })
        }
        Ended::Done(Err(panic)) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a non-string payload".to_owned());
            Err(Failure::new(
                Code::ExecutionFailed,
                format!("`{}` failed (reference {})", info.name, call.id),
            )
            .with_detail(format!("handler panicked: {what}")))
        }
        Ended::Cancelled => Err(stopped(Code::Cancelled, "the run was cancelled")),
        Ended::TimedOut => Err(stopped(
            Code::Timeout,
            &format!("it ran longer than {}", human(limit)),
        )),
    }
}

fn human(duration: Duration) -> String {
    if duration.as_secs() >= 1 && duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{} ms", duration.as_millis())
    }
}

/// Configures a [`Runtime`].
pub struct RuntimeBuilder {
    registry: Arc<Registry>,
    timeout: Duration,
    max_input_bytes: usize,
    max_output_bytes: usize,
    max_concurrency: Option<usize>,
    max_calls: Option<u64>,
    max_call_id_bytes: usize,
    call_id_retention: usize,
    authorize: Option<Box<dyn Authorize>>,
    approver: Option<Box<dyn Approver>>,
    observer: Option<Arc<dyn Observer>>,
}

impl RuntimeBuilder {
    /// How long one call may run unless its tool sets its own timeout (default 30 s). The
    /// run's deadline in the [`Context`] also bounds every call.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Cap on arguments as JSON text, unless the tool sets its own (default 1 MiB).
    pub fn max_input_bytes(mut self, bytes: usize) -> Self {
        self.max_input_bytes = bytes;
        self
    }

    /// Cap on outputs as JSON text, unless the tool sets its own (default 1 MiB).
    pub fn max_output_bytes(mut self, bytes: usize) -> Self {
        self.max_output_bytes = bytes;
        self
    }

    /// At most `limit` calls run at once across all tools; others wait their turn (bounded
    /// by the run's deadline and cancellation). A limit of 0 is taken as 1, so calls cannot
    /// wait forever.
    pub fn max_concurrency(mut self, limit: usize) -> Self {
        self.max_concurrency = Some(limit);
        self
    }

    /// At most `limit` calls run over the runtime's life; later ones are `budget_exhausted`.
    pub fn max_calls(mut self, limit: u64) -> Self {
        self.max_calls = Some(limit);
        self
    }

    /// Cap on the length of a call id in bytes (default 256); a longer id ends as
    /// `call_id_too_long` and is not remembered.
    pub fn max_call_id_bytes(mut self, bytes: usize) -> Self {
        self.max_call_id_bytes = bytes;
        self
    }

    /// How many distinct call ids are remembered to refuse a reuse (default 16,384, the most
    /// recent ones). A reused id that was already forgotten runs as a new call; 0 turns the
    /// check off. Memory is at most `count` ids of up to
    /// [`max_call_id_bytes`](Self::max_call_id_bytes) each.
    pub fn call_id_retention(mut self, count: usize) -> Self {
        self.call_id_retention = count;
        self
    }

    /// The authorization policy consulted for every valid call (default: allow).
    pub fn authorize(mut self, policy: impl Authorize) -> Self {
        self.authorize = Some(Box::new(policy));
        self
    }

    /// The approver for tools that require approval (default: none, so they are refused).
    pub fn approver(mut self, approver: impl Approver) -> Self {
        self.approver = Some(Box::new(approver));
        self
    }

    /// Receives progress and outcome events.
    pub fn observer(mut self, observer: impl Observer) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// The runtime.
    pub fn build(self) -> Runtime {
        let tools = self
            .registry
            .tools()
            .map(|info| ToolState {
                concurrency: info.settings.max_concurrency.map(permits),
                calls: AtomicU64::new(0),
            })
            .collect();
        let seed = {
            use std::hash::{BuildHasher, Hasher};
            std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish()
        };
        Runtime {
            shared: Arc::new(Shared {
                registry: self.registry,
                tools,
                timeout: self.timeout,
                max_input_bytes: self.max_input_bytes,
                max_output_bytes: self.max_output_bytes,
                concurrency: self.max_concurrency.map(permits),
                max_calls: self.max_calls,
                calls: AtomicU64::new(0),
                max_call_id_bytes: self.max_call_id_bytes,
                seen: Mutex::new(Recent::new(self.call_id_retention)),
                authorize: self.authorize,
                approver: self.approver,
                observer: self.observer,
                seed,
                counter: AtomicU64::new(0),
            }),
        }
    }
}

/// A concurrency cap as a semaphore: at least one slot (a cap of 0 would make every call wait
/// for ever) and at most what a semaphore can count.
fn permits(limit: usize) -> Semaphore {
    Semaphore::new(limit.clamp(1, Semaphore::MAX_PERMITS))
}

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("registry", &self.registry)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}
