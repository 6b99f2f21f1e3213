//! torchvision's published ImageNet weights: where they are, how they are checked, where they
//! are kept.
//!
//! ```text
//! <data root>/weights/
//!   resnet18-f37072fd.pth          torchvision's own file name: its SHA-256 begins f37072fd
//!   resnet50-11ad3fa6.pth
//!   .partial-weights-<pid>/        only while a download runs; removed however it ends
//! ```
//!
//! Each file downloads as [`crate::data::fetch`] downloads a data set: into a scratch folder,
//! checked, then renamed into place, so the folder never holds half a file. torchvision
//! publishes the leading digits of each file's SHA-256 in its name and torch hub checks those;
//! Kiln checks the same digits.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use crate::data::DataError;
use crate::data::fetch::{Destination, FetchProgress, Manifest, Payload, RemoteFile, download};
use crate::model::TorchvisionArch;

/// Where torchvision's weights are served from.
const BASE_URL: &str = "https://download.pytorch.org/models/";

/// The folder under the data root that keeps downloaded weights.
pub const WEIGHTS_DIR: &str = "weights";

/// torchvision's default ImageNet weights of one architecture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImageNetWeights {
    /// The architecture they are for.
    pub arch: TorchvisionArch,
    /// torchvision's file name, which is also the name Kiln keeps.
    pub file_name: &'static str,
    /// torchvision's name for them (`IMAGENET1K_V2`).
    pub version: &'static str,
    /// Top-1 accuracy on ImageNet's validation set, as torchvision reports it.
    pub top1_percent: f64,
}

impl ImageNetWeights {
    /// The `DEFAULT` weights torchvision 0.29 gives `arch`.
    pub fn of(arch: TorchvisionArch) -> Self {
        let (file_name, version, top1_percent) = match arch {
            TorchvisionArch::ResNet18 => ("resnet18-f37072fd.pth", "IMAGENET1K_V1", 69.758),
            TorchvisionArch::ResNet34 => ("resnet34-b627a593.pth", "IMAGENET1K_V1", 73.314),
            TorchvisionArch::ResNet50 => ("resnet50-11ad3fa6.pth", "IMAGENET1K_V2", 80.858),
            TorchvisionArch::MobileNetV2 => ("mobilenet_v2-7ebf99e0.pth", "IMAGENET1K_V2", 72.154),
            TorchvisionArch::EfficientNetB0 => (
                "efficientnet_b0_rwightman-7f5810bc.pth",
                "IMAGENET1K_V1",
                77.692,
            ),
            TorchvisionArch::EfficientNetB1 => {
                ("efficientnet_b1-c27df63c.pth", "IMAGENET1K_V2", 79.838)
            }
            TorchvisionArch::EfficientNetB2 => (
                "efficientnet_b2_rwightman-c35c1473.pth",
                "IMAGENET1K_V1",
                80.608,
            ),
            TorchvisionArch::EfficientNetB3 => (
                "efficientnet_b3_rwightman-b3899882.pth",
                "IMAGENET1K_V1",
                82.008,
            ),
            TorchvisionArch::ConvNextTiny => {
                ("convnext_tiny-983f1562.pth", "IMAGENET1K_V1", 82.520)
            }
            TorchvisionArch::ConvNextSmall => {
                ("convnext_small-0c510722.pth", "IMAGENET1K_V1", 83.616)
            }
            TorchvisionArch::VitB16 => ("vit_b_16-c867db91.pth", "IMAGENET1K_V1", 81.072),
        };
        Self {
            arch,
            file_name,
            version,
            top1_percent,
        }
    }

    /// The leading digits of the file's SHA-256, from its name (`resnet18-f37072fd.pth`).
    pub fn sha256_prefix(&self) -> &'static str {
        let stem = self.file_name.trim_end_matches(".pth");
        stem.rsplit_once('-').map_or(stem, |(_, digits)| digits)
    }

    /// The address torchvision downloads them from.
    pub fn url(&self) -> String {
        format!("{BASE_URL}{}", self.file_name)
    }

    /// Where they are kept under `data_root`, downloaded or not.
    pub fn path_in(&self, data_root: &Path) -> PathBuf {
        data_root.join(WEIGHTS_DIR).join(self.file_name)
    }

    /// The kept file under `data_root`, when it has been downloaded.
    pub fn find_in(&self, data_root: &Path) -> Option<PathBuf> {
        let path = self.path_in(data_root);
        path.is_file().then_some(path)
    }
}

/// Downloads `arch`'s ImageNet weights into `data_root/weights/` and returns the file.
pub fn fetch(
    arch: TorchvisionArch,
    data_root: &Path,
    on_progress: &mut dyn FnMut(&FetchProgress),
    cancel: &AtomicBool,
) -> Result<PathBuf, DataError> {
    let weights = ImageNetWeights::of(arch);
    let files = [RemoteFile {
        name: weights.file_name,
        sha256_hex: weights.sha256_prefix(),
        payload: Payload::AsIs,
    }];
    let manifest = Manifest {
        base_urls: &[BASE_URL],
        files: &files,
    };
    let destination = Destination {
        dir_name: WEIGHTS_DIR,
        display_name: arch.title(),
    };
    download(&manifest, destination, data_root, on_progress, cancel)?;
    Ok(weights.path_in(data_root))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_file_names_the_sha256_digits_torch_hub_checks() {
        for arch in TorchvisionArch::ALL {
            let weights = ImageNetWeights::of(arch);
            let digits = weights.sha256_prefix();
            assert_eq!(digits.len(), 8, "{}", weights.file_name);
            assert!(digits.bytes().all(|b| b.is_ascii_hexdigit()));
            assert!(weights.file_name.starts_with(arch.torchvision_name()));
            assert!(
                weights
                    .url()
                    .starts_with("https://download.pytorch.org/models/")
            );
        }
        let path = ImageNetWeights::of(TorchvisionArch::ResNet50).path_in(Path::new("/data"));
        assert_eq!(path, Path::new("/data/weights/resnet50-11ad3fa6.pth"));
    }
}
