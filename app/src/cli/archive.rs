//! `kiln archive`: a run folder as one .tar file, to carry to another machine (where `kiln
//! import` unpacks it) or keep.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use kiln_core::run_folder::{self, ARCHIVE_EXTENSION};

/// Options of `kiln archive`.
#[derive(Debug, Args)]
pub struct ArchiveArgs {
    /// The run folder (as `kiln train` prints it).
    #[arg(value_name = "RUN")]
    run: PathBuf,
    /// The archive to write; by default the run folder's name with .tar, here.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Runs `kiln archive`: the whole folder, checkpoints included; an existing file is not replaced.
pub fn run_archive(args: &ArchiveArgs) -> anyhow::Result<()> {
    let bytes = run_folder::pack(&kiln_core::data::files::Disk, &args.run)?;
    let output = args.output.clone().unwrap_or_else(|| {
        let name = args.run.file_name().unwrap_or(args.run.as_os_str());
        PathBuf::from(name).with_extension(ARCHIVE_EXTENSION)
    });
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&output)
        .with_context(|| {
            format!(
                "could not create {} (remove it or give another --output)",
                output.display()
            )
        })?;
    std::io::Write::write_all(&mut file, &bytes)
        .with_context(|| format!("could not write {}", output.display()))?;
    println!("{} ({} bytes)", output.display(), bytes.len());
    Ok(())
}
