//! torchvision's EfficientNet-B0 … B3 (Tan & Le, 2019), layer for layer: MBConv blocks with
//! squeeze-and-excitation, SiLU and stochastic depth, widths and depths scaled per variant as
//! torchvision's `_efficientnet_conf` scales them, so its weight files load unchanged.

use burn::module::Module;
use burn::nn::conv::Conv2d;
use burn::nn::{BatchNorm, Dropout, DropoutConfig, Linear};
use burn::tensor::Device;
use burn::tensor::Tensor;
use burn::tensor::activation::{sigmoid, silu};

use super::LayerDefaults;
use super::layers::{StochasticDepth, batch_norm, conv, depthwise_conv, linear, normalize};

/// The B0 stages torchvision scales: expansion, kernel, stride, input and output channels,
/// blocks.
const STAGES: [(usize, usize, usize, usize, usize, usize); 7] = [
    (1, 3, 1, 32, 16, 1),
    (6, 3, 2, 16, 24, 2),
    (6, 5, 2, 24, 40, 2),
    (6, 3, 2, 40, 80, 3),
    (6, 5, 1, 80, 112, 3),
    (6, 5, 2, 112, 192, 4),
    (6, 3, 1, 192, 320, 1),
];

/// The stochastic depth of the last block; earlier blocks drop in proportion to their depth.
const STOCHASTIC_DEPTH: f64 = 0.2;

/// How one variant scales B0: width and depth multipliers and the dropout before its head.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scaling {
    /// Channels are multiplied by this and rounded to a multiple of 8.
    pub width: f64,
    /// Blocks per stage are multiplied by this and rounded up.
    pub depth: f64,
    /// Dropout probability on the pooled features.
    pub dropout: f64,
}

impl Scaling {
    /// torchvision's `efficientnet_b{variant}` (0 to 3).
    pub const fn of(variant: usize) -> Scaling {
        match variant {
            0 => Scaling::new(1.0, 1.0, 0.2),
            1 => Scaling::new(1.0, 1.1, 0.2),
            2 => Scaling::new(1.1, 1.2, 0.3),
            _ => Scaling::new(1.2, 1.4, 0.3),
        }
    }

    const fn new(width: f64, depth: f64, dropout: f64) -> Scaling {
        Scaling {
            width,
            depth,
            dropout,
        }
    }

    /// `channels` scaled: torchvision's `_make_divisible(channels * width, 8)`.
    pub fn channels(self, channels: usize) -> usize {
        make_divisible(channels as f64 * self.width, 8)
    }

    /// `blocks` scaled: `ceil(blocks * depth)`.
    pub fn blocks(self, blocks: usize) -> usize {
        (blocks as f64 * self.depth).ceil() as usize
    }

    /// Channels of the last 1×1 convolution: four times the last stage's.
    pub fn feature_width(self) -> usize {
        4 * self.channels(STAGES[STAGES.len() - 1].4)
    }
}

/// The nearest multiple of `divisor` to `value`, never below `divisor` nor 10 % below `value`
/// (the rounding of MobileNet's and EfficientNet's reference code).
fn make_divisible(value: f64, divisor: usize) -> usize {
    let rounded = ((value + divisor as f64 / 2.0) as usize / divisor * divisor).max(divisor);
    if (rounded as f64) < 0.9 * value {
        rounded + divisor
    } else {
        rounded
    }
}

/// A convolution, batch norm and SiLU: torchvision's `Conv2dNormActivation` (`.0`, `.1`).
#[derive(Module, Debug)]
pub struct ConvBnSilu {
    /// The convolution, no bias.
    pub conv: Conv2d,
    /// Batch norm after it.
    pub bn: BatchNorm,
}

impl ConvBnSilu {
    fn new(conv: Conv2d, outputs: usize, layers: LayerDefaults, device: &Device) -> Self {
        ConvBnSilu {
            conv,
            bn: batch_norm(outputs, layers, device),
        }
    }

    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        silu(normalize(&self.bn, self.conv.forward(x)))
    }
}

/// Squeeze-and-excitation: each channel scaled by a gate computed from every channel's mean
/// (torchvision's `SqueezeExcitation`, its two 1×1 convolutions `fc1` and `fc2`).
#[derive(Module, Debug)]
pub struct SqueezeExcitation {
    /// 1×1 convolution down to the squeezed width, with bias.
    pub fc1: Conv2d,
    /// 1×1 convolution back up to the block's width, with bias.
    pub fc2: Conv2d,
}

impl SqueezeExcitation {
    fn new(width: usize, squeezed: usize, layers: LayerDefaults, device: &Device) -> Self {
        SqueezeExcitation {
            fc1: conv([width, squeezed], 1, 1, 0, true, layers, device),
            fc2: conv([squeezed, width], 1, 1, 0, true, layers, device),
        }
    }

