//! The deterministic generator and the intervals the evaluations share.

/// A small deterministic generator (SplitMix64), for scenarios and
/// benchmarks that must be the same from run to run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

/// 95% interval of the mean of `xs` (Student's t), for a rate: clamped
/// to [0, 1].
pub fn ci95(xs: &[f64]) -> (f64, f64, f64) {
    let (mean, lo, hi) = mean_interval(xs);
    (mean, lo.max(0.0), hi.min(1.0))
}

/// 95% interval of the mean of `xs` (Student's t), unclamped.
pub fn mean_interval(xs: &[f64]) -> (f64, f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (0.0, 0.0, 0.0);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return (mean, mean, mean);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    let t = T.get(n - 2).copied().unwrap_or(1.96);
    let half = t * (var / n as f64).sqrt();
    (mean, mean - half, mean + half)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_of_the_mean() {
        let (m, lo, hi) = ci95(&[0.7, 0.8, 0.75, 0.65, 0.8]);
        assert!((m - 0.74).abs() < 1e-9);
        assert!(lo < m && m < hi && (hi - m - (m - lo)).abs() < 1e-9);
        let (_, _, hi) = ci95(&[0.9, 1.0, 1.0]);
        assert!(hi <= 1.0);
    }
}
