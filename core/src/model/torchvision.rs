//! torchvision's ImageNet architectures, layer for layer, so torchvision's own weight files load
//! into them: ResNet-18, -34 and -50 (7×7 stem, stride-2 max-pool, the 3×3 convolution of a
//! bottleneck carrying its stride, as in torchvision's "v1.5") and MobileNetV2 here;
//! EfficientNet-B0 … B3, ConvNeXt-Tiny and -Small and ViT-B/16 in their own files.
//!
//! Field names follow torchvision's module names wherever Rust allows (`conv1`, `bn1`,
//! `layer1`, `fc`); the rest, where torchvision numbers the parts of an `nn.Sequential`, is one
//! table of prefixes per architecture ([`TorchvisionArch::key_prefixes`]) that `weights` reads in
//! both directions.

use burn::module::{Module, Param};
use burn::nn::conv::Conv2d;
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::{BatchNorm, Linear, PaddingConfig2d};
use burn::tensor::activation::{relu, relu6};
use burn::tensor::{Device, Tensor};
use serde::{Deserialize, Serialize};

use super::LayerDefaults;
use super::convnext::{ConvNext, ConvNextSize};
use super::efficientnet::{EfficientNet, Scaling};
use super::layers::{batch_norm, conv, grouped_conv, linear, normalize, residual_batch_norm};
use super::vit::{VisionTransformer, VitSize};
use crate::data::ImageShape;

/// Smallest image side these networks take: five stride-2 stages divide the side by 32.
pub const MIN_SIDE: usize = 32;

/// One of torchvision's ImageNet classifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TorchvisionArch {
    /// `torchvision.models.resnet18`.
    ResNet18,
    /// `torchvision.models.resnet34`.
    ResNet34,
    /// `torchvision.models.resnet50`.
    ResNet50,
    /// `torchvision.models.mobilenet_v2`.
    MobileNetV2,
    /// `torchvision.models.efficientnet_b0`.
    EfficientNetB0,
    /// `torchvision.models.efficientnet_b1`.
    EfficientNetB1,
    /// `torchvision.models.efficientnet_b2`.
    EfficientNetB2,
    /// `torchvision.models.efficientnet_b3`.
    EfficientNetB3,
    /// `torchvision.models.convnext_tiny`.
    ConvNextTiny,
    /// `torchvision.models.convnext_small`.
    ConvNextSmall,
    /// `torchvision.models.vit_b_16`.
    VitB16,
}

/// The families the architectures belong to, each built by its own module.
enum Family {
    ResNet,
    MobileNetV2,
    EfficientNet(Scaling),
    ConvNext(ConvNextSize),
    Vit(VitSize),
}

impl TorchvisionArch {
    /// Every architecture, in the order help texts list them.
    pub const ALL: [TorchvisionArch; 11] = [
        TorchvisionArch::ResNet18,
        TorchvisionArch::ResNet34,
        TorchvisionArch::ResNet50,
        TorchvisionArch::MobileNetV2,
        TorchvisionArch::EfficientNetB0,
        TorchvisionArch::EfficientNetB1,
        TorchvisionArch::EfficientNetB2,
        TorchvisionArch::EfficientNetB3,
        TorchvisionArch::ConvNextTiny,
        TorchvisionArch::ConvNextSmall,
        TorchvisionArch::VitB16,
    ];

