//! `kiln export-model`: a completed run's model, written for other tools (PyTorch, ONNX).

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
    #[arg(long, value_name = "FILE", required_unless_present = "onnx")]
    safetensors: Option<PathBuf>,
    /// Write the whole model as ONNX (opset 17), input scaling included: it takes raw 0–255
    /// pixels and gives logits and probabilities.
    #[arg(long, value_name = "FILE")]
    onnx: Option<PathBuf>,
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
    if let Some(path) = &args.onnx {
        let card = predictor.card();
        kiln_core::weights::onnx::write_onnx(predictor.model(), predictor.spec(), card, path)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("could not export {} as ONNX", args.run.display()))?;
        let [channels, height, width] = card.shape;
        println!(
            "wrote {} (ONNX opset {}: `pixels` [N, {channels}, {height}, {width}] raw 0–255 in, `logits` and `probabilities` [N, {}] out, {})",
            path.display(),
            kiln_core::weights::onnx::OPSET,
            card.class_names.len(),
            match card.thresholds {
                Some(_) => "a sigmoid per label; its metadata holds the thresholds",
                None => "a softmax over classes",
            }
        );
    }
    Ok(())
}
