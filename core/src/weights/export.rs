//! A trained model written for PyTorch: a `.safetensors` file with PyTorch's key names, so
//! `load_state_dict` takes it unchanged (`num_batches_tracked` included).
//!
//! The torchvision architectures use torchvision's names. The others use the names of the
//! `nn.Sequential` docs/models-that-leave-kiln.md spells out for each (an MLP is `Flatten,
//! Linear, ReLU, …`), and Kiln's CIFAR ResNet-18 those of torchvision's `resnet18` with a 3×3
//! stride-1 `conv1` and no max-pool.

use std::path::Path;

use burn_store::BurnToPyTorchAdapter;
use safetensors::Dtype;
use safetensors::tensor::TensorView;

use crate::model::{Classifier, ModelSpec};

/// `(Kiln prefix, PyTorch prefix)` of every part of `model` whose PyTorch name differs.
pub fn torch_prefixes(model: &Classifier, spec: &ModelSpec) -> Vec<(String, String)> {
    let pair = |kiln: String, torch: String| (kiln, torch);
    if let Some(arch) = spec.torchvision() {
        let swapped = arch
            .key_prefixes()
            .into_iter()
            .map(|(torch, kiln)| (kiln, torch));
        return swapped.collect();
    }
    match model {
        Classifier::Mlp(mlp) => {
            // Flatten, then Linear, activation and (with dropout) Dropout per hidden layer.
            let per_layer = if mlp.dropout.is_some() { 3 } else { 2 };
            let mut pairs: Vec<_> = (0..mlp.hidden.len())
                .map(|i| pair(format!("hidden.{i}."), format!("{}.", 1 + i * per_layer)))
                .collect();
            let output = 1 + mlp.hidden.len() * per_layer;
            pairs.push(pair("output.".to_owned(), format!("{output}.")));
            pairs
        }
        Classifier::Cnn(cnn) => {
            // Conv, ReLU, Conv, ReLU, MaxPool twice; [AdaptiveAvgPool]; Flatten, Linear, ReLU, Linear.
            let mut pairs: Vec<_> = [0, 2, 5, 7]
                .into_iter()
                .enumerate()
                .map(|(i, at)| pair(format!("convs.{i}."), format!("{at}.")))
                .collect();
            let fc1 = if cnn.shrink.is_some() { 12 } else { 11 };
            pairs.push(pair("fc1.".to_owned(), format!("{fc1}.")));
            pairs.push(pair("fc2.".to_owned(), format!("{}.", fc1 + 2)));
            pairs
        }
        Classifier::Vgg16(vgg) => {
            // torchvision's vgg16 / vgg16_bn `features`: conv, [bn], relu per layer, a max-pool
            // per stage; `classifier`: Linear, ReLU, Dropout twice, then Linear.
            let mut pairs = Vec::new();
            let mut at = 0;
            for (stage, layers) in vgg.stages.iter().enumerate() {
                for (index, layer) in layers.iter().enumerate() {
                    let kiln = format!("stages.{stage}.{index}.");
                    pairs.push(pair(format!("{kiln}conv."), format!("features.{at}.")));
                    at += 1;
                    if layer.norm.is_some() {
                        pairs.push(pair(format!("{kiln}norm."), format!("features.{at}.")));
                        at += 1;
                    }
                    at += 1;
                }
                at += 1;
            }
            for index in 0..vgg.classifier.len() {
                pairs.push(pair(
                    format!("classifier.{index}."),
                    format!("classifier.{}.", index * 3),
                ));
            }
            pairs
        }
        Classifier::ResNet18(net) => {
            let mut pairs = vec![
                pair("stem.".to_owned(), "conv1.".to_owned()),
                pair("stem_norm.".to_owned(), "bn1.".to_owned()),
            ];
            for index in 0..net.blocks.len() {
                let torch = format!("layer{}.{}.", index / 2 + 1, index % 2);
                let kiln = format!("blocks.{index}.");
                for (from, to) in [
                    ("norm1.", "bn1."),
                    ("norm2.", "bn2."),
                    ("downsample.conv.", "downsample.0."),
                    ("downsample.norm.", "downsample.1."),
                    ("", ""),
                ] {
                    pairs.push(pair(format!("{kiln}{from}"), format!("{torch}{to}")));
                }
            }
            pairs
        }
        _ => Vec::new(),
    }
}

/// `path` in Kiln's field paths, as PyTorch names it.
fn torch_name(prefixes: &[(String, String)], path: &str) -> String {
    // The longest prefix first: `blocks.3.norm1.` before `blocks.3.`.
    prefixes
        .iter()
        .filter(|(kiln, _)| path.starts_with(kiln.as_str()))
        .max_by_key(|(kiln, _)| kiln.len())
        .map_or_else(
            || path.to_owned(),
            |(kiln, torch)| format!("{torch}{}", &path[kiln.len()..]),
        )
}

/// Writes `model` (built from `spec`) to `path` as safetensors with PyTorch's names; returns
/// how many tensors it holds.
pub fn write_safetensors(
    model: &Classifier,
    spec: &ModelSpec,
    path: &Path,
) -> Result<usize, String> {
    let (bytes, count) = safetensors_bytes(model, spec)?;
    crate::atomic_file::write_atomically(path, &bytes)
        .map_err(|e| format!("could not write {}: {e}", path.display()))?;
    Ok(count)
}

/// [`write_safetensors`]'s file as bytes (a page's download), and how many tensors it holds.
pub fn safetensors_bytes(model: &Classifier, spec: &ModelSpec) -> Result<(Vec<u8>, usize), String> {
    let prefixes = torch_prefixes(model, spec);
    let tensors =
        crate::train::device_reads::module_tensors(model, Box::new(BurnToPyTorchAdapter))?;
    let mut named: Vec<(String, Dtype, Vec<usize>, Vec<u8>)> = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        if dtype != burn::tensor::DType::F32 {
            return Err(format!(
                "`{name}` is {dtype:?}; only f32 models are written"
            ));
        }
        let torch = torch_name(&prefixes, &name);
        if let Some(norm) = torch.strip_suffix(".running_var") {
            // PyTorch's batch norm counts its steps; load_state_dict wants the counter too.
            let counter = format!("{norm}.num_batches_tracked");
            named.push((
                counter,
                Dtype::I64,
                Vec::new(),
                0_i64.to_le_bytes().to_vec(),
            ));
        }
        named.push((torch, Dtype::F32, shape, bytes));
    }
    let views = named
        .iter()
        .map(|(name, dtype, shape, bytes)| {
            TensorView::new(*dtype, shape.clone(), bytes)
                .map(|view| (name.clone(), view))
                .map_err(|e| format!("`{name}`: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let count = views.len();
    let bytes = safetensors::serialize(views, None).map_err(|e| e.to_string())?;
    Ok((bytes, count))
}