    /// torchvision's function name: `resnet18`, `mobilenet_v2`.
    pub fn torchvision_name(self) -> &'static str {
        match self {
            Self::ResNet18 => "resnet18",
            Self::ResNet34 => "resnet34",
            Self::ResNet50 => "resnet50",
            Self::MobileNetV2 => "mobilenet_v2",
            Self::EfficientNetB0 => "efficientnet_b0",
            Self::EfficientNetB1 => "efficientnet_b1",
            Self::EfficientNetB2 => "efficientnet_b2",
            Self::EfficientNetB3 => "efficientnet_b3",
            Self::ConvNextTiny => "convnext_tiny",
            Self::ConvNextSmall => "convnext_small",
            Self::VitB16 => "vit_b_16",
        }
    }

    /// Kiln's name for it in specs and config files: `resnet18-imagenet`, `efficientnet-b0`.
    pub fn kiln_name(self) -> &'static str {
        match self {
            Self::ResNet18 => "resnet18-imagenet",
            Self::ResNet34 => "resnet34",
            Self::ResNet50 => "resnet50",
            Self::MobileNetV2 => "mobilenet-v2",
            Self::EfficientNetB0 => "efficientnet-b0",
            Self::EfficientNetB1 => "efficientnet-b1",
            Self::EfficientNetB2 => "efficientnet-b2",
            Self::EfficientNetB3 => "efficientnet-b3",
            Self::ConvNextTiny => "convnext-tiny",
            Self::ConvNextSmall => "convnext-small",
            Self::VitB16 => "vit-b-16",
        }
    }

    /// Every Kiln name, joined for help texts and sentences: `resnet18-imagenet, …, vit-b-16`.
    pub fn kiln_names() -> String {
        Self::ALL.map(Self::kiln_name).join(", ")
    }

    /// The model spec that builds it.
    pub fn spec(self) -> super::ModelSpec {
        use super::ModelSpec;
        match self {
            Self::ResNet18 => ModelSpec::ResNet18ImageNet,
            Self::ResNet34 => ModelSpec::ResNet34,
            Self::ResNet50 => ModelSpec::ResNet50,
            Self::MobileNetV2 => ModelSpec::MobileNetV2,
            Self::EfficientNetB0 => ModelSpec::EfficientNetB0,
            Self::EfficientNetB1 => ModelSpec::EfficientNetB1,
            Self::EfficientNetB2 => ModelSpec::EfficientNetB2,
            Self::EfficientNetB3 => ModelSpec::EfficientNetB3,
            Self::ConvNextTiny => ModelSpec::ConvNextTiny,
            Self::ConvNextSmall => ModelSpec::ConvNextSmall,
            Self::VitB16 => ModelSpec::VitB16,
        }
    }

    /// The display name: `ResNet-50`.
    pub fn title(self) -> &'static str {
        match self {
            Self::ResNet18 => "ResNet-18 (ImageNet)",
            Self::ResNet34 => "ResNet-34",
            Self::ResNet50 => "ResNet-50",
            Self::MobileNetV2 => "MobileNetV2",
            Self::EfficientNetB0 => "EfficientNet-B0",
            Self::EfficientNetB1 => "EfficientNet-B1",
            Self::EfficientNetB2 => "EfficientNet-B2",
            Self::EfficientNetB3 => "EfficientNet-B3",
            Self::ConvNextTiny => "ConvNeXt-Tiny",
            Self::ConvNextSmall => "ConvNeXt-Small",
            Self::VitB16 => "ViT-B/16",
        }
    }

    fn family(self) -> Family {
        match self {
            Self::ResNet18 | Self::ResNet34 | Self::ResNet50 => Family::ResNet,
            Self::MobileNetV2 => Family::MobileNetV2,
            Self::EfficientNetB0 => Family::EfficientNet(Scaling::of(0)),
            Self::EfficientNetB1 => Family::EfficientNet(Scaling::of(1)),
            Self::EfficientNetB2 => Family::EfficientNet(Scaling::of(2)),
            Self::EfficientNetB3 => Family::EfficientNet(Scaling::of(3)),
            Self::ConvNextTiny => Family::ConvNext(ConvNextSize::TINY),
            Self::ConvNextSmall => Family::ConvNext(ConvNextSize::SMALL),
            Self::VitB16 => Family::Vit(VitSize::B16),
        }
    }

    /// Features the classifier head reads: what a linear probe trains on.
    pub fn feature_width(self) -> usize {
        match self.family() {
            Family::ResNet if self == Self::ResNet50 => 2048,
            Family::ResNet => 512,
            Family::MobileNetV2 => LAST_CHANNELS,
            Family::EfficientNet(scaling) => scaling.feature_width(),
            Family::ConvNext(size) => size.feature_width(),
            Family::Vit(size) => size.hidden,
        }
    }

    /// The image side the default weights were trained and evaluated at (torchvision's
    /// `crop_size`): what a run starting from them resizes a folder's images to.
    pub fn weights_side(self) -> usize {
        match self {
            Self::EfficientNetB1 => 240,
            Self::EfficientNetB2 => 288,
            Self::EfficientNetB3 => 300,
            _ => 224,
        }
    }

    /// The side an image's height and width must each be a multiple of: a ViT's patch, else 1.
    pub fn side_multiple(self) -> usize {
        match self.family() {
            Family::Vit(size) => size.patch,
            _ => 1,
        }
    }

    /// `(torchvision prefix, Kiln prefix)` for every part whose torchvision name is not Kiln's
    /// field path; a key with neither prefix is the same in both.
    pub fn key_prefixes(self) -> Vec<(String, String)> {
        match self.family() {
            Family::MobileNetV2 => mobilenet_prefixes(),
            Family::EfficientNet(scaling) => EfficientNet::prefixes(scaling),
            Family::ConvNext(size) => ConvNext::prefixes(size),
            Family::Vit(size) => VisionTransformer::prefixes(size),
            // Only a stage's first block projects its shortcut.
            Family::ResNet => (1..=4)
                .flat_map(|stage| {
                    [("0", "conv"), ("1", "bn")].map(|(torch, kiln)| {
                        (
                            format!("layer{stage}.0.downsample.{torch}."),
                            format!("layer{stage}.0.downsample.{kiln}."),
                        )
                    })
                })
                .collect(),
        }
    }

    /// Where the classifier head's tensors live, in Kiln's names.
    pub fn head_prefix(self) -> &'static str {
        match self.family() {
            Family::ResNet => "fc.",
            Family::Vit(_) => "head.",
            _ => "classifier.",
        }
    }

    /// The first convolution's weight, in Kiln's names: its shape says how many channels.
    pub fn stem_key(self) -> &'static str {
        match self.family() {
            Family::ResNet => "conv1.weight",
            Family::Vit(_) => "conv_proj.weight",
            _ => "stem.conv.weight",
        }
    }

    /// Blocks in each of a ResNet's four stages.
    fn stage_blocks(self) -> [usize; 4] {
        match self {
            Self::ResNet18 => [2, 2, 2, 2],
            _ => [3, 4, 6, 3],
        }
    }

    /// Builds the network for images of `input`'s shape and `classes` outputs.
    pub(crate) fn build(
        self,
        input: ImageShape,
        classes: usize,
        layers: LayerDefaults,
        device: &Device,
    ) -> TorchvisionNet {
        let channels = input.channels;
        match self.family() {
            Family::ResNet => {
                TorchvisionNet::ResNet(ResNet::new(self, channels, classes, layers, device))
            }
            Family::MobileNetV2 => {
                TorchvisionNet::MobileNetV2(MobileNetV2::new(channels, classes, layers, device))
            }
            Family::EfficientNet(scaling) => TorchvisionNet::EfficientNet(EfficientNet::new(
                scaling, channels, classes, layers, device,
            )),
            Family::ConvNext(size) => {
                TorchvisionNet::ConvNext(ConvNext::new(size, channels, classes, layers, device))
            }
            Family::Vit(size) => TorchvisionNet::Vit(VisionTransformer::new(
                size,
                [channels, input.height, input.width],
                classes,
                layers,
                device,
            )),
        }
    }
}

