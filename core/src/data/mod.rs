//! Datasets: parsers for real formats, downloads, and the built-in synthetic set.
//!
//! Every loader produces an [`ImageDataset`] in host memory; the training loop uploads it to the
//! device once.

/// Height, width and channel count shared by every image of a data set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ImageShape {
    /// 1 for grayscale, 3 for RGB.
    pub channels: usize,
    /// Rows of pixels.
    pub height: usize,
    /// Columns of pixels.
    pub width: usize,
}

impl ImageShape {
    /// Bytes (one per pixel per channel) in one image.
    pub fn pixels_per_image(&self) -> usize {
        self.channels * self.height * self.width
    }
}

/// One split (train or test) of a data set.
#[derive(Debug, Clone, Default)]
pub struct Split {
    /// All images back to back, each in planar C×H×W order, one byte per value (0–255).
    pub images: Vec<u8>,
    /// One class index per image.
    pub labels: Vec<u8>,
}

impl Split {
    /// Number of images in the split.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// True when the split holds no image.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }
}

/// A whole data set in host memory, ready to upload.
#[derive(Debug, Clone)]
pub struct ImageDataset {
    /// Human-readable name, e.g. "Fashion-MNIST".
    pub name: String,
    /// Shape of every image.
    pub shape: ImageShape,
    /// One name per class; its length is the number of classes.
    pub class_names: Vec<String>,
    /// Training images.
    pub train: Split,
    /// Held-out images, evaluated each epoch.
    pub test: Split,
}

impl ImageDataset {
    /// Number of classes.
    pub fn num_classes(&self) -> usize {
        self.class_names.len()
    }
}

mod cifar;
mod error;
pub mod fetch;
mod folder;
mod idx;
mod locate;
mod spec;
mod synthetic;

pub use error::DataError;
pub use locate::{DATA_DIR_ENV, default_data_root, locate, search_dirs};
pub use spec::{DEFAULT_FOLDER_IMAGE_SIZE_PX, DatasetSpec, MAX_IMAGE_SIZE_PX};
pub use synthetic::synthetic;

use std::path::Path;

use fetch::RemoteDataset;

/// Class names of MNIST, in label order.
pub const MNIST_CLASSES: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];

/// Class names of Fashion-MNIST, in label order.
pub const FASHION_MNIST_CLASSES: [&str; 10] = [
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
];

/// Class names of CIFAR-10, in label order (used when `batches.meta.txt` is absent).
pub const CIFAR10_CLASSES: [&str; 10] = [
    "airplane",
    "automobile",
    "bird",
    "cat",
    "deer",
    "dog",
    "frog",
    "horse",
    "ship",
    "truck",
];

/// Loads the data set `spec` names into host memory, searching for named sets as
/// [`search_dirs`] describes.
pub fn load(spec: &DatasetSpec, data_dir: Option<&Path>) -> Result<ImageDataset, DataError> {
    match spec {
        DatasetSpec::Synthetic => Ok(synthetic()),
        DatasetSpec::Mnist => {
            let dir = locate(RemoteDataset::Mnist, data_dir)?;
            idx::load_idx_set(&dir, RemoteDataset::Mnist.display_name(), &MNIST_CLASSES)
        }
        DatasetSpec::FashionMnist => {
            let dir = locate(RemoteDataset::FashionMnist, data_dir)?;
            idx::load_idx_set(
                &dir,
                RemoteDataset::FashionMnist.display_name(),
                &FASHION_MNIST_CLASSES,
            )
        }
        DatasetSpec::Cifar10 => {
            let dir = locate(RemoteDataset::Cifar10, data_dir)?;
            cifar::load_cifar10(&dir)
        }
        DatasetSpec::Folder { path, image_size } => folder::load_image_folder(path, *image_size),
    }
}

/// Loads a named data set from `dir`, the folder that directly holds its files (as
/// [`locate`] or [`fetch::fetch`] return it).
pub fn load_from_dir(which: RemoteDataset, dir: &Path) -> Result<ImageDataset, DataError> {
    match which {
        RemoteDataset::Mnist => idx::load_idx_set(dir, which.display_name(), &MNIST_CLASSES),
        RemoteDataset::FashionMnist => {
            idx::load_idx_set(dir, which.display_name(), &FASHION_MNIST_CLASSES)
        }
        RemoteDataset::Cifar10 => cifar::load_cifar10(dir),
    }
}

/// A unique, empty scratch folder for one test; removed by the test when it is done.
#[cfg(test)]
pub(crate) fn test_dir(name: &str) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "kiln-data-test-{}-{}-{}",
        std::process::id(),
        n,
        name
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
