//! Every setting of an experiment, declared once: its key in `config.toml` (and in error
//! messages), the label the window gives it, and the one-line explanation its tooltip shows. A refused value names
//! its [`Setting`], so the window marks the field it was typed in without matching strings.

use std::fmt;

/// One setting a person can choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Setting {
    /// The run's name, part of its folder's name.
    Name,
    /// The data set.
    Dataset,
    /// The side images of a folder data set are resized to.
    FolderImageSize,
    /// The architecture, as a whole spec.
    Model,
    /// An MLP's hidden widths (part of the model spec).
    MlpWidths,
    /// An MLP's nonlinearity (part of the model spec).
    Activation,
    /// An MLP's dropout (part of the model spec).
    Dropout,
    /// VGG16's input side (part of the model spec).
    VggInputSize,
    /// The learning rate.
    Lr,
    /// The optimizer's kind.
    Optimizer,
    /// SGD's momentum.
    Momentum,
    /// SGD's Nesterov switch.
    Nesterov,
    /// Weight decay of any optimizer.
    WeightDecay,
    /// Adam's β₁.
    Beta1,
    /// Adam's β₂.
    Beta2,
    /// Adam's ε.
    Epsilon,
    /// The learning-rate schedule's kind.
    Schedule,
    /// A step schedule's period in epochs.
    StepEvery,
    /// A step schedule's factor.
    StepGamma,
    /// A cosine schedule's final rate.
    CosineMinLr,
    /// Images per step.
    BatchSize,
    /// Passes over the training split.
    Epochs,
    /// The seed of every random draw.
    Seed,
    /// Random-crop padding of the training augmentation.
    CropPadding,
    /// Random horizontal flips of the training augmentation.
    Flip,
    /// Where to train.
    Device,
    /// The float type of the arithmetic.
    Precision,
    /// Steps of the profiling mode.
    ProfileSteps,
    /// How often metrics are read back.
    ReadbackInterval,
    /// How pixel bytes become the network's input.
    InputScaling,
    /// What the loss is taken on.
    Loss,
    /// How weights start.
    Init,
    /// Whether a NaN or infinite loss ends the run.
    StopOnNonFiniteLoss,
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

    /// (key, label, help), declared in one table.
    fn declaration(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Self::Name => (
                "name",
                "Run name",
                "Part of the run folder's name, so runs are easy to find.",
            ),
            Self::Dataset => (
                "dataset",
                "Data set",
                "What to train on; the built-in set needs no files and no network.",
            ),
            Self::FolderImageSize => (
                "dataset",
                "Image size",
                "Images are resized to this many pixels on each side.",
            ),
            Self::Model => (
                "model",
                "Architecture",
                "The network to train; VGG16 and ResNet-18 need a GPU to be quick.",
            ),
            Self::MlpWidths => (
                "model",
                "Hidden widths",
                "Neurons in each hidden layer, comma separated: 512,512 is two layers of 512.",
            ),
            Self::Activation => (
                "model",
                "Activation",
                "The nonlinearity between hidden layers.",
            ),
            Self::Dropout => (
                "model",
                "Dropout",
                "Probability of zeroing each hidden activation during training (0 disables).",
            ),
            Self::VggInputSize => (
                "model",
                "Input size",
                "Resize inputs on the device to this side in pixels (224 as in the paper); empty keeps the data set's size.",
            ),
            Self::Lr => (
                "lr",
                "Learning rate",
                "How far each step moves the weights; too high diverges, too low crawls.",
            ),
            Self::Optimizer => (
                "optimizer",
                "Optimizer",
                "The update rule applied to the gradients.",
            ),
            Self::Momentum => (
                "optimizer.momentum",
                "Momentum",
                "Fraction of the previous update added to the next; 0.9 is common, 0 turns it off.",
            ),
            Self::Nesterov => (
                "optimizer.nesterov",
                "Nesterov",
                "Looks ahead along the momentum before taking the gradient; needs momentum above 0.",
            ),
            Self::WeightDecay => (
                "optimizer.weight_decay",
                "Weight decay",
                "Pulls weights toward zero each step to reduce overfitting.",
            ),
            Self::Beta1 => (
                "optimizer.beta_1",
                "β₁",
                "Decay of Adam's running mean of gradients (usually 0.9).",
            ),
            Self::Beta2 => (
                "optimizer.beta_2",
                "β₂",
                "Decay of Adam's running mean of squared gradients (usually 0.999).",
            ),
            Self::Epsilon => (
                "optimizer.epsilon",
                "ε",
                "Added to Adam's denominator for stability; PyTorch uses 1e-8, Keras 1e-7.",
            ),
            Self::Schedule => (
                "schedule",
                "LR schedule",
                "How the learning rate changes over the run.",
            ),
            Self::StepEvery => (
                "schedule.every_epochs",
                "Every (epochs)",
                "Epochs between two drops of the learning rate.",
            ),
            Self::StepGamma => (
                "schedule.gamma",
                "Factor γ",
                "The learning rate is multiplied by this at each drop.",
            ),
            Self::CosineMinLr => (
                "schedule.min_lr",
                "Final rate",
                "The learning rate at the very end of the run.",
            ),
            Self::BatchSize => (
                "batch_size",
                "Batch size",
                "Images per optimizer step; larger batches use the device better but need more memory.",
            ),
            Self::Epochs => (
                "epochs",
                "Epochs",
                "How many times the whole training split is seen.",
            ),
            Self::Seed => (
                "seed",
                "Seed",
                "Seeds weight init, shuffling and dropout, so the same seed gives the same run.",
            ),
            Self::CropPadding => (
                "crop_padding",
                "Crop padding",
                "Training images get this many zero pixels on each side and are cropped back to their size at a random place (CIFAR's usual value is 4); 0 turns it off.",
            ),
            Self::Flip => (
                "flip",
                "Random horizontal flip",
                "Mirror each training image left to right with probability ½; test images are never flipped.",
            ),
            Self::Device => (
                "device",
                "Device",
                "Where to train: auto picks a hardware GPU, else the CPU; software GPUs are slow.",
            ),
            Self::Precision => (
                "precision",
                "Precision",
                "f16 computes in 16-bit floats with f32 master weights and a scaled loss; it needs a GPU with 16-bit float shaders.",
            ),
            Self::ProfileSteps => (
                "profile_steps",
                "Profile steps",
                "Profiling mode: time this many steps after warm-up phase by phase (data, forward, backward, optimizer, host sync), waiting for the device after each; the breakdown shows above the plots and those steps stay out of samples/s. 0 is off.",
            ),
            Self::ReadbackInterval => (
                "readback_interval_ms",
                "Readback interval (ms)",
                "How often the running metrics are read back from the device; each readback is the only host sync of an epoch.",
            ),
            Self::InputScaling => (
                "input_scaling",
                "Input scaling",
                "How pixel bytes become inputs: /255 like PyTorch's ToTensor, raw 0–255 like the Keras report, or standardized.",
            ),
            Self::Loss => (
                "loss",
                "Loss",
                "Cross-entropy from the logits (PyTorch, and Keras on TensorFlow), or from softmax probabilities clipped at 1e-7 (Keras on JAX or PyTorch), which stops learning from confidently wrong images.",
            ),
            Self::Init => (
                "init",
                "Init",
                "How weights start: PyTorch's default uniform, or Keras's Glorot-uniform with zero biases.",
            ),
            Self::StopOnNonFiniteLoss => (
                "stop_on_non_finite_loss",
                "Stop on NaN loss",
                "End the run when the loss becomes NaN or infinite; a warning is shown either way.",
            ),
        }
    }
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}