impl std::fmt::Display for TorchvisionArch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kiln_name())
    }
}

impl std::str::FromStr for TorchvisionArch {
    type Err = String;

    /// torchvision's names (`resnet18`, `mobilenet_v2`) and Kiln's spec names alike.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim().to_ascii_lowercase().replace('-', "_");
        Self::ALL
            .into_iter()
            .find(|arch| {
                let kiln = arch.kiln_name().replace('-', "_");
                wanted == arch.torchvision_name() || wanted == kiln
            })
            .ok_or_else(|| {
                format!(
                    "`{text}` is not a torchvision architecture Kiln has; use one of {}",
                    Self::ALL.map(Self::torchvision_name).join(", ")
                )
            })
    }
}

/// A built torchvision network.
// One model exists per run; boxing the larger variant would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Module, Debug)]
pub enum TorchvisionNet {
    /// ResNet-18, -34 or -50.
    ResNet(ResNet),
    /// MobileNetV2.
    MobileNetV2(MobileNetV2),
    /// EfficientNet-B0 … B3.
    EfficientNet(EfficientNet),
    /// ConvNeXt-Tiny or -Small.
    ConvNext(ConvNext),
    /// ViT-B/16.
    Vit(VisionTransformer),
}

impl TorchvisionNet {
    /// `[batch, C, H, W]` images to `[batch, classes]` logits.
    pub fn forward(&self, images: Tensor<4>) -> Tensor<2> {
        self.head(self.features(images))
    }

