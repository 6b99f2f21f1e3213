//! Pretrained weights: torchvision's `.pth` and `.safetensors` files loaded into Kiln's
//! torchvision architectures through burn-store (its PyTorch adapter transposes linear weights
//! and renames batch-norm γ/β; the table of each architecture's
//! [`TorchvisionArch::key_prefixes`] renames what torchvision numbers).
//!
//! A file that does not fit is refused with one sentence naming the first key that does not:
//! a tensor of the wrong shape, a key the network lacks, a part of the network the file lacks.
//! The one tolerated difference is the classifier head: a file with another class count
//! (ImageNet's 1000) loads everything but the head, which keeps its fresh weights.

// A weights file is loaded once a run: an error that names a file, a key and two shapes costs
// nothing worth boxing.
#![allow(clippy::result_large_err)]

use std::fmt;
use std::path::{Path, PathBuf};

use burn_store::{
    ApplyError, ApplyResult, KeyRemapper, ModuleSnapshot, PyTorchToBurnAdapter, PytorchStore,
    SafetensorsStore,
};

use crate::data::ImageShape;
use crate::model::{Classifier, LayerDefaults, ModelSpec, TorchvisionArch};

pub mod export;
pub mod fetch;
pub mod onnx;
pub mod onnx_proto;

/// Where a run's starting weights come from: torchvision's ImageNet weights for its
/// architecture (downloaded by `kiln weights fetch`), or a file. In config.toml it is the word
/// `imagenet` or the file's path (`./imagenet` for a file of that name).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", from = "String")]
pub enum WeightsSource {
    /// torchvision's default ImageNet weights of the run's architecture.
    ImageNet,
    /// A `.pth` or `.safetensors` file.
    File(PathBuf),
}

impl WeightsSource {
    /// The word that stands for [`WeightsSource::ImageNet`].
    pub const IMAGENET: &'static str = "imagenet";

    /// The file to load for `spec`: the given one, or the downloaded ImageNet weights found
    /// under `data_dir`, `KILN_DATA_DIR` or the per-user data folder.
    pub fn resolve(
        &self,
        spec: &ModelSpec,
        data_dir: Option<&Path>,
    ) -> Result<PathBuf, WeightsError> {
        let arch = spec
            .torchvision()
            .ok_or_else(|| WeightsError::NotPretrainable {
                model: spec.title(),
            })?;
        match self {
            Self::File(path) => Ok(path.clone()),
            Self::ImageNet => {
                let weights = fetch::ImageNetWeights::of(arch);
                crate::data::data_roots(data_dir)
                    .iter()
                    .find_map(|root| weights.find_in(root))
                    .ok_or(WeightsError::NotDownloaded {
                        arch: arch.torchvision_name(),
                    })
            }
        }
    }
}

impl fmt::Display for WeightsSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ImageNet => f.write_str(Self::IMAGENET),
            Self::File(path) => write!(f, "{}", path.display()),
        }
    }
}

impl From<String> for WeightsSource {
    fn from(text: String) -> Self {
        if text.trim().eq_ignore_ascii_case(Self::IMAGENET) {
            Self::ImageNet
        } else {
            Self::File(PathBuf::from(text))
        }
    }
}

impl From<WeightsSource> for String {
    fn from(source: WeightsSource) -> Self {
        source.to_string()
    }
}

impl std::str::FromStr for WeightsSource {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Self::from(text.to_owned()))
    }
}

/// What a weights file did to the model it was loaded into.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Loaded {
    /// Tensors taken from the file.
    pub tensors: usize,
    /// Whether the classifier head kept its fresh weights (the file's had another class count).
    pub fresh_head: bool,
    /// Whether a colour file's first convolution was summed over its channels for grey images.
    #[serde(default)]
    pub grey_stem: bool,
    /// Whether a ViT's position embedding was resampled from the file's image size to the run's.
    #[serde(default)]
    pub resized_positions: bool,
}

