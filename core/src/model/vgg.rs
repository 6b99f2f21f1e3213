//! VGG16 (configuration D), optionally with batch norm and an input resize.

use burn::module::Module;
use burn::nn::conv::Conv2d;
use burn::nn::pool::{AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig, MaxPool2d, MaxPool2dConfig};
use burn::nn::{BatchNorm, Dropout, DropoutConfig, Linear};
use burn::tensor::activation::relu;
use burn::tensor::module::interpolate;
use burn::tensor::ops::{InterpolateMode, InterpolateOptions};
use burn::tensor::{Device, Tensor};

use super::LayerDefaults;
use super::layers::{batch_norm, conv, linear, normalize};

/// Smallest image side VGG16 accepts: five 2×2 max-pools must leave at least one pixel.
pub const MIN_SIDE: usize = 32;

/// Largest side a VGG16 run resizes to: 512² activations already need gigabytes per batch.
pub const MAX_SIDE: usize = 512;

/// From this input side up, the classifier is torchvision's (7×7 pool, 4096-4096 head).
pub const IMAGENET_SIDE: usize = 224;

/// Output channels of the convolutions, one inner list per stage; a max-pool ends each stage.
const STAGES: [&[usize]; 5] = [
    &[64, 64],
    &[128, 128],
    &[256, 256, 256],
    &[512, 512, 512],
    &[512, 512, 512],
];

/// Dropout probability in the classifier, as in the paper and torchvision.
const HEAD_DROPOUT: f64 = 0.5;

/// One 3×3 convolution, optionally followed by batch norm, then ReLU.
#[derive(Module, Debug)]
pub struct VggConv {
    /// 3×3 convolution, padding 1.
    pub conv: Conv2d,
    /// Present in the `-bn` variant.
    pub norm: Option<BatchNorm>,
}

impl VggConv {
    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let x = self.conv.forward(x);
        let x = match &self.norm {
            Some(norm) => normalize(norm, x),
            None => x,
        };
        relu(x)
    }
}

/// VGG16: 13 convolutions in 5 stages, then a three-layer classifier.
///
/// For inputs of at least 224×224 (after the optional resize) the classifier is torchvision's:
/// adaptive average pool to 7×7, then 25088-4096-4096-classes with ReLU and dropout 0.5. Smaller
/// inputs (e.g. CIFAR's 32×32, where the features end at 1×1) use the common CIFAR head:
/// adaptive average pool to 1×1, then 512-512-classes with ReLU and dropout 0.5, which avoids
/// 120 M parameters of classifier that would only see one spatial position.
#[derive(Module, Debug)]
pub struct Vgg16 {
    /// Convolutions of each stage.
    pub stages: Vec<Vec<VggConv>>,
    /// 2×2 max-pool ending each stage.
    pub pool: MaxPool2d,
    /// Averages the last feature map to the classifier's grid (7×7 or 1×1).
    pub avgpool: AdaptiveAvgPool2d,
    /// The three dense layers of the classifier.
    pub classifier: Vec<Linear>,
    /// Dropout after each of the first two dense layers.
    pub dropout: Dropout,
    /// Square side every input is resized to before the first convolution, if any.
    #[module(skip)]
    pub resize_to: Option<usize>,
}

impl Vgg16 {
    /// Builds the network for `channels`-channel images whose side (after resize) is `side`.
    pub(crate) fn new(
        channels: usize,
        side: usize,
        batch_norm_on: bool,
        resize_to: Option<usize>,
        classes: usize,
        layers: LayerDefaults,
        device: &Device,
    ) -> Self {
        let mut previous = channels;
        let stages = STAGES
            .iter()
            .map(|widths| {
                widths
                    .iter()
                    .map(|&width| {
                        let layer = VggConv {
                            // torchvision keeps the conv bias even before batch norm.
                            conv: conv([previous, width], 3, 1, 1, true, layers, device),
                            norm: batch_norm_on.then(|| batch_norm(width, layers, device)),
                        };
                        previous = width;
                        layer
                    })
                    .collect()
            })
            .collect();
        let (grid, hidden) = Self::head_shape(side);
        Vgg16 {
            stages,
            pool: MaxPool2dConfig::new([2, 2]).init(),
            avgpool: AdaptiveAvgPool2dConfig::new([grid, grid]).init(),
            classifier: vec![
                linear(512 * grid * grid, hidden, layers, device),
                linear(hidden, hidden, layers, device),
                linear(hidden, classes, layers, device),
            ],
            dropout: DropoutConfig::new(HEAD_DROPOUT).init(),
            resize_to,
        }
    }

    /// Pool grid side and hidden width of the classifier for an input side.
    pub(crate) fn head_shape(side: usize) -> (usize, usize) {
        if side >= IMAGENET_SIDE {
            (7, 4096)
        } else {
            (1, 512)
        }
    }

    /// `[batch, C, H, W]` images to `[batch, classes]` logits.
    pub fn forward(&self, images: Tensor<4>) -> Tensor<2> {
        let [_, _, height, width] = images.dims();
        let mut x = match self.resize_to {
            // Half-pixel centres (align_corners = false) match PyTorch's F.interpolate default
            // and torchvision's Resize on tensors, so "vgg16@224" means the same as there.
            // Training batches arrive resized by the input pipeline already.
            Some(side) if (height, width) != (side, side) => interpolate(
                images,
                InterpolateOptions::new(InterpolateMode::Bilinear)
                    .with_align_corners(false)
                    .with_output_size([side, side]),
            ),
            _ => images,
        };
        for stage in &self.stages {
            for layer in stage {
                x = layer.forward(x);
            }
            x = self.pool.forward(x);
        }
        let mut x: Tensor<2> = self.avgpool.forward(x).flatten(1, 3);
        let last = self.classifier.len().saturating_sub(1);
        for (i, layer) in self.classifier.iter().enumerate() {
            x = layer.forward(x);
            if i < last {
                x = self.dropout.forward(relu(x));
            }
        }
        x
    }
}
