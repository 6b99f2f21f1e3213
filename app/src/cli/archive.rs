//! `kiln archive` and `kiln import`: a run folder as one .tar file, and back into a runs folder
//! (here, on another machine, or from a browser page's download).

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

/// Options of `kiln import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Archives written by `kiln archive` or the window's Archive… (plain or gzipped tar).
    #[arg(value_name = "ARCHIVE", required = true)]
    archives: Vec<PathBuf>,
    /// The runs folder to import into.
    #[arg(long, value_name = "DIR", default_value = "runs")]
    runs_dir: PathBuf,
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

/// Runs `kiln import`: every archive is checked before its folder is written, and a refused one
/// leaves the others imported.
pub fn run_import(args: &ImportArgs) -> anyhow::Result<()> {
    let mut refused = 0;
    for path in &args.archives {
        let imported = std::fs::read(path)
            .with_context(|| format!("could not read {}", path.display()))
            .and_then(|bytes| Ok(run_folder::read_archive(&bytes)?))
            .and_then(|archive| Ok(run_folder::import(&archive, &args.runs_dir)?));
        match imported {
            Ok(folder) => println!("{}", folder.display()),
            Err(e) => {
                eprintln!("error: {} was not imported: {e:#}", path.display());
                refused += 1;
            }
        }
    }
    match refused {
        0 => Ok(()),
        n => anyhow::bail!("{n} of {} archives were not imported", args.archives.len()),
    }
}
