//! Layer constructors that apply a run's [`LayerDefaults`]: its initializers, batch norm and padding.

use burn::module::Param;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{
    BatchNorm, BatchNormConfig, Dropout, DropoutConfig, Initializer, LayerNorm, LayerNormConfig,
    Linear, LinearConfig, PaddingConfig2d,
};
use burn::tensor::{DType, Device, FloatDType, Tensor};

use super::{BatchNormInit, ConvInit, ConvPadding, InitScheme};

/// How every kind of layer starts and computes where frameworks differ: the initializers of
/// dense layers, convolutions and batch norm, batch norm's momentum and ε, and how a
/// convolution pads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerDefaults {
    /// How dense (Linear) layers' weights and biases start.
    pub dense_init: InitScheme,
    /// How convolutions' weights and biases start.
    pub conv_init: InitScheme,
    /// The share of each batch's statistics in batch norm's running averages (PyTorch's sense).
    pub batch_norm_momentum: f64,
    /// Added to batch norm's variance before the square root.
    pub batch_norm_epsilon: f64,
    /// How batch norm's scale starts: at 1 everywhere, or at 0 where it closes a residual block.
    pub batch_norm_init: BatchNormInit,
    /// Whether a convolution padded by half its kernel pads symmetrically or as TensorFlow's
    /// "same" (the extra row and column at the bottom and right).
    pub conv_padding: ConvPadding,
}

impl LayerDefaults {
    /// PyTorch's batch norm momentum.
    pub const PYTORCH_BATCH_NORM_MOMENTUM: f64 = 0.1;
    /// PyTorch's batch norm ε.
    pub const PYTORCH_BATCH_NORM_EPSILON: f64 = 1e-5;
    /// The ε of every layer norm in torchvision's ConvNeXt and ViT (PyTorch's default is 1e-5).
    pub const LAYER_NORM_EPSILON: f64 = 1e-6;

    /// The layers of a draft that names `init` for dense layers, `conv_init` for convolutions
    /// (as `init` unless it names its own) and the batch norm and padding settings.
    pub fn new(
        init: InitScheme,
        conv_init: ConvInit,
        batch_norm: [f64; 2],
        conv_padding: ConvPadding,
    ) -> Self {
        let [batch_norm_momentum, batch_norm_epsilon] = batch_norm;
        LayerDefaults {
            dense_init: init,
            conv_init: conv_init.scheme().unwrap_or(init),
            batch_norm_momentum,
            batch_norm_epsilon,
            batch_norm_init: BatchNormInit::Ones,
            conv_padding,
        }
    }

    /// These layers with batch norm's scale starting as `init` says.
    pub fn with_batch_norm_init(self, batch_norm_init: BatchNormInit) -> Self {
        LayerDefaults {
            batch_norm_init,
            ..self
        }
    }
}

impl From<InitScheme> for LayerDefaults {
    /// Every layer drawn by `init`, with PyTorch's batch norm and symmetric padding.
    fn from(init: InitScheme) -> Self {
        LayerDefaults::new(
            init,
            ConvInit::AsInit,
            [
                Self::PYTORCH_BATCH_NORM_MOMENTUM,
                Self::PYTORCH_BATCH_NORM_EPSILON,
            ],
            ConvPadding::Symmetric,
        )
    }
}

impl Default for LayerDefaults {
    fn default() -> Self {
        InitScheme::default().into()
    }
}

