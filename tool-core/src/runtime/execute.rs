//! Stage 7: the handler runs under the tool's (or the runtime's) timeout, the run's deadline
//! and its cancellation, with panics caught. Stopping non-idempotent work (by the call's effect,
//! which may depend on its arguments) ends as `outcome_unknown`: its effects may have happened.

use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use futures_util::FutureExt as _;

use super::{CallRef, Shared, output};
use crate::context::{CallScope, Context};
use crate::outcome::{Code, Failure};
use crate::registry::kind::{Work, panic_text};
use crate::{
    Effect,
    registry::{ToolInfo, WorkError},
};

/// Runs the call's `work` (the handler, then its output checked, stage 8) and closes the call's
/// `scope` once it is over, however it ended.
pub(super) async fn execute(
    shared: &Shared,
    info: &ToolInfo,
    call: &CallRef<'_>,
    scope: &Arc<CallScope>,
    work: Work<'_>,
    cx: &Context,
) -> Result<String, Failure> {
    enum Ended<T> {
        Done(T),
        Cancelled,
        TimedOut,
    }
    let mut limit = info.settings.timeout.unwrap_or(shared.timeout);
    if let Some(left) = cx.time_left() {
        limit = limit.min(left);
    }
    let effect = work.effect;
    // The handler's programs run with the tool's declared authority, narrowed by the context.
    // A scope with none declared reads as none, so most calls skip setting it.
    #[cfg(feature = "sandbox")]
    if info.settings.authority.is_some() {
        scope.declare(info.settings.authority.clone());
    }
    let ended = {
        let mut work = pin!(AssertUnwindSafe(work.future).catch_unwind());
        // Most handlers finish on their first poll: they never arm a timer or a waiter.
        match std::future::poll_fn(|task| Poll::Ready(work.as_mut().poll(task))).await {
            Poll::Ready(result) => Ended::Done(result),
            // Boxed so the timer and the cancellation waiter do not enlarge every call's
            // future.
            Poll::Pending => {
                Box::pin(async {
                    tokio::select! {
                        biased;
                        result = work => Ended::Done(result),
                        () = cx.cancelled() => Ended::Cancelled,
                        () = tokio::time::sleep(limit) => Ended::TimedOut,
                    }
                })
                .await
            }
        }
        // The work, and with it the handler's context, is dropped here.
    };
    // The call is over: tell anything the handler started, and accept no more progress.
    CallScope::cancel(scope);
    scope.close();

    let stopped = |code: Code, what: &str| {
        if effect == Effect::NonIdempotent {
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
        Ended::Done(Ok(Ok(text))) => Ok(text),
        // A sandboxed program stopped because the run was cancelled.
        Ended::Done(Ok(Err(WorkError::Tool(error)))) if error.code() == Code::Cancelled => {
            Err(stopped(Code::Cancelled, "the run was cancelled"))
        }
        Ended::Done(Ok(Err(WorkError::Tool(error)))) => {
            let message = match error.message() {
                Some(message) => format!("{message} (reference {})", call.id),
                None => format!("`{}` failed (reference {})", info.name, call.id),
            };
            let failure = Failure::new(error.code(), message);
            Err(match error.detail() {
                Some(detail) => failure.with_detail(detail),
                None => failure,
            })
        }
        Ended::Done(Ok(Err(WorkError::Output(error)))) => {
            Err(output::broken(error, shared, info, call))
        }
        Ended::Done(Err(panic)) => {
            let what = panic_text(&*panic);
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
