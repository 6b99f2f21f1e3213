//! A trained model kept with its run, and used again: `model.bpk` holds the weights (Burn's
//! burnpack), `model.json` what is needed to feed it an image the way training did. Natively
//! it also classifies many files in batches ([`files`]) and sorts them into class folders
//! ([`sort`]), which `kiln predict` does.

#[cfg(not(target_arch = "wasm32"))]
mod files;
#[cfg(not(target_arch = "wasm32"))]
mod sort;

#[cfg(not(target_arch = "wasm32"))]
pub use files::{
    DEFAULT_BATCH, FilePrediction, csv_header, csv_line, file_pixels, files_of,
    label_predictions_csv, predictions_csv, top_k,
};
#[cfg(not(target_arch = "wasm32"))]
pub use sort::{SortMode, SortReport, sort_into};

use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::store::ModuleRecord;
use burn::tensor::Bytes;
use burn::tensor::{Device, Tensor, TensorData, Transaction};
use kiln_formats::files::FileTree;
use kiln_shaders::PixelTransform;

use crate::config::ExperimentDraft;
use crate::data::ImageShape;
use crate::model::{Classifier, ModelCard};
use crate::run_folder::{CARD_FILE, CONFIG_FILE, MODEL_FILE};

/// Why a saved model could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PredictError {
    /// The run folder has no saved model.
    #[error("{0} has no trained model; only runs that completed keep one")]
    NoModel(PathBuf),
    /// A file could not be read.
    #[error("could not read {path}: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// The weights do not fit the model the config describes.
    #[error("the model in {path} does not match its config.toml: {reason}")]
    Mismatch {
        /// The weights file.
        path: PathBuf,
        /// What the loader said.
        reason: String,
    },
}

/// A trained model loaded from its run folder, ready to classify images.
#[derive(Debug)]
pub struct Predictor {
    model: Classifier,
    spec: crate::model::ModelSpec,
    card: ModelCard,
    /// How the run's images were brought to its side, which files to classify must match.
    resize: crate::config::ResizeFilter,
    device: Device,
}

impl Predictor {
    /// Loads the model a completed run saved, on the CPU.
    pub fn load(run_folder: &Path) -> Result<Self, PredictError> {
        Self::load_in(&crate::data::files::Disk, run_folder)
    }

    /// [`Predictor::load`] from a run folder of `tree`: a disk's, or a page's runs in memory.
    pub fn load_in(tree: &dyn FileTree, run_folder: &Path) -> Result<Self, PredictError> {
        let weights = run_folder.join(MODEL_FILE);
        if !tree.is_file(&weights) {
            return Err(PredictError::NoModel(run_folder.to_owned()));
        }
        let read = |name: &str| {
            let path = run_folder.join(name);
            crate::run_folder::read_bytes(tree, &path).map_err(|e| PredictError::Read {
                path: path.clone(),
                reason: e.to_string(),
            })
        };
        let text =
            |name: &str| read(name).map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        let card: ModelCard =
            serde_json::from_str(&text(CARD_FILE)?).map_err(|e| PredictError::Read {
                path: run_folder.join(CARD_FILE),
                reason: e.to_string(),
            })?;
        let config = ExperimentDraft::from_toml(&text(CONFIG_FILE)?, CONFIG_FILE).map_err(|e| {
            PredictError::Read {
                path: run_folder.join(CONFIG_FILE),
                reason: e.to_string(),
            }
        })?;
        let [channels, height, width] = card.shape;
        let shape = ImageShape {
            channels,
            height,
            width,
        };
        let device = Device::flex();
        let mismatch = |reason: String| PredictError::Mismatch {
            path: weights.clone(),
            reason,
        };
        let model = config
            .model
            .init(shape, card.class_names.len(), config.layers(), &device)
            .map_err(|e| mismatch(e.to_string()))?
            .try_load_record(
                ModuleRecord::from_bytes(Bytes::from_bytes_vec(read(MODEL_FILE)?))
                    .map_err(|e| mismatch(format!("{e:?}")))?,
            )
            .map_err(|e| mismatch(format!("{e:?}")))?;
        Ok(Self {
            model,
            spec: config.model,
            card,
            resize: config.resize,
            device,
        })
    }

    /// The same model on `device` (a GPU, a box), where [`Predictor::predict_files`] then
    /// computes; it is loaded on the CPU.
    pub fn on_device(self, device: Device) -> Self {
        Self {
            model: self.model.fork(&device),
            device,
            ..self
        }
    }