impl InitScheme {
    /// The Burn initializer for weights (and, for `PytorchDefault`, biases too).
    fn weight_initializer(self) -> Initializer {
        match self {
            // Burn's KaimingUniform bound is sqrt(3)·gain/sqrt(fan_in); gain 1/sqrt(3) gives
            // 1/sqrt(fan_in), which is PyTorch's kaiming_uniform_(a=√5) for weights and also its
            // bias bound. Spelled out rather than relying on Burn's default so an upstream change
            // of default cannot silently change our runs.
            InitScheme::PytorchDefault => Initializer::KaimingUniform {
                gain: 1.0 / 3.0f64.sqrt(),
                fan_out_only: false,
            },
            InitScheme::GlorotUniform => Initializer::XavierUniform { gain: 1.0 },
            // Burn's KaimingNormal std is gain/sqrt(fan); gain √2 over fan-out is torchvision's
            // kaiming_normal_(mode="fan_out", nonlinearity="relu").
            InitScheme::KaimingNormal => Initializer::KaimingNormal {
                gain: 2.0f64.sqrt(),
                fan_out_only: true,
            },
        }
    }

    /// Keras and torchvision's CNNs start biases at zero; Burn would otherwise draw them from the
    /// weight scheme.
    fn zero_bias(
        self,
        bias: Option<Param<Tensor<1>>>,
        device: &Device,
    ) -> Option<Param<Tensor<1>>> {
        match self {
            InitScheme::PytorchDefault => bias,
            InitScheme::GlorotUniform | InitScheme::KaimingNormal => bias.map(|bias| {
                let [features] = bias.lazy_shape().dims();
                Initializer::Zeros.init([features], device)
            }),
        }
    }
}

/// A fully connected layer `d_input → d_output` with bias.
pub(crate) fn linear(
    d_input: usize,
    d_output: usize,
    layers: LayerDefaults,
    device: &Device,
) -> Linear {
    let init = layers.dense_init;
    let mut layer = LinearConfig::new(d_input, d_output)
        .with_initializer(init.weight_initializer())
        .init(device);
    layer.bias = init.zero_bias(layer.bias, device);
    layer
}

/// A square convolution zero-padded by `padding` (as `layers` pads when that is half the kernel).
pub(crate) fn conv(
    channels: [usize; 2],
    kernel: usize,
    stride: usize,
    padding: usize,
    bias: bool,
    layers: LayerDefaults,
    device: &Device,
) -> Conv2d {
    let config = square_conv(channels, kernel, stride, padding, layers).with_bias(bias);
    init_conv(config, layers, device)
}

/// A square convolution without bias whose channels split into `groups` (as many as channels:
/// depthwise), zero-padded by `padding`.
pub(crate) fn grouped_conv(
    channels: [usize; 2],
    kernel: usize,
    stride: usize,
    padding: usize,
    groups: usize,
    layers: LayerDefaults,
    device: &Device,
) -> Conv2d {
    let config = square_conv(channels, kernel, stride, padding, layers)
        .with_groups(groups)
        .with_bias(false);
    init_conv(config, layers, device)
}

/// A depthwise convolution (one filter per channel) padded by half its kernel, with a bias where
/// the architecture has one (ConvNeXt's 7×7 has, EfficientNet's does not).
pub(crate) fn depthwise_conv(
    width: usize,
    kernel: usize,
    stride: usize,
    bias: bool,
    layers: LayerDefaults,
    device: &Device,
) -> Conv2d {
    let config = square_conv([width, width], kernel, stride, kernel / 2, layers)
        .with_groups(width)
        .with_bias(bias);
    init_conv(config, layers, device)
}

fn square_conv(
    channels: [usize; 2],
    kernel: usize,
    stride: usize,
    padding: usize,
    layers: LayerDefaults,
) -> Conv2dConfig {
    Conv2dConfig::new(channels, [kernel, kernel])
        .with_stride([stride, stride])
        .with_padding(conv_padding(kernel, padding, layers.conv_padding))
}

/// The padding of a `kernel`-wide convolution written with `padding` on each side. TensorFlow's
/// "same" differs from it only for a padding of half an odd kernel: Burn's `Same` then puts the
/// lesser half first, as TensorFlow does (a 3×3 stride-2 convolution of an even side pads 0
/// before and 1 after, where PyTorch's padding=1 pads 1 and 1).
fn conv_padding(kernel: usize, padding: usize, style: ConvPadding) -> PaddingConfig2d {
    match style {
        ConvPadding::Same if kernel % 2 == 1 && padding == kernel / 2 => PaddingConfig2d::Same,
        _ => PaddingConfig2d::Explicit(padding, padding, padding, padding),
    }
}

