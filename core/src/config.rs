//! What to train, as a person or a preset says it, and the checked form every later stage trusts.
//!
//! An [`ExperimentDraft`] is the raw form (TOML file, preset, GUI fields, CLI flags). It becomes an
//! [`Experiment`] only through [`ExperimentDraft::validate`], so the loop never re-checks a value.

use std::fmt;
use std::ops::Deref;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::data::{DatasetSpec, ImageDataset};
use crate::device::DeviceChoice;
use crate::model::{InitScheme, ModelSpec};
pub use crate::selection::{Keep, Monitor, Validation};
pub use crate::settings::Setting;

/// Why a configuration was refused: the field and the reason, in one sentence.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A field holds a value the engine cannot use.
    #[error("{field} = {value}: {reason}")]
    Invalid {
        /// The setting; it displays as its key in config.toml.
        field: Setting,
        /// The offending value, as text.
        value: String,
        /// What is wrong and what would be accepted.
        reason: String,
    },
    /// The TOML text could not be read as a configuration.
    #[error("{source_name} is not a valid Kiln configuration: {message}")]
    Parse {
        /// File name or preset name.
        source_name: String,
        /// What the TOML parser said.
        message: String,
    },
    /// No preset has that name.
    #[error("there is no preset named '{0}'; the presets are: {names}", names = preset_names().join(", "))]
    UnknownPreset(String),
}

/// The error for `field` holding `value`, refused for `reason`.
pub(crate) fn invalid(
    field: Setting,
    value: impl fmt::Display,
    reason: impl Into<String>,
) -> ConfigError {
    ConfigError::Invalid {
        field,
        value: value.to_string(),
        reason: reason.into(),
    }
}

crate::settings::choice! {
    /// What of a pretrained network trains.
    FineTune for FineTune {
        /// Every layer, the pretrained ones at `backbone_lr_scale` times the learning rate.
        #[default]
        Full => "full",
        /// Only the classifier head, on features the frozen backbone computes once per image
        /// (batch norm statistics frozen too); after `unfreeze_after` epochs, if set, everything.
        LinearProbe => "linear-probe",
    }
}

crate::settings::choice! {
    /// How each class weighs in the training loss.
    ClassWeights for ClassWeights {
        /// Every image alike.
        #[default]
        None => "none",
        /// Image weight n / (classes × images of its class): scikit-learn's `balanced`.
        Balanced => "balanced",
    }
}

/// How raw 0–255 pixel bytes become the network's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputScaling {
    /// Divide by 255, as PyTorch's `ToTensor` does.
    #[default]
    UnitRange,
    /// Feed the raw 0–255 values, as the Keras code of the user report did.
    Raw,
    /// Subtract the training split's mean and divide by its standard deviation (per channel).
    Standardize,
    /// Divide by 255, then subtract ImageNet's mean and divide by its standard deviation per
    /// channel, as torchvision's pretrained weights expect.
    #[serde(rename = "imagenet")]
    ImageNet,
}

impl InputScaling {
    /// ImageNet's per-channel mean of 0–1 pixels (red, green, blue), as torchvision uses it.
    pub const IMAGENET_MEAN: [f32; 3] = [0.485, 0.456, 0.406];
    /// ImageNet's per-channel standard deviation of 0–1 pixels.
    pub const IMAGENET_STD: [f32; 3] = [0.229, 0.224, 0.225];
}

impl fmt::Display for InputScaling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::UnitRange => "unit-range",
            Self::Raw => "raw",
            Self::Standardize => "standardize",
            Self::ImageNet => "imagenet",
        })
    }
}

impl FromStr for InputScaling {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "unit-range" => Ok(Self::UnitRange),
            "raw" => Ok(Self::Raw),
            "standardize" => Ok(Self::Standardize),
            "imagenet" => Ok(Self::ImageNet),
            other => Err(invalid(
                Setting::InputScaling,
                other,
                "expected unit-range, raw, standardize or imagenet",
            )),
        }
    }
}

/// The float type the network computes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Precision {
    /// 32-bit floats throughout.
    #[default]
    F32,
    /// Mixed precision: f32 master weights, f16 arithmetic, the loss scaled so small gradients
    /// do not flush to zero. Needs a GPU whose adapter has 16-bit float shaders.
    F16,
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::F32 => "f32",
            Self::F16 => "f16",
        })
    }
}