    /// The pooled features the classifier head reads, `[batch, feature_width]`.
    pub fn features(&self, images: Tensor<4>) -> Tensor<2> {
        match self {
            Self::ResNet(net) => net.features(images),
            Self::MobileNetV2(net) => net.features(images),
            Self::EfficientNet(net) => net.features(images),
            Self::ConvNext(net) => net.features(images),
            Self::Vit(net) => net.features(images),
        }
    }

    /// The classifier head alone: features to logits.
    pub fn head(&self, features: Tensor<2>) -> Tensor<2> {
        match self {
            Self::EfficientNet(net) => net.head(features),
            _ => self.head_layer().forward(features),
        }
    }

    /// The classifier head's linear layer.
    pub fn head_layer(&self) -> &Linear {
        match self {
            Self::ResNet(net) => &net.fc,
            Self::MobileNetV2(net) => &net.classifier,
            Self::EfficientNet(net) => &net.classifier,
            Self::ConvNext(net) => &net.classifier,
            Self::Vit(net) => &net.head,
        }
    }

    /// This network for one-channel images: its first convolution's filters summed over the
    /// three colour channels.
    pub fn with_grey_stem(self) -> Self {
        let grey = |conv: Conv2d| Conv2d {
            weight: Param::from_tensor(conv.weight.val().detach().sum_dim(1)),
            ..conv
        };
        match self {
            Self::ResNet(net) => Self::ResNet(ResNet {
                conv1: grey(net.conv1),
                ..net
            }),
            Self::MobileNetV2(mut net) => {
                net.stem.conv = grey(net.stem.conv);
                Self::MobileNetV2(net)
            }
            Self::EfficientNet(mut net) => {
                net.stem.conv = grey(net.stem.conv);
                Self::EfficientNet(net)
            }
            Self::ConvNext(mut net) => {
                net.stem.conv = grey(net.stem.conv);
                Self::ConvNext(net)
            }
            Self::Vit(mut net) => {
                net.conv_proj = grey(net.conv_proj);
                Self::Vit(net)
            }
        }
    }

    /// Channels of the images the first convolution takes.
    pub fn input_channels(&self) -> usize {
        let stem = match self {
            Self::ResNet(net) => &net.conv1,
            Self::MobileNetV2(net) => &net.stem.conv,
            Self::EfficientNet(net) => &net.stem.conv,
            Self::ConvNext(net) => &net.stem.conv,
            Self::Vit(net) => &net.conv_proj,
        };
        stem.weight.lazy_shape().dims::<4>()[1]
    }

    /// A ViT's patches along the height and the width; none for a convolutional network,
    /// which takes any image size.
    pub fn patch_grid(&self) -> Option<[usize; 2]> {
        match self {
            Self::Vit(net) => Some(net.grid),
            _ => None,
        }
    }

    /// This network for images of `grid` patches: a ViT's position embedding resampled to it,
    /// as torchvision's `interpolate_embeddings`; a convolutional network unchanged.
    pub fn with_patch_grid(self, grid: [usize; 2]) -> Result<Self, String> {
        match self {
            Self::Vit(mut net) if net.grid != grid => {
                let embedding = net.encoder.pos_embedding.val().detach();
                let resized = super::vit::resize_position_embedding(embedding, grid)?;
                net.encoder.pos_embedding = Param::from_tensor(resized);
                net.grid = grid;
                Ok(Self::Vit(net))
            }
            other => Ok(other),
        }
    }

    /// This network with `head` as its classifier head.
    pub fn with_head(self, head: Linear) -> Self {
        match self {
            Self::ResNet(net) => Self::ResNet(ResNet { fc: head, ..net }),
            Self::MobileNetV2(net) => Self::MobileNetV2(MobileNetV2 {
                classifier: head,
                ..net
            }),
            Self::EfficientNet(net) => Self::EfficientNet(EfficientNet {
                classifier: head,
                ..net
            }),
            Self::ConvNext(net) => Self::ConvNext(ConvNext {
                classifier: head,
                ..net
            }),
            Self::Vit(net) => Self::Vit(VisionTransformer { head, ..net }),
        }
    }
}