impl fmt::Display for Loaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "started from pretrained weights: {} tensors",
            self.tensors
        )?;
        if self.fresh_head {
            f.write_str(
                "; the classifier head starts fresh, since the file's has another class count",
            )?;
        }
        if self.grey_stem {
            f.write_str("; the first convolution's colour filters are summed for grey images")?;
        }
        if self.resized_positions {
            f.write_str(
                "; the position embedding is resampled (bicubic, as torchvision's interpolate_embeddings) to this image size",
            )?;
        }
        Ok(())
    }
}

/// Why a weights file cannot start this model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WeightsError {
    /// The model is not one whose weights come from torchvision's files.
    #[error(
        "{model} has no pretrained weights; pick a torchvision architecture ({}) to start from a weights file.",
        TorchvisionArch::kiln_names()
    )]
    NotPretrainable {
        /// The model's display name.
        model: String,
    },
    /// The ImageNet weights of the architecture have not been downloaded.
    #[error(
        "the ImageNet weights of {arch} are not downloaded yet; run `kiln weights fetch {arch}` (about 50–100 MB, once), or pick a weights file."
    )]
    NotDownloaded {
        /// The architecture's torchvision name.
        arch: &'static str,
    },
    /// The weights file is not there.
    #[error(
        "{} does not exist; give the path of a .pth or .safetensors file, or `imagenet` for torchvision's weights.",
        path.display()
    )]
    NoFile {
        /// The path given.
        path: PathBuf,
    },
    /// A `.pth` file's bytes, which burn-store can read only from a disk (a browser page's).
    #[error(
        "{} is a PyTorch file, which Kiln reads only from a disk: in a browser page, start from its .safetensors twin (`safetensors.torch.save_file(torch.load(\"{}\"), \"weights.safetensors\")` in Python writes one), or train in Kiln's desktop app.",
        path.display(),
        path.file_name().unwrap_or_default().to_string_lossy()
    )]
    PytorchInMemory {
        /// The file's name.
        path: PathBuf,
    },
    /// The file could not be opened or parsed.
    #[error(
        "{} is not a readable PyTorch (.pth) or safetensors file ({reason}); download it again or export it with torch.save / safetensors.torch.save_file.",
        path.display()
    )]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The reader's own words.
        reason: String,
    },
    /// A tensor's shape differs from the network's.
    #[error(
        "{} does not fit {arch}: `{key}` has shape {found:?} in the file but {expected:?} in the network{hint}.",
        path.display()
    )]
    WrongShape {
        /// The file.
        path: PathBuf,
        /// The architecture's torchvision name.
        arch: &'static str,
        /// The key, with torchvision's name.
        key: String,
        /// The shape the network has.
        expected: Vec<usize>,
        /// The shape in the file.
        found: Vec<usize>,
        /// What the mismatch most likely means.
        hint: &'static str,
    },
    /// The file lacks a tensor the network has.
    #[error(
        "{} does not fit {arch}: it has no `{key}`, which {arch} needs ({count} missing in all); is it the weights of another architecture?",
        path.display()
    )]
    Missing {
        /// The file.
        path: PathBuf,
        /// The architecture's torchvision name.
        arch: &'static str,
        /// The first missing key, with torchvision's name.
        key: String,
        /// How many are missing.
        count: usize,
    },
    /// The file has a tensor the network lacks.
    #[error(
        "{} does not fit {arch}: its `{key}` is no part of {arch} ({count} such keys in all); is it the weights of another architecture?",
        path.display()
    )]
    Unexpected {
        /// The file.
        path: PathBuf,
        /// The architecture's torchvision name.
        arch: &'static str,
        /// The first key the network has no place for.
        key: String,
        /// How many there are.
        count: usize,
    },
    /// A tensor could not be converted (its dtype, say).
    #[error("{} does not fit {arch}: {reason}.", path.display())]
    Unusable {
        /// The file.
        path: PathBuf,
        /// The architecture's torchvision name.
        arch: &'static str,
        /// burn-store's words, with the key.
        reason: String,
    },
}

/// The file formats, told apart by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Pytorch,
    Safetensors,
}

