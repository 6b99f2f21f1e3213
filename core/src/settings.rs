//! Every setting of an experiment, declared once (ripgrep declares its flags so): its key in
//! `config.toml` and in error messages, the label the window gives it, and the one-line
//! explanation its tooltip shows. A refused value names its [`Setting`], so the window marks the
//! field it was typed in without matching strings.

use std::fmt;

/// Declares every setting once: its variant with its doc, then key, label and help.
macro_rules! settings {
    ($($(#[doc = $doc:literal])* $name:ident => $key:literal, $label:literal, $help:literal;)*) => {
        /// One setting a person can choose.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Setting {
            $($(#[doc = $doc])* $name,)*
        }

        impl Setting {
            /// Every setting, in the order they are declared.
            pub const ALL: &'static [Setting] = &[$(Setting::$name),*];

            /// (key, label, help) of this setting.
            fn declaration(self) -> (&'static str, &'static str, &'static str) {
                match self {
                    $(Setting::$name => ($key, $label, $help),)*
                }
            }
        }
    };
}

settings! {
    /// The run's name, part of its folder's name.
    Name => "name", "Run name",
        "Part of the run folder's name, so runs are easy to find.";
    /// The data set.
    Dataset => "dataset", "Data set",
        "What to train on; the built-in set needs no files and no network.";
    /// The side images of a folder data set are resized to.
    FolderImageSize => "dataset", "Image size",
        "Images are resized to this many pixels on each side.";
    /// The architecture, as a whole spec.
    Model => "model", "Architecture",
        "The network to train; VGG16 and ResNet-18 need a GPU to be quick.";
    /// An MLP's hidden widths (part of the model spec).
    MlpWidths => "model", "Hidden widths",
        "Neurons in each hidden layer, comma separated: 512,512 is two layers of 512.";
    /// An MLP's nonlinearity (part of the model spec).
    Activation => "model", "Activation",
        "The nonlinearity between hidden layers.";
    /// An MLP's dropout (part of the model spec).
    Dropout => "model", "Dropout",
        "Probability of zeroing each hidden activation during training (0 disables).";
    /// VGG16's input side (part of the model spec).
    VggInputSize => "model", "Input size",
        "Resize inputs on the device to this side in pixels (224 as in the paper); empty keeps the data set's size.";
    /// The learning rate.
    Lr => "lr", "Learning rate",
        "How far each step moves the weights; too high diverges, too low crawls.";
    /// The optimizer's kind.
    Optimizer => "optimizer", "Optimizer",
        "The update rule applied to the gradients.";
    /// SGD's momentum.
    Momentum => "optimizer.momentum", "Momentum",
        "Fraction of the previous update added to the next; 0.9 is common, 0 turns it off.";
    /// SGD's Nesterov switch.
    Nesterov => "optimizer.nesterov", "Nesterov",
        "Looks ahead along the momentum before taking the gradient; needs momentum above 0.";
    /// Weight decay of any optimizer.
    WeightDecay => "optimizer.weight_decay", "Weight decay",
        "Pulls weights toward zero each step to reduce overfitting: as L2 in the gradient for SGD and Adam, decoupled for AdamW.";
    /// Adam's β₁.
    Beta1 => "optimizer.beta_1", "β₁",
        "Decay of Adam's running mean of gradients (usually 0.9).";
    /// Adam's β₂.
    Beta2 => "optimizer.beta_2", "β₂",
        "Decay of Adam's running mean of squared gradients (usually 0.999).";
    /// Adam's ε.
    Epsilon => "optimizer.epsilon", "ε",
        "Added to Adam's denominator for stability; PyTorch uses 1e-8, Keras 1e-7.";
    /// The learning-rate schedule's kind.
    Schedule => "schedule", "LR schedule",
        "How the learning rate changes over the run.";
    /// A step schedule's period in epochs.
    StepEvery => "schedule.every_epochs", "Every (epochs)",
        "Epochs between two drops of the learning rate.";
    /// A step schedule's factor.
    StepGamma => "schedule.gamma", "Factor γ",
        "The learning rate is multiplied by this at each drop.";
    /// A cosine schedule's final rate.
    CosineMinLr => "schedule.min_lr", "Final rate",
        "The learning rate at the very end of the run.";
    /// Images per step.
    BatchSize => "batch_size", "Batch size",
        "Images per optimizer step; larger batches use the device better but need more memory.";
    /// Passes over the training split.
    Epochs => "epochs", "Epochs",
        "How many times the whole training split is seen.";
    /// The seed of every random draw.
    Seed => "seed", "Seed",
        "Seeds weight init, shuffling and dropout, so the same seed gives the same run.";
    /// Where each epoch is evaluated: a validation split, or the test split (parity presets).
    Validation => "validation", "Validate on",
        "Each epoch is evaluated on a validation split carved from the training images; 'test' evaluates on the test split instead, as the parity presets' frameworks do (such runs are labelled validated on test).";
    /// The fraction of the training images held out for validation.
    ValSplit => "val_split", "Validation split",
        "Fraction of each class's training images held out to choose the model on (best epoch, early stopping); 0 turns validation off.";
    /// The fraction of a flat image folder held out for testing.
    TestSplit => "test_split", "Test split",
        "Fraction of each class of an image folder without a test/ sub-folder kept apart as the test set, measured once on the model the run keeps.";
    /// Epochs without improvement before the run stops.
    EarlyStop => "early_stop", "Early stop after",
        "Stop when the monitored validation figure has not improved for this many epochs; 0 trains every epoch.";
    /// The figure that picks the best epoch and drives early stopping.
    Monitor => "monitor", "Monitor",
        "The validation figure that picks the best epoch and decides early stopping.";
    /// The least change that counts as an improvement.
    MinDelta => "min_delta", "Min improvement",
        "The monitored figure must improve by more than this to count (loss units, or accuracy as a fraction).";
    /// Which weights the run keeps.
    Keep => "keep", "Keep",
        "Which weights the run keeps, saves and tests: those of the best validation epoch, or of the last epoch.";
    /// Random-crop padding of the training augmentation.
    CropPadding => "crop_padding", "Crop padding",
        "Training images get this many zero pixels on each side and are cropped back to their size at a random place (CIFAR's usual value is 4); 0 turns it off.";
    /// Random horizontal flips of the training augmentation.
    Flip => "flip", "Random horizontal flip",
        "Mirror each training image left to right with probability ½; test images are never flipped.";
    /// The smallest area share of the random resized crop.
    CropScale => "crop_scale", "Min crop area",
        "Cut each training image to a random window of this share of its area up to all of it, at an aspect ratio of 3:4 to 4:3, and resize it back, as torchvision's RandomResizedCrop(scale=(s, 1)); 0.08 is ImageNet's usual value, 1 turns it off.";
    /// The largest random rotation.
    RotationDegrees => "rotation_degrees", "Random rotation (°)",
        "Turn each training image about its centre by a random angle of up to this many degrees either way (at most 30); 0 turns it off.";
    /// The brightness jitter.
    Brightness => "brightness", "Brightness jitter",
        "Multiply each training image's pixels by a random factor in 1 ± this (0.2 is ±20 %); 0 turns it off.";
    /// The contrast jitter.
    Contrast => "contrast", "Contrast jitter",
        "Spread each training image's pixels away from or towards mid-grey by a random factor in 1 ± this; 0 turns it off.";
    /// Where to train.
    Device => "device", "Device",
        "Where to train: auto picks a hardware GPU, else the CPU; software GPUs are slow.";
    /// The float type of the arithmetic.
    Precision => "precision", "Precision",
        "f16 computes in 16-bit floats with f32 master weights and a scaled loss; it needs a GPU with 16-bit float shaders.";
    /// Steps of the profiling mode.
    ProfileSteps => "profile_steps", "Profile steps",
        "Profiling mode: time this many steps after warm-up phase by phase (data, forward, backward, optimizer, host sync), waiting for the device after each; the breakdown shows above the plots and those steps stay out of samples/s. 0 is off.";
    /// How often metrics are read back.
    ReadbackInterval => "readback_interval_ms", "Readback interval (ms)",
        "How often the running metrics are read back from the device; each readback is the only host sync of an epoch.";
    /// How pixel bytes become the network's input.
    InputScaling => "input_scaling", "Input scaling",
        "How pixel bytes become inputs: /255 like PyTorch's ToTensor, raw 0–255 like the Keras report, or standardized.";
    /// What the loss is taken on.
    Loss => "loss", "Loss",
        "Cross-entropy from the logits (PyTorch, and Keras on TensorFlow), or from softmax probabilities clipped at 1e-7 (Keras on JAX or PyTorch), which stops learning from confidently wrong images.";
    /// How weights start.
    Init => "init", "Init",
        "How weights start: PyTorch's default uniform, or Keras's Glorot-uniform with zero biases.";
    /// How each class weighs in the training loss.
    ClassWeights => "class_weights", "Class weights",
        "'balanced' weighs each training image's loss by the inverse of its class's share (as scikit-learn's class_weight='balanced'), so a rare class counts as much as a common one; 'none' weighs all alike. Validation and test losses are never weighted.";
    /// Whether a NaN or infinite loss ends the run.
    StopOnNonFiniteLoss => "stop_on_non_finite_loss", "Stop on NaN loss",
        "End the run when the loss becomes NaN or infinite; a warning is shown either way.";
}

impl Setting {
    /// The setting's key in `config.toml`, which error messages name too.
    pub fn key(self) -> &'static str {
        self.declaration().0
    }

    /// The label the window's Setup panel gives it.
    pub fn label(self) -> &'static str {
        self.declaration().1
    }

    /// One line that says what it does and what to choose: the window's tooltip.
    pub fn help(self) -> &'static str {
        self.declaration().2
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// Declares a choice written as one word in config.toml and on the command line.
macro_rules! choice {
    (
        $(#[$meta:meta])* $name:ident for $setting:ident {
            $($(#[$vmeta:meta])* $variant:ident => $word:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $word)] $variant,)*
        }

        impl $name {
            /// Every choice, in the order the window lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The word config.toml and the command line use for it.
            pub fn word(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)*
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.word())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::config::ConfigError;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                Self::ALL.iter().copied().find(|c| c.word() == text).ok_or_else(|| {
                    let words: Vec<&str> = Self::ALL.iter().map(|c| c.word()).collect();
                    $crate::config::invalid(
                        $crate::settings::Setting::$setting,
                        text,
                        format!("expected {}", words.join(" or ")),
                    )
                })
            }
        }
    };
}

pub(crate) use choice;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_is_labelled_once_and_explained() {
        let mut labels: Vec<&str> = Setting::ALL.iter().map(|s| s.label()).collect();
        labels.sort_unstable();
        let before = labels.len();
        labels.dedup();
        // The window keys its widgets by label, so two settings may not share one.
        assert_eq!(labels.len(), before, "{labels:?}");
        for setting in Setting::ALL {
            assert!(!setting.key().is_empty(), "{setting:?}");
            assert!(
                setting.help().ends_with('.'),
                "{setting:?}: {}",
                setting.help()
            );
        }
        assert_eq!(Setting::BatchSize.to_string(), "batch_size");
    }
}