    /// `x` with each channel scaled by sigmoid(fc2(silu(fc1(mean over the image)))).
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let [batch, channels, _, _] = x.dims();
        // The 1×1 convolutions on a 1×1 image are matrix products; written as such they skip
        // the convolution's unfolding.
        let pooled = x.clone().mean_dim(3).mean_dim(2).reshape([batch, channels]);
        let squeezed = silu(pointwise(&self.fc1, pooled));
        let gate = sigmoid(pointwise(&self.fc2, squeezed));
        x * gate.reshape([batch, channels, 1, 1])
    }
}

/// A 1×1 convolution applied to `[batch, C]` features: `x · Wᵀ + b`.
fn pointwise(conv: &Conv2d, x: Tensor<2>) -> Tensor<2> {
    let [outputs, inputs, _, _] = conv.weight.dims();
    let weight = conv.weight.val().reshape([outputs, inputs]);
    let y = x.matmul(weight.transpose());
    match &conv.bias {
        Some(bias) => y + bias.val().reshape([1, outputs]),
        None => y,
    }
}

/// EfficientNet's MBConv: 1×1 expansion (absent at expansion 1), depthwise k×k carrying the
/// stride, squeeze-and-excitation, 1×1 projection; the input is added back, through stochastic
/// depth, where stride and channels allow.
#[derive(Module, Debug)]
pub struct MbConv {
    /// 1×1 expansion with SiLU.
    pub expand: Option<ConvBnSilu>,
    /// Depthwise convolution with SiLU.
    pub depthwise: ConvBnSilu,
    /// The channel gate.
    pub se: SqueezeExcitation,
    /// 1×1 projection, no bias.
    pub project: Conv2d,
    /// Batch norm after the projection, no activation.
    pub project_bn: BatchNorm,
    /// Drops the residual branch per image while training.
    pub stochastic_depth: StochasticDepth,
    /// Whether the input is added back.
    pub residual: bool,
}

/// One MBConv's shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MbConvShape {
    /// Input channels.
    pub inputs: usize,
    /// Output channels.
    pub outputs: usize,
    /// Expansion ratio of the hidden width.
    pub expansion: usize,
    /// Depthwise kernel side.
    pub kernel: usize,
    /// Depthwise stride.
    pub stride: usize,
}

impl MbConv {
    /// A block of `shape` whose branch drops with probability `drop` while training.
    pub(crate) fn new(
        shape: MbConvShape,
        drop: f64,
        layers: LayerDefaults,
        device: &Device,
    ) -> Self {
        let MbConvShape {
            inputs,
            outputs,
            expansion,
            kernel,
            stride,
        } = shape;
        let hidden = make_divisible((inputs * expansion) as f64, 8);
        let expand = (hidden != inputs).then(|| {
            let conv = conv([inputs, hidden], 1, 1, 0, false, layers, device);
            ConvBnSilu::new(conv, hidden, layers, device)
        });
        let dw = depthwise_conv(hidden, kernel, stride, false, layers, device);
        MbConv {
            expand,
            depthwise: ConvBnSilu::new(dw, hidden, layers, device),
            se: SqueezeExcitation::new(hidden, (inputs / 4).max(1), layers, device),
            project: conv([hidden, outputs], 1, 1, 0, false, layers, device),
            project_bn: batch_norm(outputs, layers, device),
            stochastic_depth: StochasticDepth::new(drop),
            residual: stride == 1 && inputs == outputs,
        }
    }

    /// The block's output for `x`, `[batch, inputs, H, W]`.
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let mut y = x.clone();
        if let Some(expand) = &self.expand {
            y = expand.forward(y);
        }
        y = self.se.forward(self.depthwise.forward(y));
        y = normalize(&self.project_bn, self.project.forward(y));
        if self.residual {
            self.stochastic_depth.forward(y) + x
        } else {
            y
        }
    }
}

/// torchvision's EfficientNet-B0 … B3: `features.0` the stem, `features.1`–`7` the stages,
/// `features.8` the last 1×1 convolution, `classifier.1` the linear layer after dropout.
#[derive(Module, Debug)]
pub struct EfficientNet {
    /// 3×3 stem, stride 2, with SiLU.
    pub stem: ConvBnSilu,
    /// The seven stages of MBConv blocks.
    pub stages: Vec<Vec<MbConv>>,
    /// 1×1 convolution to the feature width, with SiLU.
    pub last: ConvBnSilu,
    /// Dropout on the pooled features while training (torchvision's `classifier.0`).
    pub dropout: Dropout,
    /// Pooled features to class logits.
    pub classifier: Linear,
}