impl FromStr for Precision {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "f32" => Ok(Self::F32),
            "f16" => Ok(Self::F16),
            other => Err(invalid(Setting::Precision, other, "expected f32 or f16")),
        }
    }
}

/// What the cross-entropy is computed from: one of the defaults that make "the same model" end at
/// different accuracies in different frameworks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossInput {
    /// Log-softmax of the logits, exact for any logit: PyTorch's `CrossEntropyLoss`, and what
    /// Keras on TensorFlow computes for a softmax layer followed by categorical cross-entropy
    /// (it takes the softmax's input instead of its output).
    #[default]
    Logits,
    /// A softmax output and the log of its probabilities clipped to [1e-7, 1 − 1e-7], as Keras
    /// computes `categorical_crossentropy` on its JAX and PyTorch backends: a clipped probability
    /// passes no gradient.
    Probabilities,
}

impl fmt::Display for LossInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Logits => "logits",
            Self::Probabilities => "probabilities",
        })
    }
}

impl FromStr for LossInput {
    type Err = ConfigError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "logits" => Ok(Self::Logits),
            "probabilities" => Ok(Self::Probabilities),
            other => Err(invalid(
                Setting::Loss,
                other,
                "expected logits or probabilities",
            )),
        }
    }
}

/// The optimizer and its own settings; the learning rate lives in [`ExperimentDraft::lr`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum OptimizerSpec {
    /// Stochastic gradient descent, PyTorch semantics (no dampening).
    Sgd {
        /// Momentum factor; 0 turns momentum off.
        #[serde(default)]
        momentum: f64,
        /// Nesterov momentum (needs momentum > 0).
        #[serde(default)]
        nesterov: bool,
        /// L2 penalty added to the gradient.
        #[serde(default)]
        weight_decay: f64,
    },
    /// Adam with L2 weight decay added to the gradient.
    Adam {
        /// First-moment decay.
        #[serde(default = "default_beta_1")]
        beta_1: f64,
        /// Second-moment decay.
        #[serde(default = "default_beta_2")]
        beta_2: f64,
        /// Added to the denominator; PyTorch uses 1e-8, Keras 1e-7.
        #[serde(default = "default_epsilon")]
        epsilon: f64,
        /// L2 penalty added to the gradient.
        #[serde(default)]
        weight_decay: f64,
    },
    /// Adam with decoupled weight decay.
    AdamW {
        /// First-moment decay.
        #[serde(default = "default_beta_1")]
        beta_1: f64,
        /// Second-moment decay.
        #[serde(default = "default_beta_2")]
        beta_2: f64,
        /// Added to the denominator.
        #[serde(default = "default_epsilon")]
        epsilon: f64,
        /// Decoupled decay factor, PyTorch's default 0.01.
        #[serde(default = "default_adamw_decay")]
        weight_decay: f64,
    },
}

fn default_beta_1() -> f64 {
    0.9
}
fn default_beta_2() -> f64 {
    0.999
}
fn default_epsilon() -> f64 {
    1e-8
}
fn default_adamw_decay() -> f64 {
    0.01
}

impl OptimizerSpec {
    /// The named optimizer with its usual defaults (`sgd`, `adam`, `adamw`).
    pub fn from_name(name: &str) -> Result<Self, ConfigError> {
        match name {
            "sgd" => Ok(Self::Sgd {
                momentum: 0.0,
                nesterov: false,
                weight_decay: 0.0,
            }),
            "adam" => Ok(Self::Adam {
                beta_1: default_beta_1(),
                beta_2: default_beta_2(),
                epsilon: default_epsilon(),
                weight_decay: 0.0,
            }),
            "adamw" => Ok(Self::AdamW {
                beta_1: default_beta_1(),
                beta_2: default_beta_2(),
                epsilon: default_epsilon(),
                weight_decay: default_adamw_decay(),
            }),
            other => Err(invalid(
                Setting::Optimizer,
                other,
                "expected sgd, adam or adamw",
            )),
        }
    }

