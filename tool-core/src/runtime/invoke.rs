//! The [`Runtime`]: one call through the stages, in the order the [module](super) documents.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::time::Instant;
use tracing::Instrument as _;

use crate::authz::Request;
use crate::context::{CallScope, Context};
use crate::contract::arguments::Arguments;
use crate::ledger::{AuditKind, Ledger};
use crate::observe::Event;
use crate::outcome::{Code, Failure, InvocationId, Outcome, Output};
use crate::provenance::Provenance;
use crate::registry::ToolInfo;
use crate::{Registry, registry::Refusal};

use super::{CallRef, RuntimeBuilder, Shared};
use super::{admit, approve, authorize, claim, correlate, execute, input, output, record, resolve};

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
/// recent call, not a replay from long ago. For calls whose effect must happen once per id,
/// across restarts and workers, give the runtime a [ledger](crate::ledger)
/// ([`RuntimeBuilder::ledger`]): it claims each call durably and answers a reused id with the
/// first call's outcome. The ids must then be unique across processes and restarts: those the
/// [providers](crate::providers)' parsers and the HTTP models make for
/// calls that came without a usable one are random (see [Call ids](crate::ToolCall#call-ids)),
/// and an empty id is refused as `missing_call_id`, since every call without one would share
/// one record (an idempotency key in the context keys the call instead).
///
/// ```
/// use tool_core::{Code, Context, Registry, Runtime, ToolDef, registry::ToolError};
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
/// assert_eq!(outcome.code(), Some(Code::UnknownTool));
/// # });
/// ```
#[derive(Clone)]
pub struct Runtime {
    pub(super) shared: Arc<Shared>,
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
            policies: Default::default(),
            approver: None,
            observer: None,
            ledger: None,
            rerun_interrupted: false,
            lease_grace: claim::DEFAULT_LEASE_GRACE,
        }
    }

    /// The registry this runtime serves.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// The tools listed for the principal of `cx`, in registration order: those no
    /// runtime-wide or tenant policy [hides](crate::authz::Authorize::visible). Agents give
    /// the model these, and the MCP server lists these in `tools/list`. A call to a tool left
    /// out is still decided by the policies as any other.
    pub fn visible_tools<'r>(&'r self, cx: &Context) -> Vec<&'r ToolInfo> {
        let policies = &self.shared.policies;
        self.shared
            .registry
            .tools()
            .filter(|info| policies.shown(info, cx))
            .collect()
    }

    /// The ledger calls are claimed in, if one was set.
    pub fn ledger(&self) -> Option<&Arc<dyn Ledger>> {
        self.shared.ledger.as_ref()
    }

    /// Runs one proposed call through every stage (see the [module docs](crate::runtime)) and returns
    /// its single outcome. Never panics, whatever the input or the handler does.
    ///
    /// `call_id` is the call's id ([`ToolCall::call_id`](crate::ToolCall::call_id)), echoed in
    /// the outcome. A non-empty id is accepted once among the recent ids the runtime
    /// remembers, and only up to its length limit (see [Call ids](Runtime#call-ids)). An empty
    /// id is not checked without a ledger; with one it is refused as `missing_call_id` unless
    /// the context has an idempotency key.
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
        let index = shared.registry.index(tool);
        let span = record::span(
            index.map(|index| &*shared.registry.at(index).info().name),
            tool,
            resolve::truncate(call_id, shared.max_call_id_bytes),
            id,
        );
        let arguments = arguments.into();
        record::arguments(&span, arguments);
        let call_id: Arc<str> = Arc::from(call_id);
        let mut replayed = false;
        let result = self
            .run(id, &call_id, index, tool, arguments, cx, &mut replayed)
            .instrument(span.clone())
            .await;
        let (tool, source) = match index {
            Some(index) => {
                let info = shared.registry.at(index).info();
                (Arc::clone(&info.name), info.provenance())
            }
            None => (Arc::from(tool), Provenance::runtime()),
        };
        let outcome = Outcome {
            id,
            call_id,
            tool,
            result,
            elapsed: started.elapsed(),
            replayed,
            source,
        };
        record::record(&span, &outcome);
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
        let Some(index) = shared.registry.index(tool) else {
            return Err(resolve::unknown_tool(&shared.registry, tool));
        };
        let tool = shared.registry.at(index);
        let arguments = arguments.into();
        input::cap(shared, tool.info(), arguments)?;
        tool.check(arguments).map_err(input::invalid)
    }

    /// Stages 0 to 8, in the order of the table in the [module docs](self); each returns
    /// early with the call's failure. With a ledger, a call refused before its claim is
    /// audited as refused, and a claimed call's outcome is recorded.
    #[allow(clippy::too_many_arguments)]
    async fn run(
        &self,
        id: InvocationId,
        call_id: &Arc<str>,
        index: Option<usize>,
        tool: &str,
        arguments: Arguments<'_>,
        cx: &Context,
        replayed: &mut bool,
    ) -> Result<Output, Failure> {
        let shared = &*self.shared;
        let Some(ledger) = shared.ledger.as_deref() else {
            return self
                .stages(id, call_id, index, tool, arguments, cx, None)
                .await;
        };
        let mut decisions = Some(claim::Decisions::new());
        let result = self
            .stages(
                id,
                call_id,
                index,
                tool,
                arguments,
                cx,
                Some((ledger, &mut decisions, replayed)),
            )
            .await;
        if let (Some(decisions), Err(failure)) = (decisions, &result) {
            // Refused before the claim (the claim took the decisions otherwise).
            let audited_id = if call_id.len() > shared.max_call_id_bytes {
                ""
            } else {
                call_id
            };
            // Boxed, as the ledger's other steps: a call without a ledger does not carry them.
            Box::pin(decisions.refused(ledger, cx, audited_id, tool, failure)).await;
        }
        result
    }

    #[allow(clippy::too_many_arguments)]
    async fn stages(
        &self,
        id: InvocationId,
        call_id: &Arc<str>,
        index: Option<usize>,
        tool: &str,
        arguments: Arguments<'_>,
        cx: &Context,
        mut ledger: Option<(&dyn Ledger, &mut Option<claim::Decisions>, &mut bool)>,
    ) -> Result<Output, Failure> {
        let shared = &*self.shared;
        correlate::correlate(shared, call_id)?;
        if ledger.is_some() {
            claim::require_id(call_id, cx)?;
        }
        let Some(index) = index else {
            return Err(resolve::unknown_tool(&shared.registry, tool));
        };
        let tool = shared.registry.at(index);
        let info = tool.info();
        let call = CallRef {
            id,
            call_id,
            state: &shared.tools[index],
        };
        input::cap(shared, info, arguments)?;

        // The handler's own context: its progress is reported under this call, and it is
        // cancelled when the call ends.
        let scope = Arc::new(CallScope::new(
            id,
            Arc::clone(call_id),
            Arc::clone(&info.name),
            shared.observer.clone(),
        ));
        let call_cx = cx.for_call(Arc::clone(&scope));
        let refused = |refusal| match refusal {
            Refusal::Invalid(errors) => {
                record::refused(&errors);
                input::invalid(errors)
            }
            Refusal::Denied(denied) => {
                record::stage("validated");
                record::stage("denied");
                authorize::unauthorized(denied, info, &call)
            }
            Refusal::EffectPanicked(what) => Failure::new(
                Code::ExecutionFailed,
                format!(
                    "`{}` failed before it ran (reference {})",
                    info.name, call.id
                ),
            )
            .with_detail(format!("its effect_from function panicked: {what}")),
        };
        let prepared = tool
            .prepare(arguments, call_cx, output::limit(shared, info))
            .map_err(refused)?;
        let decided = if shared.policies.is_empty() {
            Ok(Vec::new())
        } else {
            let request = Request::new(info, cx, arguments, prepared.resource());
            match authorize::ask(&shared.policies, &request, cx) {
                authorize::Asked::Now(decided) => decided.map_err(Ok),
                authorize::Asked::Later(wait) => wait.await,
            }
        };
        let allowed_by = match decided {
            Ok(ids) => ids,
            Err(refused) => {
                record::stage("validated");
                record::stage("denied");
                return Err(match refused {
                    Ok(denied) => {
                        if let Some((_, Some(decisions), _)) = &mut ledger {
                            decisions.denial = authorize::audit_note(denied.policy_ids());
                        }
                        authorize::unauthorized(denied, info, &call)
                    }
                    Err(stop) => authorize::stopped(stop, info, &call),
                });
            }
        };
        let work = prepared.finish(cx).map_err(|refusal| {
            if let (Refusal::Denied(denied), Some((_, Some(decisions), _))) =
                (&refusal, &mut ledger)
            {
                decisions.denial = authorize::audit_note(denied.policy_ids());
            }
            refused(refusal)
        })?;
        let note =
            |ledger: &mut Option<(&dyn Ledger, &mut Option<claim::Decisions>, &mut bool)>, kind| {
                if let Some((_, Some(decisions), _)) = ledger {
                    decisions.push(cx, call_id, &info.name, kind, None);
                }
            };
        record::stage("validated");
        record::stage("authorized");
        note(&mut ledger, AuditKind::Authorized);
        if let Some((_, Some(decisions), _)) = &mut ledger
            && let Some(event) = decisions.events.last_mut()
        {
            event.note = authorize::audit_note(&allowed_by);
        }

        if info.settings.requires_approval {
            // Boxed so the rare wait does not enlarge every call's future.
            Box::pin(approve::approve(shared, info, &call, arguments, cx)).await?;
            record::stage("approved");
            note(&mut ledger, AuditKind::Approved);
        }

        let _permits = admit::admit(shared, &call, cx).await?;
        let Some((ledger, decisions, replayed)) = ledger else {
            admit::take_quotas(shared, info, &call)?;
            let text = execute::execute(shared, info, &call, &scope, work, cx).await?;
            return Ok(Output { text });
        };
        let decisions = decisions.take().unwrap_or_else(claim::Decisions::new);
        let contract = &shared.contracts[index];
        let held = match Box::pin(claim::claim(
            shared,
            ledger,
            info,
            work.effect,
            &call,
            contract,
            arguments,
            cx,
            decisions,
        ))
        .await?
        {
            claim::Admission::Run(held) => {
                record::stage("claimed");
                held
            }
            claim::Admission::Replay(result) => {
                record::stage("replayed");
                *replayed = true;
                return result;
            }
        };
        let result = execute::execute(shared, info, &call, &scope, work, cx).await;
        Box::pin(claim::settle(ledger, held, info, result, cx)).await
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
