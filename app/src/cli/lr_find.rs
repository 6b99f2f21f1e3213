//! `kiln lr-find`: the learning-rate range test on a workload as `kiln train` takes it, its
//! chart and steps written where asked, and the rate to train at.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use kiln_core::train::lr_find::{self, LrFindOptions};

use super::train::TrainArgs;

/// Options of `kiln lr-find`: the workload as `kiln train` takes it, and the range to test.
#[derive(Debug, Args)]
pub struct LrFindArgs {
    /// The first rate tried.
    #[arg(long, value_name = "RATE", default_value_t = 1e-7)]
    min_lr: f64,
    /// The last rate, unless the loss diverges before it (the test stops there).
    #[arg(long, value_name = "RATE", default_value_t = 10.0)]
    max_lr: f64,
    /// Steps of the test, each at a rate that many times larger than the one before.
    #[arg(long, default_value_t = 100)]
    steps: usize,
    /// Also draw the loss against the rate, with the suggestion marked (.png or .svg).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Also write every step's rate, loss and smoothed loss as CSV.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    #[command(flatten)]
    workload: TrainArgs,
}

/// Runs `kiln lr-find`.
pub fn run(args: LrFindArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        !args.workload.is_resume(),
        "--resume continues a run and belongs to `kiln train`; test a run's settings with --config RUN_DIR/config.toml"
    );
    let options = LrFindOptions {
        min_lr: args.min_lr,
        max_lr: args.max_lr,
        steps: args.steps,
        ..LrFindOptions::default()
    };
    options.check().map_err(anyhow::Error::msg)?;
    let (draft, _) = args.workload.into_draft()?;
    let experiment = draft.validate()?;
    // The validation split is held out as in a run: the loops see only training images.
    let (data, target) = kiln_core::run::data_and_devices(&experiment)?;
    let report = lr_find::lr_find(&experiment, &data, &target, &options)?;
    print!("{}", report.describe());
    if let Some(lr) = report.suggested_lr {
        println!("train at it: kiln train <the same options> --lr {lr:.2e}");
    }
    if let Some(csv) = &args.csv {
        let mut text = String::from("step,lr,loss,smoothed_loss\n");
        for (i, p) in report.points.iter().enumerate() {
            text.push_str(&format!(
                "{},{},{},{}\n",
                i + 1,
                p.lr,
                p.loss,
                p.smoothed_loss
            ));
        }
        kiln_core::atomic_file::write_atomically(csv, text.as_bytes())
            .with_context(|| format!("could not write {}", csv.display()))?;
        eprintln!("wrote {}", csv.display());
    }
    if let Some(plot) = &args.plot {
        let bytes = match plot.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("svg") => report.chart_svg(900, 520)?.into_bytes(),
            Some(e) if e.eq_ignore_ascii_case("png") => report.chart_png(900, 520)?,
            _ => anyhow::bail!(
                "--plot {} needs a .png or .svg name, which says which to draw",
                plot.display()
            ),
        };
        kiln_core::atomic_file::write_atomically(plot, &bytes)
            .with_context(|| format!("could not write {}", plot.display()))?;
        eprintln!("wrote {}", plot.display());
    }
    Ok(())
}