    /// Short name: `sgd`, `adam` or `adamw`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Sgd { .. } => "sgd",
            Self::Adam { .. } => "adam",
            Self::AdamW { .. } => "adamw",
        }
    }

    /// Sets the weight decay, whatever the optimizer.
    pub fn set_weight_decay(&mut self, value: f64) {
        match self {
            Self::Sgd { weight_decay, .. }
            | Self::Adam { weight_decay, .. }
            | Self::AdamW { weight_decay, .. } => *weight_decay = value,
        }
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let unit = |field: Setting, v: f64| {
            if v.is_finite() && (0.0..1.0).contains(&v) {
                Ok(())
            } else {
                Err(invalid(field, v, "must be at least 0 and below 1"))
            }
        };
        let decay = |v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(invalid(
                    Setting::WeightDecay,
                    v,
                    "must be a finite number of at least 0",
                ))
            }
        };
        match *self {
            Self::Sgd {
                momentum,
                nesterov,
                weight_decay,
            } => {
                unit(Setting::Momentum, momentum)?;
                decay(weight_decay)?;
                if nesterov && momentum == 0.0 {
                    return Err(invalid(
                        Setting::Nesterov,
                        true,
                        "Nesterov momentum needs a momentum above 0",
                    ));
                }
            }
            Self::Adam {
                beta_1,
                beta_2,
                epsilon,
                weight_decay,
            }
            | Self::AdamW {
                beta_1,
                beta_2,
                epsilon,
                weight_decay,
            } => {
                unit(Setting::Beta1, beta_1)?;
                unit(Setting::Beta2, beta_2)?;
                decay(weight_decay)?;
                if !(epsilon.is_finite() && epsilon > 0.0) {
                    return Err(invalid(
                        Setting::Epsilon,
                        epsilon,
                        "must be a small positive number such as 1e-8",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// How the learning rate changes over the run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Schedule {
    /// The same rate every step.
    #[default]
    Constant,
    /// Multiply by `gamma` every `every_epochs` epochs.
    Step {
        /// Epochs between two drops.
        every_epochs: usize,
        /// Factor applied at each drop.
        gamma: f64,
    },
    /// Cosine decay from the base rate to `min_lr` over the whole run, updated every step.
    Cosine {
        /// Rate at the very end.
        #[serde(default)]
        min_lr: f64,
    },
}

impl Schedule {
    /// The rate for a step, from the base rate and the position in the run; a pure function so a
    /// resumed run gets exactly the rates of an uninterrupted one.
    pub fn lr_at(&self, base_lr: f64, epoch: usize, step_in_run: usize, total_steps: usize) -> f64 {
        match *self {
            Self::Constant => base_lr,
            Self::Step {
                every_epochs,
                gamma,
            } => {
                let drops = epoch / every_epochs.max(1);
                base_lr * gamma.powi(i32::try_from(drops).unwrap_or(i32::MAX))
            }
            Self::Cosine { min_lr } => {
                let progress = step_in_run as f64 / total_steps.max(1) as f64;
                min_lr + (base_lr - min_lr) * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos())
            }
        }
    }

    fn validate(&self, base_lr: f64) -> Result<(), ConfigError> {
        match *self {
            Self::Constant => Ok(()),
            Self::Step {
                every_epochs,
                gamma,
            } => {
                if every_epochs == 0 {
                    return Err(invalid(
                        Setting::StepEvery,
                        every_epochs,
                        "must be at least 1",
                    ));
                }
                if !(gamma.is_finite() && gamma > 0.0 && gamma <= 1.0) {
                    return Err(invalid(
                        Setting::StepGamma,
                        gamma,
                        "must be above 0 and at most 1",
                    ));
                }
                Ok(())
            }
            Self::Cosine { min_lr } => {
                if !(min_lr.is_finite() && min_lr >= 0.0 && min_lr <= base_lr) {
                    return Err(invalid(
                        Setting::CosineMinLr,
                        min_lr,
                        "must be at least 0 and at most the learning rate",
                    ));
                }
                Ok(())
            }
        }
    }
}

impl FromStr for Schedule {
    type Err = ConfigError;

    /// `constant`, `step:EVERY_EPOCHS:GAMMA` (e.g. `step:5:0.1`), `cosine` or `cosine:MIN_LR`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut parts = text.split(':');
        let bad = || {
            invalid(
                Setting::Schedule,
                text,
                "expected constant, step:EVERY_EPOCHS:GAMMA (e.g. step:5:0.1), cosine or cosine:MIN_LR",
            )
        };
        let schedule = match parts.next() {
            Some("constant") => Self::Constant,
            Some("step") => {
                let every_epochs = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
                let gamma = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
                Self::Step {
                    every_epochs,
                    gamma,
                }
            }
            Some("cosine") => Self::Cosine {
                min_lr: match parts.next() {
                    Some(p) => p.parse().map_err(|_| bad())?,
                    None => 0.0,
                },
            },
            _ => return Err(bad()),
        };
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(schedule)
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Constant => f.write_str("constant"),
            Self::Step {
                every_epochs,
                gamma,
            } => write!(f, "step:{every_epochs}:{gamma}"),
            Self::Cosine { min_lr } => write!(f, "cosine:{min_lr}"),
        }
    }
}

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
    /// How weights and biases start.
    pub init: InitScheme,
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
    /// Whether the loss is taken on logits or on clipped softmax probabilities.
    pub loss: LossInput,
    /// Optimizer and its settings.
    pub optimizer: OptimizerSpec,
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
            weights: None,
            fine_tune: FineTune::Full,
            backbone_lr_scale: 0.1,
            unfreeze_after: 0,
            input_scaling: InputScaling::UnitRange,
            loss: LossInput::Logits,
            optimizer: OptimizerSpec::from_name("adam").unwrap_or(OptimizerSpec::Adam {
                beta_1: default_beta_1(),
                beta_2: default_beta_2(),
                epsilon: default_epsilon(),
                weight_decay: 0.0,
            }),
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
        if let DatasetSpec::Folder { path, .. } = &mut self.dataset {
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

    /// Checks every field that does not depend on the data; the first problem found is returned.
    pub fn validate(self) -> Result<Experiment, ConfigError> {
        if self.name.trim().is_empty() {
            return Err(invalid(Setting::Name, "\"\"", "give the run a name"));
        }
        if self
            .name
            .chars()
            .any(|c| std::path::is_separator(c) || c.is_control() || ":*?\"<>|".contains(c))
        {
            return Err(invalid(
                Setting::Name,
                &self.name,
                "is used in a folder name, so it may not contain / \\ : * ? \" < > |",
            ));
        }
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return Err(invalid(
                Setting::Lr,
                self.lr,
                "the learning rate must be a positive number such as 0.001",
            ));
        }
        if self.lr > 10.0 {
            return Err(invalid(
                Setting::Lr,
                self.lr,
                "a learning rate above 10 only diverges; try 0.001 to 0.1",
            ));
        }
        if self.batch_size == 0 || self.batch_size > MAX_BATCH_SIZE {
            return Err(invalid(
                Setting::BatchSize,
                self.batch_size,
                format!("must be between 1 and {MAX_BATCH_SIZE}"),
            ));
        }
        if self.epochs == 0 || self.epochs > MAX_EPOCHS {
            return Err(invalid(
                Setting::Epochs,
                self.epochs,
                format!("must be between 1 and {MAX_EPOCHS}"),
            ));
        }
        if self.crop_padding > MAX_CROP_PADDING {
            return Err(ConfigError::Invalid {
                field: Setting::CropPadding,
                value: self.crop_padding.to_string(),
                reason: format!("at most {MAX_CROP_PADDING} pixels (CIFAR's usual value is 4)"),
            });
        }
        self.validate_augmentation()?;
        if self.profile_steps > MAX_PROFILE_STEPS {
            return Err(ConfigError::Invalid {
                field: Setting::ProfileSteps,
                value: self.profile_steps.to_string(),
                reason: format!(
                    "at most {MAX_PROFILE_STEPS}: a profiled step waits for the device after every phase"
                ),
            });
        }
        if !(10..=60_000).contains(&self.readback_interval_ms) {
            return Err(invalid(
                Setting::ReadbackInterval,
                self.readback_interval_ms,
                "must be between 10 and 60000 milliseconds",
            ));
        }
        self.validate_data_parallel()?;
        self.validate_selection()?;
        self.optimizer.validate()?;
        self.schedule.validate(self.lr)?;
        self.model
            .check_spec()
            .map_err(|e| invalid(e.setting(), &self.model, e.to_string()))?;
        self.validate_fine_tuning()?;
        if let DatasetSpec::Folder { image_size, .. } = self.dataset
            && !(1..=crate::data::MAX_IMAGE_SIZE_PX).contains(&image_size)
        {
            return Err(invalid(
                Setting::FolderImageSize,
                image_size,
                format!(
                    "images are resized to 1 to {} pixels a side; 64 to 224 is usual",
                    crate::data::MAX_IMAGE_SIZE_PX
                ),
            ));
        }
        Ok(Experiment { draft: self })
    }
}

