//! Models: an MLP, a small CNN, VGG16 and ResNet-18, each built from a [`ModelSpec`] by
//! [`ModelSpec::init`] into a [`Classifier`] that maps f32 NCHW images to class logits.
//!
//! # Training versus evaluation (Burn 0.22.1)
//!
//! Burn has no global train/eval switch. `Dropout` and `BatchNorm` take their training path only
//! when **both** the input tensor's device has autodiff enabled **and** the layer's own
//! `training: Param<Flag>` is on (burn-nn `modules/dropout.rs` `Dropout::forward`,
//! `modules/norm/batch.rs` `BatchNorm::forward`). Flags are on when a layer is built. So:
//!
//! - **Train**: build with `spec.init(.., &device.clone().autodiff())` and feed batches that live
//!   on that autodiff device. Dropout drops, BatchNorm normalizes with batch statistics and
//!   updates its running mean/variance (a `RunningState` written during `forward`).
//! - **Evaluate**: call [`Classifier::for_eval`] (which is `Module::valid`) and feed batches on
//!   the plain device (`device.clone().inner()`, or `images.inner()`). `valid()` returns a
//!   snapshot whose parameters have no autodiff and whose flags are off, so Dropout is the
//!   identity and BatchNorm uses its running statistics. Keep training the original model, not the
//!   snapshot (`valid()` drops gradient tracking; `Module::train` would bring it back). Feeding an
//!   autodiff-device batch to the snapshot still evaluates correctly (the flags are off) but
//!   records a useless autodiff graph, so strip it with `.inner()`.
//! - `Module::no_grad` is *not* an evaluation mode: it only stops gradients and leaves Dropout and
//!   BatchNorm in training behaviour.
//!
//! # Initialization
//!
//! [`InitScheme::PytorchDefault`] draws every Linear/Conv2d weight and bias from U(±1/√fan_in)
//! (PyTorch's `kaiming_uniform_(a=√5)` and its bias rule). Burn 0.22.1's own default for
//! `LinearConfig`/`Conv2dConfig` is `KaimingUniform { gain: 1/√3 }` applied to weight and bias
//! with fan_in = inputs (× kernel area), which is the same distribution; we set it explicitly.
//! [`InitScheme::GlorotUniform`] is Keras's default: Glorot-uniform weights
//! (U(±√(6/(fan_in+fan_out)))) and zero biases. BatchNorm always starts at γ = 1, β = 0.

mod card;
mod cnn;
mod convnext;
mod efficientnet;
mod layers;
mod mlp;
mod resnet;
mod spec;
mod torchvision;
mod vgg;
mod vit;

#[cfg(test)]
mod tests;

use burn::module::{Module, ModuleVisitor, Param};
use burn::nn::Linear;
use burn::tensor::{Device, Tensor};

use crate::data::ImageShape;

pub use card::ModelCard;
pub use cnn::Cnn;
pub use convnext::{CnBlock, ConvNext, ConvNextSize};
pub use efficientnet::{ConvBnSilu, EfficientNet, MbConv, MbConvShape, Scaling, SqueezeExcitation};
pub use layers::LayerDefaults;
pub use mlp::Mlp;
pub use resnet::{BasicBlock, Downsample, ResNet18};
pub use spec::{Activation, DEFAULT_MLP_WIDTHS, ModelSpec, SPEC_FORMS};
pub use torchvision::{
    Block, ConvNormAct, InvertedResidual, MIN_SIDE as TORCHVISION_MIN_SIDE, MobileNetV2,
    Projection, ResNet, TorchvisionArch, TorchvisionNet,
};
pub use vgg::{Vgg16, VggConv};
pub use vit::{EncoderBlock, SelfAttention, VisionTransformer, VitSize, resize_position_embedding};

/// Largest parameter count Kiln builds; beyond it weights alone outgrow any single GPU buffer.
pub const MAX_PARAMS: usize = 1 << 30;

