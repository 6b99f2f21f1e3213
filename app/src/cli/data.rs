//! `kiln data fetch`: downloads with a progress bar, verified before anything lands.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use kiln_core::data::{self, fetch::RemoteDataset};

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
}

/// Runs `kiln data …`.
pub fn run(args: DataArgs) -> anyhow::Result<()> {
    match args.command {
        DataCommand::Fetch { dataset, data_dir } => fetch(dataset, data_dir),
    }
}

fn fetch(dataset: RemoteDataset, data_dir: Option<PathBuf>) -> anyhow::Result<()> {
    let root = match data_dir.or_else(|| std::env::var_os("KILN_DATA_DIR").map(PathBuf::from)) {
        Some(dir) => dir,
        None => data::default_data_root()
            .context("this system has no per-user data folder; pass --data-dir")?,
    };
    std::fs::create_dir_all(&root)
        .with_context(|| format!("could not create {}", root.display()))?;
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
    let result = data::fetch::fetch(
        dataset,
        &root,
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
    let path = result?;
    println!(
        "{dataset} is ready in {} (checksums verified)",
        path.display()
    );
    Ok(())
}
