//! The catalog a runner serves, swapped whole when skills change on disk
//! (the forge wrote one), so the next run in this process sees it.

use std::sync::{Arc, RwLock};

use tokio::sync::watch;

use crate::skill::Catalog;

/// The current catalog and its generation (0 for the first, one more per
/// swap). Readers take an `Arc` and keep it for their run.
pub struct CatalogCell {
    current: RwLock<Arc<Catalog>>,
    generation: watch::Sender<u64>,
}

impl CatalogCell {
    pub fn new(catalog: Arc<Catalog>) -> Self {
        CatalogCell {
            current: RwLock::new(catalog),
            generation: watch::Sender::new(0),
        }
    }

    pub fn get(&self) -> Arc<Catalog> {
        // A panic while swapping leaves the old or the new `Arc`: whole.
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn generation(&self) -> u64 {
        *self.generation.borrow()
    }

    /// Puts `catalog` in place; answers the new generation.
    pub fn swap(&self, catalog: Catalog) -> u64 {
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(catalog);
        let mut next = 0;
        self.generation.send_modify(|g| {
            *g += 1;
            next = *g;
        });
        next
    }

    /// Hears of every swap after this call.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swap_is_seen_by_readers_and_subscribers() {
        let cell = CatalogCell::new(Arc::new(Catalog::from_skills(vec![])));
        let mut rx = cell.subscribe();
        let before = cell.get();
        assert_eq!(cell.swap(Catalog::from_skills(vec![])), 1);
        assert_eq!(cell.generation(), 1);
        assert!(rx.has_changed().unwrap_or(false));
        assert!(!Arc::ptr_eq(&before, &cell.get()));
        assert_eq!(*rx.borrow_and_update(), 1);
    }
}