crate::settings::choice! {
    /// How the weights and biases of every Linear and Conv2d layer are drawn.
    InitScheme for Init {
        /// PyTorch's default: weights and biases from U(±1/√fan_in).
        #[default]
        PytorchDefault => "pytorch-default" | "pytorch", "PyTorch default",
        /// Keras's default: Glorot/Xavier-uniform weights, zero biases.
        GlorotUniform => "glorot-uniform" | "glorot" | "xavier-uniform" | "keras", "Glorot uniform (Keras)",
        /// What torchvision's VGG, ResNet and MobileNet apply to their convolutions: weights from
        /// N(0, 2/fan_out) (`kaiming_normal_(mode="fan_out", nonlinearity="relu")`), zero biases.
        KaimingNormal => "kaiming-normal", "Kaiming normal, fan-out (torchvision's CNNs)",
    }
}

crate::settings::choice! {
    /// How convolutions' weights and biases are drawn, when not as dense layers'.
    ConvInit for ConvInit {
        /// As `init` says for dense layers (PyTorch and Keras each use one scheme for both).
        #[default]
        AsInit => "as-init", "as Init",
        /// PyTorch's default: weights and biases from U(±1/√fan_in).
        PytorchDefault => "pytorch-default", "PyTorch default",
        /// Keras's default: Glorot/Xavier-uniform weights, zero biases.
        GlorotUniform => "glorot-uniform", "Glorot uniform (Keras)",
        /// torchvision's CNNs: N(0, 2/fan_out) weights, zero biases.
        KaimingNormal => "kaiming-normal", "Kaiming normal, fan-out (torchvision's CNNs)",
    }
}

impl ConvInit {
    /// The scheme it names, or `None` for "as `init`".
    pub fn scheme(self) -> Option<InitScheme> {
        match self {
            ConvInit::AsInit => None,
            ConvInit::PytorchDefault => Some(InitScheme::PytorchDefault),
            ConvInit::GlorotUniform => Some(InitScheme::GlorotUniform),
            ConvInit::KaimingNormal => Some(InitScheme::KaimingNormal),
        }
    }
}

crate::settings::choice! {
    /// How batch norm's scale γ starts (its shift β starts at 0 in every framework).
    BatchNormInit for BatchNormInit {
        /// γ = 1 in every batch norm, as PyTorch and Keras start it.
        #[default]
        Ones => "ones", "γ = 1 (PyTorch, Keras)",
        /// γ = 0 in the batch norm closing each residual block, as torchvision's
        /// `zero_init_residual=True` (Goyal et al.), so each block starts as its shortcut.
        ZeroResidual => "zero-residual", "γ = 0 closing each residual block",
    }
}

crate::settings::choice! {
    /// How a convolution padded by half its kernel pads where a stride leaves one pixel over.
    ConvPadding for ConvPadding {
        /// The same number of zeros on every side, as PyTorch's `padding=k//2`.
        #[default]
        Symmetric => "symmetric", "symmetric (PyTorch)",
        /// TensorFlow and Keras's `padding="same"`: the output is ⌈side/stride⌉ and an odd total
        /// padding puts its extra zero at the bottom and right.
        Same => "same", "\"same\" (Keras, TensorFlow)",
    }
}

