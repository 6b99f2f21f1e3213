//! The experiment as written: every field a person can set, its default, and its TOML.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{
    ClassWeights, ConfigError, FineTune, InputScaling, Keep, LossInput, Monitor, OptimizerSpec,
    Precision, ResizeFilter, Schedule, Threshold, Validation, WeightDecayMode,
};
use crate::data::DatasetSpec;
use crate::device::DeviceChoice;
use crate::model::{BatchNormInit, ConvInit, ConvPadding, InitScheme, LayerDefaults, ModelSpec};

/// An experiment as written: every field a person can set, not yet checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExperimentDraft {
    /// Short name used in the run folder's name.
    pub name: String,
    /// Which images to train on.
    pub dataset: DatasetSpec,
    /// Where the data set's files are; none means the usual search path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<PathBuf>,
    /// Architecture.
    pub model: ModelSpec,
    /// How dense layers' weights and biases start (and convolutions', unless `conv_init` says).
    pub init: InitScheme,
    /// How convolutions' weights and biases start, when not as `init` says.
    pub conv_init: ConvInit,
    /// The share of each batch's statistics in batch norm's running averages (PyTorch's sense:
    /// Keras's momentum 0.99 is 0.01 here).
    pub batch_norm_momentum: f64,
    /// Added to batch norm's variance before the square root.
    pub batch_norm_epsilon: f64,
    /// How batch norm's scale starts.
    pub batch_norm_init: BatchNormInit,
    /// How convolutions padded by half their kernel pad where a stride leaves a pixel over.
    pub conv_padding: ConvPadding,
    /// The pretrained weights the network starts from instead of `init`'s random draw (the
    /// word `imagenet`, or a .pth or .safetensors file); only for the torchvision architectures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights: Option<crate::weights::WeightsSource>,
    /// What of a pretrained network trains: all of it, or its head on cached features.
    pub fine_tune: FineTune,
    /// The pretrained layers' learning rate as a share of `lr` (the head's is `lr`).
    pub backbone_lr_scale: f64,
    /// Epochs of linear probe before everything trains; 0 keeps the backbone frozen.
    pub unfreeze_after: usize,
    /// How pixel bytes are scaled for the network.
    pub input_scaling: InputScaling,
    /// How a folder's images are brought to the image size.
    pub resize: ResizeFilter,
    /// Whether the loss is taken on logits or on clipped softmax probabilities.
    pub loss: LossInput,
    /// Optimizer and its settings.
    pub optimizer: OptimizerSpec,
    /// Whether SGD's and Adam's weight decay is an L2 term of the gradient or shrinks the
    /// weights apart from it (AdamW's is always apart).
    pub weight_decay_mode: WeightDecayMode,
    /// Base learning rate.
    pub lr: f64,
    /// How the learning rate changes over the run.
    pub schedule: Schedule,
    /// Images per training step.
    pub batch_size: usize,
    /// Passes over the training split.
    pub epochs: usize,
    /// Seeds weight init, shuffling and dropout.
    pub seed: u64,
    /// Where to train: the device the model lives on, evaluates on and is saved from.
    pub device: DeviceChoice,
    /// Further devices each step's batch is split across (data parallel); none trains on
    /// `device` alone.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub data_parallel: Vec<DeviceChoice>,
    /// How often the loop reads metrics back from the device; each readback is one host sync.
    pub readback_interval_ms: u64,
    /// Whether a NaN or infinite loss ends the run (it cannot recover on its own).
    pub stop_on_non_finite_loss: bool,
    /// Steps after warm-up timed phase by phase, with a device sync after each (0: none).
    pub profile_steps: usize,
    /// Training augmentation: zero pixels added on each side before a random crop back to the
    /// image size, as torchvision's `RandomCrop(size, padding)` (0: off).
    pub crop_padding: usize,
    /// Training augmentation: mirror each training image left to right with probability ½.
    pub flip: bool,
    /// Training augmentation: the smallest area share a random resized crop keeps (1: off).
    pub crop_scale: f64,
    /// Training augmentation: the largest random rotation either way, in degrees (0: off).
    pub rotation_degrees: f64,
    /// Training augmentation: brightness factors are drawn in 1 ± this (0: off).
    pub brightness: f64,
    /// Training augmentation: contrast factors are drawn in 1 ± this (0: off).
    pub contrast: f64,
    /// The float type of the arithmetic.
    pub precision: Precision,
    /// Where each epoch is evaluated.
    pub validation: Validation,
    /// Fraction of each class's training images held out for validation (0: none).
    pub val_split: f64,
    /// Fraction of each class of a folder without its own test split held out for testing.
    pub test_split: f64,
    /// Epochs without improvement of the monitored figure before the run stops (0: never).
    pub early_stop: usize,
    /// The figure that picks the best epoch and drives early stopping.
    pub monitor: Monitor,
    /// The least change of the monitored figure that counts as an improvement.
    pub min_delta: f64,
    /// Which epoch's weights the run keeps.
    pub keep: Keep,
    /// How each class weighs in the training loss.
    pub class_weights: ClassWeights,
    /// Where a multi-label model's probability gives an image the label.
    pub threshold: Threshold,
}