impl EfficientNet {
    /// The network `scaling` makes of B0, for `channels`-channel images and `classes` outputs.
    pub(crate) fn new(
        scaling: Scaling,
        channels: usize,
        classes: usize,
        layers: LayerDefaults,
        device: &Device,
    ) -> Self {
        let stem_width = scaling.channels(STAGES[0].3);
        let total: usize = STAGES.iter().map(|stage| scaling.blocks(stage.5)).sum();
        let mut stages = Vec::new();
        let mut index = 0;
        for (expansion, kernel, stride, inputs, outputs, blocks) in STAGES {
            let mut stage = Vec::new();
            for at in 0..scaling.blocks(blocks) {
                let shape = MbConvShape {
                    inputs: scaling.channels(if at == 0 { inputs } else { outputs }),
                    outputs: scaling.channels(outputs),
                    expansion,
                    kernel,
                    stride: if at == 0 { stride } else { 1 },
                };
                let drop = STOCHASTIC_DEPTH * index as f64 / total as f64;
                stage.push(MbConv::new(shape, drop, layers, device));
                index += 1;
            }
            stages.push(stage);
        }
        let last_inputs = scaling.channels(STAGES[STAGES.len() - 1].4);
        let width = scaling.feature_width();
        let stem = conv([channels, stem_width], 3, 2, 1, false, layers, device);
        let last = conv([last_inputs, width], 1, 1, 0, false, layers, device);
        EfficientNet {
            stem: ConvBnSilu::new(stem, stem_width, layers, device),
            stages,
            last: ConvBnSilu::new(last, width, layers, device),
            dropout: DropoutConfig::new(scaling.dropout).init(),
            classifier: linear(width, classes, layers, device),
        }
    }

    /// The pooled features, `[batch, feature width]`.
    pub fn features(&self, images: Tensor<4>) -> Tensor<2> {
        let mut x = self.stem.forward(images);
        for block in self.stages.iter().flatten() {
            x = block.forward(x);
        }
        super::torchvision::global_average(self.last.forward(x))
    }

    /// Features to logits, through the dropout torchvision puts before the linear layer.
    pub fn head(&self, features: Tensor<2>) -> Tensor<2> {
        self.classifier.forward(self.dropout.forward(features))
    }

    /// The torchvision ↔ Kiln prefixes: torchvision numbers `features`, the parts of each
    /// block's `block` sequence, and `classifier`.
    pub fn prefixes(scaling: Scaling) -> Vec<(String, String)> {
        let mut pairs = vec![
            ("features.0.0.".to_owned(), "stem.conv.".to_owned()),
            ("features.0.1.".to_owned(), "stem.bn.".to_owned()),
        ];
        for (stage, (expansion, _, _, _, _, blocks)) in STAGES.into_iter().enumerate() {
            for at in 0..scaling.blocks(blocks) {
                let torch = format!("features.{}.{at}.block.", stage + 1);
                let kiln = format!("stages.{stage}.{at}.");
                // torchvision's `block` sequence, its first part absent at expansion 1.
                let parts: &[(&str, &str)] = if expansion == 1 {
                    &[
                        ("0.0.", "depthwise.conv."),
                        ("0.1.", "depthwise.bn."),
                        ("1.", "se."),
                        ("2.0.", "project."),
                        ("2.1.", "project_bn."),
                    ]
                } else {
                    &[
                        ("0.0.", "expand.conv."),
                        ("0.1.", "expand.bn."),
                        ("1.0.", "depthwise.conv."),
                        ("1.1.", "depthwise.bn."),
                        ("2.", "se."),
                        ("3.0.", "project."),
                        ("3.1.", "project_bn."),
                    ]
                };
                for (from, to) in parts {
                    pairs.push((format!("{torch}{from}"), format!("{kiln}{to}")));
                }
            }
        }
        let last = STAGES.len() + 1;
        pairs.push((format!("features.{last}.0."), "last.conv.".to_owned()));
        pairs.push((format!("features.{last}.1."), "last.bn.".to_owned()));
        pairs.push(("classifier.1.".to_owned(), "classifier.".to_owned()));
        pairs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_and_depths_scale_as_torchvisions_variants_do() {
        // torchvision's efficientnet_b0 … b3: stem width, blocks in all, feature width.
        let expected = [
            (32, 16, 1280),
            (32, 23, 1280),
            (32, 23, 1408),
            (40, 26, 1536),
        ];
        for (variant, (stem, blocks, features)) in expected.into_iter().enumerate() {
            let scaling = Scaling::of(variant);
            assert_eq!(scaling.channels(32), stem, "b{variant} stem");
            let total: usize = STAGES.iter().map(|stage| scaling.blocks(stage.5)).sum();
            assert_eq!(total, blocks, "b{variant} blocks");
            assert_eq!(scaling.feature_width(), features, "b{variant} features");
        }
        assert_eq!(make_divisible(16.0 * 1.1, 8), 16);
        assert_eq!(make_divisible(24.0 * 1.2, 8), 32);
        assert_eq!(make_divisible(40.0 * 1.1, 8), 48);
    }
}
