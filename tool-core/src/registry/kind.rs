//! A registered tool with its types erased: what the runtime calls, in the contract's terms
//! only (arguments in, violations, refusals, output text out), so the registry knows nothing
//! of the runtime's stages.
//!
//! A tool's typed work is split at the two points where the runtime steps in between: first
//! [`Erased::prepare`] parses and validates the arguments (stage 3) and runs the authorization
//! checks on them (stage 4), handing back the call's work not yet started; then, after approval
//! and admission, the runtime polls that work under its timeout (stage 7), and the work ends by
//! serializing and checking the output (stage 8). The typed arguments never leave the tool;
//! what the runtime learns of them is the call's effect, carried with the work.

use std::future::Future;
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;

use futures_util::future::BoxFuture;
use serde::Serialize;

use super::def::Effect;
use super::{Handler, ToolError, ToolInfo};
use crate::context::Context;
use crate::contract::ResourceRef;
use crate::contract::arguments::Arguments;
use crate::outcome::Denied;
use crate::{Argument, ArgumentErrors, Tool};

/// A tool's own authorization check on its typed arguments.
pub(crate) type AuthorizeFn<A> = Box<dyn Fn(&A, &Context) -> Result<(), Denied> + Send + Sync>;

/// A tool's effect as a function of its typed arguments.
pub(crate) type EffectFn<A> = Box<dyn Fn(&A) -> Effect + Send + Sync>;

/// A call whose arguments are parsed and valid, waiting for the runtime's policies (which
/// may take a while, and see its [`resource`](Prepared::resource)); [`finish`](Prepared::finish)
/// then runs the tool's own checks and hands back its work.
pub(crate) trait Prepared<'a>: Send {
    /// What the call acts on, from its typed arguments.
    fn resource(&self) -> Option<&ResourceRef>;

    /// Stage 4's end: the tool's own checks on the typed arguments, then the call's effect and
    /// its work.
    fn finish(self: Box<Self>, cx: &Context) -> Result<Work<'a>, Refusal>;
}

/// A call's work once its arguments are accepted: the handler, then the output as checked JSON
/// text, and the effect of this call. Nothing runs until `future` is polled.
pub(crate) struct Work<'a> {
    pub(crate) future: BoxFuture<'a, Result<String, WorkError>>,
    /// What this call does to the world: the tool's declared effect, or what its
    /// [`ToolDef::effect_from`](crate::ToolDef::effect_from) said of these arguments.
    pub(crate) effect: Effect,
}

/// Why [`Erased::prepare`] refused a call.
pub(crate) enum Refusal {
    /// The arguments break the contract.
    Invalid(ArgumentErrors),
    /// The runtime's policy or the tool's check said no (or panicked: a check that cannot
    /// answer lets nothing through).
    Denied(Denied),
    /// The tool's [`ToolDef::effect_from`](crate::ToolDef::effect_from) panicked, with what it
    /// said: without the call's effect, nothing can say what stopping it would mean.
    EffectPanicked(String),
}

/// What a caught panic said: its message when it is a string.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string payload".to_owned())
}

/// Runs a check of the application's, a panic in it turned into a refusal by `panicked`, so
/// that it ends this call rather than unwinding through the runtime.
fn guarded<T>(
    check: impl FnOnce() -> Result<T, Refusal>,
    panicked: impl FnOnce(String) -> Refusal,
) -> Result<T, Refusal> {
    std::panic::catch_unwind(AssertUnwindSafe(check))
        .unwrap_or_else(|payload| Err(panicked(panic_text(&*payload))))
}

/// How a call's work failed.
pub(crate) enum WorkError {
    /// The handler returned an error.
    Tool(ToolError),
    /// The output could not be serialized, is over its cap or breaks the output schema.
    Output(OutputError),
}

/// A registered tool with its type erased, as the runtime drives it.
pub(crate) trait Erased: Send + Sync + 'static {
    fn info(&self) -> &ToolInfo;

    /// Stage 3 alone: parse and validate, nothing else.
    fn check(&self, arguments: Arguments<'_>) -> Result<(), ArgumentErrors>;

    /// Stage 3 with what stage 4 needs: parse and validate; `Ok` holds the typed call, whose
    /// [`finish`](Prepared::finish) runs the tool's own checks and gives the work, which runs
    /// the handler with `call_cx` and ends with the output as JSON text of at most
    /// `max_output_bytes`, checked against the output schema.
    fn prepare<'a>(
        &'a self,
        arguments: Arguments<'_>,
        call_cx: Context,
        max_output_bytes: usize,
    ) -> Result<Box<dyn Prepared<'a> + 'a>, Refusal>;
}

/// How one kind of tool parses, executes and checks output: typed tools and dynamic ones.
pub(crate) trait Kind: Send + Sync + 'static {
    type Args: Send + 'static;
    type Out: Send + 'static;

    fn parse(&self, arguments: Arguments<'_>) -> Result<Self::Args, ArgumentErrors>;

    /// What a call with these arguments acts on.
    fn resource(&self, _args: &Self::Args) -> Option<ResourceRef> {
        None
    }

    fn execute<'a>(
        &'a self,
        args: Self::Args,
        cx: &'a Context,
    ) -> impl Future<Output = Result<Self::Out, ToolError>> + Send + 'a;

    /// The output as JSON text of at most `limit` bytes, checked against the output schema.
    fn output(&self, out: Self::Out, limit: usize) -> Result<String, OutputError>;
}