impl Default for ExperimentDraft {
    fn default() -> Self {
        Self {
            name: "default".to_owned(),
            dataset: DatasetSpec::Synthetic,
            data_dir: None,
            model: ModelSpec::Mlp {
                widths: vec![512, 512],
                activation: crate::model::Activation::Relu,
                dropout: 0.0,
            },
            init: InitScheme::default(),
            conv_init: ConvInit::AsInit,
            batch_norm_momentum: LayerDefaults::PYTORCH_BATCH_NORM_MOMENTUM,
            batch_norm_epsilon: LayerDefaults::PYTORCH_BATCH_NORM_EPSILON,
            batch_norm_init: BatchNormInit::Ones,
            conv_padding: ConvPadding::Symmetric,
            weights: None,
            fine_tune: FineTune::Full,
            backbone_lr_scale: 0.1,
            unfreeze_after: 0,
            input_scaling: InputScaling::UnitRange,
            resize: ResizeFilter::Antialiased,
            loss: LossInput::Logits,
            optimizer: OptimizerSpec::adam(),
            weight_decay_mode: WeightDecayMode::L2,
            lr: 1e-3,
            schedule: Schedule::Constant,
            batch_size: 64,
            epochs: 5,
            seed: 42,
            device: DeviceChoice::default(),
            data_parallel: Vec::new(),
            readback_interval_ms: 250,
            stop_on_non_finite_loss: true,
            profile_steps: 0,
            crop_padding: 0,
            flip: false,
            crop_scale: 1.0,
            rotation_degrees: 0.0,
            brightness: 0.0,
            contrast: 0.0,
            precision: Precision::F32,
            validation: Validation::Split,
            val_split: DEFAULT_VAL_SPLIT,
            test_split: DEFAULT_TEST_SPLIT,
            early_stop: 0,
            monitor: Monitor::ValLoss,
            min_delta: 0.0,
            keep: Keep::Best,
            class_weights: ClassWeights::None,
            threshold: Threshold::Half,
        }
    }
}

/// Share of the training images held out for validation unless a run says otherwise.
pub const DEFAULT_VAL_SPLIT: f64 = 0.1;
/// Share of a flat image folder held out for testing unless a run says otherwise.
pub const DEFAULT_TEST_SPLIT: f64 = 0.2;
/// Largest share of the images either holdout may take: training needs most of them.
pub const MAX_HOLDOUT_SPLIT: f64 = 0.5;

/// Largest batch the engine accepts, far above what any device holds, to catch typos early.
pub const MAX_BATCH_SIZE: usize = 1 << 20;
/// Largest crop padding accepted, in pixels per side.
pub const MAX_CROP_PADDING: usize = 64;
/// Most steps the profiling mode may sync phase by phase.
pub const MAX_PROFILE_STEPS: usize = 10_000;
/// Largest epoch count accepted.
pub const MAX_EPOCHS: usize = 100_000;

impl ExperimentDraft {
    /// How each kind of layer of the network starts and computes.
    pub fn layers(&self) -> LayerDefaults {
        LayerDefaults::new(
            self.init,
            self.conv_init,
            [self.batch_norm_momentum, self.batch_norm_epsilon],
            self.conv_padding,
        )
        .with_batch_norm_init(self.batch_norm_init)
    }

    /// Reads a draft from TOML text; `source_name` names the file in errors.
    pub fn from_toml(text: &str, source_name: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Parse {
            source_name: source_name.to_owned(),
            message: e.message().to_owned(),
        })
    }

    /// Reads a run folder's `config.toml`. One written before validation splits existed has
    /// no `validation` key: such a run was evaluated on test each epoch and kept its last
    /// epoch, and reads so, which a resume of it then continues.
    pub fn from_run_config(text: &str, source_name: &str) -> Result<Self, ConfigError> {
        let mut draft = Self::from_toml(text, source_name)?;
        let keys: toml::Table = toml::from_str(text).unwrap_or_default();
        if !keys.contains_key("validation") {
            draft.validation = Validation::Test;
            draft.keep = Keep::Last;
        }
        Ok(draft)
    }

    /// Makes the draft's file and folder paths absolute against the working folder, so a run
    /// started as `kiln train --dataset folder:photos` still finds its photos (for *Try*, a
    /// clicked confusion cell, a resume) when read from anywhere else.
    pub fn anchor_paths(&mut self) {
        let anchor = |path: &mut PathBuf| {
            if let Ok(absolute) = std::path::absolute(&*path) {
                *path = absolute;
            }
        };
        if let DatasetSpec::Folder { path, .. } | DatasetSpec::LabelsFile { path, .. } =
            &mut self.dataset
        {
            anchor(path);
        }
        if let Some(dir) = &mut self.data_dir {
            anchor(dir);
        }
        if let Some(crate::weights::WeightsSource::File(file)) = &mut self.weights {
            anchor(file);
        }
    }

    /// The draft as TOML, the text of a run's `config.toml`.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_else(|e| format!("# could not serialize: {e}\n"))
    }

    /// Every device the run trains on, the one holding the model first.
    pub fn devices(&self) -> Vec<DeviceChoice> {
        std::iter::once(self.device.clone())
            .chain(self.data_parallel.iter().cloned())
            .collect()
    }

    /// Trains on `devices`: the first alone, or all of them data parallel.
    pub fn set_devices(&mut self, devices: Vec<DeviceChoice>) {
        let mut devices = devices.into_iter();
        self.device = devices.next().unwrap_or_default();
        self.data_parallel = devices.collect();
    }

    /// Whether any training augmentation is on.
    pub fn augments(&self) -> bool {
        self.crop_padding > 0
            || self.flip
            || self.crop_scale < 1.0
            || self.rotation_degrees > 0.0
            || self.brightness > 0.0
            || self.contrast > 0.0
    }

    /// Whether each epoch is evaluated on something: a validation split, or the test split.
    pub fn evaluates_epochs(&self) -> bool {
        self.validation == Validation::Test || self.val_split > 0.0
    }
}