fn init_conv(config: Conv2dConfig, layers: LayerDefaults, device: &Device) -> Conv2d {
    let init = layers.conv_init;
    let mut layer = config
        .with_initializer(init.weight_initializer())
        .init(device);
    layer.bias = init.zero_bias(layer.bias, device);
    layer
}

/// Batch norm with `layers`' momentum and ε (PyTorch's 0.1 and 1e-5 unless set); γ = 1, β = 0.
pub(crate) fn batch_norm(features: usize, layers: LayerDefaults, device: &Device) -> BatchNorm {
    BatchNormConfig::new(features)
        .with_momentum(layers.batch_norm_momentum)
        .with_epsilon(layers.batch_norm_epsilon)
        .init(device)
}

/// The batch norm that closes a residual block, before the shortcut is added: as
/// [`batch_norm`], with γ = 0 where `layers` asks (torchvision's `zero_init_residual=True`), so
/// each block starts out as its shortcut alone.
pub(crate) fn residual_batch_norm(
    features: usize,
    layers: LayerDefaults,
    device: &Device,
) -> BatchNorm {
    let mut norm = batch_norm(features, layers, device);
    if layers.batch_norm_init == BatchNormInit::ZeroResidual {
        norm.gamma = Initializer::Zeros.init([features], device);
    }
    norm
}

/// Batch norm computed in f32 whatever the activations' float type: batch statistics and running
/// averages need f32's range, so f16 training keeps this layer's parameters in f32 as well.
pub(crate) fn normalize(norm: &BatchNorm, x: Tensor<4>) -> Tensor<4> {
    let dtype = x.dtype();
    if dtype == DType::F32 {
        norm.forward(x)
    } else {
        norm.forward(x.cast(FloatDType::F32)).cast(dtype)
    }
}

/// Layer norm over the last axis with torchvision's ε for ConvNeXt and ViT.
pub(crate) fn layer_norm(features: usize, device: &Device) -> LayerNorm {
    LayerNormConfig::new(features)
        .with_epsilon(LayerDefaults::LAYER_NORM_EPSILON)
        .init(device)
}

/// Layer norm over the channels of `[batch, C, H, W]` at every pixel: torchvision's
/// `LayerNorm2d`, which moves channels last, normalizes, and moves them back.
pub(crate) fn channel_norm(norm: &LayerNorm, x: Tensor<4>) -> Tensor<4> {
    norm.forward(x.permute([0, 2, 3, 1])).permute([0, 3, 1, 2])
}

/// Stochastic depth in torchvision's "row" mode: while training, each image's residual branch
/// is dropped with probability `prob` and kept ones are scaled by 1/(1 − prob); in evaluation
/// the branch passes unchanged.
#[derive(burn::module::Module, Debug)]
pub struct StochasticDepth {
    /// Draws the per-image keep mask; a dropout so freezing and `valid()` switch it off as
    /// they switch off every dropout.
    pub rows: Dropout,
}

impl StochasticDepth {
    /// Drops a branch with probability `prob` (0 never drops).
    pub(crate) fn new(prob: f64) -> Self {
        StochasticDepth {
            rows: DropoutConfig::new(prob.clamp(0.0, 0.99)).init(),
        }
    }

    /// `branch` with each image's whole branch kept or dropped.
    pub(crate) fn forward<const D: usize>(&self, branch: Tensor<D>) -> Tensor<D> {
        if self.rows.prob == 0.0 || !branch.device().is_autodiff() {
            return branch;
        }
        let mut shape = [1; D];
        shape[0] = branch.dims()[0];
        let keep = self
            .rows
            .forward(Tensor::<D>::ones(shape, &branch.device()));
        branch * keep
    }
}
