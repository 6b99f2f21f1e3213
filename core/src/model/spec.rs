//! The model spec: what a config file or a command line says about the architecture.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::ModelError;
use super::torchvision::TorchvisionArch;

/// Hidden widths of `mlp` when the spec names none: the `fashion-mlp` reference workload.
pub const DEFAULT_MLP_WIDTHS: [usize; 2] = [512, 512];

/// Nonlinearity between the hidden layers of an MLP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Activation {
    /// max(0, x).
    #[default]
    Relu,
    /// Hyperbolic tangent.
    Tanh,
    /// Gaussian error linear unit (exact, erf-based).
    Gelu,
}

impl Activation {
    /// Every activation, in the order the help text lists them.
    pub const ALL: [Activation; 3] = [Activation::Relu, Activation::Tanh, Activation::Gelu];

    /// The lowercase name used in specs and config files.
    pub fn name(self) -> &'static str {
        match self {
            Activation::Relu => "relu",
            Activation::Tanh => "tanh",
            Activation::Gelu => "gelu",
        }
    }
}

impl fmt::Display for Activation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Activation {
    type Err = ModelError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim().to_ascii_lowercase();
        Activation::ALL
            .into_iter()
            .find(|activation| activation.name() == wanted)
            .ok_or_else(|| ModelError::UnknownActivation {
                text: text.to_string(),
            })
    }
}

/// Which network to train, before it is sized to a data set.
///
/// # Command-line grammar
///
/// ```text
/// spec       = mlp | "cnn" | vgg | "resnet18" | torchvision
/// torchvision = "resnet18-imagenet" | "resnet34" | "resnet50" | "mobilenet-v2"
///             | "efficientnet-b0" … "efficientnet-b3" | "convnext-tiny" | "convnext-small"
///             | "vit-b-16"
/// mlp        = "mlp" [ ":" widths { ":" option } ]
/// widths     = width { "," width }             (positive integers: hidden layer sizes)
/// option     = activation | dropout            (each at most once, in any order)
/// activation = "relu" | "tanh" | "gelu"        (default relu)
/// dropout    = a number in [0, 1)              (default 0: no dropout)
/// vgg        = "vgg16" [ "-bn" ] [ "@" size ]  (-bn: batch norm; @size: resize input to size×size)
/// ```
///
/// `mlp` alone is `mlp:512,512`. Examples: `mlp:512,512`, `mlp:8,8:tanh`, `mlp:512,512:relu:0.2`,
/// `cnn`, `vgg16`, `vgg16-bn`, `vgg16@224`, `vgg16-bn@224`, `resnet18`, `resnet50`. The
/// torchvision forms are ImageNet's architectures exactly, so torchvision's weights load into
/// them; `resnet18` alone is the CIFAR form, trained from scratch. Parsing ignores case and
/// surrounding spaces; [`Display`](fmt::Display) writes the canonical form, which parses back to
/// the same spec.
///
/// # Config-file form (TOML)
///
/// ```toml
/// [model]
/// kind = "mlp"            # mlp | cnn | vgg16 | resnet18 | or a torchvision architecture (above)
/// widths = [512, 512]     # optional, default [512, 512]
/// activation = "relu"     # optional: relu | tanh | gelu
/// dropout = 0.0           # optional
/// # kind = "vgg16", batch_norm = true, resize_to = 224   (both optional)
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "kebab-case",
    rename_all_fields = "snake_case",
    deny_unknown_fields
)]
pub enum ModelSpec {
    /// Fully connected network on the flattened image.
    Mlp {
        /// Width of each hidden layer, input side first.
        #[serde(default = "default_mlp_widths")]
        widths: Vec<usize>,
        /// Nonlinearity after each hidden layer.
        #[serde(default)]
        activation: Activation,
        /// Probability of zeroing a hidden activation while training; 0 disables dropout.
        #[serde(default)]
        dropout: f64,
    },
    /// Small four-convolution network, fast enough for MNIST-sized data on a CPU.
    Cnn,
    /// VGG16 (Simonyan & Zisserman, configuration D), trained from scratch.
    Vgg16 {
        /// Insert a BatchNorm after every convolution (torchvision's `vgg16_bn`).
        #[serde(default)]
        batch_norm: bool,
        /// Bilinearly resize every input to this square size before the first convolution.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resize_to: Option<usize>,
    },
    /// ResNet-18 in its CIFAR form: 3×3 stem, no stem max-pool.
    #[serde(rename = "resnet18")]
    ResNet18,
    /// torchvision's ResNet-18: 7×7 stem and max-pool, for ImageNet weights.
    #[serde(rename = "resnet18-imagenet")]
    ResNet18ImageNet,
    /// torchvision's ResNet-34.
    #[serde(rename = "resnet34")]
    ResNet34,
    /// torchvision's ResNet-50 (bottleneck blocks, stride in the 3×3 convolution).
    #[serde(rename = "resnet50")]
    ResNet50,
    /// torchvision's MobileNetV2 at width 1.0.
    #[serde(rename = "mobilenet-v2")]
    MobileNetV2,
    /// torchvision's EfficientNet-B0.
    #[serde(rename = "efficientnet-b0")]
    EfficientNetB0,
    /// torchvision's EfficientNet-B1 (B0 1.1× deeper).
    #[serde(rename = "efficientnet-b1")]
    EfficientNetB1,
    /// torchvision's EfficientNet-B2 (1.1× wider, 1.2× deeper).
    #[serde(rename = "efficientnet-b2")]
    EfficientNetB2,
    /// torchvision's EfficientNet-B3 (1.2× wider, 1.4× deeper).
    #[serde(rename = "efficientnet-b3")]
    EfficientNetB3,
    /// torchvision's ConvNeXt-Tiny.
    #[serde(rename = "convnext-tiny")]
    ConvNextTiny,
    /// torchvision's ConvNeXt-Small.
    #[serde(rename = "convnext-small")]
    ConvNextSmall,
    /// torchvision's ViT-B/16 (image sides multiples of 16).
    #[serde(rename = "vit-b-16")]
    VitB16,
}

