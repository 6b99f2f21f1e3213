//! The presets shipped with Kiln: the reference workloads and their framework flavours.

use super::{ConfigError, ExperimentDraft, Setting};

/// The settings whose defaults PyTorch and Keras differ in, which the `-pytorch` and `-keras`
/// flavours write out (Adam's ε, part of the optimizer's spec, is the one more).
pub const FRAMEWORK_DEFAULTS: &[Setting] = &[
    Setting::Init,
    Setting::ConvInit,
    Setting::InputScaling,
    Setting::Loss,
    Setting::BatchNormMomentum,
    Setting::BatchNormEpsilon,
    Setting::ConvPadding,
    Setting::WeightDecayMode,
    Setting::Resize,
];

struct Preset {
    name: &'static str,
    toml: &'static str,
}

const PRESETS: &[Preset] = &[
    Preset {
        name: "fashion-mlp",
        toml: include_str!("../../../assets/presets/fashion-mlp.toml"),
    },
    Preset {
        name: "cifar-vgg16",
        toml: include_str!("../../../assets/presets/cifar-vgg16.toml"),
    },
    Preset {
        name: "mnist-tiny-fullbatch",
        toml: include_str!("../../../assets/presets/mnist-tiny-fullbatch.toml"),
    },
    Preset {
        name: "fashion-mlp-pytorch",
        toml: include_str!("../../../assets/presets/fashion-mlp-pytorch.toml"),
    },
    Preset {
        name: "fashion-mlp-keras",
        toml: include_str!("../../../assets/presets/fashion-mlp-keras.toml"),
    },
    Preset {
        name: "cifar-vgg16-pytorch",
        toml: include_str!("../../../assets/presets/cifar-vgg16-pytorch.toml"),
    },
    Preset {
        name: "cifar-vgg16-keras",
        toml: include_str!("../../../assets/presets/cifar-vgg16-keras.toml"),
    },
    Preset {
        name: "mnist-tiny-fullbatch-pytorch",
        toml: include_str!("../../../assets/presets/mnist-tiny-fullbatch-pytorch.toml"),
    },
    Preset {
        name: "mnist-tiny-fullbatch-keras",
        toml: include_str!("../../../assets/presets/mnist-tiny-fullbatch-keras.toml"),
    },
];

/// Names of the presets shipped with Kiln: the reference workloads (docs/command-line.md lists
/// them), each with its PyTorch and Keras flavours.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

/// The draft of a shipped preset.
pub fn preset(name: &str) -> Result<ExperimentDraft, ConfigError> {
    let preset = PRESETS
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| ConfigError::UnknownPreset(name.to_owned()))?;
    ExperimentDraft::from_toml(preset.toml, &format!("preset {name}"))
}