/// A ResNet block: two 3×3 convolutions (basic), or 1×1, 3×3, 1×1 (bottleneck, with `conv3`).
#[derive(Module, Debug)]
pub struct Block {
    /// 3×3 (basic, carries the stride) or 1×1 reduction (bottleneck).
    pub conv1: Conv2d,
    /// Batch norm after `conv1`.
    pub bn1: BatchNorm,
    /// 3×3 (basic: stride 1; bottleneck: carries the stride).
    pub conv2: Conv2d,
    /// Batch norm after `conv2`.
    pub bn2: BatchNorm,
    /// The bottleneck's 1×1 expansion; none in a basic block.
    pub conv3: Option<Conv2d>,
    /// Batch norm after `conv3`.
    pub bn3: Option<BatchNorm>,
    /// 1×1 projection of the shortcut where the shape changes (torchvision's `downsample.0/1`).
    pub downsample: Option<Projection>,
}

/// The 1×1 strided convolution and batch norm of a projected shortcut.
#[derive(Module, Debug)]
pub struct Projection {
    /// 1×1 convolution, no bias.
    pub conv: Conv2d,
    /// Batch norm after it.
    pub bn: BatchNorm,
}

/// Output channels of a bottleneck are its width times this (torchvision's `expansion`).
const BOTTLENECK_EXPANSION: usize = 4;

impl Block {
    fn basic(
        inputs: usize,
        width: usize,
        stride: usize,
        layers: LayerDefaults,
        dev: &Device,
    ) -> Self {
        Block {
            conv1: conv([inputs, width], 3, stride, 1, false, layers, dev),
            bn1: batch_norm(width, layers, dev),
            conv2: conv([width, width], 3, 1, 1, false, layers, dev),
            bn2: residual_batch_norm(width, layers, dev),
            conv3: None,
            bn3: None,
            downsample: projection(inputs, width, stride, layers, dev),
        }
    }

    fn bottleneck(
        inputs: usize,
        width: usize,
        stride: usize,
        layers: LayerDefaults,
        dev: &Device,
    ) -> Self {
        let outputs = width * BOTTLENECK_EXPANSION;
        Block {
            conv1: conv([inputs, width], 1, 1, 0, false, layers, dev),
            bn1: batch_norm(width, layers, dev),
            conv2: conv([width, width], 3, stride, 1, false, layers, dev),
            bn2: batch_norm(width, layers, dev),
            conv3: Some(conv([width, outputs], 1, 1, 0, false, layers, dev)),
            bn3: Some(residual_batch_norm(outputs, layers, dev)),
            downsample: projection(inputs, outputs, stride, layers, dev),
        }
    }

    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let shortcut = match &self.downsample {
            Some(down) => normalize(&down.bn, down.conv.forward(x.clone())),
            None => x.clone(),
        };
        let y = relu(normalize(&self.bn1, self.conv1.forward(x)));
        let mut y = normalize(&self.bn2, self.conv2.forward(y));
        if let (Some(conv3), Some(bn3)) = (&self.conv3, &self.bn3) {
            y = normalize(bn3, conv3.forward(relu(y)));
        }
        relu(y + shortcut)
    }
}

fn projection(
    inputs: usize,
    outputs: usize,
    stride: usize,
    layers: LayerDefaults,
    device: &Device,
) -> Option<Projection> {
    (stride != 1 || inputs != outputs).then(|| Projection {
        conv: conv([inputs, outputs], 1, stride, 0, false, layers, device),
        bn: batch_norm(outputs, layers, device),
    })
}

/// torchvision's ResNet: conv 7×7/2, batch norm, ReLU, max-pool 3×3/2, four stages, average
/// pool, `fc`.
#[derive(Module, Debug)]
pub struct ResNet {
    /// 7×7 stem convolution, stride 2, no bias.
    pub conv1: Conv2d,
    /// Batch norm after the stem.
    pub bn1: BatchNorm,
    /// 3×3 max-pool, stride 2, padding 1.
    pub maxpool: MaxPool2d,
    /// Stage 1 (64 wide, stride 1).
    pub layer1: Vec<Block>,
    /// Stage 2 (128 wide, stride 2).
    pub layer2: Vec<Block>,
    /// Stage 3 (256 wide, stride 2).
    pub layer3: Vec<Block>,
    /// Stage 4 (512 wide, stride 2).
    pub layer4: Vec<Block>,
    /// Pooled features to class logits.
    pub fc: Linear,
}

