//! `kiln compare`: runs side by side as a table: settings that differ, final figures with their
//! difference to the first run, speed, and the spread over seeds.

use std::path::PathBuf;

use clap::Args;
use kiln_core::compare::compare;
use kiln_core::run_folder::RunHistory;

use super::export::load_runs;

/// Options of `kiln compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Run folders; the first is the reference for the differences.
    #[arg(required = true, num_args = 2.., value_name = "RUN")]
    runs: Vec<PathBuf>,
}

/// Runs `kiln compare`.
pub fn run(args: &CompareArgs) -> anyhow::Result<()> {
    let runs = load_runs(&args.runs)?;
    let refs: Vec<&RunHistory> = runs.iter().collect();
    print!("{}", compare(&refs).to_text());
    Ok(())
}