impl Format {
    fn of(path: &Path) -> Format {
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match extension.as_deref() {
            Some("safetensors") => Format::Safetensors,
            _ => Format::Pytorch,
        }
    }
}

/// Loads the torchvision weights in `path` into `model`, built from `spec`.
///
/// Grey images meet a colour file's first convolution by summing its three input filters into
/// one (what timm does): the network then sees a grey image as it saw one in colour.
pub fn load(model: &mut Classifier, spec: &ModelSpec, path: &Path) -> Result<Loaded, WeightsError> {
    load_from(model, spec, Source::Disk(path))
}

/// Loads a `.safetensors` file's `bytes` into `model` as [`load`] loads a file; `name` stands
/// for the file in sentences and tells its format. A `.pth` is refused: burn-store reads one
/// only from a disk, so a browser page takes safetensors.
pub fn load_bytes(
    model: &mut Classifier,
    spec: &ModelSpec,
    name: &Path,
    bytes: &[u8],
) -> Result<Loaded, WeightsError> {
    load_from(model, spec, Source::Memory(name, bytes))
}

/// Loads the weights file at `path` from where this build finds files: the disk natively, the
/// visitor's chosen files in a browser page.
pub fn load_here(
    model: &mut Classifier,
    spec: &ModelSpec,
    path: &Path,
) -> Result<Loaded, WeightsError> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        load(model, spec, path)
    }
    #[cfg(target_arch = "wasm32")]
    {
        let bytes =
            crate::data::page_files::with(|files| crate::run_folder::read_bytes(files, path))
                .map_err(|_| WeightsError::NoFile {
                    path: path.to_owned(),
                })?;
        load_bytes(model, spec, path, &bytes)
    }
}

/// Where a weights file's bytes are.
#[derive(Debug, Clone, Copy)]
enum Source<'a> {
    /// A file on this computer's disk.
    Disk(&'a Path),
    /// A file's bytes, and the name it goes by.
    Memory(&'a Path, &'a [u8]),
}

impl Source<'_> {
    /// The file's path or name, for sentences and its format.
    fn path(&self) -> &Path {
        match self {
            Self::Disk(path) | Self::Memory(path, _) => path,
        }
    }
}

/// [`load`] from either source.
fn load_from(
    model: &mut Classifier,
    spec: &ModelSpec,
    source: Source,
) -> Result<Loaded, WeightsError> {
    match load_as_is(model, spec, source) {
        Err(WeightsError::WrongShape {
            key,
            expected,
            found,
            ..
        }) if is_grey_against_colour(&expected, &found) || key == POSITION_EMBEDDING => {
            load_through_twin(model, spec, source)
        }
        other => other,
    }
}

/// A ViT's position embedding, whose length follows the image size it was trained at.
const POSITION_EMBEDDING: &str = "encoder.pos_embedding";

/// Whether a stem that takes one channel met one that takes three.
fn is_grey_against_colour(expected: &[usize], found: &[usize]) -> bool {
    matches!((expected, found), ([_, 1, _, _], [_, 3, _, _])) && expected[0] == found[0]
}