impl ResNet {
    fn new(
        arch: TorchvisionArch,
        channels: usize,
        classes: usize,
        layers: LayerDefaults,
        device: &Device,
    ) -> Self {
        let bottleneck = arch == TorchvisionArch::ResNet50;
        let mut inputs = 64;
        let mut stages: [Vec<Block>; 4] = Default::default();
        for (stage, (width, count)) in [64, 128, 256, 512]
            .into_iter()
            .zip(arch.stage_blocks())
            .enumerate()
        {
            for index in 0..count {
                let stride = if stage > 0 && index == 0 { 2 } else { 1 };
                stages[stage].push(if bottleneck {
                    Block::bottleneck(inputs, width, stride, layers, device)
                } else {
                    Block::basic(inputs, width, stride, layers, device)
                });
                inputs = if bottleneck {
                    width * BOTTLENECK_EXPANSION
                } else {
                    width
                };
            }
        }
        let [layer1, layer2, layer3, layer4] = stages;
        ResNet {
            conv1: conv([channels, 64], 7, 2, 3, false, layers, device),
            bn1: batch_norm(64, layers, device),
            maxpool: MaxPool2dConfig::new([3, 3])
                .with_strides([2, 2])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .init(),
            layer1,
            layer2,
            layer3,
            layer4,
            fc: linear(arch.feature_width(), classes, layers, device),
        }
    }

    fn features(&self, images: Tensor<4>) -> Tensor<2> {
        let mut x = relu(normalize(&self.bn1, self.conv1.forward(images)));
        x = self.maxpool.forward(x);
        for block in self
            .layer1
            .iter()
            .chain(&self.layer2)
            .chain(&self.layer3)
            .chain(&self.layer4)
        {
            x = block.forward(x);
        }
        global_average(x)
    }
}

/// Mean over height and width: `[batch, C, H, W]` to `[batch, C]`.
pub(crate) fn global_average(x: Tensor<4>) -> Tensor<2> {
    let [batch, channels, _, _] = x.dims();
    x.mean_dim(3).mean_dim(2).reshape([batch, channels])
}

/// A convolution, batch norm and ReLU6: torchvision's `Conv2dNormActivation` (`.0` and `.1`).
#[derive(Module, Debug)]
pub struct ConvNormAct {
    /// The convolution, no bias.
    pub conv: Conv2d,
    /// Batch norm after it.
    pub bn: BatchNorm,
}

impl ConvNormAct {
    fn new(
        channels: [usize; 2],
        kernel: usize,
        stride: usize,
        groups: usize,
        layers: LayerDefaults,
        device: &Device,
    ) -> Self {
        ConvNormAct {
            conv: grouped_conv(channels, kernel, stride, kernel / 2, groups, layers, device),
            bn: batch_norm(channels[1], layers, device),
        }
    }

    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        relu6(normalize(&self.bn, self.conv.forward(x)))
    }
}

/// MobileNetV2's inverted residual: 1×1 expansion (absent at expansion 1), 3×3 depthwise, 1×1
/// linear projection, and the identity shortcut where the shape allows.
#[derive(Module, Debug)]
pub struct InvertedResidual {
    /// 1×1 expansion to `t` times the input channels.
    pub expand: Option<ConvNormAct>,
    /// 3×3 depthwise convolution; carries the stride.
    pub depthwise: ConvNormAct,
    /// 1×1 projection to the output channels, no activation.
    pub project: Conv2d,
    /// Batch norm after the projection.
    pub project_bn: BatchNorm,
}

impl InvertedResidual {
    fn new(
        inputs: usize,
        outputs: usize,
        stride: usize,
        t: usize,
        layers: LayerDefaults,
        dev: &Device,
    ) -> Self {
        let hidden = inputs * t;
        InvertedResidual {
            expand: (t != 1).then(|| ConvNormAct::new([inputs, hidden], 1, 1, 1, layers, dev)),
            depthwise: ConvNormAct::new([hidden, hidden], 3, stride, hidden, layers, dev),
            project: conv([hidden, outputs], 1, 1, 0, false, layers, dev),
            project_bn: batch_norm(outputs, layers, dev),
        }
    }

    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let mut y = x.clone();
        if let Some(expand) = &self.expand {
            y = expand.forward(y);
        }
        y = normalize(
            &self.project_bn,
            self.project.forward(self.depthwise.forward(y)),
        );
        if self.residual() { x + y } else { y }
    }

    /// Whether the block adds its input to its output: torchvision's rule, stride 1 and as
    /// many channels out as in (the depthwise convolution carries the only stride).
    pub fn residual(&self) -> bool {
        let inputs = match &self.expand {
            Some(expand) => expand.conv.weight.lazy_shape().dims::<4>()[1],
            None => self.depthwise.conv.weight.lazy_shape().dims::<4>()[0],
        };
        let outputs = self.project.weight.lazy_shape().dims::<4>()[0];
        self.depthwise.conv.stride == [1, 1] && inputs == outputs
    }
}