/// Why a model spec cannot be parsed or built for a data set.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// The model name is not one Kiln knows.
    #[error("Unknown model `{text}`; use one of {}.", SPEC_FORMS)]
    UnknownModel {
        /// The text as given.
        text: String,
    },
    /// An MLP width is not a whole number.
    #[error(
        "`{part}` is not a layer width; MLP widths are whole numbers separated by commas, e.g. mlp:512,512."
    )]
    InvalidWidth {
        /// The offending piece.
        part: String,
    },
    /// An MLP suffix is neither an activation nor a dropout probability.
    #[error(
        "`{part}` is neither an activation (relu, tanh, gelu) nor a dropout probability; write e.g. mlp:512,512:relu:0.2."
    )]
    InvalidMlpOption {
        /// The offending piece.
        part: String,
    },
    /// The activation or the dropout of an MLP is given twice.
    #[error(
        "`{part}` repeats an MLP option; give at most one activation and one dropout, e.g. mlp:512,512:relu:0.2."
    )]
    RepeatedMlpOption {
        /// The repeated piece.
        part: String,
    },
    /// The activation name is not known.
    #[error("Unknown activation `{text}`; use relu, tanh or gelu.")]
    UnknownActivation {
        /// The text as given.
        text: String,
    },
    /// The size after `@` in a VGG spec is not a whole number.
    #[error("`{part}` is not an image size; write the side in pixels after @, e.g. vgg16@224.")]
    InvalidResize {
        /// The offending piece.
        part: String,
    },
    /// An MLP spec lists no hidden layer.
    #[error("An MLP needs at least one hidden layer width, e.g. mlp:512,512.")]
    NoHiddenLayers,
    /// An MLP hidden layer has width 0.
    #[error("Hidden layer {layer} of the MLP has width 0; every width must be at least 1.")]
    ZeroWidth {
        /// 1-based index of the layer.
        layer: usize,
    },
    /// Dropout is NaN, negative or at least 1.
    #[error(
        "Dropout {value} is outside [0, 1); use a probability such as 0.2, or 0 to turn dropout off."
    )]
    InvalidDropout {
        /// The value given.
        value: f64,
    },
    /// A VGG resize target is below what VGG16 can process.
    #[error(
        "vgg16@{size} resizes images to {size}×{size}, but VGG16 needs at least {min}×{min}; use @{min} or more."
    )]
    ResizeTooSmall {
        /// The requested side.
        size: usize,
        /// The smallest side VGG16 accepts.
        min: usize,
    },
    /// A VGG resize target is beyond what Kiln trains VGG16 at.
    #[error(
        "vgg16@{size} resizes images to {size}×{size}, but Kiln trains VGG16 at {max}×{max} at most (224 is the paper's size); use @{max} or less."
    )]
    ResizeTooLarge {
        /// The requested side.
        size: usize,
        /// The largest side Kiln accepts.
        max: usize,
    },
    /// A ViT's image sides are not whole numbers of its patches.
    #[error(
        "{model} cuts images into {multiple}×{multiple} patches, but they are {height}×{width}; set the image size to a multiple of {multiple} (224 is what its weights saw)."
    )]
    SideNotMultiple {
        /// The model's display name.
        model: String,
        /// The patch side.
        multiple: usize,
        /// Image height.
        height: usize,
        /// Image width.
        width: usize,
    },
    /// The data set's images have a zero dimension.
    #[error(
        "The images have shape {channels}×{height}×{width} (channels×height×width); every dimension must be at least 1."
    )]
    EmptyImages {
        /// Channels per image.
        channels: usize,
        /// Rows per image.
        height: usize,
        /// Columns per image.
        width: usize,
    },
    /// The data set has no class.
    #[error("The data set has no classes; a classifier needs at least one.")]
    NoClasses,
    /// The images are smaller than the model's pooling stages allow.
    #[error(
        "{model} needs images of at least {min}×{min} pixels but these are {height}×{width}; {hint}"
    )]
    InputTooSmall {
        /// The model's display name.
        model: String,
        /// Smallest side the model accepts.
        min: usize,
        /// Image rows.
        height: usize,
        /// Image columns.
        width: usize,
        /// What to do instead.
        hint: &'static str,
    },
    /// The model would have more parameters than Kiln builds.
    #[error(
        "{model} on these images would have more than {max} parameters; use narrower layers or smaller images."
    )]
    TooManyParameters {
        /// The model's display name.
        model: String,
        /// The limit, [`MAX_PARAMS`].
        max: usize,
    },
}

