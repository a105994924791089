//! Locking that survives a panic elsewhere: a handler that panicked while some lock was held
//! must not take the runtime down with it.

use std::sync::{Mutex, MutexGuard};

/// Locks `mutex`, recovering the data if a previous holder panicked.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