/// Channels of MobileNetV2's last 1×1 convolution, the features its classifier reads.
const LAST_CHANNELS: usize = 1280;

/// MobileNetV2's stages as torchvision lists them: expansion t, channels c, repeats n, stride s.
const MOBILENET_STAGES: [(usize, usize, usize, usize); 7] = [
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
];

/// torchvision's MobileNetV2 at width 1.0: `features.0` the stem, `features.1`–`17` the
/// inverted residuals, `features.18` the last 1×1 convolution, `classifier.1` the linear layer.
#[derive(Module, Debug)]
pub struct MobileNetV2 {
    /// 3×3 stem, stride 2, 32 channels.
    pub stem: ConvNormAct,
    /// The seventeen inverted residual blocks.
    pub blocks: Vec<InvertedResidual>,
    /// 1×1 convolution to 1280 channels.
    pub last: ConvNormAct,
    /// 1280 pooled features to class logits (torchvision's dropout before it is 0.2).
    pub classifier: Linear,
}

impl MobileNetV2 {
    fn new(channels: usize, classes: usize, layers: LayerDefaults, device: &Device) -> Self {
        let mut inputs = 32;
        let mut blocks = Vec::new();
        for (t, c, n, s) in MOBILENET_STAGES {
            for index in 0..n {
                let stride = if index == 0 { s } else { 1 };
                blocks.push(InvertedResidual::new(inputs, c, stride, t, layers, device));
                inputs = c;
            }
        }
        MobileNetV2 {
            stem: ConvNormAct::new([channels, 32], 3, 2, 1, layers, device),
            blocks,
            last: ConvNormAct::new([inputs, LAST_CHANNELS], 1, 1, 1, layers, device),
            classifier: linear(LAST_CHANNELS, classes, layers, device),
        }
    }

    fn features(&self, images: Tensor<4>) -> Tensor<2> {
        let mut x = self.stem.forward(images);
        for block in &self.blocks {
            x = block.forward(x);
        }
        global_average(self.last.forward(x))
    }
}

/// The torchvision ↔ Kiln prefixes of MobileNetV2: torchvision numbers all 19 parts of
/// `features` and the pieces inside each block's `conv` sequence.
fn mobilenet_prefixes() -> Vec<(String, String)> {
    let mut pairs = vec![
        ("features.0.0.".to_owned(), "stem.conv.".to_owned()),
        ("features.0.1.".to_owned(), "stem.bn.".to_owned()),
    ];
    let mut block = 0;
    for (t, _, n, _) in MOBILENET_STAGES {
        for _ in 0..n {
            let torch = format!("features.{}.conv.", block + 1);
            let kiln = format!("blocks.{block}.");
            let parts: &[(&str, &str)] = if t == 1 {
                &[
                    ("0.0.", "depthwise.conv."),
                    ("0.1.", "depthwise.bn."),
                    ("1.", "project."),
                    ("2.", "project_bn."),
                ]
            } else {
                &[
                    ("0.0.", "expand.conv."),
                    ("0.1.", "expand.bn."),
                    ("1.0.", "depthwise.conv."),
                    ("1.1.", "depthwise.bn."),
                    ("2.", "project."),
                    ("3.", "project_bn."),
                ]
            };
            for (from, to) in parts {
                pairs.push((format!("{torch}{from}"), format!("{kiln}{to}")));
            }
            block += 1;
        }
    }
    let last = block + 1;
    pairs.push((format!("features.{last}.0."), "last.conv.".to_owned()));
    pairs.push((format!("features.{last}.1."), "last.bn.".to_owned()));
    pairs.push(("classifier.1.".to_owned(), "classifier.".to_owned()));
    pairs
}
