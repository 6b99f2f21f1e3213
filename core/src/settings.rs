//! Every setting of an experiment, declared once (ripgrep declares its flags so): its key in
//! `config.toml` and in error messages, the label the window gives it, and the one-line
//! explanation its tooltip shows. A refused value names its [`Setting`], so the window marks the
//! field it was typed in without matching strings.
//!
//! The settings that are one number of the draft have a row in [`NUMBERS`] too: their field,
//! the value their flag shows and the word a legend names them by. The window's text fields,
//! `kiln train`'s flags and the legends are made from those rows, so a new number is a field
//! of [`ExperimentDraft`], its range in `validate`, a declaration here and a row there.

use std::fmt;

use crate::config::ExperimentDraft;

/// Declares every setting once: its variant with its doc, then key, label and help.
macro_rules! settings {
    ($($(#[doc = $doc:literal])* $name:ident => $key:literal, $label:literal, $help:literal;)*) => {
        /// One setting a person can choose.
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
            serde::Serialize, serde::Deserialize,
        )]
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
    /// The pretrained weights file the network starts from.
    Weights => "weights", "Start from",
        "Random weights, or a torchvision weights file (.pth or .safetensors) such as ImageNet's: a few hundred photos learn far more from a pretrained start.";
    /// What of a pretrained network trains.
    FineTune => "fine_tune", "Train",
        "With pretrained weights: the whole network, or a linear probe (only the classifier head, on features computed once per image: seconds per epoch).";
    /// The pretrained layers' share of the learning rate.
    BackboneLrScale => "backbone_lr_scale", "Backbone lr ×",
        "The pretrained layers learn at this share of the learning rate (the new head at the full rate); 0.1 is common, 1 trains them alike.";
    /// Linear-probe epochs before the whole network trains.
    UnfreezeAfter => "unfreeze_after", "Unfreeze after",
        "Epochs of linear probe before every layer trains (the head starts out trained); 0 keeps the backbone frozen.";
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
        "Where to train: auto picks a hardware GPU, else the CPU; software GPUs are slow; cuda:N is an NVIDIA GPU through CUDA (builds with the cuda feature); remote:HOST:PORT/N is a device of a box running kiln serve.";
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
        "How pixel bytes become inputs: /255 like PyTorch's ToTensor, raw 0–255 like the Keras report, standardized, or ImageNet's mean and std, as pretrained weights expect.";
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

    /// Its flag on the command line, where it has one made from its key: the key with dashes
    /// (`--batch-size` for `batch_size`).
    pub fn flag(self) -> String {
        self.key().replace('_', "-")
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// A number as a person types it in a field or after a flag, and as it is shown back.
pub trait TypedNumber: Sized {
    /// Reads `text` (trimmed); the error is a sentence for the field or the flag.
    fn read(text: &str) -> Result<Self, String>;
    /// The number as a person would type it.
    fn show(&self) -> String;
}

impl TypedNumber for f64 {
    fn read(text: &str) -> Result<Self, String> {
        match text.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            Ok(_) => Err("must be a finite number".to_owned()),
            Err(_) => Err(format!("'{}' is not a number", text.trim())),
        }
    }

    fn show(&self) -> String {
        show_number(*self)
    }
}

/// Whole numbers of any size their type holds: the range is `validate`'s to check.
macro_rules! whole_number {
    ($($ty:ty),*) => {$(
        impl TypedNumber for $ty {
            fn read(text: &str) -> Result<Self, String> {
                text.trim()
                    .parse()
                    .map_err(|_| format!("'{}' is not a whole number", text.trim()))
            }

            fn show(&self) -> String {
                self.to_string()
            }
        }
    )*};
}

whole_number!(usize, u64, u32);

/// Shows a value the way people type it: `0.001`, but `1e-8` rather than `0.00000001`.
pub fn show_number(value: f64) -> String {
    if value != 0.0 && value.abs() < 1e-4 {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// A setting that is one number of [`ExperimentDraft`], with what the window, the command line
/// and the legends need to handle it without a line of their own.
#[derive(Debug, Clone, Copy)]
pub struct NumberSetting {
    /// Which setting: its key, label and help.
    pub setting: Setting,
    /// What the flag's help shows for its value (`--lr <RATE>`).
    pub value_name: &'static str,
    /// The word a legend names it by when runs differ in it (`lr 0.01`); none leaves it out.
    pub legend: Option<&'static str>,
    /// Written after the value in a legend (`rotation 15°`).
    pub legend_unit: &'static str,
    /// Part of the training augmentation, whose flags `kiln data inspect` shares.
    pub augmentation: bool,
    show: fn(&ExperimentDraft) -> String,
    read: fn(&mut ExperimentDraft, &str) -> Result<(), String>,
}

impl NumberSetting {
    /// The row of `setting`, when it is one number of the draft.
    pub fn of(setting: Setting) -> Option<&'static NumberSetting> {
        NUMBERS.iter().find(|n| n.setting == setting)
    }

    /// Its value in `draft`, as a person would type it.
    pub fn show(&self, draft: &ExperimentDraft) -> String {
        (self.show)(draft)
    }

    /// Sets it in `draft` from typed text; on an error `draft` keeps its value.
    pub fn read_into(&self, draft: &mut ExperimentDraft, text: &str) -> Result<(), String> {
        (self.read)(draft, text)
    }

    /// How a legend names its value in `draft`, when it names it at all.
    pub fn legend_entry(&self, draft: &ExperimentDraft) -> Option<(&'static str, String)> {
        self.legend
            .map(|word| (word, format!("{}{}", self.show(draft), self.legend_unit)))
    }
}

/// Declares the rows of [`NUMBERS`]: `[augmentation]` marks the augmentation's, `legend` the
/// word legends use (and `unit` what follows the value there).
macro_rules! numbers {
    ($(
        $([$augmentation:ident])? $name:ident => $field:ident: $ty:ty, $value_name:literal
            $(, legend $legend:literal $(unit $unit:literal)?)?;
    )*) => {
        /// Every setting that is one number of the draft, in the order legends name them.
        pub static NUMBERS: &[NumberSetting] = &[$(NumberSetting {
            setting: Setting::$name,
            value_name: $value_name,
            legend: numbers!(@some $($legend)?),
            legend_unit: numbers!(@or_empty $($($unit)?)?),
            augmentation: numbers!(@flag $($augmentation)?),
            show: |draft| TypedNumber::show(&draft.$field),
            read: |draft, text| {
                draft.$field = <$ty as TypedNumber>::read(text)?;
                Ok(())
            },
        }),*];
    };
    (@some) => { None };
    (@some $word:literal) => { Some($word) };
    (@or_empty) => { "" };
    (@or_empty $unit:literal) => { $unit };
    (@flag) => { false };
    (@flag augmentation) => { true };
}

numbers! {
    Lr => lr: f64, "RATE", legend "lr";
    BatchSize => batch_size: usize, "IMAGES", legend "batch";
    Epochs => epochs: usize, "N", legend "epochs";
    Seed => seed: u64, "N", legend "seed";
    [augmentation] CropPadding => crop_padding: usize, "N", legend "crop padding";
    [augmentation] CropScale => crop_scale: f64, "SHARE", legend "crop scale";
    [augmentation] RotationDegrees => rotation_degrees: f64, "DEGREES", legend "rotation" unit "°";
    [augmentation] Brightness => brightness: f64, "FRACTION", legend "brightness";
    [augmentation] Contrast => contrast: f64, "FRACTION", legend "contrast";
    ValSplit => val_split: f64, "FRACTION", legend "val split";
    TestSplit => test_split: f64, "FRACTION", legend "test split";
    EarlyStop => early_stop: usize, "PATIENCE", legend "early stop";
    MinDelta => min_delta: f64, "DELTA", legend "min delta";
    ProfileSteps => profile_steps: usize, "N";
    BackboneLrScale => backbone_lr_scale: f64, "FACTOR", legend "backbone lr";
    UnfreezeAfter => unfreeze_after: usize, "EPOCHS", legend "unfreeze after";
}

/// A setting that is one choice of the draft among a few words, with what the window, the
/// command line and the legends need to handle it without a line of their own.
#[derive(Debug, Clone, Copy)]
pub struct ChoiceSetting {
    /// Which setting: its key, label and help.
    pub setting: Setting,
    /// Each choice as `(word, label)`: the word config.toml and the flag use, and the label the
    /// window's list shows.
    pub options: &'static [(&'static str, &'static str)],
    /// The word a legend names it by when runs differ in it (`loss probabilities`).
    pub legend: &'static str,
    show: fn(&ExperimentDraft) -> String,
    read: fn(&mut ExperimentDraft, &str) -> Result<(), String>,
}

impl ChoiceSetting {
    /// The row of `setting`, when it is one choice of the draft.
    pub fn of(setting: Setting) -> Option<&'static ChoiceSetting> {
        CHOICES.iter().find(|c| c.setting == setting)
    }

    /// The words it takes, in the order the window lists them.
    pub fn words(&self) -> impl Iterator<Item = &'static str> {
        self.options.iter().map(|(word, _)| *word)
    }

    /// Its word in `draft`.
    pub fn show(&self, draft: &ExperimentDraft) -> String {
        (self.show)(draft)
    }

    /// Sets it in `draft` from its word; on an error `draft` keeps its value.
    pub fn read_into(&self, draft: &mut ExperimentDraft, word: &str) -> Result<(), String> {
        (self.read)(draft, word)
    }
}

/// Declares the rows of [`CHOICES`].
macro_rules! choices {
    ($(
        $name:ident => $field:ident: $ty:ty, legend $legend:literal,
            [$(($word:literal, $label:literal)),+ $(,)?];
    )*) => {
        /// Every setting that is one choice of the draft, in the order legends name them.
        pub static CHOICES: &[ChoiceSetting] = &[$(ChoiceSetting {
            setting: Setting::$name,
            options: &[$(($word, $label)),+],
            legend: $legend,
            show: |draft| draft.$field.to_string(),
            read: |draft, word| {
                draft.$field = word.parse::<$ty>().map_err(|e| e.to_string())?;
                Ok(())
            },
        }),*];
    };
}

choices! {
    InputScaling => input_scaling: crate::config::InputScaling, legend "scaling", [
        ("unit-range", "÷255 (0–1)"),
        ("raw", "raw 0–255"),
        ("standardize", "standardize"),
        ("imagenet", "ImageNet mean and std (pretrained)"),
    ];
    Init => init: crate::model::InitScheme, legend "init", [
        ("pytorch-default", "PyTorch default"),
        ("glorot-uniform", "Glorot uniform (Keras)"),
    ];
    Loss => loss: crate::config::LossInput, legend "loss", [
        ("logits", "on logits"),
        ("probabilities", "on clipped probabilities"),
    ];
    ClassWeights => class_weights: crate::config::ClassWeights, legend "class weights", [
        ("none", "none"),
        ("balanced", "balanced (rare classes weigh more)"),
    ];
    Precision => precision: crate::config::Precision, legend "precision", [
        ("f32", "f32"),
        ("f16", "f16 (mixed)"),
    ];
    FineTune => fine_tune: crate::config::FineTune, legend "fine-tune", [
        ("full", "the whole network"),
        ("linear-probe", "a linear probe (head only)"),
    ];
    Validation => validation: crate::selection::Validation, legend "validation", [
        ("split", "a validation split"),
        ("test", "the test split (parity)"),
    ];
    Monitor => monitor: crate::selection::Monitor, legend "monitor", [
        ("val-loss", "validation loss"),
        ("val-accuracy", "validation accuracy"),
    ];
    Keep => keep: crate::selection::Keep, legend "keep", [
        ("best", "the best epoch"),
        ("last", "the last epoch"),
    ];
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

    #[test]
    fn every_number_reads_back_what_it_shows_and_names_a_bad_value() {
        let draft = ExperimentDraft {
            lr: 1e-8,
            seed: u64::MAX,
            ..ExperimentDraft::default()
        };
        for number in NUMBERS {
            let mut read = ExperimentDraft {
                lr: 0.5,
                seed: 7,
                ..ExperimentDraft::default()
            };
            let shown = number.show(&draft);
            number.read_into(&mut read, &format!(" {shown} ")).unwrap();
            assert_eq!(number.show(&read), shown, "{:?}", number.setting);
            let before = read.clone();
            let error = number.read_into(&mut read, "many").unwrap_err();
            assert!(error.contains("'many' is not a"), "{error}");
            assert_eq!(read, before, "a refused value leaves the draft as it was");
        }
        assert_eq!(NumberSetting::of(Setting::Lr).unwrap().show(&draft), "1e-8");
        assert_eq!(
            NumberSetting::of(Setting::BatchSize)
                .unwrap()
                .setting
                .flag(),
            "batch-size"
        );
        assert!(NumberSetting::of(Setting::Model).is_none());
    }

    #[test]
    fn every_choice_word_reads_back_as_itself_and_a_wrong_one_is_refused() {
        for choice in CHOICES {
            let mut draft = ExperimentDraft::default();
            let default = choice.show(&draft);
            assert!(
                choice.words().any(|w| w == default),
                "{:?}: the default {default} is not listed",
                choice.setting
            );
            for word in choice.words() {
                choice.read_into(&mut draft, word).unwrap();
                assert_eq!(choice.show(&draft), word, "{:?}", choice.setting);
            }
            let before = draft.clone();
            assert!(choice.read_into(&mut draft, "sideways").is_err());
            assert_eq!(draft, before);
        }
        assert_eq!(
            ChoiceSetting::of(Setting::InputScaling)
                .unwrap()
                .setting
                .flag(),
            "input-scaling"
        );
        assert!(ChoiceSetting::of(Setting::Lr).is_none());
    }

    #[test]
    fn tiny_values_read_as_typed() {
        assert_eq!(show_number(1e-8), "1e-8");
        assert_eq!(show_number(0.001), "0.001");
        assert_eq!(show_number(0.0), "0");
    }

    #[test]
    fn a_number_that_is_not_finite_is_refused() {
        let mut draft = ExperimentDraft::default();
        let lr = NumberSetting::of(Setting::Lr).unwrap();
        assert_eq!(
            lr.read_into(&mut draft, "inf").unwrap_err(),
            "must be a finite number"
        );
        let epochs = NumberSetting::of(Setting::Epochs).unwrap();
        assert_eq!(
            epochs.read_into(&mut draft, "2.5").unwrap_err(),
            "'2.5' is not a whole number"
        );
    }
}