/// Loads `source` into a twin of `model` that fits the file as it is (colour images, and for a
/// ViT the image size its position embedding was trained at), then hands `model` the twin
/// with its first convolution's filters summed over red, green and blue where `model` takes
/// grey images, and its position embedding resampled to `model`'s patch grid.
fn load_through_twin(
    model: &mut Classifier,
    spec: &ModelSpec,
    source: Source,
) -> Result<Loaded, WeightsError> {
    let not_pretrainable = || WeightsError::NotPretrainable {
        model: spec.title(),
    };
    let Classifier::Torchvision(net) = &*model else {
        return Err(not_pretrainable());
    };
    let arch = spec.torchvision().ok_or_else(not_pretrainable)?;
    let head = net.head_layer().weight.val();
    let [_, classes] = head.dims();
    let device = head.device();
    let grey = net.input_channels() == 1;
    let grid = net.patch_grid();
    let patch = arch.side_multiple();
    let twin_at = |grid: [usize; 2]| {
        let input = ImageShape {
            channels: 3,
            height: grid[0] * patch,
            width: grid[1] * patch,
        };
        Classifier::Torchvision(arch.build(input, classes, LayerDefaults::default(), &device))
    };
    // A convolutional network's size does not matter: the smallest it takes.
    let mut twin = twin_at(grid.unwrap_or([crate::model::TORCHVISION_MIN_SIDE; 2]));
    let mut loaded = match load_as_is(&mut twin, spec, source) {
        Err(WeightsError::WrongShape { key, found, .. }) if key == POSITION_EMBEDDING => {
            let patches = found.get(1).copied().unwrap_or(0).saturating_sub(1);
            let side = (patches as f64).sqrt().round() as usize;
            twin = twin_at([side.max(1); 2]);
            Loaded {
                resized_positions: true,
                ..load_as_is(&mut twin, spec, source)?
            }
        }
        other => other?,
    };
    let Classifier::Torchvision(mut net) = twin else {
        return Err(not_pretrainable());
    };
    if grey {
        net = net.with_grey_stem();
        loaded.grey_stem = true;
    }
    if let Some(grid) = grid {
        net = net
            .with_patch_grid(grid)
            .map_err(|reason| WeightsError::Unusable {
                path: source.path().to_owned(),
                arch: arch.torchvision_name(),
                reason,
            })?;
    }
    *model = Classifier::Torchvision(net);
    Ok(loaded)
}

/// Loads `source` into `model` exactly as the file has it.
fn load_as_is(
    model: &mut Classifier,
    spec: &ModelSpec,
    source: Source,
) -> Result<Loaded, WeightsError> {
    let arch = spec
        .torchvision()
        .ok_or_else(|| WeightsError::NotPretrainable {
            model: spec.title(),
        })?;
    let path = source.path();
    let unreadable = |reason: String| WeightsError::Unreadable {
        path: path.to_owned(),
        reason,
    };
    let format = Format::of(path);
    match source {
        Source::Disk(path) => match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(WeightsError::NoFile {
                    path: path.to_owned(),
                });
            }
            Err(e) => return Err(unreadable(e.to_string())),
            Ok(_) => {}
        },
        Source::Memory(path, _) if format == Format::Pytorch => {
            return Err(WeightsError::PytorchInMemory {
                path: path.to_owned(),
            });
        }
        Source::Memory(..) => {}
    }
    let remapper = torch_to_kiln(arch).map_err(unreadable)?;
    // Partial and unvalidated, so burn-store hands back everything that did not fit and the
    // sentence below can name the first of it. A reader that panics on a damaged archive
    // costs this load, not the program; the half-loaded model is dropped by the caller.
    let applied = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match source {
        Source::Disk(path) if format == Format::Pytorch => model
            .load_from(
                &mut PytorchStore::from_file(path)
                    .remap(remapper)
                    .skip_enum_variants(true)
                    .map_indices_contiguous(false)
                    .allow_partial(true)
                    .validate(false),
            )
            .map_err(|e| e.to_string()),
        _ => {
            let store = match source {
                Source::Disk(path) => SafetensorsStore::from_file(path),
                Source::Memory(_, bytes) => SafetensorsStore::from_bytes(Some(bytes.to_vec())),
            };
            model
                .load_from(
                    &mut store
                        .with_from_adapter(PyTorchToBurnAdapter)
                        .remap(remapper)
                        .skip_enum_variants(true)
                        .map_indices_contiguous(false)
                        .allow_partial(true)
                        .validate(false),
                )
                .map_err(|e| e.to_string())
        }
    }));
    let result = match applied {
        Ok(result) => result.map_err(unreadable)?,
        Err(payload) => {
            let words = crate::panics::panic_message(payload.as_ref()).to_owned();
            return Err(unreadable(words));
        }
    };
    judge(&result, arch, path)
}

