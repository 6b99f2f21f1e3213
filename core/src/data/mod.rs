//! Datasets: parsers for real formats, downloads, and the built-in synthetic set.
//!
//! Every loader produces an [`ImageDataset`] in host memory; the training loop uploads it to the
//! device once.

pub mod fetch;
mod holdout;
pub mod inspect;
mod locate;
mod spec;
mod synthetic;

// The parsers live in kiln-formats so they can be fuzzed without Burn; these are the same types
// and functions, under the paths the rest of the engine has always used.
pub use holdout::{carve, make_splits};
pub use kiln_formats::{
    CIFAR10_CLASSES, DataError, FASHION_MNIST_CLASSES, ImageDataset, ImageShape, MAX_IMAGE_SIZE_PX,
    MNIST_CLASSES, SkippedFile, SourceFormat, Split,
};
use kiln_formats::{cifar, folder, idx};
pub use locate::{DATA_DIR_ENV, data_roots, default_data_root, locate, search_dirs};

pub use spec::{DEFAULT_FOLDER_IMAGE_SIZE_PX, DatasetSpec};
pub use synthetic::synthetic;

use std::path::Path;

use fetch::RemoteDataset;

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
pub(crate) use kiln_test_support::scratch_dir as test_dir;

/// Small valid data-set files for the engine's tests, built with kiln-formats' encoders.
#[cfg(test)]
pub(crate) mod fixtures {
    pub(crate) use kiln_test_support::{
        cifar_records, encode_idx_images as idx_images_bytes,
        encode_idx_labels as idx_labels_bytes, gzip, write_idx_set,
    };
}
