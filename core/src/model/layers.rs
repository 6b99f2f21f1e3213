//! Layer constructors that apply an [`InitScheme`] uniformly.

use burn::module::Param;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Initializer, Linear, LinearConfig, PaddingConfig2d};
use burn::tensor::{DType, Device, FloatDType, Tensor};

use super::InitScheme;

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
        }
    }

    /// Keras initializes biases to zero; Burn would otherwise draw them from the weight scheme.
    fn zero_bias(
        self,
        bias: Option<Param<Tensor<1>>>,
        device: &Device,
    ) -> Option<Param<Tensor<1>>> {
        match self {
            InitScheme::PytorchDefault => bias,
            InitScheme::GlorotUniform => bias.map(|bias| {
                let [features] = bias.lazy_shape().dims();
                Initializer::Zeros.init([features], device)
            }),
        }
    }
}

/// A fully connected layer `d_input → d_output` with bias.
pub(crate) fn linear(d_input: usize, d_output: usize, init: InitScheme, device: &Device) -> Linear {
    let mut layer = LinearConfig::new(d_input, d_output)
        .with_initializer(init.weight_initializer())
        .init(device);
    layer.bias = init.zero_bias(layer.bias, device);
    layer
}

/// A square convolution with symmetric zero padding.
pub(crate) fn conv(
    channels: [usize; 2],
    kernel: usize,
    stride: usize,
    padding: usize,
    bias: bool,
    init: InitScheme,
    device: &Device,
) -> Conv2d {
    let config = square_conv(channels, kernel, stride, padding).with_bias(bias);
    init_conv(config, init, device)
}

/// A square convolution without bias whose channels split into `groups` (as many as channels:
/// depthwise), zero-padded by `padding`.
pub(crate) fn grouped_conv(
    channels: [usize; 2],
    kernel: usize,
    stride: usize,
    padding: usize,
    groups: usize,
    init: InitScheme,
    device: &Device,
) -> Conv2d {
    let config = square_conv(channels, kernel, stride, padding)
        .with_groups(groups)
        .with_bias(false);
    init_conv(config, init, device)
}

fn square_conv(channels: [usize; 2], kernel: usize, stride: usize, padding: usize) -> Conv2dConfig {
    Conv2dConfig::new(channels, [kernel, kernel])
        .with_stride([stride, stride])
        .with_padding(PaddingConfig2d::Explicit(
            padding, padding, padding, padding,
        ))
}

fn init_conv(config: Conv2dConfig, init: InitScheme, device: &Device) -> Conv2d {
    let mut layer = config
        .with_initializer(init.weight_initializer())
        .init(device);
    layer.bias = init.zero_bias(layer.bias, device);
    layer
}

/// Batch norm with PyTorch's defaults (ε = 1e-5, momentum 0.1); γ = 1, β = 0 under every scheme.
pub(crate) fn batch_norm(features: usize, device: &Device) -> BatchNorm {
    BatchNormConfig::new(features).init(device)
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