impl ModelError {
    /// The setting whose value is wrong, so the window marks the field it was typed in.
    pub fn setting(&self) -> crate::settings::Setting {
        use crate::settings::Setting;
        match self {
            Self::InvalidWidth { .. } | Self::NoHiddenLayers | Self::ZeroWidth { .. } => {
                Setting::MlpWidths
            }
            Self::UnknownActivation { .. } => Setting::Activation,
            Self::InvalidDropout { .. } => Setting::Dropout,
            Self::InvalidResize { .. }
            | Self::ResizeTooSmall { .. }
            | Self::ResizeTooLarge { .. } => Setting::VggInputSize,
            _ => Setting::Model,
        }
    }
}

impl ModelSpec {
    /// The square side this model resizes its input to, if it does: the input pipeline then
    /// resizes training batches in the same pass as the gather.
    pub fn input_resize(&self) -> Option<usize> {
        match self {
            ModelSpec::Vgg16 { resize_to, .. } => *resize_to,
            _ => None,
        }
    }

    /// Whether it has convolutions, whose initializer `conv_init` sets.
    pub fn has_convolutions(&self) -> bool {
        !matches!(self, ModelSpec::Mlp { .. })
    }

    /// Whether it has batch norm layers, whose momentum and ε the settings name.
    pub fn has_batch_norm(&self) -> bool {
        match self {
            ModelSpec::Mlp { .. } | ModelSpec::Cnn => false,
            ModelSpec::Vgg16 { batch_norm, .. } => *batch_norm,
            _ => true,
        }
    }

    /// Whether it has residual blocks closed by a batch norm (the ResNets), where
    /// `batch_norm_init` can start that batch norm's scale at 0.
    pub fn has_residual_blocks(&self) -> bool {
        matches!(
            self,
            ModelSpec::ResNet18
                | ModelSpec::ResNet18ImageNet
                | ModelSpec::ResNet34
                | ModelSpec::ResNet50
        )
    }

    /// Whether a convolution padded by half its kernel also strides, the only place where
    /// "same" padding and symmetric padding part (VGG16's and the CNN's all have stride 1).
    pub fn has_strided_padded_convolutions(&self) -> bool {
        !matches!(
            self,
            ModelSpec::Mlp { .. } | ModelSpec::Cnn | ModelSpec::Vgg16 { .. }
        )
    }

