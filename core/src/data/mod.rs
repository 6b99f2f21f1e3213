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
pub use locate::{DATA_DIR_ENV, default_data_root, locate, search_dirs};
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

/// Small valid data-set files for the engine's tests, built with kiln-formats' encoders.
#[cfg(test)]
pub(crate) mod fixtures {
    use std::io::Write;
    use std::path::Path;

    use flate2::Compression;
    use flate2::write::GzEncoder;
    pub(crate) use kiln_formats::idx::{
        encode_idx_images as idx_images_bytes, encode_idx_labels as idx_labels_bytes,
    };

    pub(crate) fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    }

    /// CIFAR-10 records whose R, G, B planes are i, 100 + i, 200 + i: planes stay visible.
    pub(crate) fn cifar_records(labels: &[u8]) -> Vec<u8> {
        let plane = 32 * 32;
        let images: Vec<u8> = (0..labels.len())
            .flat_map(|i| (0..3u8).flat_map(move |c| std::iter::repeat_n(c * 100 + i as u8, plane)))
            .collect();
        kiln_formats::cifar::encode_cifar_batch(labels, &images)
    }

    /// Writes a small, valid MNIST-like set (4×3 images) into `dir`.
    pub(crate) fn write_idx_set(dir: &Path, gz: bool) {
        let (h, w) = (4u32, 3u32);
        let make = |n: u32, seed: u8| -> (Vec<u8>, Vec<u8>) {
            let px: Vec<u8> = (0..n * h * w)
                .map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed))
                .collect();
            let labels: Vec<u8> = (0..n).map(|i| (i % 10) as u8).collect();
            (idx_images_bytes(n, h, w, &px), idx_labels_bytes(&labels))
        };
        let (tri, trl) = make(12, 1);
        let (tei, tel) = make(5, 2);
        for (name, bytes) in [
            ("train-images-idx3-ubyte", tri),
            ("train-labels-idx1-ubyte", trl),
            ("t10k-images-idx3-ubyte", tei),
            ("t10k-labels-idx1-ubyte", tel),
        ] {
            if gz {
                std::fs::write(dir.join(format!("{name}.gz")), gzip(&bytes)).unwrap();
            } else {
                std::fs::write(dir.join(name), bytes).unwrap();
            }
        }
    }
}