impl ExperimentDraft {
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

    fn validate_data_parallel(&self) -> Result<(), ConfigError> {
        let devices = self.devices();
        if devices.len() < 2 {
            return Ok(());
        }
        let refuse = |reason: String| {
            Err(invalid(
                Setting::Device,
                crate::device::devices_text(&devices),
                reason,
            ))
        };
        if let Some(problem) = crate::device::data_parallel_problem(&devices) {
            return refuse(problem);
        }
        if self.batch_size < devices.len() {
            return refuse(format!(
                "a batch of {} cannot be split across {} devices; use a batch of at least {}",
                self.batch_size,
                devices.len(),
                devices.len()
            ));
        }
        if self.precision != Precision::F32 {
            return refuse(
                "data-parallel runs train in f32: each device's f16 loss scale would skip steps the others took (`--precision f32`)"
                    .to_owned(),
            );
        }
        if self.fine_tune == FineTune::LinearProbe {
            return refuse(
                "a linear probe trains its head on features cached on one device, seconds per epoch; train it on one device"
                    .to_owned(),
            );
        }
        Ok(())
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

    /// Checks the pretrained start: weights only for torchvision's architectures, and a linear
    /// probe only from weights, with nothing for augmentation to act on while it lasts.
    fn validate_fine_tuning(&self) -> Result<(), ConfigError> {
        if let Some(source) = &self.weights
            && self.model.torchvision().is_none()
        {
            return Err(invalid(
                Setting::Weights,
                source,
                format!(
                    "{} has no pretrained weights; pick resnet18-imagenet, resnet34, resnet50 or mobilenet-v2 to start from a weights file",
                    self.model.title()
                ),
            ));
        }
        if !(self.backbone_lr_scale.is_finite() && (0.0..=10.0).contains(&self.backbone_lr_scale)) {
            return Err(invalid(
                Setting::BackboneLrScale,
                self.backbone_lr_scale,
                "a share of the learning rate from 0 to 10; 0.1 is common",
            ));
        }
        if self.fine_tune != FineTune::LinearProbe {
            return Ok(());
        }
        if self.weights.is_none() {
            return Err(invalid(
                Setting::FineTune,
                self.fine_tune,
                "a linear probe trains a head on pretrained features; start from ImageNet weights or a file, or train the whole network",
            ));
        }
        if self.unfreeze_after >= self.epochs {
            return Err(invalid(
                Setting::UnfreezeAfter,
                self.unfreeze_after,
                format!(
                    "the run has {} epochs, so the backbone would never unfreeze; use fewer, or 0 to keep it frozen",
                    self.epochs
                ),
            ));
        }
        if self.unfreeze_after == 0 && self.augments() {
            return Err(invalid(
                Setting::FineTune,
                self.fine_tune,
                "a linear probe computes each image's features once, so augmentation has nothing to act on; turn it off, or unfreeze after some epochs",
            ));
        }
        Ok(())
    }

    /// Checks the amounts of the training augmentation against what the input pipeline does.
    fn validate_augmentation(&self) -> Result<(), ConfigError> {
        // The pipeline's limits are f32; as f64 they would print as 0.07999999821186066.
        let tidy = |limit: f32| (f64::from(limit) * 1e4).round() / 1e4;
        let min_scale = tidy(kiln_shaders::MIN_CROP_SCALE);
        let max_degrees = tidy(kiln_shaders::MAX_ROTATION_DEGREES);
        let max_jitter = tidy(kiln_shaders::MAX_JITTER);
        let checks = [
            (
                Setting::CropScale,
                self.crop_scale,
                min_scale,
                1.0,
                format!("a share of the image's area from {min_scale} to 1 (1 is off)"),
            ),
            (
                Setting::RotationDegrees,
                self.rotation_degrees,
                0.0,
                max_degrees,
                format!("0 to {max_degrees} degrees (0 is off)"),
            ),
            (
                Setting::Brightness,
                self.brightness,
                0.0,
                max_jitter,
                format!("0 to {max_jitter}: 0.2 draws factors from 0.8 to 1.2 (0 is off)"),
            ),
            (
                Setting::Contrast,
                self.contrast,
                0.0,
                max_jitter,
                format!("0 to {max_jitter}: 0.2 draws factors from 0.8 to 1.2 (0 is off)"),
            ),
        ];
        for (field, value, low, high, reason) in checks {
            if !(low..=high).contains(&value) {
                return Err(invalid(field, value, reason));
            }
        }
        Ok(())
    }

    /// Checks the splits and how the run chooses its epoch.
    fn validate_selection(&self) -> Result<(), ConfigError> {
        for (field, value) in [
            (Setting::ValSplit, self.val_split),
            (Setting::TestSplit, self.test_split),
        ] {
            if !(0.0..=MAX_HOLDOUT_SPLIT).contains(&value) {
                return Err(invalid(
                    field,
                    value,
                    format!("must be a fraction between 0 and {MAX_HOLDOUT_SPLIT}, such as 0.1"),
                ));
            }
        }
        if self.test_split == 0.0 {
            return Err(invalid(
                Setting::TestSplit,
                0,
                "a folder without a test/ sub-folder needs some images kept apart for testing; try 0.2",
            ));
        }
        if !(self.min_delta.is_finite() && self.min_delta >= 0.0) {
            return Err(invalid(
                Setting::MinDelta,
                self.min_delta,
                "must be 0 or a small positive number such as 0.001",
            ));
        }
        if self.early_stop > MAX_EPOCHS {
            return Err(invalid(
                Setting::EarlyStop,
                self.early_stop,
                format!("must be between 0 (off) and {MAX_EPOCHS} epochs"),
            ));
        }
        if self.early_stop > 0 && !self.evaluates_epochs() {
            return Err(invalid(
                Setting::EarlyStop,
                self.early_stop,
                "early stopping watches the validation split, and val_split is 0; set val_split above 0 or early_stop to 0",
            ));
        }
        Ok(())
    }

    /// Whether each epoch is evaluated on something: a validation split, or the test split.
    pub fn evaluates_epochs(&self) -> bool {
        self.validation == Validation::Test || self.val_split > 0.0
    }
}

/// A checked experiment: every value is usable. Reads like the draft it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    draft: ExperimentDraft,
}

