//! `kiln sweep CONFIG`: the trials of a config's `[sweep]` table as a queue over devices into
//! one sweep folder; `kiln sweep --resume DIR` goes on with one; `kiln sweep show DIR` reads one
//! as a table of settings against seed noise.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Subcommand};
use kiln_core::sweep::report::SortBy;
use kiln_core::sweep::{self, ExplainReport, Sweep, SweepEvent, SweepReport};
use kiln_core::train::Control;

/// Options of `kiln sweep`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SweepArgs {
    #[command(subcommand)]
    command: Option<SweepCommand>,
    /// A config with a [sweep] table: the settings to vary, over lists or ranges, and how
    /// (search = "grid", "random", "one-at-a-time" or "tpe"; seeds = N; trials = N for random
    /// and tpe; prune = "median" or "asha" to end trials clearly behind).
    #[arg(value_name = "CONFIG", required_unless_present = "resume")]
    config: Option<PathBuf>,
    /// Go on with the sweep in this folder: finished trials are kept, a trial cut mid-way
    /// resumes from its checkpoint, and the rest run.
    #[arg(long, value_name = "SWEEP_DIR", conflicts_with = "config")]
    resume: Option<PathBuf>,
    /// The devices trials run on, one trial per device at a time (default: the config's
    /// device).
    #[arg(long, value_name = "cpu,gpu:0,remote:HOST:PORT/N")]
    devices: Option<String>,
    /// Where new sweep folders go.
    #[arg(long, value_name = "DIR", default_value = "sweeps")]
    sweeps_dir: PathBuf,
}

#[derive(Debug, Subcommand)]
enum SweepCommand {
    /// A sweep folder as one table: a row per setting with mean ± std over seeds, the best by
    /// validation, and each other row's gap to it tested against seed noise (Welch's t-test).
    Show {
        /// The sweep folder.
        dir: PathBuf,
        /// Also write the table as CSV.
        #[arg(long, value_name = "FILE")]
        csv: Option<PathBuf>,
        /// Also draw the charts (the metric against each axis, parallel coordinates past two
        /// axes) as PNG and SVG into this folder.
        #[arg(long, value_name = "DIR")]
        plots: Option<PathBuf>,
        /// List the settings best first by this figure (the table and the CSV alike): plan
        /// (the plan's order), validation, test, val-loss, secs (per epoch) or throughput.
        #[arg(long, value_name = "FIGURE", default_value = "plan")]
        sort: SortBy,
    },
}

/// Runs `kiln sweep …`.
pub fn run(args: SweepArgs) -> anyhow::Result<()> {
    if let Some(SweepCommand::Show {
        dir,
        csv,
        plots,
        sort,
    }) = &args.command
    {
        return show(dir, csv.as_deref(), plots.as_deref(), *sort);
    }
    let (sweep, folder) = match (&args.resume, &args.config) {
        (Some(folder), _) => (sweep::open_sweep_folder(folder)?, folder.clone()),
        (None, Some(config)) => {
            let text = std::fs::read_to_string(config)
                .with_context(|| format!("could not read {}", config.display()))?;
            let sweep = Sweep::from_toml(&text, &config.display().to_string())?;
            let folder = sweep::create_sweep_folder(&args.sweeps_dir, &sweep, &text)?;
            (sweep, folder)
        }
        (None, None) => anyhow::bail!("give a sweep config, or --resume SWEEP_DIR"),
    };
    run_in_folder(&sweep, &folder, args.devices.as_deref())
}

/// Runs what is left of `sweep` in `folder` on `devices` (a list as `--devices` takes it; none:
/// the config's device), prints a line per trial and then the table (and an explain sweep's
/// effects, with its waterfall written beside the trials); an error when trials were cancelled
/// or failed, so scripts see it.
pub(super) fn run_in_folder(
    sweep: &Sweep,
    folder: &Path,
    devices: Option<&str>,
) -> anyhow::Result<()> {
    let devices = match devices {
        Some(list) => kiln_core::device::parse_devices(list).context("--devices")?,
        None => match sweep.trials.first() {
            Some(trial) => sweep.draft(trial)?.devices(),
            None => Vec::new(),
        },
    };
    eprintln!("sweep folder {}", folder.display());
    eprintln!(
        "{} on {}",
        sweep.describe(),
        kiln_core::device::devices_text(&devices)
    );
    let control = Arc::new(Control::new());
    super::train::cancel_on_interrupt(&control);
    // A model-based search plans trials as it goes: the lines name them from this copy.
    let planned =
        std::sync::Mutex::new(sweep::open_sweep_folder(folder).unwrap_or_else(|_| sweep.clone()));
    let on_event = |event: SweepEvent| {
        let Ok(mut planned) = planned.lock() else {
            return;
        };
        if let SweepEvent::Proposed { trials, .. } = &event
            && let Some(first) = trials.first()
        {
            planned.add_setting(first.setting.clone());
        }
        eprintln!("{}", event.describe(&planned));
    };
    let tally = sweep::run_sweep(sweep, folder, &devices, &control, &on_event)?;
    let sweep = &sweep::open_sweep_folder(folder)?;
    eprintln!(
        "{} trial(s) done before, {} finished now, {} cancelled, {} failed, {} not started",
        tally.already_done, tally.finished, tally.cancelled, tally.failed, tally.not_started
    );
    let report = SweepReport::of(sweep, folder, &sweep::trial_folders(sweep, folder));
    print!("{}", table(&report));
    let explained = ExplainReport::of(sweep, &report);
    let charts = sweep::write_charts(&report, explained.as_ref(), folder)?;
    match &explained {
        Some(explained) => {
            print!("\n{}", explained.describe());
            eprintln!(
                "the waterfall chart: {}",
                folder.join("explain.png").display()
            );
        }
        None if !charts.is_empty() => eprintln!("the charts: {}", file_names(&charts)),
        None => {}
    }
    if tally.cancelled + tally.not_started > 0 {
        anyhow::bail!(
            "the sweep was cancelled; `kiln sweep --resume {}` goes on where it stopped",
            folder.display()
        );
    }
    if tally.failed > 0 {
        anyhow::bail!(
            "{} trial(s) failed (the lines above say why); `kiln sweep --resume {}` tries them again",
            tally.failed,
            folder.display()
        );
    }
    Ok(())
}

