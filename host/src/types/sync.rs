//! Locks that outlive a panic.

use std::sync::{Mutex, MutexGuard};

/// The lock, also after a panic elsewhere: every holder in this crate
/// leaves what it guards whole.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