/// The logits `model` gives for `images`, `[count, 3, side, side]` f32 values already scaled
/// as the network expects: what `kiln weights check --input` writes, to compare with PyTorch.
pub fn logits(
    model: &Classifier,
    images: Vec<f32>,
    side: usize,
    device: &burn::tensor::Device,
) -> Result<Vec<f32>, String> {
    use burn::tensor::{Tensor, TensorData, Transaction};
    let per_image = 3 * side * side;
    if per_image == 0 || images.is_empty() || !images.len().is_multiple_of(per_image) {
        return Err(format!(
            "{} values are not a whole number of 3×{side}×{side} images",
            images.len()
        ));
    }
    let count = images.len() / per_image;
    let batch = Tensor::<4>::from_data(TensorData::new(images, [count, 3, side, side]), device);
    let logits = model.for_eval().forward(batch);
    let data = crate::train::device_reads::read_back_now(Transaction::default().register(logits))
        .map_err(|e| e.to_string())?;
    data.into_iter()
        .next()
        .ok_or_else(|| "the logits did not come back".to_owned())?
        .convert::<f32>()
        .try_to_vec::<f32>()
        .map_err(|e| format!("{e:?}"))
}

/// Whether what burn-store applied makes a whole model.
fn judge(result: &ApplyResult, arch: TorchvisionArch, path: &Path) -> Result<Loaded, WeightsError> {
    let name = arch.torchvision_name();
    let head = arch.head_prefix();
    let mut fresh_head = false;
    for error in &result.errors {
        match error {
            ApplyError::ShapeMismatch {
                path: key,
                expected,
                found,
            } => {
                if key.starts_with(head) {
                    fresh_head = true;
                    continue;
                }
                let stem = key == arch.stem_key();
                return Err(WeightsError::WrongShape {
                    path: path.to_owned(),
                    arch: name,
                    key: to_torchvision(arch, key),
                    expected: expected.to_vec(),
                    found: found.to_vec(),
                    hint: if stem {
                        "; the file's network takes images of another channel count (3 for colour)"
                    } else {
                        ""
                    },
                });
            }
            other => {
                return Err(WeightsError::Unusable {
                    path: path.to_owned(),
                    arch: name,
                    reason: other.to_string(),
                });
            }
        }
    }
    let missing: Vec<&str> = result
        .missing
        .iter()
        .map(|(key, _)| key.as_str())
        .filter(|key| !(fresh_head && key.starts_with(head)))
        .collect();
    if let Some(first) = missing.first() {
        return Err(WeightsError::Missing {
            path: path.to_owned(),
            arch: name,
            key: to_torchvision(arch, first),
            count: missing.len(),
        });
    }
    // torchvision counts batch-norm steps; Kiln's batch norm has no such counter to fill.
    let unexpected: Vec<&String> = result
        .unused
        .iter()
        .filter(|key| !key.ends_with(".num_batches_tracked"))
        .collect();
    if let Some(first) = unexpected.first() {
        return Err(WeightsError::Unexpected {
            path: path.to_owned(),
            arch: name,
            key: to_torchvision(arch, first),
            count: unexpected.len(),
        });
    }
    Ok(Loaded {
        tensors: result.applied.len(),
        fresh_head,
        grey_stem: false,
        resized_positions: false,
    })
}

/// A regex that matches `prefix` literally at the start of a key.
fn anchored(prefix: &str) -> String {
    format!("^{}", prefix.replace('.', r"\."))
}

/// burn-store's renaming of torchvision's keys to Kiln's field paths.
fn torch_to_kiln(arch: TorchvisionArch) -> Result<KeyRemapper, String> {
    KeyRemapper::from_pattern_iter(
        arch.key_prefixes()
            .into_iter()
            .map(|(torch, kiln)| (anchored(&torch), kiln)),
    )
    .map_err(|e| e.to_string())
}

/// A key in Kiln's field paths, as torchvision names it.
pub fn to_torchvision(arch: TorchvisionArch, key: &str) -> String {
    arch.key_prefixes()
        .into_iter()
        .find_map(|(torch, kiln)| key.strip_prefix(&kiln).map(|rest| format!("{torch}{rest}")))
        .unwrap_or_else(|| key.to_owned())
}

#[cfg(test)]
mod tests;