    /// Checks that this model can be built for `input` images and `num_classes` classes.
    pub fn validate(&self, input: ImageShape, num_classes: usize) -> Result<(), ModelError> {
        self.check_spec()?;
        let ImageShape {
            channels,
            height,
            width,
        } = input;
        if channels == 0 || height == 0 || width == 0 {
            return Err(ModelError::EmptyImages {
                channels,
                height,
                width,
            });
        }
        if num_classes == 0 {
            return Err(ModelError::NoClasses);
        }
        let too_small = |min: usize, hint: &'static str| {
            if height < min || width < min {
                Err(ModelError::InputTooSmall {
                    model: self.title(),
                    min,
                    height,
                    width,
                    hint,
                })
            } else {
                Ok(())
            }
        };
        let too_many = || ModelError::TooManyParameters {
            model: self.title(),
            max: MAX_PARAMS,
        };
        match self {
            ModelSpec::Mlp { widths, .. } => {
                let inputs = input.pixels_per_image();
                let count = mlp_param_count(inputs, widths, num_classes).ok_or_else(too_many)?;
                if count > MAX_PARAMS {
                    return Err(too_many());
                }
                Ok(())
            }
            ModelSpec::Cnn => {
                too_small(
                    cnn::MIN_SIDE,
                    "use an MLP, or images of at least 4×4 (its two 2×2 max-pools need them).",
                )?;
                let flat = cnn::Cnn::flat_features(height, width);
                // The dense head is the only part that grows with the class count.
                let head = flat
                    .checked_mul(128)
                    .and_then(|n| num_classes.checked_mul(129).and_then(|m| n.checked_add(m)));
                match head {
                    Some(count) if count <= MAX_PARAMS => Ok(()),
                    _ => Err(too_many()),
                }
            }
            ModelSpec::Vgg16 { resize_to, .. } => {
                if resize_to.is_none() {
                    too_small(
                        vgg::MIN_SIDE,
                        "resize them with vgg16@32 (or vgg16@224), since its five 2×2 max-pools need 32×32.",
                    )?;
                }
                if num_classes > MAX_PARAMS / 4097 {
                    return Err(too_many());
                }
                Ok(())
            }
            ModelSpec::ResNet18 => {
                too_small(
                    resnet::MIN_SIDE,
                    "its three stride-2 stages need at least 8×8; use the CNN or an MLP for smaller images.",
                )?;
                if num_classes > MAX_PARAMS / 513 {
                    return Err(too_many());
                }
                Ok(())
            }
            torchvision_spec => {
                too_small(
                    torchvision::MIN_SIDE,
                    "its five stride-2 stages need at least 32×32; resize the folder's images (Image size) or use the CIFAR-form resnet18.",
                )?;
                let multiple = torchvision_spec
                    .torchvision()
                    .map_or(1, TorchvisionArch::side_multiple);
                if !height.is_multiple_of(multiple) || !width.is_multiple_of(multiple) {
                    return Err(ModelError::SideNotMultiple {
                        model: self.title(),
                        multiple,
                        height,
                        width,
                    });
                }
                let width = self.torchvision().map_or(1, TorchvisionArch::feature_width);
                if num_classes > MAX_PARAMS / (width + 1) {
                    return Err(too_many());
                }
                Ok(())
            }
        }
    }

    /// Builds the model with freshly initialized weights on `device`.
    ///
    /// Pass an autodiff device (`device.clone().autodiff()`) to train it; see the module docs for
    /// evaluation. The returned model only accepts images of exactly the shape `input`.
    pub fn init(
        &self,
        input: ImageShape,
        num_classes: usize,
        layers: impl Into<LayerDefaults>,
        device: &Device,
    ) -> Result<Classifier, ModelError> {
        self.validate(input, num_classes)?;
        let layers = layers.into();
        let ImageShape {
            channels,
            height,
            width,
        } = input;
        Ok(match self {
            ModelSpec::Mlp {
                widths,
                activation,
                dropout,
            } => Classifier::Mlp(Mlp::new(
                input.pixels_per_image(),
                widths,
                *activation,
                *dropout,
                num_classes,
                layers,
                device,
            )),
            ModelSpec::Cnn => Classifier::Cnn(Cnn::new(
                channels,
                height,
                width,
                num_classes,
                layers,
                device,
            )),
            ModelSpec::Vgg16 {
                batch_norm,
                resize_to,
            } => Classifier::Vgg16(Vgg16::new(
                channels,
                resize_to.unwrap_or(height.min(width)),
                *batch_norm,
                *resize_to,
                num_classes,
                layers,
                device,
            )),
            ModelSpec::ResNet18 => {
                Classifier::ResNet18(ResNet18::new(channels, num_classes, layers, device))
            }
            torchvision_spec => {
                let arch =
                    torchvision_spec
                        .torchvision()
                        .ok_or_else(|| ModelError::UnknownModel {
                            text: self.to_string(),
                        })?;
                Classifier::Torchvision(arch.build(input, num_classes, layers, device))
            }
        })
    }
}

/// Weights plus biases of an MLP, or `None` on overflow.
fn mlp_param_count(inputs: usize, widths: &[usize], classes: usize) -> Option<usize> {
    let mut total = 0usize;
    let mut previous = inputs;
    for &width in widths.iter().chain(std::iter::once(&classes)) {
        let layer = previous.checked_add(1)?.checked_mul(width)?;
        total = total.checked_add(layer)?;
        previous = width;
    }
    Some(total)
}

/// Sums parameter sizes while skipping BatchNorm's running statistics.
#[derive(Default)]
struct TrainableCount {
    /// One entry per module entered: whether it is a BatchNorm running-statistics field.
    running: Vec<bool>,
    total: usize,
}

