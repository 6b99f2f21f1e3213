//! Datasets: parsers for real formats, downloads, and the built-in synthetic set.
//!
//! Every loader produces an [`ImageDataset`] in host memory; the training loop uploads it to the
//! device once. Natively the files are this computer's; a browser page has no disk and reads the
//! files its visitor chose ([`page_files`]), under the same paths a desktop would show.

pub mod fetch;
mod holdout;
pub mod inspect;
mod locate;
#[cfg(any(target_arch = "wasm32", test))]
pub mod page_files;
mod spec;
mod synthetic;

// The parsers live in kiln-formats so they can be fuzzed without Burn; these are the same types
// and functions, under the paths the rest of the engine has always used.
pub use holdout::{carve, make_splits};
/// Where loaders and run archives read files: the disk, or files held in memory (a page's).
pub use kiln_formats::files;
use kiln_formats::files::FileTree;
pub use kiln_formats::folder::IMAGE_EXTENSIONS;
pub use kiln_formats::{
    CIFAR10_CLASSES, DataError, FASHION_MNIST_CLASSES, ImageDataset, ImageShape, MAX_IMAGE_SIZE_PX,
    MNIST_CLASSES, SkippedFile, SourceFormat, Split,
};
use kiln_formats::{cifar, folder, idx};
pub use locate::{DATA_DIR_ENV, data_roots, default_data_root, locate, search_dirs};

pub use spec::{DEFAULT_FOLDER_IMAGE_SIZE_PX, DatasetSpec};
pub use synthetic::synthetic;

use std::path::Path;

use crate::config::ResizeFilter;

use fetch::RemoteDataset;

/// Runs `read` on the files a data set is read from here: this computer's disk natively, the
/// visitor's chosen files in a browser page.
pub(crate) fn with_files<R>(read: impl FnOnce(&dyn FileTree) -> R) -> R {
    #[cfg(not(target_arch = "wasm32"))]
    {
        read(&kiln_formats::files::Disk)
    }
    #[cfg(target_arch = "wasm32")]
    {
        page_files::with(|files| read(files))
    }
}

/// Loads the data set `spec` names into host memory, searching for named sets as
/// [`search_dirs`] describes; a folder's images are brought to its image size by `resize`.
pub fn load(
    spec: &DatasetSpec,
    data_dir: Option<&Path>,
    resize: ResizeFilter,
) -> Result<ImageDataset, DataError> {
    with_files(|tree| load_in(tree, spec, data_dir, resize))
}

/// Loads the data set `spec` names from the files of `tree`, as [`load`] does from the disk.
pub fn load_in(
    tree: &dyn FileTree,
    spec: &DatasetSpec,
    data_dir: Option<&Path>,
    resize: ResizeFilter,
) -> Result<ImageDataset, DataError> {
    let named = |which: RemoteDataset| {
        let dir = locate::locate_in(tree, which, &search_dirs(which, data_dir))?;
        load_named(tree, which, &dir)
    };
    match spec {
        DatasetSpec::Synthetic => Ok(synthetic()),
        DatasetSpec::Mnist => named(RemoteDataset::Mnist),
        DatasetSpec::FashionMnist => named(RemoteDataset::FashionMnist),
        DatasetSpec::Cifar10 => named(RemoteDataset::Cifar10),
        DatasetSpec::Folder { path, image_size } => {
            folder::load_image_folder_in(tree, path, resize.at(*image_size))
        }
        DatasetSpec::LabelsFile {
            path,
            image_size,
            path_column,
            label_column,
            label_separator,
            multi_label,
        } => {
            let columns = kiln_formats::labels::LabelColumns {
                path: path_column.clone(),
                label: label_column.clone(),
                separator: label_separator.clone(),
                multi_label: *multi_label,
            };
            kiln_formats::labels::load_labels_file_in(tree, path, resize.at(*image_size), &columns)
        }
    }
}

/// Loads a named data set from `dir`, the folder that directly holds its files (as
/// [`locate`] or [`fetch::fetch`] return it).
pub fn load_from_dir(which: RemoteDataset, dir: &Path) -> Result<ImageDataset, DataError> {
    with_files(|tree| load_named(tree, which, dir))
}

fn load_named(
    tree: &dyn FileTree,
    which: RemoteDataset,
    dir: &Path,
) -> Result<ImageDataset, DataError> {
    let classes: &[&str] = match which {
        RemoteDataset::Mnist => &MNIST_CLASSES,
        RemoteDataset::FashionMnist => &FASHION_MNIST_CLASSES,
        RemoteDataset::Cifar10 => return cifar::load_cifar10_in(tree, dir),
    };
    idx::load_idx_set_in(tree, dir, which.display_name(), classes)
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

#[cfg(test)]
mod tests {
    use super::*;
    use fixtures::{idx_images_bytes, idx_labels_bytes};
    use kiln_formats::files::MemoryFiles;

    use kiln_test_support::grey_png as png;

    #[test]
    fn named_sets_and_folders_load_from_files_held_in_memory_as_a_page_holds_them() {
        let mut tree = MemoryFiles::new();
        let pixels: Vec<u8> = (0..3 * 2 * 2).map(|i| i as u8).collect();
        for (stem, count) in [("train", 3), ("t10k", 3)] {
            let images = idx_images_bytes(count, 2, 2, &pixels);
            let labels = idx_labels_bytes(&[0, 1, 9]);
            let dir = Path::new("chosen files");
            tree.insert(dir.join(format!("{stem}-images-idx3-ubyte")), images)
                .unwrap();
            tree.insert(dir.join(format!("{stem}-labels-idx1-ubyte")), labels)
                .unwrap();
        }
        for (class, shade) in [("cat", 10), ("dog", 240)] {
            for i in 0..2 {
                tree.insert(format!("pets/{class}/{i}.png"), png(shade))
                    .unwrap();
            }
        }
        let fashion = load_in(
            &tree,
            &DatasetSpec::FashionMnist,
            Some(Path::new("chosen files")),
            ResizeFilter::default(),
        );
        let fashion = fashion.unwrap();
        assert_eq!(
            (fashion.name.as_str(), fashion.train.labels.clone()),
            ("Fashion-MNIST", vec![0, 1, 9])
        );
        assert_eq!(fashion.class_names.len(), 10);
        let missing =
            load_in(&tree, &DatasetSpec::Mnist, None, ResizeFilter::default()).unwrap_err();
        assert!(matches!(missing, DataError::NotFound { .. }), "{missing}");
        let folder = DatasetSpec::Folder {
            path: "pets".into(),
            image_size: 2,
        };
        let pets = load_in(&tree, &folder, None, ResizeFilter::default()).unwrap();
        assert_eq!(pets.class_names, ["cat", "dog"]);
        assert_eq!(pets.train.images, [vec![10; 8], vec![240; 8]].concat());
    }
}
