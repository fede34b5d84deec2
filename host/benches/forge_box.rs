//! What the forge's build box costs: the same generated Rust handler built
//! by `forge::handler::build` in a bubblewrap box (`build_box = "bwrap"`,
//! the default) and unboxed (`build_box = "none"`), alternating, in the
//! same run.
//!
//! - cold: a fresh build cache (CARGO_TARGET_DIR) each time, so the guest
//!   SDK and its dependencies (wit-bindgen, serde, ...) compile too;
//! - warm: right after, the same slot and cache with a one-line change to
//!   the handler's source, so only the handler compiles; [`WARM_BUILDS`]
//!   of them a round, each with another change, boxed and unboxed in
//!   turn so that each pair sees the same load on the machine.
//!
//! Prints each build, the medians, and `RATIO forge-box-cold` /
//! `RATIO forge-box-warm` (boxed / unboxed; the target is at most 1.2).
//! `SKILLHOST_BENCH_ROUNDS` sets the rounds (3; each builds cold and warm
//! in both modes).
//!
//! Run: `cargo bench -p skillhost --bench forge_box` (release profile).
//! Needs cargo with the wasm32-wasip2 target and bubblewrap
//! (`apt-get install -y bubblewrap`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench that cannot set up stops there, naming the step"
)]

use std::path::Path;
use std::time::{Duration, Instant};

use skillhost::forge::buildbox::BuildBox;
use skillhost::forge::handler::{self, BuildSettings, HandlerConfig, HandlerLang};

/// The handler `forge handler` wrote in tests/forge_handler/.
const SOURCE: &str = r#"use skillhost_guest::{HandlerResult, Output, Task};

fn handle(task: Task) -> HandlerResult {
    Ok(Output::text(task.description.to_uppercase()))
}

skillhost_guest::export_handler!(handle);
"#;

/// Warm builds a round, in each mode.
const WARM_BUILDS: usize = 5;

/// The one-line change of warm build `n`.
fn changed(n: usize) -> String {
    SOURCE.replace(
        "task.description.to_uppercase()",
        &format!(
            "task.description.to_uppercase() + \"{}\"",
            "!".repeat(n + 1)
        ),
    )
}

fn settings(mode: BuildBox, cache_root: &Path) -> BuildSettings {
    let config = HandlerConfig {
        build_box: mode,
        build_timeout_secs: 1800,
        ..HandlerConfig::default()
    };
    BuildSettings::new(&config, cache_root)
}

/// Writes `source` into `slot` and builds it; the wall time of the build.
fn build(slot: &Path, source: &str, settings: &BuildSettings) -> Duration {
    handler::write_project(slot, source, HandlerLang::Rust, settings).expect("project");
    let t = Instant::now();
    let built = handler::build(slot, HandlerLang::Rust, settings)
        .unwrap_or_else(|e| panic!("the build failed: {e}"));
    let took = t.elapsed();
    assert!(built.wasm.starts_with(b"\0asm"), "a component");
    took
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    }
}

fn name(mode: BuildBox) -> &'static str {
    match mode {
        BuildBox::Bwrap => "boxed",
        BuildBox::None => "unboxed",
    }
}

fn main() {
    // The unboxed mode's warning on every build is expected here.
    let rounds: usize = std::env::var("SKILLHOST_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3)
        .max(1);
    let mut times = Times::default();
    for round in 0..rounds {
        times.round(round);
    }
    times.print(rounds);
}

/// Build times by mode: index 0 boxed, 1 unboxed.
#[derive(Default)]
struct Times {
    cold: [Vec<Duration>; 2],
    warm: [Vec<Duration>; 2],
}

/// A folder with an empty slot, and the settings of `mode` with their
/// cache in it.
fn setup(mode: BuildBox) -> (tempfile::TempDir, BuildSettings) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("slot")).expect("mkdir");
    let s = settings(mode, &dir.path().join("cache"));
    (dir, s)
}

fn index(mode: BuildBox) -> usize {
    usize::from(mode == BuildBox::None)
}

impl Times {
    /// One cold build in each mode, then warm builds paired, so that both
    /// modes see the same machine.
    fn round(&mut self, round: usize) {
        // Alternate which goes first, so neither always runs on a warmer
        // machine (page cache, CPU clock).
        let order = if round.is_multiple_of(2) {
            [BuildBox::Bwrap, BuildBox::None]
        } else {
            [BuildBox::None, BuildBox::Bwrap]
        };
        let setups: Vec<(tempfile::TempDir, BuildSettings)> =
            order.iter().map(|&mode| setup(mode)).collect();
        for (&mode, (dir, s)) in order.iter().zip(&setups) {
            let c = build(&dir.path().join("slot"), SOURCE, s);
            println!(
                "round {}: {:>7} cold {:.2} s",
                round + 1,
                name(mode),
                c.as_secs_f64()
            );
            self.cold[index(mode)].push(c);
        }
        for k in 0..WARM_BUILDS {
            for (&mode, (dir, s)) in order.iter().zip(&setups) {
                let source = changed(round * WARM_BUILDS + k);
                let w = build(&dir.path().join("slot"), &source, s);
                self.warm[index(mode)].push(w);
            }
        }
        for mode in order {
            self.print_warm(round, mode);
        }
    }

    /// The round's warm builds of `mode`.
    fn print_warm(&self, round: usize, mode: BuildBox) {
        let warm = &self.warm[index(mode)];
        let w = &warm[warm.len() - WARM_BUILDS..];
        println!(
            "round {}: {:>7} warm {} s",
            round + 1,
            name(mode),
            w.iter()
                .map(|d| format!("{:.2}", d.as_secs_f64()))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }

    /// The medians of each mode, and boxed against unboxed.
    fn print(self, rounds: usize) {
        let [cold_boxed, cold_unboxed] = self.cold.map(median);
        let [warm_boxed, warm_unboxed] = self.warm.map(median);
        println!(
            "medians of {rounds} cold and {} warm builds each: cold boxed {:.2} s, unboxed {:.2} s; warm boxed {:.2} s, unboxed {:.2} s",
            rounds * WARM_BUILDS,
            cold_boxed.as_secs_f64(),
            cold_unboxed.as_secs_f64(),
            warm_boxed.as_secs_f64(),
            warm_unboxed.as_secs_f64()
        );
        println!(
            "RATIO forge-box-cold: boxed {:.2} s / unboxed {:.2} s = {:.3}x (target <= 1.2)",
            cold_boxed.as_secs_f64(),
            cold_unboxed.as_secs_f64(),
            cold_boxed.as_secs_f64() / cold_unboxed.as_secs_f64()
        );
        println!(
            "RATIO forge-box-warm: boxed {:.2} s / unboxed {:.2} s = {:.3}x (target <= 1.2)",
            warm_boxed.as_secs_f64(),
            warm_unboxed.as_secs_f64(),
            warm_boxed.as_secs_f64() / warm_unboxed.as_secs_f64()
        );
    }
}