impl ModuleVisitor for TrainableCount {
    fn enter_module(&mut self, name: &str, container_type: &str) {
        self.running.push(
            container_type == "Struct:BatchNorm"
                && (name == "running_mean" || name == "running_var"),
        );
    }

    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.running.pop();
    }

    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        if self.running.last() != Some(&true) {
            // `lazy_shape` reads the shape without drawing the weights of an untouched model.
            self.total += param.lazy_shape().num_elements();
        }
    }
}

/// An image classifier built by [`ModelSpec::init`].
// One classifier exists per run, so the size of the largest variant costs nothing worth boxing.
#[allow(clippy::large_enum_variant)]
#[derive(Module, Debug)]
pub enum Classifier {
    /// Fully connected network.
    Mlp(Mlp),
    /// Small convolutional network.
    Cnn(Cnn),
    /// VGG16, optionally with batch norm and input resize.
    Vgg16(Vgg16),
    /// ResNet-18, CIFAR variant.
    ResNet18(ResNet18),
    /// One of torchvision's ImageNet architectures.
    Torchvision(TorchvisionNet),
    /// A torchvision network's head alone, trained by a linear probe on cached features.
    Head(ProbeHead),
}

/// A classifier head trained on a frozen backbone's features, computed once per image:
/// `[batch, features, 1, 1]` in, logits out.
#[derive(Module, Debug)]
pub struct ProbeHead {
    /// Features to class logits: the network's own head layer.
    pub fc: Linear,
}

impl Classifier {
    /// Maps f32 images `[batch, C, H, W]` to logits `[batch, classes]`.
    ///
    /// Panics (inside Burn) if `C`, `H`, `W` differ from the shape the model was built for.
    pub fn forward(&self, images: Tensor<4>) -> Tensor<2> {
        match self {
            Classifier::Mlp(model) => model.forward(images),
            Classifier::Cnn(model) => model.forward(images),
            Classifier::Vgg16(model) => model.forward(images),
            Classifier::ResNet18(model) => model.forward(images),
            Classifier::Torchvision(model) => model.forward(images),
            Classifier::Head(head) => head.fc.forward(images.flatten(1, 3)),
        }
    }

    /// Number of trainable scalars (weights, biases, BatchNorm γ and β), as PyTorch counts them.
    ///
    /// Burn's `Module::num_params` also counts BatchNorm's running mean and variance, which no
    /// optimizer updates; this count leaves them out so it matches `model.parameters()` numbers.
    pub fn num_params(&self) -> usize {
        let mut counter = TrainableCount::default();
        self.visit(&mut counter);
        counter.total
    }

    /// An evaluation snapshot: no autodiff, Dropout off, BatchNorm on running statistics.
    ///
    /// Feed it batches on the plain device (`images.inner()`); keep training `self`.
    pub fn for_eval(&self) -> Classifier {
        self.valid()
    }

    /// The pooled features the classifier head reads, for the networks that have a
    /// pretrained backbone.
    pub fn features(&self, images: Tensor<4>) -> Option<Tensor<2>> {
        match self {
            Classifier::Torchvision(net) => Some(net.features(images)),
            _ => None,
        }
    }

    /// The classifier head alone, as a model a linear probe trains; none for networks without
    /// a pretrained backbone.
    pub fn head(&self) -> Option<Classifier> {
        match self {
            Classifier::Torchvision(net) => Some(Classifier::Head(ProbeHead {
                fc: net.head_layer().clone(),
            })),
            Classifier::Head(head) => Some(Classifier::Head(head.clone())),
            _ => None,
        }
    }

    /// This network with the head a linear probe trained; unchanged when either is not one.
    pub fn with_head(self, head: &Classifier) -> Classifier {
        match (self, head) {
            (Classifier::Torchvision(net), Classifier::Head(head)) => {
                Classifier::Torchvision(net.with_head(head.fc.clone()))
            }
            (other, _) => other,
        }
    }
}
