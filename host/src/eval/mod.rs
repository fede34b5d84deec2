//! Evaluation: the scenarios, simulated models and ablations that measure
//! what learning gains. Test devices live here, not in `learn`, so the
//! learning code holds nothing tuned to one scenario.

pub mod ablation;
#[cfg(feature = "forge")]
pub mod forge;
#[cfg(feature = "forge")]
pub mod forge_agent;
pub mod simulated;
pub mod simulated_support;
