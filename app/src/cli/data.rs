//! `kiln data fetch`: downloads with a progress bar, verified before anything lands.
//! `kiln data inspect`: a look at a data set before training on it.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use kiln_core::config::{ExperimentDraft, Setting, Validation};
use kiln_core::data::fetch::{FetchProgress, RemoteDataset};
use kiln_core::data::{self, DataError, DatasetSpec};
use kiln_core::device::DeviceChoice;

/// Options of `kiln data`.
#[derive(Debug, Args)]
pub struct DataArgs {
    #[command(subcommand)]
    command: DataCommand,
}

#[derive(Debug, Subcommand)]
enum DataCommand {
    /// Download mnist, fashion-mnist or cifar10 and verify its SHA-256 checksums.
    Fetch {
        /// mnist, fashion-mnist or cifar10.
        dataset: RemoteDataset,
        /// Folder to put it in (default: KILN_DATA_DIR, else the per-user data folder).
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Images per class per split (as a run would split them), the image shape, files left
    /// out, and images found in more than one split; optionally a PNG grid of samples and one
    /// of what the training augmentation makes of them.
    Inspect(Box<InspectArgs>),
}

/// Options of `kiln data inspect`: the data set and how a run would split it.
#[derive(Debug, Args)]
struct InspectArgs {
    /// synthetic, mnist, fashion-mnist, cifar10, folder:PATH[@SIZE] or csv:PATH[@SIZE].
    dataset: DatasetSpec,
    #[command(flatten)]
    columns: super::label_columns::LabelColumnFlags,
    /// Folder holding the data set's files.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    #[arg(long, value_name = "FRACTION", help = Setting::ValSplit.help())]
    val_split: Option<f64>,
    #[arg(long, value_name = "FRACTION", help = Setting::TestSplit.help())]
    test_split: Option<f64>,
    #[arg(long, value_name = "split|test", help = Setting::Validation.help())]
    validation: Option<Validation>,
    #[arg(long, help = Setting::Seed.help())]
    seed: Option<u64>,
    /// Write a PNG with a row of training images per class.
    #[arg(long, value_name = "FILE")]
    grid: Option<PathBuf>,
    /// Images per class in the grid.
    #[arg(long, value_name = "N", default_value_t = 8)]
    samples: usize,
    /// Write a PNG of a few training images as the augmentation flags make training see them:
    /// the top row as evaluated, each row below one training step's draw.
    #[arg(long, value_name = "FILE")]
    augmentation: Option<PathBuf>,
    #[command(flatten)]
    augment: super::setting_flags::SettingFlags<super::setting_flags::Augmentation>,
    #[arg(long, value_name = "auto|cpu|gpu:N|cuda:N|remote:HOST:PORT/N", help = Setting::Device.help())]
    device: Option<DeviceChoice>,
}

/// Training images the augmentation preview shows, one per class in turn.
const PREVIEW_IMAGES: usize = 10;
/// Training steps the augmentation preview draws, one row each.
const PREVIEW_DRAWS: usize = 6;

/// Runs `kiln data …`.
pub fn run(args: DataArgs) -> anyhow::Result<()> {
    match args.command {
        DataCommand::Fetch { dataset, data_dir } => fetch(dataset, data_dir),
        DataCommand::Inspect(args) => inspect(*args),
    }
}

fn inspect(args: InspectArgs) -> anyhow::Result<()> {
    let defaults = ExperimentDraft::default();
    let mut dataset = args.dataset;
    args.columns.apply(&mut dataset)?;
    let draft = ExperimentDraft {
        dataset,
        data_dir: args.data_dir,
        val_split: args.val_split.unwrap_or(defaults.val_split),
        test_split: args.test_split.unwrap_or(defaults.test_split),
        validation: args.validation.unwrap_or(defaults.validation),
        seed: args.seed.unwrap_or(defaults.seed),
        device: args.device.unwrap_or(defaults.device),
        ..defaults
    };
    let mut draft = draft;
    args.augment.apply(&mut draft)?;
    let experiment = draft.validate()?;
    let loaded = data::load(
        &experiment.dataset,
        experiment.data_dir.as_deref(),
        experiment.resize,
    )?;
    let data = data::make_splits(loaded, &experiment)?;
    let report = data::inspect::inspect(&data);
    println!("{}", report_text(&report));
    if let Some(path) = &args.augmentation {
        let images = data::inspect::preview_images(&data, PREVIEW_IMAGES);
        let (_, device) = kiln_core::device::resolve(&experiment.device)?;
        let (rgba, width, height) = kiln_core::train::augmentation_preview(
            &experiment,
            data.shape,
            &images,
            PREVIEW_DRAWS,
            &device,
        )?;
        save_png(path, &rgba, width, height)?;
        println!(
            "wrote {} (top row as evaluated, then {PREVIEW_DRAWS} training steps' augmentation)",
            path.display()
        );
    }
    if let Some(path) = &args.grid {
        let samples = args.samples.clamp(1, 64);
        let (rgba, width, height) = data::inspect::sample_grid(&data, samples);
        save_png(path, &rgba, width, height)?;
        println!(
            "wrote {} ({samples} training images per class)",
            path.display()
        );
    }
    Ok(())
}

/// Writes RGBA pixels as a PNG, naming the file when it cannot.
fn save_png(
    path: &std::path::Path,
    rgba: &[u8],
    width: usize,
    height: usize,
) -> anyhow::Result<()> {
    image::save_buffer(
        path,
        rgba,
        width as u32,
        height as u32,
        image::ExtendedColorType::Rgba8,
    )
    .with_context(|| format!("could not write {}", path.display()))
}

/// The report as a table with a bar per class, then what was left out and what leaks.
fn report_text(report: &data::inspect::DataReport) -> String {
    use std::fmt::Write as _;
    let [channels, height, width] = report.shape;
    let totals = report.images;
    let mut text = format!(
        "{}: {} {}, {width}×{height} pixels, {}\nsplits: {} training, {} validation, {} test images",
        report.name,
        report.class_names.len(),
        match report.label_sets {
            Some(_) => "labels",
            None => "classes",
        },
        if channels == 1 { "grayscale" } else { "RGB" },
        totals[0],
        totals[1],
        totals[2]
    );
    if let Some(line) = report.sources_line(8) {
        let _ = write!(text, "\nread from: {line}");
    }
    let name_width = report
        .class_names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let largest = report.counts[0].iter().copied().max().unwrap_or(1).max(1);
    let _ = write!(
        text,
        "\n{:<name_width$}  {:>7}  {:>10}  {:>7}",
        match report.label_sets {
            Some(_) => "label",
            None => "class",
        },
        "train",
        "validation",
        "test"
    );
    for (class, name) in report.class_names.iter().enumerate() {
        let [train, val, test] = report
            .counts
            .each_ref()
            .map(|c| c.get(class).copied().unwrap_or(0));
        let bar = "█".repeat((train * 30).div_ceil(largest));
        let _ = write!(
            text,
            "\n{name:<name_width$}  {train:>7}  {val:>10}  {test:>7}  {bar}"
        );
    }
    let imbalance = report.imbalance();
    if imbalance >= 3.0 && report.label_sets.is_none() {
        let _ = write!(
            text,
            "\nunbalanced: the largest class has {imbalance:.1}× the training images of the smallest; consider --class-weights balanced"
        );
    }
    for note in &report.notes {
        let _ = write!(text, "\nnote: {note}");
    }
    for line in report.label_set_lines() {
        let _ = write!(text, "\n{line}");
    }
    match report.skipped.len() {
        0 => text.push_str("\nno file was left out"),
        n => {
            let _ = write!(text, "\n{n} file(s) left out:");
            for file in &report.skipped {
                let _ = write!(text, "\n  {}: {}", file.path.display(), file.reason);
            }
        }
    }
    match report.duplicates.len() {
        0 => text.push_str("\nno image appears in more than one split"),
        n => {
            let _ = write!(
                text,
                "\n{n} image(s) appear in more than one split, a leak that flatters validation and test figures:"
            );
            for duplicate in report.duplicates.iter().take(20) {
                let _ = write!(text, "\n  {}", duplicate.describe());
            }
            if n > 20 {
                let _ = write!(text, "\n  … and {} more", n - 20);
            }
        }
    }
    text
}

fn fetch(dataset: RemoteDataset, data_dir: Option<PathBuf>) -> anyhow::Result<()> {
    let root = download_root(data_dir)?;
    let path = with_progress_bar(|on_progress, cancel| {
        data::fetch::fetch(dataset, &root, on_progress, cancel)
    })?;
    println!(
        "{dataset} is ready in {} (checksums verified)",
        path.display()
    );
    Ok(())
}

/// The folder downloads go to: `--data-dir`, else `KILN_DATA_DIR`, else the per-user data
/// folder; created when missing.
pub(super) fn download_root(data_dir: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let root = match data_dir.or_else(|| std::env::var_os("KILN_DATA_DIR").map(PathBuf::from)) {
        Some(dir) => dir,
        None => data::default_data_root()
            .context("this system has no per-user data folder; pass --data-dir")?,
    };
    std::fs::create_dir_all(&root)
        .with_context(|| format!("could not create {}", root.display()))?;
    Ok(root)
}

/// Runs `download` with a progress bar on a terminal, and a line per file elsewhere.
pub(super) fn with_progress_bar<T>(
    download: impl FnOnce(&mut dyn FnMut(&FetchProgress), &AtomicBool) -> Result<T, DataError>,
) -> Result<T, DataError> {
    // Ctrl-C ends the process; the download lives in a hidden temporary folder until verified.
    let cancel = AtomicBool::new(false);
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template(
                "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar
    });
    let mut last_file = String::new();
    let result = download(
        &mut |progress| {
            if progress.file != last_file {
                last_file = progress.file.clone();
                match &bar {
                    Some(bar) => {
                        bar.set_message(progress.file.clone());
                        bar.set_position(0);
                    }
                    None => println!("downloading {}", progress.file),
                }
            }
            if let Some(bar) = &bar {
                if let Some(total) = progress.bytes_total {
                    bar.set_length(total);
                }
                bar.set_position(progress.bytes_done);
            }
        },
        &cancel,
    );
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    result
}
