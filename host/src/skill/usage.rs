//! How often a skill was used and how it went, as plain data: the store
//! keeps these figures, retrieval reads them through [`UsageSource`]
//! (this module cannot see the store).

use std::cmp::Ordering;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// One skill's usage statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Recorded runs of the skill.
    pub uses: u64,
    /// Those that succeeded.
    pub successes: u64,
    /// Exponential moving average of the outcomes (1 success, 0 failure)
    /// with weight [`Usage::ALPHA`] on the newest; the first use sets it to
    /// its own outcome. 0 while the skill was never used.
    pub success_rate: f64,
    /// Unix seconds of the newest recorded run.
    pub last_used: Option<i64>,
}

impl Usage {
    /// The weight of the newest outcome in `success_rate`.
    pub const ALPHA: f64 = 0.3;

    /// What ranking assumes of a skill never used: neither proven nor
    /// failing, so it sits between skills that mostly fail and mostly work.
    pub const UNUSED_RATE: f64 = 0.5;

    /// Counts one more run, `at` in unix seconds.
    pub fn record(&mut self, success: bool, at: i64) {
        let outcome = if success { 1.0 } else { 0.0 };
        self.success_rate = if self.uses == 0 {
            outcome
        } else {
            Self::ALPHA * outcome + (1.0 - Self::ALPHA) * self.success_rate
        };
        self.uses += 1;
        self.successes += u64::from(success);
        self.last_used = Some(self.last_used.map_or(at, |t| t.max(at)));
    }

    /// The better of two skills' usage first: higher success rate, then
    /// more uses. `None` is a skill never used.
    pub fn rank(a: Option<&Usage>, b: Option<&Usage>) -> Ordering {
        let rate = |u: Option<&Usage>| {
            u.filter(|u| u.uses > 0)
                .map_or(Self::UNUSED_RATE, |u| u.success_rate)
        };
        let uses = |u: Option<&Usage>| u.map_or(0, |u| u.uses);
        rate(b)
            .total_cmp(&rate(a))
            .then_with(|| uses(b).cmp(&uses(a)))
    }
}

/// Where retrieval finds a skill's usage. Asked only to break ties, so an
/// implementation may load its figures on the first question.
pub trait UsageSource {
    fn usage(&self, skill: &str) -> Option<Usage>;
}

impl UsageSource for HashMap<String, Usage> {
    fn usage(&self, skill: &str) -> Option<Usage> {
        self.get(skill).copied()
    }
}

/// No figures: every skill counts as never used.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoUsage;

impl UsageSource for NoUsage {
    fn usage(&self, _: &str) -> Option<Usage> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_use_sets_the_rate_and_later_ones_move_it_by_alpha() {
        let mut u = Usage::default();
        u.record(false, 10);
        assert_eq!((u.uses, u.successes, u.success_rate), (1, 0, 0.0));
        u.record(true, 5);
        assert!((u.success_rate - 0.3).abs() < 1e-12);
        u.record(true, 20);
        assert!((u.success_rate - (0.3 + 0.7 * 0.3)).abs() < 1e-12);
        assert_eq!((u.uses, u.successes, u.last_used), (3, 2, Some(20)));
    }

    #[test]
    fn rank_prefers_the_rate_then_the_uses_and_unused_sits_in_the_middle() {
        let used = |rate: f64, uses: u64| Usage {
            uses,
            successes: 0,
            success_rate: rate,
            last_used: Some(0),
        };
        let good = used(0.9, 3);
        let busy_good = used(0.9, 30);
        let bad = used(0.1, 100);
        assert_eq!(Usage::rank(Some(&good), Some(&bad)), Ordering::Less);
        assert_eq!(Usage::rank(Some(&busy_good), Some(&good)), Ordering::Less);
        assert_eq!(Usage::rank(None, Some(&bad)), Ordering::Less);
        assert_eq!(Usage::rank(Some(&good), None), Ordering::Less);
        assert_eq!(Usage::rank(None, None), Ordering::Equal);
    }
}
