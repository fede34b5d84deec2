//! Host memory charged to the call that made the host hold it.
//!
//! A guest's linear memory is limited by the store's limiter, but what it
//! makes the *host* allocate is not: resource-table entries, HTTP header
//! fields, request paths, events, strings lifted out of guest memory. Rather
//! than a cap per kind of object (there are many, and new WASI versions add
//! more), every heap allocation made while a call's future is being polled
//! is charged to that call: the process's global allocator counts bytes
//! against the budget of the call running on the current thread. Guest
//! execution happens inside that poll (wasmtime runs the guest on a fiber
//! of the same thread), so every host function the guest calls is charged.
//!
//! The allocator never fails an allocation (that would abort the process);
//! it marks the budget exceeded, and the call is stopped at the next check
//! (the epoch callback, every tick).
//! Allocations freed outside a charged poll (the store dropped after the
//! call) are simply not credited; the budget dies with the call.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::task::{Context, Poll};

/// The host memory one call may make the host hold.
#[derive(Debug)]
pub struct HostBudget {
    used: AtomicIsize,
    peak: AtomicIsize,
    limit: isize,
}

impl HostBudget {
    pub fn new(limit_bytes: usize) -> Arc<Self> {
        Arc::new(HostBudget {
            used: AtomicIsize::new(0),
            peak: AtomicIsize::new(0),
            limit: isize::try_from(limit_bytes).unwrap_or(isize::MAX),
        })
    }

    fn charge(&self, bytes: isize) {
        // Only the thread polling the call's `Charged` future charges its
        // budget, one poll at a time, so a plain load and store are exact
        // and spare every allocation two locked instructions.
        let now = self.used.load(Ordering::Relaxed).saturating_add(bytes);
        self.used.store(now, Ordering::Relaxed);
        if now > self.peak.load(Ordering::Relaxed) {
            self.peak.store(now, Ordering::Relaxed);
        }
    }

    /// Whether the call has made the host hold more than its budget.
    pub fn exceeded(&self) -> bool {
        self.exceeded_with(0)
    }

    /// Whether what the host holds for the call, plus `also` bytes held
    /// elsewhere for it (its linear memories), is over the budget.
    pub fn exceeded_with(&self, also: usize) -> bool {
        let also = isize::try_from(also).unwrap_or(isize::MAX);
        self.used.load(Ordering::Relaxed).saturating_add(also) > self.limit
    }

    /// The most the call made the host hold at once, in bytes.
    pub fn peak(&self) -> usize {
        usize::try_from(self.peak.load(Ordering::Relaxed)).unwrap_or(0)
    }

    pub fn limit(&self) -> usize {
        usize::try_from(self.limit).unwrap_or(usize::MAX)
    }
}

thread_local! {
    /// The budget of the call being polled on this thread, if any. A raw
    /// pointer (no destructor, const-initialised) so the allocator can read
    /// it without allocating; `Charged` keeps it alive while it is set.
    static CURRENT: Cell<*const HostBudget> = const { Cell::new(std::ptr::null()) };
}

fn charge(bytes: isize) {
    let _ = CURRENT.try_with(|c| {
        let p = c.get();
        if !p.is_null() {
            // SAFETY: set only by `Charged::poll`, which holds an `Arc` to
            // the budget for as long as the pointer is set.
            unsafe { (*p).charge(bytes) }
        }
    });
}

/// The global allocator: the system allocator, counting bytes against the
/// current call's budget.
pub struct CountingAllocator;

// SAFETY: every method forwards to `System` unchanged; counting only reads
// a thread-local and updates atomics, and never allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc`'s contract for this call,
        // which is `System`'s contract too.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            charge(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc`'s contract for this call,
        // which is `System`'s contract too.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            charge(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `GlobalAlloc`'s contract for this call,
        // which is `System`'s contract too.
        unsafe { System.dealloc(ptr, layout) };
        charge(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc`'s contract for this call,
        // which is `System`'s contract too.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            charge(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// A future whose polls are charged to `budget`.
pub struct Charged<F> {
    inner: Pin<Box<F>>,
    budget: Arc<HostBudget>,
}

impl<F: Future> Charged<F> {
    pub fn new(inner: F, budget: Arc<HostBudget>) -> Self {
        Charged {
            inner: Box::pin(inner),
            budget,
        }
    }
}

impl<F: Future> Future for Charged<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let budget = Arc::as_ptr(&self.budget);
        let previous = CURRENT.with(|c| c.replace(budget));
        // Restore even if the inner poll panics.
        struct Restore(*const HostBudget);
        impl Drop for Restore {
            fn drop(&mut self) {
                let _ = CURRENT.try_with(|c| c.set(self.0));
            }
        }
        let _restore = Restore(previous);
        self.inner.as_mut().poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_inside_a_charged_poll_count_and_others_do_not() {
        let budget = HostBudget::new(1 << 20);
        let outside: Vec<u8> = vec![1; 4 << 20];
        let fut = Charged::new(
            async {
                let held: Vec<u8> = vec![1; 2 << 20];
                std::hint::black_box(&held);
                held
            },
            budget.clone(),
        );
        let held = futures::executor::block_on(fut);
        assert!(budget.exceeded(), "2 MiB held against a 1 MiB budget");
        assert!(budget.peak() >= 2 << 20);
        drop(held);
        drop(outside);
        // Freed outside the poll: not credited, still over.
        assert!(budget.exceeded());

        let budget = HostBudget::new(1 << 20);
        let fut = Charged::new(
            async {
                for _ in 0..100 {
                    std::hint::black_box(vec![1u8; 512 << 10]);
                }
            },
            budget.clone(),
        );
        futures::executor::block_on(fut);
        assert!(!budget.exceeded(), "freed as it went: never over");
        assert!(budget.peak() >= 512 << 10);
    }
}