pub(crate) enum OutputError {
    Serialize(serde_json::Error),
    TooLarge,
    Invalid(ArgumentErrors),
}

/// Serializes `value` as compact JSON of at most `limit` bytes.
pub(crate) fn to_text<T: Serialize + ?Sized>(
    value: &T,
    limit: usize,
) -> Result<String, OutputError> {
    let text = serde_json::to_string(value).map_err(OutputError::Serialize)?;
    if text.len() > limit {
        return Err(OutputError::TooLarge);
    }
    Ok(text)
}

pub(crate) struct Entry<K: Kind> {
    pub(crate) info: ToolInfo,
    pub(crate) kind: K,
    pub(crate) authorize: Vec<AuthorizeFn<K::Args>>,
    pub(crate) effect: Option<EffectFn<K::Args>>,
}

impl<K: Kind> Erased for Entry<K> {
    fn info(&self) -> &ToolInfo {
        &self.info
    }

    fn check(&self, arguments: Arguments<'_>) -> Result<(), ArgumentErrors> {
        self.kind.parse(arguments).map(drop)
    }

    fn prepare<'a>(
        &'a self,
        arguments: Arguments<'_>,
        call_cx: Context,
        max_output_bytes: usize,
    ) -> Result<Box<dyn Prepared<'a> + 'a>, Refusal> {
        let args = self.kind.parse(arguments).map_err(Refusal::Invalid)?;
        let resource = guarded(
            || Ok(self.kind.resource(&args)),
            |what| {
                Refusal::Denied(Denied::new(format!(
                    "the tool's resource could not be read: {what}"
                )))
            },
        )?;
        Ok(Box::new(Parsed {
            entry: self,
            args,
            resource,
            call_cx,
            max_output_bytes,
        }))
    }
}

/// A typed call between parsing and the end of authorization.
struct Parsed<'a, K: Kind> {
    entry: &'a Entry<K>,
    args: K::Args,
    resource: Option<ResourceRef>,
    call_cx: Context,
    max_output_bytes: usize,
}

impl<'a, K: Kind> Prepared<'a> for Parsed<'a, K> {
    fn resource(&self) -> Option<&ResourceRef> {
        self.resource.as_ref()
    }

    fn finish(self: Box<Self>, cx: &Context) -> Result<Work<'a>, Refusal> {
        let Parsed {
            entry,
            args,
            call_cx,
            max_output_bytes,
            ..
        } = *self;
        for check in &entry.authorize {
            guarded(
                || check(&args, cx).map_err(Refusal::Denied),
                |what| {
                    Refusal::Denied(Denied::new(format!(
                        "the tool's authorization check panicked: {what}"
                    )))
                },
            )?;
        }
        let effect = match &entry.effect {
            Some(effect_of) => guarded(|| Ok(effect_of(&args)), Refusal::EffectPanicked)?,
            None => entry.info.settings.effect,
        };
        let future = Box::pin(async move {
            let out = entry
                .kind
                .execute(args, &call_cx)
                .await
                .map_err(WorkError::Tool)?;
            entry
                .kind
                .output(out, max_output_bytes)
                .map_err(WorkError::Output)
        });
        Ok(Work { future, effect })
    }
}

/// Runs a handler, its own error turned into a [`ToolError`]: the `execute` of every kind.
pub(crate) fn run_handler<'a, A, O, E, H>(
    handler: &'a H,
    args: A,
    cx: &'a Context,
) -> impl Future<Output = Result<O, ToolError>> + Send + 'a
where
    H: Handler<'a, A, O, E>,
    E: Into<ToolError>,
{
    let future = handler.call(args, cx);
    async move { future.await.map_err(Into::into) }
}

/// A tool whose contract is its Rust argument type `A` and output type `O`.
pub(crate) struct Typed<A, O, E, H> {
    handler: H,
    _marker: PhantomData<fn(A) -> (O, E)>,
}

impl<A, O, E, H> Typed<A, O, E, H> {
    pub(crate) fn new(handler: H) -> Self {
        Typed {
            handler,
            _marker: PhantomData,
        }
    }
}

impl<A, O, E, H> Kind for Typed<A, O, E, H>
where
    A: Tool + Send + 'static,
    O: Argument + Serialize + Send + 'static,
    E: Into<ToolError> + 'static,
    H: for<'a> Handler<'a, A, O, E>,
{
    type Args = A;
    type Out = O;

    fn parse(&self, arguments: Arguments<'_>) -> Result<A, ArgumentErrors> {
        match arguments {
            Arguments::Text(raw) => A::parse_arguments(raw),
            Arguments::Json(value) => A::parse_value(value),
        }
    }

    fn resource(&self, args: &A) -> Option<ResourceRef> {
        args.resource()
    }

    fn execute<'a>(
        &'a self,
        args: A,
        cx: &'a Context,
    ) -> impl Future<Output = Result<O, ToolError>> + Send + 'a {
        run_handler(&self.handler, args, cx)
    }

    fn output(&self, out: O, limit: usize) -> Result<String, OutputError> {
        let text = to_text(&out, limit)?;
        // The serialized form is what the model receives, so that is what is checked.
        crate::contract::validate::parse_str::<O>(&text).map_err(OutputError::Invalid)?;
        Ok(text)
    }
}
