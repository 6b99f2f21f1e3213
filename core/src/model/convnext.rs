//! torchvision's ConvNeXt-Tiny and -Small (Liu et al., 2022), layer for layer: a 4×4 patch stem,
//! blocks of depthwise 7×7, layer norm over channels, a 4× wider GELU MLP, layer scale and
//! stochastic depth, and a layer norm plus 2×2 stride-2 convolution between stages.

use burn::module::{Module, Param};
use burn::nn::conv::Conv2d;
use burn::nn::{LayerNorm, Linear};
use burn::tensor::activation::gelu;
use burn::tensor::{Device, Tensor};

use super::LayerDefaults;
use super::layers::{StochasticDepth, channel_norm, conv, depthwise_conv, layer_norm, linear};

/// Channels of the four stages (both sizes).
const WIDTHS: [usize; 4] = [96, 192, 384, 768];

/// Where layer scale starts: each block begins as almost its shortcut alone.
const LAYER_SCALE: f64 = 1e-6;

/// Blocks per stage and the last block's stochastic depth of one size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConvNextSize {
    /// Blocks in each of the four stages.
    pub depths: [usize; 4],
    /// Stochastic depth of the last block; earlier ones drop in proportion to their depth.
    pub stochastic_depth: f64,
    /// Channels of each stage.
    pub widths: [usize; 4],
}

impl ConvNextSize {
    /// `convnext_tiny`.
    pub const TINY: ConvNextSize = ConvNextSize {
        depths: [3, 3, 9, 3],
        stochastic_depth: 0.1,
        widths: WIDTHS,
    };

    /// `convnext_small`.
    pub const SMALL: ConvNextSize = ConvNextSize {
        depths: [3, 3, 27, 3],
        stochastic_depth: 0.4,
        widths: WIDTHS,
    };

    /// Features the head reads: the last stage's channels.
    pub fn feature_width(self) -> usize {
        self.widths[3]
    }
}

/// A ConvNeXt block: `x + drop(γ · MLP(LN(dwconv7(x))))`, the MLP channels-last.
#[derive(Module, Debug)]
pub struct CnBlock {
    /// 7×7 depthwise convolution with bias (torchvision's `block.0`).
    pub dwconv: Conv2d,
    /// Layer norm over channels (`block.2`).
    pub norm: LayerNorm,
    /// Linear to four times the width (`block.3`).
    pub pwconv1: Linear,
    /// Linear back to the width (`block.5`).
    pub pwconv2: Linear,
    /// Per-channel scale of the branch, `[C, 1, 1]`.
    pub layer_scale: Param<Tensor<3>>,
    /// Drops the branch per image while training.
    pub stochastic_depth: StochasticDepth,
}

impl CnBlock {
    /// A block of `width` channels whose branch drops with probability `drop` while training.
    pub(crate) fn new(width: usize, drop: f64, layers: LayerDefaults, device: &Device) -> Self {
        CnBlock {
            dwconv: depthwise_conv(width, 7, 1, true, layers, device),
            norm: layer_norm(width, device),
            pwconv1: linear(width, 4 * width, layers, device),
            pwconv2: linear(4 * width, width, layers, device),
            layer_scale: Param::from_tensor(Tensor::full([width, 1, 1], LAYER_SCALE, device)),
            stochastic_depth: StochasticDepth::new(drop),
        }
    }

    /// The block's output for `x`, `[batch, C, H, W]`.
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let y = self.dwconv.forward(x.clone()).permute([0, 2, 3, 1]);
        let y = self.norm.forward(y);
        let y = self.pwconv2.forward(gelu(self.pwconv1.forward(y)));
        let y = y.permute([0, 3, 1, 2]) * self.layer_scale.val().unsqueeze::<4>();
        self.stochastic_depth.forward(y) + x
    }
}

/// The layer norm and 2×2 stride-2 convolution between two stages.
#[derive(Module, Debug)]
pub struct Downsample {
    /// Layer norm over channels.
    pub norm: LayerNorm,
    /// 2×2 convolution, stride 2, with bias.
    pub conv: Conv2d,
}

