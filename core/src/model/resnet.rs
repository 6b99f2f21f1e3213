//! ResNet-18 in the CIFAR form of He et al. (3×3 stem, stride 1, no stem max-pool).

use burn::module::Module;
use burn::nn::conv::Conv2d;
use burn::nn::pool::{AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig};
use burn::nn::{BatchNorm, Linear};
use burn::tensor::activation::relu;
use burn::tensor::{Device, Tensor};

use super::LayerDefaults;
use super::layers::{batch_norm, conv, linear, normalize, residual_batch_norm};

/// Smallest image side ResNet-18 accepts: its three stride-2 stages divide the side by 8, and
/// below 8×8 the later stages see a single pixel and stop being convolutional.
pub const MIN_SIDE: usize = 8;

/// Channels of the four stages; each stage holds two basic blocks.
const STAGE_WIDTHS: [usize; 4] = [64, 128, 256, 512];

/// 1×1 strided convolution and batch norm that match the shortcut to a block's output shape.
#[derive(Module, Debug)]
pub struct Downsample {
    /// 1×1 convolution, no bias.
    pub conv: Conv2d,
    /// Batch norm after the projection.
    pub norm: BatchNorm,
}

/// Two 3×3 conv-BN layers with an identity (or projected) shortcut.
#[derive(Module, Debug)]
pub struct BasicBlock {
    /// First 3×3 convolution; carries the block's stride.
    pub conv1: Conv2d,
    /// Batch norm after `conv1`.
    pub norm1: BatchNorm,
    /// Second 3×3 convolution, stride 1.
    pub conv2: Conv2d,
    /// Batch norm after `conv2`.
    pub norm2: BatchNorm,
    /// Present when the block changes the channel count or the resolution.
    pub downsample: Option<Downsample>,
}

impl BasicBlock {
    fn new(
        inputs: usize,
        outputs: usize,
        stride: usize,
        layers: LayerDefaults,
        device: &Device,
    ) -> Self {
        let downsample = (stride != 1 || inputs != outputs).then(|| Downsample {
            conv: conv([inputs, outputs], 1, stride, 0, false, layers, device),
            norm: batch_norm(outputs, layers, device),
        });
        BasicBlock {
            // No conv bias: the batch norm that follows has its own shift (torchvision does this).
            conv1: conv([inputs, outputs], 3, stride, 1, false, layers, device),
            norm1: batch_norm(outputs, layers, device),
            conv2: conv([outputs, outputs], 3, 1, 1, false, layers, device),
            norm2: residual_batch_norm(outputs, layers, device),
            downsample,
        }
    }

    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let shortcut = match &self.downsample {
            Some(down) => normalize(&down.norm, down.conv.forward(x.clone())),
            None => x.clone(),
        };
        let y = relu(normalize(&self.norm1, self.conv1.forward(x)));
        let y = normalize(&self.norm2, self.conv2.forward(y));
        relu(y + shortcut)
    }
}

/// ResNet-18: stem conv3×3(64)-BN-ReLU, stages of 2 basic blocks at 64/128/256/512 channels
/// (stride 2 entering stages 2–4), global average pool, linear to classes.
#[derive(Module, Debug)]
pub struct ResNet18 {
    /// 3×3 stem convolution, stride 1, no bias.
    pub stem: Conv2d,
    /// Batch norm after the stem.
    pub stem_norm: BatchNorm,
    /// The eight basic blocks in order.
    pub blocks: Vec<BasicBlock>,
    /// Global average pool to 1×1.
    pub avgpool: AdaptiveAvgPool2d,
    /// 512 features to class logits.
    pub fc: Linear,
}

impl ResNet18 {
    /// Builds the network for `channels`-channel images.
    pub(crate) fn new(
        channels: usize,
        classes: usize,
        layers: LayerDefaults,
        device: &Device,
    ) -> Self {
        let mut blocks = Vec::with_capacity(8);
        let mut previous = 64;
        for (stage, &width) in STAGE_WIDTHS.iter().enumerate() {
            let stride = if stage == 0 { 1 } else { 2 };
            blocks.push(BasicBlock::new(previous, width, stride, layers, device));
            blocks.push(BasicBlock::new(width, width, 1, layers, device));
            previous = width;
        }
        ResNet18 {
            stem: conv([channels, 64], 3, 1, 1, false, layers, device),
            stem_norm: batch_norm(64, layers, device),
            blocks,
            avgpool: AdaptiveAvgPool2dConfig::new([1, 1]).init(),
            fc: linear(previous, classes, layers, device),
        }
    }

    /// `[batch, C, H, W]` images to `[batch, classes]` logits.
    pub fn forward(&self, images: Tensor<4>) -> Tensor<2> {
        let mut x = relu(normalize(&self.stem_norm, self.stem.forward(images)));
        for block in &self.blocks {
            x = block.forward(x);
        }
        self.fc.forward(self.avgpool.forward(x).flatten(1, 3))
    }
}