impl Deref for Experiment {
    type Target = ExperimentDraft;

    fn deref(&self) -> &ExperimentDraft {
        &self.draft
    }
}

impl Experiment {
    /// The draft this was checked from, e.g. to write `config.toml` or to edit and re-check.
    pub fn draft(&self) -> &ExperimentDraft {
        &self.draft
    }

    /// Checks what needs the loaded data: batch size against the split, model against the image.
    pub fn check_against(&self, data: &ImageDataset) -> Result<(), ConfigError> {
        if data.train.is_empty() {
            return Err(invalid(
                Setting::Dataset,
                &self.dataset,
                "the training split has no image",
            ));
        }
        if self.batch_size > data.train.len() {
            return Err(invalid(
                Setting::BatchSize,
                self.batch_size,
                format!(
                    "is larger than the {} training images of {}",
                    data.train.len(),
                    data.name
                ),
            ));
        }
        self.model
            .validate(data.shape, data.num_classes())
            .map_err(|e| invalid(e.setting(), &self.model, e.to_string()))
    }

    /// Optimizer steps in one epoch; the last batch of an epoch may be short, never dropped.
    pub fn steps_per_epoch(&self, train_len: usize) -> usize {
        train_len.div_ceil(self.batch_size)
    }
}

struct Preset {
    name: &'static str,
    toml: &'static str,
}

