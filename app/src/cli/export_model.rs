//! `kiln export-model`: a completed run's model, written for other tools.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use kiln_core::predict::Predictor;

/// Options of `kiln export-model`.
#[derive(Debug, Args)]
pub struct ExportModelArgs {
    /// A completed run's folder (it holds model.bpk).
    run: PathBuf,
    /// Write the weights as safetensors with PyTorch's key names.
    #[arg(long, value_name = "FILE", required = true)]
    safetensors: Option<PathBuf>,
}

/// Runs `kiln export-model`.
pub fn run(args: &ExportModelArgs) -> anyhow::Result<()> {
    let predictor = Predictor::load(&args.run)?;
    if let Some(path) = &args.safetensors {
        let tensors = kiln_core::weights::export::write_safetensors(
            predictor.model(),
            predictor.spec(),
            path,
        )
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("could not export {}", args.run.display()))?;
        println!(
            "wrote {} ({tensors} tensors with PyTorch's names, {} classes: {})",
            path.display(),
            predictor.card().class_names.len(),
            predictor.card().class_names.join(", ")
        );
    }
    Ok(())
}
