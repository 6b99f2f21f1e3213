//! The settings table: every setting once, in the order the window shows them. A setting that
//! is one number, choice or switch of the draft has its row here too (see the module's doc); a
//! new one is its field and default in `ExperimentDraft`, one line here, and the code that uses
//! it.

use super::{Range, Row, Section, choice_of, number, switch_of};
use crate::config::{
    ClassWeights, FineTune, InputScaling, Keep, LossInput, MAX_BATCH_SIZE, MAX_CROP_PADDING,
    MAX_EPOCHS, MAX_HOLDOUT_SPLIT, MAX_PROFILE_STEPS, Monitor, OptimizerSpec, Precision,
    ResizeFilter, Threshold, Validation, WeightDecayMode,
};
use crate::model::{BatchNormInit, ConvInit, ConvPadding, InitScheme};

// Limits are given as f64: the whole-number ones are far below 2^53, where the cast is exact.
settings! {
    // Data: the data set, how images reach the network, augmentation.

    /// The data set.
    Dataset => "dataset", "Data set",
        "What to train on; the built-in set needs no files and no network.";
    /// The side images of a folder data set are resized to.
    FolderImageSize => "dataset", "Image size",
        "Images are resized to this many pixels on each side.";
    /// How a folder's images are brought to the image size.
    Resize => "resize", "Resize",
        "How a folder's images are brought to the image size: bilinear over each output pixel's footprint (antialiased, as PIL and torchvision's Resize), bilinear from the four nearest pixels (as Keras's image_dataset_from_directory and tf.image.resize, which alias fine detail when shrinking), or the nearest pixel.",
        choice_of!(resize: ResizeFilter)
            .section(Section::Data)
            .legend("resize")
            .applies(|draft| draft.dataset.own_files().is_some());
    /// How pixel bytes become the network's input.
    InputScaling => "input_scaling", "Input scaling",
        "How pixel bytes become inputs: /255 like PyTorch's ToTensor, raw 0–255 like the Keras report, standardized, or ImageNet's mean and std, as pretrained weights expect.",
        choice_of!(input_scaling: InputScaling)
            .section(Section::Data)
            .legend("scaling");
    /// Random-crop padding of the training augmentation.
    CropPadding => "crop_padding", "Crop padding",
        "Training images get this many zero pixels on each side and are cropped back to their size at a random place (CIFAR's usual value is 4); 0 turns it off.",
        number!(crop_padding: usize)
            .value_name("N")
            .range(Range::at_least(0.0).to(MAX_CROP_PADDING as f64).advice("CIFAR's usual value is 4"))
            .section(Section::Data)
            .legend("crop padding")
            .augmentation();
    /// Random horizontal flips of the training augmentation.
    Flip => "flip", "Random horizontal flip",
        "Mirror each training image left to right with probability ½; test images are never flipped.",
        switch_of!(flip)
            .section(Section::Data)
            .legend("flip")
            .augmentation();
    /// The smallest area share of the random resized crop.
    CropScale => "crop_scale", "Min crop area",
        "Cut each training image to a random window of this share of its area up to all of it, at an aspect ratio of 3:4 to 4:3, and resize it back, as torchvision's RandomResizedCrop(scale=(s, 1)); 0.08 is ImageNet's usual value, 1 turns it off.",
        number!(crop_scale: f64)
            .value_name("SHARE")
            .range(Range::at_least(kiln_shaders::MIN_CROP_SCALE as f64).to(1.0).advice("1 is off"))
            .section(Section::Data)
            .legend("crop scale")
            .augmentation();
    /// The largest random rotation.
    RotationDegrees => "rotation_degrees", "Random rotation (°)",
        "Turn each training image about its centre by a random angle of up to this many degrees either way (at most 30); 0 turns it off.",
        number!(rotation_degrees: f64)
            .value_name("DEGREES")
            .range(Range::at_least(0.0).to(kiln_shaders::MAX_ROTATION_DEGREES as f64).advice("0 is off"))
            .section(Section::Data)
            .legend("rotation")
            .unit("°")
            .augmentation();
    /// The brightness jitter.
    Brightness => "brightness", "Brightness jitter",
        "Multiply each training image's pixels by a random factor in 1 ± this (0.2 is ±20 %); 0 turns it off.",
        number!(brightness: f64)
            .value_name("FRACTION")
            .range(Range::at_least(0.0).to(kiln_shaders::MAX_JITTER as f64).advice("0.2 draws factors from 0.8 to 1.2; 0 is off"))
            .section(Section::Data)
            .legend("brightness")
            .augmentation();
    /// The contrast jitter.
    Contrast => "contrast", "Contrast jitter",
        "Spread each training image's pixels away from or towards mid-grey by a random factor in 1 ± this; 0 turns it off.",
        number!(contrast: f64)
            .value_name("FRACTION")
            .range(Range::at_least(0.0).to(kiln_shaders::MAX_JITTER as f64).advice("0.2 draws factors from 0.8 to 1.2; 0 is off"))
            .section(Section::Data)
            .legend("contrast")
            .augmentation();

    // Model: the network, where its weights start, its loss.

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
        "With pretrained weights: the whole network, or a linear probe (only the classifier head, on features computed once per image: seconds per epoch).",
        choice_of!(fine_tune: FineTune)
            .section(Section::Model)
            .legend("fine-tune")
            .applies(|draft| draft.weights.is_some());
    /// Linear-probe epochs before the whole network trains.
    UnfreezeAfter => "unfreeze_after", "Unfreeze after",
        "Epochs of linear probe before every layer trains (the head starts out trained); 0 keeps the backbone frozen.",
        number!(unfreeze_after: usize)
            .value_name("EPOCHS")
            .range(Range::at_least(0.0).to(MAX_EPOCHS as f64))
            .section(Section::Model)
            .legend("unfreeze after")
            .applies(|draft| draft.weights.is_some() && draft.fine_tune == FineTune::LinearProbe);
    /// The pretrained layers' share of the learning rate.
    BackboneLrScale => "backbone_lr_scale", "Backbone lr ×",
        "The pretrained layers learn at this share of the learning rate (the new head at the full rate); 0.1 is common, 1 trains them alike.",
        number!(backbone_lr_scale: f64)
            .value_name("FACTOR")
            .range(Range::at_least(0.0).to(10.0).advice("0.1 is common"))
            .section(Section::Model)
            .legend("backbone lr")
            .applies(|draft| draft.weights.is_some());
    /// How dense layers' weights start, and convolutions' unless Conv init says otherwise.
    Init => "init", "Init",
        "How weights start: PyTorch's default uniform, Keras's Glorot-uniform with zero biases, or torchvision's Kaiming normal over fan-out; convolutions too unless Conv init names their own.",
        choice_of!(init: InitScheme)
            .section(Section::Model)
            .legend("init");
    /// How convolutions' weights start, when not as dense layers'.
    ConvInit => "conv_init", "Conv init",
        "How convolutions' weights start: as Init (PyTorch and Keras each use one scheme for both), or a scheme of their own, such as the Kaiming normal torchvision's VGG, ResNet and MobileNet give their convolutions.",
        choice_of!(conv_init: ConvInit)
            .section(Section::Model)
            .legend("conv init")
            .applies(|draft| draft.model.has_convolutions());
    /// How batch norm's scale starts.
    BatchNormInit => "batch_norm_init", "BN init",
        "How batch norm's scale γ starts: at 1 everywhere, as PyTorch and Keras start it, or at 0 in the batch norm closing each residual block, as torchvision's zero_init_residual=True, so every block starts out as its shortcut (β starts at 0 either way; pretrained weights bring their own).",
        choice_of!(batch_norm_init: BatchNormInit)
            .section(Section::Model)
            .legend("BN init")
            .applies(|draft| draft.model.has_residual_blocks());
    /// Batch norm's momentum, in PyTorch's sense.
    BatchNormMomentum => "batch_norm_momentum", "BN momentum",
        "The share of each batch's mean and variance in batch norm's running averages: PyTorch's 0.1; Keras's momentum=0.99 keeps 0.99 of the old average, which is 0.01 here.",
        number!(batch_norm_momentum: f64)
            .value_name("SHARE")
            .range(Range::at_least(0.0).to(1.0).advice("PyTorch's 0.1, Keras's 0.01"))
            .section(Section::Model)
            .legend("BN momentum")
            .applies(|draft| draft.model.has_batch_norm());
    /// Batch norm's ε.
    BatchNormEpsilon => "batch_norm_epsilon", "BN ε",
        "Added to batch norm's variance before its square root: PyTorch's 1e-5, Keras's 1e-3.",
        number!(batch_norm_epsilon: f64)
            .value_name("EPSILON")
            .range(Range::above(0.0).to(1.0).advice("PyTorch's 1e-5, Keras's 1e-3"))
            .section(Section::Model)
            .legend("BN ε")
            .applies(|draft| draft.model.has_batch_norm());
    /// How a strided convolution pads.
    ConvPadding => "conv_padding", "Conv padding",
        "How a convolution padded by half its kernel pads when it strides: the same zeros on every side (PyTorch's padding=1), or as Keras's padding=\"same\", whose extra zero goes to the bottom and right (a 3×3 stride-2 convolution of an even side pads 0 before and 1 after).",
        choice_of!(conv_padding: ConvPadding)
            .section(Section::Model)
            .legend("padding")
            .applies(|draft| draft.model.has_strided_padded_convolutions());
    /// What the loss is taken on.
    Loss => "loss", "Loss",
        "Cross-entropy from the logits (PyTorch, and Keras on TensorFlow), or from softmax probabilities clipped at 1e-7 (Keras on JAX or PyTorch), which stops learning from confidently wrong images.",
        choice_of!(loss: LossInput)
            .section(Section::Model)
            .legend("loss");
    /// How each class weighs in the training loss.
    ClassWeights => "class_weights", "Class weights",
        "'balanced' weighs each training image's loss by the inverse of its class's share (as scikit-learn's class_weight='balanced'), so a rare class counts as much as a common one; 'none' weighs all alike. Validation and test losses are never weighted.",
        choice_of!(class_weights: ClassWeights)
            .section(Section::Model)
            .legend("class weights");
    /// Where a multi-label model gives an image a label.
    Threshold => "threshold", "Threshold",
        "In a data set of several labels per image, the sigmoid probability at or above which an image is given a label: 0.5 for every label, or chosen on the validation images (never on test), per label or one for all, where each gives the best F1.",
        choice_of!(threshold: Threshold)
            .section(Section::Model)
            .legend("threshold")
            // A labels file, or a folder read through its metadata file, can give several.
            .applies(|draft| {
                matches!(
                    draft.dataset,
                    crate::data::DatasetSpec::LabelsFile { .. } | crate::data::DatasetSpec::Folder { .. }
                )
            });

    // Optimizer: the update rule, the rate and its schedule.

    /// The optimizer's kind.
    Optimizer => "optimizer", "Optimizer",
        "The update rule applied to the gradients.";
    /// The learning rate.
    Lr => "lr", "Learning rate",
        "How far each step moves the weights; too high diverges, too low crawls.",
        number!(lr: f64)
            .value_name("RATE")
            .range(Range::above(0.0).to(10.0).advice("try 0.001 to 0.1"))
            .section(Section::Optimizer)
            .legend("lr");
    /// SGD's momentum.
    Momentum => "optimizer.momentum", "Momentum",
        "Fraction of the previous update added to the next; 0.9 is common, 0 turns it off.";
    /// SGD's Nesterov switch.
    Nesterov => "optimizer.nesterov", "Nesterov",
        "Looks ahead along the momentum before taking the gradient; needs momentum above 0.";
    /// Weight decay of any optimizer.
    WeightDecay => "optimizer.weight_decay", "Weight decay",
        "Pulls weights toward zero each step to reduce overfitting: as L2 in the gradient for SGD and Adam unless Decay as says decoupled, always decoupled for AdamW.";
    /// Whether SGD's and Adam's weight decay is L2 or decoupled.
    WeightDecayMode => "weight_decay_mode", "Decay as",
        "How SGD's and Adam's weight decay reaches the weights: as an L2 term of the gradient, which momentum and Adam's scaling then reshape (PyTorch's weight_decay), or decoupled, the weights shrinking by lr × decay each step apart from the gradient (Keras 3's weight_decay; AdamW always does this).",
        choice_of!(weight_decay_mode: WeightDecayMode)
            .section(Section::Optimizer)
            .legend("decay")
            .applies(|draft| {
                !matches!(draft.optimizer, OptimizerSpec::AdamW { .. })
                    && draft.optimizer.weight_decay() > 0.0
            });
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

    // Validation: how epochs are judged and which weights are kept.

    /// Where each epoch is evaluated: a validation split, or the test split (parity presets).
    Validation => "validation", "Validate on",
        "Each epoch is evaluated on a validation split carved from the training images; 'test' evaluates on the test split instead, as the parity presets' frameworks do (such runs are labelled validated on test).",
        choice_of!(validation: Validation)
            .section(Section::Validation)
            .legend("validation");
    /// The fraction of the training images held out for validation.
    ValSplit => "val_split", "Validation split",
        "Fraction of each class's training images held out to choose the model on (best epoch, early stopping); 0 turns validation off.",
        number!(val_split: f64)
            .value_name("FRACTION")
            .range(Range::at_least(0.0).to(MAX_HOLDOUT_SPLIT).advice("such as 0.1"))
            .section(Section::Validation)
            .legend("val split")
            .applies(|draft| draft.validation == Validation::Split);
    /// The fraction of a flat image folder held out for testing.
    TestSplit => "test_split", "Test split",
        "Fraction of each class of an image folder without a test/ sub-folder kept apart as the test set, measured once on the model the run keeps.",
        number!(test_split: f64)
            .value_name("FRACTION")
            .range(Range::above(0.0).to(MAX_HOLDOUT_SPLIT).advice("a folder without a test/ sub-folder needs some images kept apart for testing; try 0.2"))
            .section(Section::Validation)
            .legend("test split")
            .applies(|draft| draft.dataset.own_files().is_some());
    /// The figure that picks the best epoch and drives early stopping.
    Monitor => "monitor", "Monitor",
        "The validation figure that picks the best epoch and decides early stopping.",
        choice_of!(monitor: Monitor)
            .section(Section::Validation)
            .legend("monitor");
    /// Epochs without improvement before the run stops.
    EarlyStop => "early_stop", "Early stop after",
        "Stop when the monitored validation figure has not improved for this many epochs; 0 trains every epoch.",
        number!(early_stop: usize)
            .value_name("PATIENCE")
            .range(Range::at_least(0.0).to(MAX_EPOCHS as f64).advice("0 is off"))
            .section(Section::Validation)
            .legend("early stop");
    /// The least change that counts as an improvement.
    MinDelta => "min_delta", "Min improvement",
        "The monitored figure must improve by more than this to count (loss units, or accuracy as a fraction).",
        number!(min_delta: f64)
            .value_name("DELTA")
            .range(Range::at_least(0.0).advice("0 or a small positive number such as 0.001"))
            .section(Section::Validation)
            .legend("min delta");
    /// Which weights the run keeps.
    Keep => "keep", "Keep",
        "Which weights the run keeps, saves and tests: those of the best validation epoch, or of the last epoch.",
        choice_of!(keep: Keep)
            .section(Section::Validation)
            .legend("keep");

    // Run: batch, length, seed, device, what the run records.

    /// Images per step.
    BatchSize => "batch_size", "Batch size",
        "Images per optimizer step; larger batches use the device better but need more memory.",
        number!(batch_size: usize)
            .value_name("IMAGES")
            .range(Range::at_least(1.0).to(MAX_BATCH_SIZE as f64))
            .section(Section::Run)
            .legend("batch");
    /// Passes over the training split.
    Epochs => "epochs", "Epochs",
        "How many times the whole training split is seen.",
        number!(epochs: usize)
            .value_name("N")
            .range(Range::at_least(1.0).to(MAX_EPOCHS as f64))
            .section(Section::Run)
            .legend("epochs");
    /// The seed of every random draw.
    Seed => "seed", "Seed",
        "Seeds weight init, shuffling and dropout, so the same seed gives the same run.",
        number!(seed: u64)
            .value_name("N")
            .section(Section::Run)
            .legend("seed");
    /// Where to train.
    Device => "device", "Device",
        "Where to train: auto picks a hardware GPU, else the CPU; software GPUs are slow; cuda:N is an NVIDIA GPU through CUDA (builds with the cuda feature); remote:HOST:PORT/N is a device of a box running kiln serve.";
    /// The float type of the arithmetic.
    Precision => "precision", "Precision",
        "f16 computes in 16-bit floats with f32 master weights and a scaled loss; it needs a GPU with 16-bit float shaders.",
        choice_of!(precision: Precision)
            .section(Section::Run)
            .legend("precision");
    /// Steps of the profiling mode.
    ProfileSteps => "profile_steps", "Profile steps",
        "Profiling mode: time this many steps after warm-up phase by phase (data, forward, backward, optimizer, host sync), waiting for the device after each; the breakdown shows above the plots and those steps stay out of samples/s. 0 is off.",
        number!(profile_steps: usize)
            .value_name("N")
            .range(Range::at_least(0.0).to(MAX_PROFILE_STEPS as f64).advice("a profiled step waits for the device after every phase"))
            .section(Section::Run);
    /// How often metrics are read back.
    ReadbackInterval => "readback_interval_ms", "Readback (ms)",
        "How often the running metrics are read back from the device; each readback is the only host sync of an epoch.",
        number!(readback_interval_ms: u64)
            .value_name("MS")
            .range(Range::at_least(10.0).to(60_000.0))
            .section(Section::Run);
    /// The run's name, part of its folder's name.
    Name => "name", "Run name",
        "Part of the run folder's name, so runs are easy to find.";
    /// Whether a NaN or infinite loss ends the run.
    StopOnNonFiniteLoss => "stop_on_non_finite_loss", "Stop on NaN loss",
        "End the run when the loss becomes NaN or infinite; a warning is shown either way.";
}
