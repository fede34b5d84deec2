//! The reviewer of training answers: a person reading the answers the
//! validators passed and marking the wrong ones failed (`runs mark`),
//! simulated from the tasks' labels. A set share of its verdicts is
//! wrong, as a person's are: a right answer marked failed (with a class
//! picked at random), or a wrong one let pass.

use super::report::Marks;
use super::stats::Rng;
use crate::eval::truth::Miss;

pub struct Reviewer {
    rng: Rng,
    noise: f64,
    classes: &'static [&'static str],
    pub marks: Marks,
}

impl Reviewer {
    pub fn new(seed: u64, noise: f64, classes: &'static [&'static str]) -> Self {
        Reviewer {
            rng: Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x7e71e3),
            noise: noise.clamp(0.0, 1.0),
            classes,
            marks: Marks::default(),
        }
    }

    /// The class to mark the answer failed with, if the reviewer marks it;
    /// `misses` is what the answer really got wrong.
    pub fn read(&mut self, misses: &[Miss]) -> Option<&'static str> {
        self.marks.reviewed += 1;
        let wrong = self.rng.chance(self.noise);
        let class = match (misses.first(), wrong) {
            (Some(m), false) => Some(m.class),
            (Some(_), true) => {
                self.marks.overlooked += 1;
                None
            }
            (None, false) => None,
            (None, true) => {
                self.marks.wrong += 1;
                self.classes
                    .get(self.rng.below(self.classes.len().max(1)))
                    .copied()
            }
        };
        self.marks.marked += u64::from(class.is_some());
        class
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_of_the_verdicts_is_wrong() {
        let miss = Miss {
            class: "ToneError",
            why: String::new(),
        };
        let mut r = Reviewer::new(1, 0.1, &["ToneError"]);
        for i in 0..4000 {
            let misses = if i % 2 == 0 {
                vec![miss.clone()]
            } else {
                vec![]
            };
            r.read(&misses);
        }
        let wrong = (r.marks.wrong + r.marks.overlooked) as f64 / 4000.0;
        assert!((wrong - 0.1).abs() < 0.02, "{wrong}");
        let mut exact = Reviewer::new(1, 0.0, &["ToneError"]);
        assert_eq!(exact.read(&[miss]), Some("ToneError"));
        assert_eq!(exact.read(&[]), None);
    }
}