    /// The trained network.
    pub fn model(&self) -> &Classifier {
        &self.model
    }

    /// The spec the network was built from.
    pub fn spec(&self) -> &crate::model::ModelSpec {
        &self.spec
    }

    /// The card the model was saved with.
    pub fn card(&self) -> &ModelCard {
        &self.card
    }

    /// Class names with their probabilities for planar C×H×W bytes of the model's shape, most
    /// likely first.
    pub fn classify_pixels(&self, pixels: &[u8]) -> Vec<(String, f32)> {
        // A failed read ranks nothing rather than panicking.
        let probabilities = self
            .probabilities_of(&[pixels])
            .ok()
            .and_then(|mut rows| rows.pop())
            .unwrap_or_default();
        let mut ranked: Vec<(String, f32)> = self
            .card
            .class_names
            .iter()
            .cloned()
            .zip(probabilities)
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        ranked
    }

    /// Probabilities of each image of `images` (a softmax, or a multi-label model's sigmoids) (planar bytes of the model's shape), in
    /// one forward pass and one read-back through the engine's one read seam: the only sync of
    /// the batch.
    fn probabilities_of(&self, images: &[&[u8]]) -> Result<Vec<Vec<f32>>, String> {
        let [channels, height, width] = self.card.shape;
        let transform = PixelTransform {
            offset: self.card.offset.clone(),
            scale: self.card.scale.clone(),
        };
        let mut values = Vec::with_capacity(images.len() * channels * height * width);
        for pixels in images {
            values.extend(transform.apply_reference(pixels, height * width));
        }
        let input = Tensor::<4>::from_data(
            TensorData::new(values, [images.len(), channels, height, width]),
            &self.device,
        );
        let probabilities = self.card.probabilities(self.model.forward(input));
        let read = crate::train::device_reads::read_back_now(
            Transaction::default().register(probabilities),
        )
        .map_err(|e| format!("the device could not return the predictions: {e}"))?;
        let flat: Vec<f32> = read
            .into_iter()
            .next()
            .map(|data| data.iter::<f32>().collect())
            .unwrap_or_default();
        let classes = self.card.class_names.len().max(1);
        Ok(flat.chunks(classes).map(<[f32]>::to_vec).collect())
    }

    /// Planar C×H×W bytes for this model of the image file `name` holding `bytes`, decoded as
    /// a folder data set decodes its files ([`model_pixels`]); or why it cannot be read.
    pub fn pixels_of_bytes(&self, name: &str, bytes: &[u8]) -> Result<Vec<u8>, String> {
        let side = square_side(self.card.shape)?;
        let decoded =
            kiln_formats::folder::decode_image(Path::new(name), bytes, self.resize.at(side))
                .map_err(|e| e.to_string())?;
        Ok(model_pixels(self.card.shape, decoded.planar_rgb))
    }
}

/// The side of a model's square images, or why files cannot be read for it: Kiln's models all
/// take square images, as folder data sets make them.
pub(crate) fn square_side([_, height, width]: [usize; 3]) -> Result<u32, String> {
    if height != width {
        return Err(format!(
            "the model takes {height}×{width} images, and Kiln reads files only for square ones"
        ));
    }
    u32::try_from(width).map_err(|_| "the model's image size is too large".to_owned())
}

/// An image decoded as a folder data set decodes its files (EXIF orientation applied, resized
/// to the model's side: `kiln_formats::folder::decode_image`), as the planar bytes a model of
/// `shape` takes: the RGB planes as they are, or for a one-channel model their Rec. 709 luma
/// (which is the value itself for a grayscale file, as training read it). The window's *Try*
/// and `kiln predict` both feed a model through here, so they agree to the bit.
pub(crate) fn model_pixels([channels, height, width]: [usize; 3], planar_rgb: Vec<u8>) -> Vec<u8> {
    let plane = height * width;
    match channels {
        1 => (0..plane)
            .map(|i| {
                let [r, g, b] = [
                    planar_rgb[i],
                    planar_rgb[plane + i],
                    planar_rgb[2 * plane + i],
                ]
                .map(f32::from);
                (0.2126 * r + 0.7152 * g + 0.0722 * b)
                    .round()
                    .clamp(0.0, 255.0) as u8
            })
            .collect(),
        _ => planar_rgb,
    }
}