const PRESETS: &[Preset] = &[
    Preset {
        name: "fashion-mlp",
        toml: include_str!("../../assets/presets/fashion-mlp.toml"),
    },
    Preset {
        name: "cifar-vgg16",
        toml: include_str!("../../assets/presets/cifar-vgg16.toml"),
    },
    Preset {
        name: "mnist-tiny-fullbatch",
        toml: include_str!("../../assets/presets/mnist-tiny-fullbatch.toml"),
    },
    Preset {
        name: "fashion-mlp-pytorch",
        toml: include_str!("../../assets/presets/fashion-mlp-pytorch.toml"),
    },
    Preset {
        name: "fashion-mlp-keras",
        toml: include_str!("../../assets/presets/fashion-mlp-keras.toml"),
    },
    Preset {
        name: "cifar-vgg16-pytorch",
        toml: include_str!("../../assets/presets/cifar-vgg16-pytorch.toml"),
    },
    Preset {
        name: "cifar-vgg16-keras",
        toml: include_str!("../../assets/presets/cifar-vgg16-keras.toml"),
    },
    Preset {
        name: "mnist-tiny-fullbatch-pytorch",
        toml: include_str!("../../assets/presets/mnist-tiny-fullbatch-pytorch.toml"),
    },
    Preset {
        name: "mnist-tiny-fullbatch-keras",
        toml: include_str!("../../assets/presets/mnist-tiny-fullbatch-keras.toml"),
    },
];