/// The files' names, joined for a line.
fn file_names(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths
        .iter()
        .map(|p| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.join(", ")
}

fn show(dir: &Path, csv: Option<&Path>, plots: Option<&Path>, sort: SortBy) -> anyhow::Result<()> {
    let sweep = sweep::open_sweep_folder(dir)?;
    let mut report = SweepReport::of(&sweep, dir, &sweep::trial_folders(&sweep, dir));
    // The effects read the rows in the plan's order.
    let explained = ExplainReport::of(&sweep, &report);
    report.sort(sort);
    print!("{}", table(&report));
    if let Some(explained) = explained {
        print!("\n{}", explained.describe());
    }
    if let Some(csv) = csv {
        kiln_core::atomic_file::write_atomically(csv, report.to_csv().as_bytes())
            .with_context(|| format!("could not write {}", csv.display()))?;
        eprintln!("wrote {}", csv.display());
    }
    if let Some(plots) = plots {
        let charts = sweep::write_charts(&report, None, plots)?;
        eprintln!("wrote {} in {}", file_names(&charts), plots.display());
    }
    Ok(())
}

/// The report as a terminal table: one row per setting, the best marked.
fn table(report: &SweepReport) -> String {
    let percent = |s: Option<kiln_core::sweep::report::Spread>| {
        s.map_or("-".to_string(), |s| {
            format!("{:.2} ± {:.2} %", 100.0 * s.mean, 100.0 * s.std)
        })
    };
    let plain = |s: Option<kiln_core::sweep::report::Spread>, digits: usize| {
        s.map_or("-".to_string(), |s| {
            format!("{:.digits$} ± {:.digits$}", s.mean, s.std)
        })
    };
    let validation = if report.validated_on_test {
        "test (validated on)"
    } else {
        "validation"
    };
    let header = [
        "setting",
        "seeds",
        validation,
        "test",
        "val loss",
        "s/epoch",
        "images/s",
        "against the best",
    ];
    let rows: Vec<[String; 8]> = report
        .rows
        .iter()
        .map(|row| {
            [
                row.setting.clone(),
                match row.pruned {
                    0 => format!("{}/{}", row.finished, row.planned),
                    pruned => format!("{}/{} ({pruned} pruned)", row.finished, row.planned),
                },
                percent(row.val_accuracy),
                percent(row.test_accuracy),
                plain(row.val_loss, 4),
                plain(row.epoch_secs, 2),
                plain(row.samples_per_sec, 0),
                row.versus_best.map(|v| v.describe()).unwrap_or_default(),
            ]
        })
        .collect();
    let width = |column: usize| {
        rows.iter()
            .map(|r| r[column].chars().count())
            .chain(std::iter::once(header[column].chars().count()))
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..header.len()).map(width).collect();
    let mut text = format!("{}\n", report.plan);
    let line = |cells: &[String]| {
        let mut line = String::new();
        for (cell, width) in cells.iter().zip(&widths) {
            let pad = width.saturating_sub(cell.chars().count());
            let _ = write!(line, "{cell}{}  ", " ".repeat(pad));
        }
        format!("{}\n", line.trim_end())
    };
    text.push_str(&line(&header.map(String::from)));
    for row in &rows {
        text.push_str(&line(row));
    }
    let chosen = if report.validated_on_test {
        "best by test accuracy, as these runs validate on the test set (no split was held out)"
    } else {
        "best by validation accuracy, never by test"
    };
    let _ = writeln!(
        text,
        "{chosen}; \"within seed noise\": Welch's t-test over the seeds gives p ≥ {}",
        kiln_core::sweep::report::NOISE_P
    );
    text
}