fn default_mlp_widths() -> Vec<usize> {
    DEFAULT_MLP_WIDTHS.to_vec()
}

impl Default for ModelSpec {
    fn default() -> Self {
        ModelSpec::Mlp {
            widths: default_mlp_widths(),
            activation: Activation::Relu,
            dropout: 0.0,
        }
    }
}

/// Every accepted spec form, for error messages and help text.
pub const SPEC_FORMS: &str = "mlp[:WIDTHS[:ACTIVATION][:DROPOUT]] (e.g. mlp:512,512:relu:0.2), \
                              cnn, vgg16, vgg16-bn, vgg16@SIZE, vgg16-bn@SIZE, resnet18 (CIFAR form), \
                              resnet18-imagenet, resnet34, resnet50, mobilenet-v2, efficientnet-b0 … \
                              efficientnet-b3, convnext-tiny, convnext-small or vit-b-16";

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelSpec::Mlp {
                widths,
                activation,
                dropout,
            } => {
                f.write_str("mlp:")?;
                for (i, width) in widths.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{width}")?;
                }
                // Keep the short forms short: defaults are left out, but a dropout forces the
                // activation to be written so the text reads in the documented order.
                if *dropout != 0.0 {
                    write!(f, ":{activation}:{dropout}")
                } else if *activation != Activation::Relu {
                    write!(f, ":{activation}")
                } else {
                    Ok(())
                }
            }
            ModelSpec::Cnn => f.write_str("cnn"),
            ModelSpec::Vgg16 {
                batch_norm,
                resize_to,
            } => {
                f.write_str(if *batch_norm { "vgg16-bn" } else { "vgg16" })?;
                match resize_to {
                    Some(size) => write!(f, "@{size}"),
                    None => Ok(()),
                }
            }
            ModelSpec::ResNet18 => f.write_str("resnet18"),
            other => match other.torchvision() {
                Some(arch) => f.write_str(arch.kiln_name()),
                None => Ok(()),
            },
        }
    }
}

impl FromStr for ModelSpec {
    type Err = ModelError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let lowered = text.trim().to_ascii_lowercase();
        let spec = match lowered.as_str() {
            "cnn" => ModelSpec::Cnn,
            "resnet18" | "resnet-18" => ModelSpec::ResNet18,
            "resnet-18-imagenet" => ModelSpec::ResNet18ImageNet,
            "resnet-34" => ModelSpec::ResNet34,
            "resnet-50" => ModelSpec::ResNet50,
            "mobilenetv2" => ModelSpec::MobileNetV2,
            "mlp" => ModelSpec::default(),
            other => {
                let torchvision = TorchvisionArch::ALL.into_iter().find(|arch| {
                    let underscored = arch.kiln_name().replace('-', "_");
                    other == arch.kiln_name() || other == underscored
                });
                if let Some(arch) = torchvision {
                    arch.spec()
                } else if let Some(rest) = other.strip_prefix("mlp:") {
                    parse_mlp(rest)?
                } else if other.starts_with("vgg16") {
                    parse_vgg(other)?
                } else {
                    return Err(ModelError::UnknownModel {
                        text: text.trim().to_string(),
                    });
                }
            }
        };
        spec.check_spec()?;
        Ok(spec)
    }
}