/// The 4×4 stride-4 convolution and layer norm that open the network.
#[derive(Module, Debug)]
pub struct Stem {
    /// 4×4 convolution, stride 4, with bias.
    pub conv: Conv2d,
    /// Layer norm over channels.
    pub norm: LayerNorm,
}

/// torchvision's ConvNeXt: `features.0` the stem, odd `features` the stages, even ones (2, 4,
/// 6) the downsampling, `classifier.0` a layer norm and `classifier.2` the linear layer.
#[derive(Module, Debug)]
pub struct ConvNext {
    /// Patch stem.
    pub stem: Stem,
    /// The four stages of blocks.
    pub stages: Vec<Vec<CnBlock>>,
    /// The three transitions between stages.
    pub downsamples: Vec<Downsample>,
    /// Layer norm of the pooled features (torchvision's `classifier.0`).
    pub norm: LayerNorm,
    /// Normalized features to class logits.
    pub classifier: Linear,
}

impl ConvNext {
    /// The network of `size` for `channels`-channel images and `classes` outputs.
    pub(crate) fn new(
        size: ConvNextSize,
        channels: usize,
        classes: usize,
        layers: LayerDefaults,
        device: &Device,
    ) -> Self {
        let total: usize = size.depths.iter().sum();
        let mut index = 0;
        let mut stages = Vec::new();
        for (width, depth) in size.widths.into_iter().zip(size.depths) {
            let stage = (0..depth)
                .map(|_| {
                    let drop = size.stochastic_depth * index as f64 / (total - 1).max(1) as f64;
                    index += 1;
                    CnBlock::new(width, drop, layers, device)
                })
                .collect();
            stages.push(stage);
        }
        let downsamples = size
            .widths
            .windows(2)
            .map(|pair| Downsample {
                norm: layer_norm(pair[0], device),
                conv: conv([pair[0], pair[1]], 2, 2, 0, true, layers, device),
            })
            .collect();
        let first = size.widths[0];
        let width = size.feature_width();
        ConvNext {
            stem: Stem {
                conv: conv([channels, first], 4, 4, 0, true, layers, device),
                norm: layer_norm(first, device),
            },
            stages,
            downsamples,
            norm: layer_norm(width, device),
            classifier: linear(width, classes, layers, device),
        }
    }

    /// The pooled, normalized features, `[batch, feature width]`.
    pub fn features(&self, images: Tensor<4>) -> Tensor<2> {
        let mut x = channel_norm(&self.stem.norm, self.stem.conv.forward(images));
        for (at, stage) in self.stages.iter().enumerate() {
            if let Some(down) = at.checked_sub(1).and_then(|d| self.downsamples.get(d)) {
                x = down.conv.forward(channel_norm(&down.norm, x));
            }
            for block in stage {
                x = block.forward(x);
            }
        }
        self.norm.forward(super::torchvision::global_average(x))
    }

    /// The torchvision ↔ Kiln prefixes of a network of `size`.
    pub fn prefixes(size: ConvNextSize) -> Vec<(String, String)> {
        let mut pairs = vec![
            ("features.0.0.".to_owned(), "stem.conv.".to_owned()),
            ("features.0.1.".to_owned(), "stem.norm.".to_owned()),
        ];
        for (stage, depth) in size.depths.into_iter().enumerate() {
            if stage > 0 {
                let torch = format!("features.{}.", 2 * stage);
                let kiln = format!("downsamples.{}.", stage - 1);
                pairs.push((format!("{torch}0."), format!("{kiln}norm.")));
                pairs.push((format!("{torch}1."), format!("{kiln}conv.")));
            }
            for at in 0..depth {
                let torch = format!("features.{}.{at}.", 2 * stage + 1);
                let kiln = format!("stages.{stage}.{at}.");
                for (part, name) in [
                    ("0", "dwconv"),
                    ("2", "norm"),
                    ("3", "pwconv1"),
                    ("5", "pwconv2"),
                ] {
                    pairs.push((format!("{torch}block.{part}."), format!("{kiln}{name}.")));
                }
                pairs.push((format!("{torch}layer_scale"), format!("{kiln}layer_scale")));
            }
        }
        pairs.push(("classifier.0.".to_owned(), "norm.".to_owned()));
        pairs.push(("classifier.2.".to_owned(), "classifier.".to_owned()));
        pairs
    }
}
