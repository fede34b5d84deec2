//! Evaluation: the scenarios, simulated models and ablations that measure
//! what learning gains. Test devices live here, not in `learn`, so the
//! learning code holds nothing tuned to one scenario.
//!
//! The ablation's parts: [`tasks`] (labelled tasks), [`truth`] (the
//! ground-truth checker, independent of the validators), [`reading`] (how
//! the simulated models weigh the instructions in their prompt),
//! [`simulated`] and [`simulated_support`] (the models), [`proposer`] (the
//! simulated rule proposer) and [`ablation`] (arms, runs, report).

pub mod ablation;
#[cfg(feature = "forge")]
pub mod forge;
#[cfg(feature = "forge")]
pub mod forge_agent;
pub mod proposer;
pub mod reading;
pub mod simulated;
pub mod simulated_support;
pub mod tasks;
pub mod time_forms;
pub mod truth;
