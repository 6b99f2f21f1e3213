//! EfficientNet's, ConvNeXt's and ViT's tensors under torchvision's names: as many as its
//! `state_dict()` holds, and where it holds them, in the shapes it gives them.

// A child of the crate's test module: it exists only in the test build.
#![cfg(test)]

use burn_store::{BurnToPyTorchAdapter, ModuleSnapshot};

use super::super::to_torchvision;
use crate::data::ImageShape;
use crate::model::{InitScheme, TorchvisionArch};

/// Every tensor of `arch` at 1000 classes as torchvision names it, with PyTorch's shape.
fn torchvision_view(arch: TorchvisionArch) -> Vec<(String, Vec<usize>)> {
    let colour = ImageShape {
        channels: 3,
        height: 224,
        width: 224,
    };
    let model = arch
        .spec()
        .init(colour, 1000, InitScheme::PytorchDefault, &super::device())
        .expect("builds");
    model
        .collect(None, Some(Box::new(BurnToPyTorchAdapter)), true)
        .into_iter()
        .map(|tensor| (to_torchvision(arch, &tensor.name), tensor.shape.to_vec()))
        .collect()
}

/// A torchvision key and the shape its `state_dict()` gives it.
type KeyShape = (&'static str, &'static [usize]);

#[test]
fn the_newer_backbones_hold_torchvisions_keys_in_torchvisions_shapes() {
    // Counted from torchvision 0.29's state_dict(), num_batches_tracked included (one per batch
    // norm, which Kiln does not keep), and a few keys with their shapes.
    let expected: [(TorchvisionArch, usize, &[KeyShape]); 3] = [
        (
            TorchvisionArch::EfficientNetB0,
            360,
            &[
                ("features.0.0.weight", &[32, 3, 3, 3]),
                ("features.1.0.block.0.0.weight", &[32, 1, 3, 3]),
                ("features.1.0.block.1.fc1.weight", &[8, 32, 1, 1]),
                ("features.2.0.block.0.1.running_var", &[96]),
                ("features.6.3.block.3.0.weight", &[192, 1152, 1, 1]),
                ("features.8.0.weight", &[1280, 320, 1, 1]),
                ("classifier.1.weight", &[1000, 1280]),
            ],
        ),
        (
            TorchvisionArch::ConvNextTiny,
            182,
            &[
                ("features.0.1.weight", &[96]),
                ("features.1.0.layer_scale", &[96, 1, 1]),
                ("features.1.0.block.0.weight", &[96, 1, 7, 7]),
                ("features.2.1.weight", &[192, 96, 2, 2]),
                ("features.5.8.block.3.weight", &[1536, 384]),
                ("features.7.2.block.5.bias", &[768]),
                ("classifier.0.bias", &[768]),
                ("classifier.2.weight", &[1000, 768]),
            ],
        ),
        (
            TorchvisionArch::VitB16,
            152,
            &[
                ("conv_proj.weight", &[768, 3, 16, 16]),
                ("class_token", &[1, 1, 768]),
                ("encoder.pos_embedding", &[1, 197, 768]),
                (
                    "encoder.layers.encoder_layer_11.self_attention.in_proj_weight",
                    &[2304, 768],
                ),
                (
                    "encoder.layers.encoder_layer_0.self_attention.out_proj.weight",
                    &[768, 768],
                ),
                ("encoder.layers.encoder_layer_3.mlp.3.weight", &[768, 3072]),
                ("encoder.ln.weight", &[768]),
                ("heads.head.weight", &[1000, 768]),
            ],
        ),
    ];
    for (arch, state_dict_len, keys) in expected {
        let view = torchvision_view(arch);
        let batch_norms = view
            .iter()
            .filter(|(key, _)| key.ends_with(".running_var"))
            .count();
        assert_eq!(view.len() + batch_norms, state_dict_len, "{arch}");
        for (key, shape) in keys {
            let found = view.iter().find(|(name, _)| name == key);
            assert_eq!(
                found.map(|(_, shape)| shape.as_slice()),
                Some(*shape),
                "{arch}: {key}"
            );
        }
    }
}