/// Names of the presets shipped with Kiln: the reference workloads README.md lists, each with its PyTorch and Keras flavours.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_and_validates() {
        for name in preset_names() {
            let draft = preset(name).unwrap();
            assert_eq!(draft.name, name);
            draft.validate().unwrap();
        }
    }

    #[test]
    fn draft_survives_a_toml_round_trip() {
        let mut draft = preset("fashion-mlp").unwrap();
        draft.schedule = Schedule::Step {
            every_epochs: 3,
            gamma: 0.5,
        };
        draft.data_dir = Some(PathBuf::from("/data"));
        let text = draft.to_toml();
        assert_eq!(ExperimentDraft::from_toml(&text, "t").unwrap(), draft);
    }

    #[test]
    fn bad_values_are_refused_with_their_field() {
        type Mutation = Box<dyn Fn(&mut ExperimentDraft)>;
        let cases: Vec<(&str, Mutation)> = vec![
            ("batch_size", Box::new(|d| d.batch_size = 0)),
            ("lr", Box::new(|d| d.lr = f64::NAN)),
            ("lr", Box::new(|d| d.lr = -0.1)),
            ("lr", Box::new(|d| d.lr = 0.0)),
            ("epochs", Box::new(|d| d.epochs = 0)),
            ("name", Box::new(|d| d.name = "a/b".into())),
            (
                "optimizer.momentum",
                Box::new(|d| d.optimizer = OptimizerSpec::from_name("sgd").unwrap()),
            ),
            (
                "schedule.every_epochs",
                Box::new(|d| {
                    d.schedule = Schedule::Step {
                        every_epochs: 0,
                        gamma: 0.1,
                    }
                }),
            ),
        ];
        for (field, mutate) in cases {
            let mut draft = ExperimentDraft::default();
            mutate(&mut draft);
            if field == "optimizer.momentum"
                && let OptimizerSpec::Sgd { momentum, .. } = &mut draft.optimizer
            {
                *momentum = 1.5;
            }
            let message = draft.validate().unwrap_err().to_string();
            assert!(message.starts_with(field), "{field}: {message}");
        }
    }

    #[test]
    fn a_refused_value_names_its_setting_as_a_type() {
        let draft = ExperimentDraft {
            batch_size: 0,
            ..ExperimentDraft::default()
        };
        let err = draft.validate().unwrap_err();
        assert!(
            matches!(
                err,
                ConfigError::Invalid {
                    field: Setting::BatchSize,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().starts_with("batch_size = 0"), "{err}");
    }

    #[test]
    fn an_absurd_image_size_or_vgg_side_is_refused_on_its_own_field() {
        let field_of = |draft: ExperimentDraft| match draft.validate() {
            Err(ConfigError::Invalid { field, reason, .. }) => (field, reason),
            other => panic!("expected a refused value, got {other:?}"),
        };
        // A config file can say anything; `folder:PATH@SIZE` on the command line was the only
        // place this was checked, so a config asked for 100000² images.
        for image_size in [0, crate::data::MAX_IMAGE_SIZE_PX + 1] {
            let draft = ExperimentDraft {
                dataset: DatasetSpec::Folder {
                    path: PathBuf::from("photos"),
                    image_size,
                },
                ..ExperimentDraft::default()
            };
            let (field, reason) = field_of(draft);
            assert_eq!(field, Setting::FolderImageSize, "{reason}");
        }
        for side in [8, 100_000] {
            let draft = ExperimentDraft {
                model: ModelSpec::Vgg16 {
                    batch_norm: false,
                    resize_to: Some(side),
                },
                ..ExperimentDraft::default()
            };
            let (field, reason) = field_of(draft);
            assert_eq!(field, Setting::VggInputSize, "{side}: {reason}");
        }
        let widthless = ExperimentDraft {
            model: ModelSpec::Mlp {
                widths: vec![0],
                activation: crate::model::Activation::Relu,
                dropout: 0.0,
            },
            ..ExperimentDraft::default()
        };
        assert_eq!(field_of(widthless).0, Setting::MlpWidths);
    }

    #[test]
    fn a_data_parallel_run_keeps_its_devices_and_refuses_what_cannot_be_split() {
        let mut draft = preset("fashion-mlp").unwrap();
        draft.set_devices(crate::device::parse_devices("gpu:0,gpu:1").unwrap());
        assert_eq!(draft.device, DeviceChoice::Gpu(0));
        let text = draft.to_toml();
        assert!(text.contains("data_parallel = [\"gpu:1\"]"), "{text}");
        let back = ExperimentDraft::from_toml(&text, "config.toml").unwrap();
        assert_eq!(
            back.devices(),
            vec![DeviceChoice::Gpu(0), DeviceChoice::Gpu(1)]
        );
        assert!(back.clone().validate().is_ok());
        // One device writes no data_parallel key, so older config files read unchanged.
        assert!(
            !preset("fashion-mlp")
                .unwrap()
                .to_toml()
                .contains("data_parallel")
        );
        let refused = |change: fn(&mut ExperimentDraft)| {
            let mut draft = back.clone();
            change(&mut draft);
            match draft.validate() {
                Err(ConfigError::Invalid { field, reason, .. }) => {
                    assert_eq!(field, Setting::Device);
                    reason
                }
                other => panic!("{other:?}"),
            }
        };
        assert!(refused(|d| d.batch_size = 1).contains("at least 2"));
        assert!(refused(|d| d.precision = Precision::F16).contains("f32"));
        assert!(refused(|d| d.device = DeviceChoice::Auto).contains("name each device"));
        assert!(refused(|d| d.data_parallel = vec![DeviceChoice::Gpu(0)]).contains("twice"));
    }

    #[test]
    fn unknown_fields_in_toml_are_named() {
        let err = ExperimentDraft::from_toml("batch = 3\n", "x.toml").unwrap_err();
        assert!(err.to_string().contains("batch"), "{err}");
    }

    #[test]
    fn schedules_give_the_documented_rates() {
        assert_eq!(Schedule::Constant.lr_at(0.1, 7, 700, 1000), 0.1);
        let step = Schedule::Step {
            every_epochs: 2,
            gamma: 0.5,
        };
        assert_eq!(step.lr_at(0.1, 1, 0, 10), 0.1);
        assert!((step.lr_at(0.1, 4, 0, 10) - 0.025).abs() < 1e-12);
        let cosine = Schedule::Cosine { min_lr: 0.0 };
        assert!((cosine.lr_at(0.1, 0, 0, 100) - 0.1).abs() < 1e-12);
        assert!((cosine.lr_at(0.1, 0, 50, 100) - 0.05).abs() < 1e-12);
        assert!(cosine.lr_at(0.1, 0, 100, 100).abs() < 1e-12);
        for text in ["constant", "step:5:0.1", "cosine:0.001"] {
            let parsed: Schedule = text.parse().unwrap();
            assert_eq!(parsed.to_string(), text);
        }
        assert!("step:5".parse::<Schedule>().is_err());
        assert!("linear".parse::<Schedule>().is_err());
    }
}
