//! Evaluation: the scenarios, simulated models and ablations that measure
//! what learning gains. Test devices live here, not in `learn`, so the
//! learning code holds nothing tuned to one scenario.

pub mod ablation;
pub mod simulated;