fn parse_mlp(rest: &str) -> Result<ModelSpec, ModelError> {
    let mut parts = rest.split(':');
    let widths_text = parts.next().unwrap_or_default();
    let widths = widths_text
        .split(',')
        .map(|part| {
            part.trim()
                .parse::<usize>()
                .map_err(|_| ModelError::InvalidWidth {
                    part: part.trim().to_string(),
                })
        })
        .collect::<Result<Vec<_>, _>>()?;

    let mut activation = None;
    let mut dropout = None;
    for part in parts {
        let part = part.trim();
        if let Ok(parsed) = part.parse::<Activation>() {
            if activation.replace(parsed).is_some() {
                return Err(ModelError::RepeatedMlpOption {
                    part: part.to_string(),
                });
            }
        } else if let Ok(parsed) = part.parse::<f64>() {
            if dropout.replace(parsed).is_some() {
                return Err(ModelError::RepeatedMlpOption {
                    part: part.to_string(),
                });
            }
        } else {
            return Err(ModelError::InvalidMlpOption {
                part: part.to_string(),
            });
        }
    }

    Ok(ModelSpec::Mlp {
        widths,
        activation: activation.unwrap_or_default(),
        dropout: dropout.unwrap_or(0.0),
    })
}

fn parse_vgg(text: &str) -> Result<ModelSpec, ModelError> {
    let (name, size) = match text.split_once('@') {
        Some((name, size)) => (name, Some(size)),
        None => (text, None),
    };
    let batch_norm = match name {
        "vgg16" => false,
        "vgg16-bn" | "vgg16bn" | "vgg16_bn" => true,
        _ => {
            return Err(ModelError::UnknownModel {
                text: text.to_string(),
            });
        }
    };
    let resize_to = match size {
        None => None,
        Some(size) => {
            Some(
                size.trim()
                    .parse::<usize>()
                    .map_err(|_| ModelError::InvalidResize {
                        part: size.trim().to_string(),
                    })?,
            )
        }
    };
    Ok(ModelSpec::Vgg16 {
        batch_norm,
        resize_to,
    })
}

impl ModelSpec {
    /// Short human-readable name, e.g. "MLP 512-512 (relu)" or "VGG16-BN @224".
    pub fn title(&self) -> String {
        match self {
            ModelSpec::Mlp {
                widths,
                activation,
                dropout,
            } => {
                let widths = widths
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join("-");
                if *dropout > 0.0 {
                    format!("MLP {widths} ({activation}, dropout {dropout})")
                } else {
                    format!("MLP {widths} ({activation})")
                }
            }
            ModelSpec::Cnn => "CNN".to_string(),
            ModelSpec::Vgg16 {
                batch_norm,
                resize_to,
            } => {
                let name = if *batch_norm { "VGG16-BN" } else { "VGG16" };
                match resize_to {
                    Some(size) => format!("{name} @{size}"),
                    None => name.to_string(),
                }
            }
            ModelSpec::ResNet18 => "ResNet-18".to_string(),
            other => other
                .torchvision()
                .map_or_else(String::new, |arch| arch.title().to_owned()),
        }
    }

    /// Checks what the spec says on its own, without knowing the data set.
    pub(crate) fn check_spec(&self) -> Result<(), ModelError> {
        match self {
            ModelSpec::Mlp {
                widths, dropout, ..
            } => {
                if widths.is_empty() {
                    return Err(ModelError::NoHiddenLayers);
                }
                if let Some(layer) = widths.iter().position(|&width| width == 0) {
                    return Err(ModelError::ZeroWidth { layer: layer + 1 });
                }
                if !dropout.is_finite() || !(0.0..1.0).contains(dropout) {
                    return Err(ModelError::InvalidDropout { value: *dropout });
                }
                Ok(())
            }
            ModelSpec::Vgg16 {
                resize_to: Some(size),
                ..
            } if *size < super::vgg::MIN_SIDE => Err(ModelError::ResizeTooSmall {
                size: *size,
                min: super::vgg::MIN_SIDE,
            }),
            ModelSpec::Vgg16 {
                resize_to: Some(size),
                ..
            } if *size > super::vgg::MAX_SIDE => Err(ModelError::ResizeTooLarge {
                size: *size,
                max: super::vgg::MAX_SIDE,
            }),
            _ => Ok(()),
        }
    }

    /// The torchvision architecture this spec is, for the ones whose weights load from
    /// torchvision's files.
    pub fn torchvision(&self) -> Option<TorchvisionArch> {
        match self {
            ModelSpec::ResNet18ImageNet => Some(TorchvisionArch::ResNet18),
            ModelSpec::ResNet34 => Some(TorchvisionArch::ResNet34),
            ModelSpec::ResNet50 => Some(TorchvisionArch::ResNet50),
            ModelSpec::MobileNetV2 => Some(TorchvisionArch::MobileNetV2),
            ModelSpec::EfficientNetB0 => Some(TorchvisionArch::EfficientNetB0),
            ModelSpec::EfficientNetB1 => Some(TorchvisionArch::EfficientNetB1),
            ModelSpec::EfficientNetB2 => Some(TorchvisionArch::EfficientNetB2),
            ModelSpec::EfficientNetB3 => Some(TorchvisionArch::EfficientNetB3),
            ModelSpec::ConvNextTiny => Some(TorchvisionArch::ConvNextTiny),
            ModelSpec::ConvNextSmall => Some(TorchvisionArch::ConvNextSmall),
            ModelSpec::VitB16 => Some(TorchvisionArch::VitB16),
            _ => None,
        }
    }
}
