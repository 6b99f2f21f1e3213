//! `kiln weights fetch`: torchvision's ImageNet weights, checked and kept per user.
//! `kiln weights list`: the ImageNet weights Kiln knows, and which are downloaded.
//! `kiln weights check`: whether a file fits an architecture, and the logits it gives.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use kiln_core::data::{self, ImageShape};
use kiln_core::device::DeviceChoice;
use kiln_core::model::{InitScheme, TorchvisionArch};
use kiln_core::weights::{self, fetch::ImageNetWeights};

use super::data::{download_root, with_progress_bar};

/// Options of `kiln weights`.
#[derive(Debug, Args)]
pub struct WeightsArgs {
    #[command(subcommand)]
    command: WeightsCommand,
}

#[derive(Debug, Subcommand)]
enum WeightsCommand {
    /// Download torchvision's ImageNet weights of an architecture and check their SHA-256.
    Fetch {
        /// torchvision's name (resnet50, efficientnet_b0, convnext_tiny, vit_b_16; `kiln
        /// weights list` shows all) or Kiln's.
        arch: TorchvisionArch,
        /// Folder to keep them in, under weights/ (default: KILN_DATA_DIR, else the per-user
        /// data folder).
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
    /// The ImageNet weights Kiln knows, where they come from, and which are downloaded.
    List {
        /// Folder to look in as well (default: KILN_DATA_DIR, then the per-user data folder).
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Load a .pth or .safetensors file into an architecture and say whether it fits; with
    /// --input, write the logits it gives, to compare with PyTorch.
    Check(CheckArgs),
}

/// Options of `kiln weights check`.
#[derive(Debug, Args)]
struct CheckArgs {
    /// The weights file (.pth or .safetensors).
    file: PathBuf,
    /// torchvision's name (resnet50, efficientnet_b0, convnext_tiny, vit_b_16) or Kiln's.
    #[arg(long, value_name = "ARCH")]
    model: TorchvisionArch,
    /// Outputs of the classifier head the network is built with (ImageNet's is 1000).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    classes: usize,
    /// Raw little-endian f32 images, [N, 3, SIZE, SIZE], already normalized.
    #[arg(long, value_name = "FILE", requires = "logits")]
    input: Option<PathBuf>,
    /// Side of the input images in pixels.
    #[arg(long, value_name = "SIZE", default_value_t = 224)]
    image_size: usize,
    /// Where to write the logits, raw little-endian f32 [N, classes].
    #[arg(long, value_name = "FILE", requires = "input")]
    logits: Option<PathBuf>,
    #[arg(long, value_name = "auto|cpu|gpu:N|cuda:N", default_value = "cpu", help = kiln_core::config::Setting::Device.help())]
    device: DeviceChoice,
}

/// Runs `kiln weights …`.
pub fn run(args: WeightsArgs) -> anyhow::Result<()> {
    match args.command {
        WeightsCommand::Fetch { arch, data_dir } => fetch(arch, data_dir),
        WeightsCommand::List { data_dir } => {
            list(data_dir);
            Ok(())
        }
        WeightsCommand::Check(args) => check(&args),
    }
}

fn fetch(arch: TorchvisionArch, data_dir: Option<PathBuf>) -> anyhow::Result<()> {
    let root = download_root(data_dir)?;
    let path = with_progress_bar(|on_progress, cancel| {
        weights::fetch::fetch(arch, &root, on_progress, cancel)
    })?;
    let published = ImageNetWeights::of(arch);
    println!(
        "{} ImageNet weights ({}, {:.1} % top-1) are ready in {} (SHA-256 checked); train with --model {} --weights imagenet",
        arch.title(),
        published.version,
        published.top1_percent,
        path.display(),
        arch.spec()
    );
    Ok(())
}

fn list(data_dir: Option<PathBuf>) {
    let roots = data::data_roots(data_dir.as_deref());
    for arch in TorchvisionArch::ALL {
        let published = ImageNetWeights::of(arch);
        let kept = roots.iter().find_map(|root| published.find_in(root));
        let state = kept.map_or_else(
            || {
                format!(
                    "not downloaded: kiln weights fetch {}",
                    arch.torchvision_name()
                )
            },
            |path| path.display().to_string(),
        );
        println!(
            "{:<18} {:<14} {:>5.1} % top-1  {}  {state}",
            arch.spec().to_string(),
            published.version,
            published.top1_percent,
            published.url(),
        );
    }
}

fn check(args: &CheckArgs) -> anyhow::Result<()> {
    let (_, device) = kiln_core::device::resolve(&args.device)?;
    let spec = args.model.spec();
    let side = args.image_size;
    let shape = ImageShape {
        channels: 3,
        height: side,
        width: side,
    };
    let mut model = spec.init(shape, args.classes, InitScheme::PytorchDefault, &device)?;
    let loaded = weights::load(&mut model, &spec, &args.file)?;
    println!(
        "{} fits {}: {} tensors{}",
        args.file.display(),
        args.model.torchvision_name(),
        loaded.tensors,
        if loaded.fresh_head {
            format!(
                ", all but the classifier head (its class count is not {})",
                args.classes
            )
        } else {
            String::new()
        }
    );
    if let (Some(input), Some(output)) = (&args.input, &args.logits) {
        let bytes =
            std::fs::read(input).with_context(|| format!("could not read {}", input.display()))?;
        if bytes.len() % 4 != 0 {
            anyhow::bail!(
                "{} holds {} bytes, which are not whole f32 values",
                input.display(),
                bytes.len()
            );
        }
        let images = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let logits = weights::logits(&model, images, side, &device)
            .map_err(|reason| anyhow::anyhow!("{}: {reason}", input.display()))?;
        let out: Vec<u8> = logits.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(output, out)
            .with_context(|| format!("could not write {}", output.display()))?;
        println!(
            "wrote {} logits of {} images to {}",
            logits.len(),
            logits.len() / args.classes.max(1),
            output.display()
        );
    }
    Ok(())
}
