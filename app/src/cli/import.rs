//! `kiln import`: runs brought into a runs folder, from run folder archives (`kiln archive`, the
//! window's *Archive…*, a page's download) and from other frameworks' training logs (Keras,
//! Lightning, TensorBoard, a CSV), each log a run folder of its own.

use std::path::PathBuf;

use clap::Args;
use kiln_core::run_folder;

/// Options of `kiln import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Run folder archives (plain or gzipped tar), or training logs: a Keras CSVLogger file or
    /// History JSON, a Lightning log folder, TensorBoard event files or their folder, a CSV with
    /// an epoch column, or a folder holding several runs' logs.
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
    /// The runs folder to import into.
    #[arg(long, value_name = "DIR", default_value = "runs")]
    runs_dir: PathBuf,
    /// Read a log's series (a CSV column, a JSON key or a TensorBoard tag) as one of the
    /// figures, where its name does not say which by the frameworks' conventions: FIGURE is
    /// loss, accuracy, val_loss, val_accuracy or lr. Repeat for several.
    #[arg(long, value_name = "FIGURE=SERIES")]
    series: Vec<String>,
    /// The logs' validation series were computed on the test set (Keras's
    /// `validation_data=(x_test, y_test)`): import them as test figures, so `kiln compare` puts
    /// them beside Kiln runs validated on test.
    #[arg(long)]
    validated_on_test: bool,
}

/// Runs `kiln import`: each path is checked before its folders are written; one that cannot be
/// imported leaves the others imported. Prints each run folder written, and on standard error
/// each log left out or read only in part.
pub fn run(args: &ImportArgs) -> anyhow::Result<()> {
    let mut names = run_folder::SeriesNames::default();
    for spec in &args.series {
        names
            .add(spec)
            .map_err(|e| anyhow::anyhow!("--series {e}"))?;
    }
    let mut refused = 0;
    for path in &args.paths {
        let validation = match args.validated_on_test {
            true => run_folder::LogValidation::Test,
            false => run_folder::LogValidation::Validation,
        };
        match run_folder::import_path(path, &args.runs_dir, &names, validation) {
            Ok(outcome) => {
                for folder in &outcome.folders {
                    println!("{}", folder.display());
                }
                for problem in &outcome.problems {
                    eprintln!("warning: {problem}");
                }
            }
            Err(e) => {
                eprintln!("error: {} was not imported: {e}", path.display());
                refused += 1;
            }
        }
    }
    match refused {
        0 => Ok(()),
        n => anyhow::bail!("{n} of {} paths were not imported", args.paths.len()),
    }
}
