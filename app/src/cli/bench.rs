//! `kiln bench`: a workload for a fixed number of steps, printed as one JSON line per loop style.

use anyhow::Context;
use clap::Args;
use kiln_core::data;
use kiln_core::device;
use kiln_core::train::TrainDevice;
use kiln_core::train::bench::{self, BenchReport, LoopStyle};

use super::train::TrainArgs;

/// Options of `kiln bench`: the workload as `kiln train` takes it, and what to measure.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Steps timed after the first (warm-up) step.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    steps: u64,
    /// Train the way the slow user loops did: per-sample host preprocessing, an upload per batch,
    /// a host sync every step.
    #[arg(long, conflicts_with = "compare")]
    naive: bool,
    /// Run both loops, one after the other in this process, and print their ratio.
    #[arg(long)]
    compare: bool,
    #[command(flatten)]
    workload: TrainArgs,
}

/// Runs `kiln bench`.
pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        !args.workload.is_resume(),
        "--resume continues a run and belongs to `kiln train`; bench a run's settings with --config RUN_DIR/config.toml"
    );
    let steps = usize::try_from(args.steps).context("--steps is too large")?;
    let (draft, _) = args.workload.into_draft()?;
    let experiment = draft.validate()?;
    anyhow::ensure!(
        experiment.data_parallel.is_empty(),
        "kiln bench times the loop on one device; time a data-parallel run with `kiln train --devices …`, whose summary.json has its samples per second"
    );
    let data = data::load(
        &experiment.dataset,
        experiment.data_dir.as_deref(),
        experiment.resize,
    )?;
    experiment.check_against(&data)?;
    let (info, device) = device::resolve(&experiment.device)?;
    device::check_precision(&info, &device, experiment.precision)?;
    let target = TrainDevice::one(device, info.id, info.name);
    let styles: &[LoopStyle] = match (args.naive, args.compare) {
        (_, true) => &[LoopStyle::Kiln, LoopStyle::Naive],
        (true, false) => &[LoopStyle::Naive],
        (false, false) => &[LoopStyle::Kiln],
    };
    if styles.len() > 1 {
        // Whichever loop runs first in a process also pays for its first-touch page faults and
        // allocator growth (measured: 20–30 % on the CPU); a short untimed round of each first
        // leaves both measured runs the same conditions.
        for &style in styles {
            bench::bench(&experiment, &data, &target, style, steps.min(100))?;
        }
    }
    let mut reports: Vec<BenchReport> = Vec::new();
    for &style in styles {
        let report = bench::bench(&experiment, &data, &target, style, steps)?;
        println!("{}", serde_json::to_string(&report)?);
        reports.push(report);
    }
    if let [kiln, naive] = reports.as_slice() {
        let ratio = serde_json::json!({
            "compare": "kiln / naive",
            "samples_per_sec_ratio": kiln.samples_per_sec / naive.samples_per_sec.max(1e-9),
            "median_step_ms_ratio": naive.median_step_ms / kiln.median_step_ms.max(1e-9),
        });
        println!("{ratio}");
    }
    Ok(())
}
