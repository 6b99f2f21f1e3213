//! `kiln export`: one or several run folders as a CSV, plot images and TensorBoard event files.

use std::path::PathBuf;

use clap::Args;
use kiln_core::export::{self, PlotOptions};
use kiln_core::plot::XAxis;
use kiln_core::run_folder::{RunHistory, tensorboard};

/// Options of `kiln export`; at least one of --csv, --png, --svg, --tensorboard.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Run folders (as `kiln train` prints them); several are overlaid in one figure.
    #[arg(value_name = "RUN", required = true)]
    runs: Vec<PathBuf>,
    /// Write every row of every run to this CSV file.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Draw the plots to this PNG file.
    #[arg(long, value_name = "FILE")]
    png: Option<PathBuf>,
    /// Draw the plots to this SVG file.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Write each run's TensorBoard event files under this folder, as DIR/<run>/train and
    /// DIR/<run>/validation: for runs from before Kiln wrote them beside its CSVs.
    #[arg(long, value_name = "DIR")]
    tensorboard: Option<PathBuf>,
    /// Horizontal axis of the plots: steps, wall (seconds) or epochs. By default steps, or
    /// epochs where a run was imported from a log that holds figures per epoch only.
    #[arg(long = "x", value_name = "AXIS")]
    x_axis: Option<XAxis>,
    /// Title of the figure; default "Kiln: <run>" or "Kiln: N runs".
    #[arg(long)]
    title: Option<String>,
    /// Image size in pixels, WIDTHxHEIGHT.
    #[arg(long, value_name = "WxH", default_value = "1600x1000", value_parser = parse_size)]
    size: (u32, u32),
}

/// `1600x1000` → (1600, 1000); the range is checked by the exporter, which knows the limits.
fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("'{text}' is not a size; write it as WIDTHxHEIGHT, e.g. 1600x1000");
    let (w, h) = text.trim().split_once(['x', 'X', '×']).ok_or_else(bad)?;
    let w = w.trim().parse().map_err(|_| bad())?;
    let h = h.trim().parse().map_err(|_| bad())?;
    Ok((w, h))
}

/// Reads every run folder named, warning about rows that were skipped; fails on the first
/// folder that is not a run, before anything is written.
pub(super) fn load_runs(paths: &[PathBuf]) -> anyhow::Result<Vec<RunHistory>> {
    let mut runs = Vec::with_capacity(paths.len());
    for path in paths {
        let run = RunHistory::load(path)?;
        for problem in &run.problems {
            eprintln!("warning: {problem}");
        }
        if run.metrics.is_empty() && run.epochs.is_empty() {
            eprintln!("warning: {} has no rows yet", path.display());
        }
        runs.push(run);
    }
    Ok(runs)
}

/// Runs `kiln export`: reads every run first, so a wrong path writes nothing.
pub fn run(args: &ExportArgs) -> anyhow::Result<()> {
    if args.csv.is_none() && args.png.is_none() && args.svg.is_none() && args.tensorboard.is_none()
    {
        anyhow::bail!(
            "nothing to export; add --csv FILE, --png FILE, --svg FILE or --tensorboard DIR"
        );
    }
    let runs = load_runs(&args.runs)?;
    if let Some(dir) = &args.tensorboard {
        write_tensorboard(&runs, dir)?;
    }
    if args.csv.is_none() && args.png.is_none() && args.svg.is_none() {
        return Ok(());
    }
    let refs: Vec<&RunHistory> = runs.iter().collect();
    let per_epoch_only = runs
        .iter()
        .find(|run| run.metrics.is_empty() && !run.epochs.is_empty());
    let x_axis = match (args.x_axis, per_epoch_only) {
        (Some(axis), _) => axis,
        (None, Some(run)) => {
            eprintln!(
                "plotting against epochs: {} holds figures per epoch only (--x steps or --x wall to choose another axis)",
                run.name
            );
            XAxis::Epochs
        }
        (None, None) => XAxis::Steps,
    };
    let options = PlotOptions {
        x_axis,
        width_px: args.size.0,
        height_px: args.size.1,
        title: args.title.clone(),
    };
    export::save(
        &refs,
        &options,
        args.csv.as_deref(),
        args.png.as_deref(),
        args.svg.as_deref(),
    )?;
    let what = if refs.len() == 1 {
        "1 run".to_owned()
    } else {
        format!("{} runs", refs.len())
    };
    for (kind, path) in [("CSV", &args.csv), ("PNG", &args.png), ("SVG", &args.svg)] {
        if let Some(path) = path {
            println!("wrote {kind} of {what} to {}", path.display());
        }
    }
    Ok(())
}

/// Writes every run's event files under `dir` and says where, or that a run keeps its own.
fn write_tensorboard(runs: &[RunHistory], dir: &std::path::Path) -> anyhow::Result<()> {
    for run in runs {
        match tensorboard::export_event_files(run, dir)? {
            Some(files) => println!(
                "wrote {} TensorBoard event files of {} to {}",
                files.len(),
                run.name,
                dir.join(run.folder_name()).display()
            ),
            None => println!(
                "{} already keeps its TensorBoard event files in {}",
                run.name,
                run.path.display()
            ),
        }
    }
    println!("view them with: tensorboard --logdir {}", dir.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("1600x1000"), Ok((1600, 1000)));
        assert_eq!(parse_size("800X600"), Ok((800, 600)));
        assert!(parse_size("800").is_err());
        assert!(parse_size("ax600").is_err());
    }
}
