//! `kiln predict`: a completed run's model over image files and folders, as a CSV.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use kiln_core::device::DeviceChoice;
use kiln_core::predict::{
    DEFAULT_BATCH, Predictor, SortMode, files_of, label_predictions_csv, predictions_csv, sort_into,
};

/// Options of `kiln predict`.
#[derive(Debug, Args)]
pub struct PredictArgs {
    /// A completed run's folder (it holds model.bpk).
    run: PathBuf,
    /// Image files and folders; folders are read at any depth.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// Write the CSV here instead of to standard output.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// How many of the likeliest classes each row names (at most the model's classes). A
    /// multi-label model's rows name every label over its threshold instead, then each label's
    /// probability.
    #[arg(long, value_name = "K", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    top: u32,
    /// Where the model computes: cpu, auto, gpu:N, cuda:N or remote:HOST:PORT/N.
    #[arg(long, value_name = "DEVICE", default_value = "cpu")]
    device: String,
    /// Images per forward pass, 1 to 4096.
    // An id of its own: `batch_size` is the training setting's, whose range the reference shows.
    #[arg(long = "batch-size", id = "images_per_pass", value_name = "N", default_value_t = DEFAULT_BATCH as u32, value_parser = clap::value_parser!(u32).range(1..=4096))]
    batch_size: u32,
    /// Also put each image into DIR/<its likeliest class>/ (a multi-label model's: into the
    /// folder of each label it gives), by --copy or --link; the originals
    /// are never moved, renamed or overwritten. An unreadable image is a CSV row with its
    /// reason and leaves the exit status 0; one that cannot be placed (a full disk, links not
    /// allowed) is named and the command exits 1 after the CSV is written.
    #[arg(long, value_name = "DIR")]
    sort_into: Option<PathBuf>,
    /// With --sort-into: copy the images.
    #[arg(long, requires = "sort_into", conflicts_with = "link")]
    copy: bool,
    /// With --sort-into: link to the images (symbolic links; hard links on Windows).
    #[arg(long, requires = "sort_into")]
    link: bool,
}

/// Runs `kiln predict`.
pub fn run(args: &PredictArgs) -> anyhow::Result<()> {
    let mode = match (&args.sort_into, args.copy, args.link) {
        (None, ..) => None,
        (Some(_), true, _) => Some(SortMode::Copy),
        (Some(_), _, true) => Some(SortMode::Link),
        (Some(_), false, false) => {
            anyhow::bail!("--sort-into needs --copy or --link: Kiln never moves your images")
        }
    };
    let choice: DeviceChoice = args.device.parse()?;
    let files = files_of(&args.inputs).map_err(anyhow::Error::msg)?;
    if files.is_empty() {
        anyhow::bail!(
            "no file was found in the inputs given; name image files or folders that hold some"
        );
    }
    let (info, device) = kiln_core::device::resolve(&choice)?;
    let predictor = Predictor::load(&args.run)?.on_device(device);
    let class_names = predictor.card().class_names.clone();
    let k = (args.top as usize).min(class_names.len());
    let bar = super::progress::terminal_bar(
        "predicting [{bar:30}] {pos}/{len} images  {per_sec}  ETA {eta}",
        Some(files.len() as u64),
    );
    let started = std::time::Instant::now();
    let predictions = predictor.predict_files(&files, args.batch_size as usize, &mut |done| {
        if let Some(bar) = &bar {
            bar.set_position(done as u64);
        }
    });
    let secs = started.elapsed().as_secs_f64();
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }

    let card = predictor.card();
    let text = match card.thresholds {
        Some(_) => label_predictions_csv(&predictions, card, &args.run),
        None => predictions_csv(&predictions, &class_names, k, &args.run),
    };
    match &args.csv {
        Some(path) => kiln_core::atomic_file::write_atomically(path, text.as_bytes())
            .with_context(|| format!("could not write {}", path.display()))?,
        // A closed pipe (`| head`) ends the output, not with an error.
        None => {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
        }
    }
    let unreadable = predictions.iter().filter(|p| p.outcome.is_err()).count();
    let read = predictions.len() - unreadable;
    eprintln!(
        "predicted {read} image(s) in {secs:.2} s ({:.0} images/s on {}){}{}",
        read as f64 / secs.max(1e-9),
        info.name,
        match unreadable {
            0 => String::new(),
            n =>
                format!("; {n} file(s) could not be read, each with its reason in the error column"),
        },
        args.csv
            .as_ref()
            .map_or_else(String::new, |path| format!("; wrote {}", path.display())),
    );
    if let (Some(dir), Some(mode)) = (&args.sort_into, mode) {
        let report = sort_into(dir, &predictions, card, mode);
        eprintln!(
            "{} {} image(s) into class folders under {}",
            match mode {
                SortMode::Copy => "copied",
                SortMode::Link => "linked",
            },
            report.placed,
            dir.display()
        );
        if report.unlabelled > 0 {
            eprintln!(
                "{} image(s) had no label over its threshold and were not placed",
                report.unlabelled
            );
        }
        for (path, reason) in &report.failed {
            eprintln!("could not place {}: {reason}", path.display());
        }
        if !report.failed.is_empty() {
            anyhow::bail!(
                "{} image(s) could not be placed under {}",
                report.failed.len(),
                dir.display()
            );
        }
    }
    Ok(())
}
