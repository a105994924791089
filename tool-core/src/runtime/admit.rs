//! Stage 6: nothing starts after cancellation or the deadline; a call waits for a concurrency
//! slot (the tool's, then the runtime's), then takes one unit of each call quota (the tool's,
//! then the runtime's).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{Semaphore, SemaphorePermit};

use super::{CallRef, Shared, stopped};
use crate::context::{Context, Stopped};
use crate::outcome::{Code, Failure};
use crate::registry::ToolInfo;

/// The concurrency slots a running call holds; released when dropped.
pub(super) struct Permits<'a> {
    _tool: Option<SemaphorePermit<'a>>,
    _global: Option<SemaphorePermit<'a>>,
}

pub(super) async fn admit<'s>(
    shared: &'s Shared,
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
                .map_err(|s| stopped(s, waiting))?,
        ),
        None => None,
    };
    let global = match &shared.concurrency {
        Some(semaphore) => Some(
            acquire(cx, semaphore)
                .await
                .map_err(|s| stopped(s, waiting))?,
        ),
        None => None,
    };
    Ok(Permits {
        _tool: tool,
        _global: global,
    })
}

/// Takes one unit of the tool's and the runtime's call quotas, both or neither (without a
/// ledger; with one, the claim takes them).
pub(super) fn take_quotas(
    shared: &Shared,
    info: &ToolInfo,
    call: &CallRef<'_>,
) -> Result<(), Failure> {
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
    Ok(())
}

async fn acquire<'s>(
    cx: &Context,
    semaphore: &'s Semaphore,
) -> Result<SemaphorePermit<'s>, Stopped> {
    if let Ok(permit) = semaphore.try_acquire() {
        return Ok(permit);
    }
    // Boxed so the rare wait does not enlarge every call's future.
    match Box::pin(cx.bounded(semaphore.acquire())).await? {
        Ok(permit) => Ok(permit),
        // The runtime never closes its semaphores.
        Err(_) => Err(Stopped::Cancelled),
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

/// A concurrency cap as a semaphore: at least one slot (a cap of 0 would make every call wait
/// for ever) and at most what a semaphore can count.
pub(super) fn permits(limit: usize) -> Semaphore {
    Semaphore::new(limit.clamp(1, Semaphore::MAX_PERMITS))
}
