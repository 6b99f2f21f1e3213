//! A small, fast convolutional network for MNIST/CIFAR-sized images.

use burn::module::Module;
use burn::nn::Linear;
use burn::nn::conv::Conv2d;
use burn::nn::pool::{AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig, MaxPool2d, MaxPool2dConfig};
use burn::tensor::activation::relu;
use burn::tensor::{Device, Tensor};

use super::LayerDefaults;
use super::layers::{conv, linear};

/// Smallest image side the CNN accepts: two 2×2 max-pools must leave at least one pixel.
pub const MIN_SIDE: usize = 4;

/// Feature maps larger than this (per side) after the pools are averaged down to it, so the
/// dense layer stays small on large images (224×224 would otherwise give 25 M weights).
pub const MAX_POOLED_SIDE: usize = 8;

/// Width of the hidden dense layer.
const HIDDEN: usize = 128;

/// conv3×3(32)-relu-conv3×3(32)-relu-maxpool2-conv3×3(64)-relu-conv3×3(64)-relu-maxpool2-
/// [adaptive avg pool to ≤ 8×8]-flatten-linear(128)-relu-linear(classes); padding 1.
#[derive(Module, Debug)]
pub struct Cnn {
    /// The four 3×3 convolutions, input side first.
    pub convs: Vec<Conv2d>,
    /// 2×2 max-pool after the second and fourth convolution.
    pub pool: MaxPool2d,
    /// Present only when the pooled map is larger than [`MAX_POOLED_SIDE`].
    pub shrink: Option<AdaptiveAvgPool2d>,
    /// Flattened features to the hidden layer.
    pub fc1: Linear,
    /// Hidden layer to class logits.
    pub fc2: Linear,
}

impl Cnn {
    /// Builds the network for `channels`×`height`×`width` images (at least [`MIN_SIDE`] per side).
    pub(crate) fn new(
        channels: usize,
        height: usize,
        width: usize,
        classes: usize,
        layers: LayerDefaults,
        device: &Device,
    ) -> Self {
        let convs = vec![
            conv([channels, 32], 3, 1, 1, true, layers, device),
            conv([32, 32], 3, 1, 1, true, layers, device),
            conv([32, 64], 3, 1, 1, true, layers, device),
            conv([64, 64], 3, 1, 1, true, layers, device),
        ];
        let [pooled_h, pooled_w] = Self::pooled_size(height, width);
        let shrink = (pooled_h > MAX_POOLED_SIDE || pooled_w > MAX_POOLED_SIDE).then(|| {
            AdaptiveAvgPool2dConfig::new([
                pooled_h.min(MAX_POOLED_SIDE),
                pooled_w.min(MAX_POOLED_SIDE),
            ])
            .init()
        });
        let features = Self::flat_features(height, width);
        Cnn {
            convs,
            pool: MaxPool2dConfig::new([2, 2]).init(),
            shrink,
            fc1: linear(features, HIDDEN, layers, device),
            fc2: linear(HIDDEN, classes, layers, device),
        }
    }

    /// Spatial size after the two max-pools (floor division, as PyTorch and Burn do).
    pub(crate) fn pooled_size(height: usize, width: usize) -> [usize; 2] {
        [height / 4, width / 4]
    }

    /// Number of inputs of the first dense layer for this image size.
    pub(crate) fn flat_features(height: usize, width: usize) -> usize {
        let [h, w] = Self::pooled_size(height, width);
        64 * h.min(MAX_POOLED_SIDE) * w.min(MAX_POOLED_SIDE)
    }

    /// `[batch, C, H, W]` images to `[batch, classes]` logits.
    pub fn forward(&self, images: Tensor<4>) -> Tensor<2> {
        let mut x = images;
        for (i, layer) in self.convs.iter().enumerate() {
            x = relu(layer.forward(x));
            if i % 2 == 1 {
                x = self.pool.forward(x);
            }
        }
        if let Some(shrink) = &self.shrink {
            x = shrink.forward(x);
        }
        let x: Tensor<2> = x.flatten(1, 3);
        self.fc2.forward(relu(self.fc1.forward(x)))
    }
}
