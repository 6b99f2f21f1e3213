//! Kiln's data-file parsers: IDX (raw or gzip), CIFAR-10 binary, image folders, labels files,
//! TensorBoard's event files, and other frameworks' training logs.
//!
//! They live apart from the engine so they can be fuzzed and property-tested without compiling
//! Burn. Every parser has a byte-level entry point (`parse_*`, `decode_image`) that the file
//! loaders call too, so what the fuzzer exercises is what users run. A hostile or damaged file
//! ends in a [`DataError`] naming the file, never in a panic or an allocation its header asks
//! for but its length cannot back.

pub mod cifar;
pub mod csv;
mod error;
pub mod files;
pub mod folder;
pub mod idx;
pub mod labels;
pub mod tensorboard;
pub mod training_log;

pub use error::DataError;

/// Height, width and channel count shared by every image of a data set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
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

    /// `[channels, height, width]`, the order of a tensor's last three dimensions.
    pub fn chw(&self) -> [usize; 3] {
        [self.channels, self.height, self.width]
    }
}

/// One split (train, validation or test) of a data set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Split {
    /// All images back to back, each in planar C×H×W order, one byte per value (0–255).
    pub images: Vec<u8>,
    /// One class index per image; in a multi-label set, the first of its labels (0 for an image
    /// with none), which keeps the splits' stratification.
    pub labels: Vec<u8>,
    /// The file each image was read from, for a folder of image files; empty where the
    /// source names no file per image (IDX, CIFAR, the built-in data).
    pub files: Vec<std::path::PathBuf>,
    /// In a multi-label set (a labels file giving images several labels), each image's labels
    /// as class indices in ascending order, maybe none; empty where each image has one label.
    pub label_sets: Vec<Vec<u8>>,
}

impl Split {
    /// The file image `index` was read from, where the source names one.
    pub fn file(&self, index: usize) -> Option<&std::path::Path> {
        self.files.get(index).map(|p| p.as_path())
    }

    /// Number of images in the split.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// True when the split holds no image.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The bytes of image `index`, each image being `pixels_per_image` bytes; empty past the end.
    pub fn image(&self, index: usize, pixels_per_image: usize) -> &[u8] {
        let start = index.saturating_mul(pixels_per_image);
        self.images
            .get(start..start.saturating_add(pixels_per_image))
            .unwrap_or_default()
    }

    /// Whether its images have label sets rather than one label each.
    pub fn is_multi_label(&self) -> bool {
        !self.label_sets.is_empty()
    }

    /// Images with each of `num_classes` labels: in a multi-label set an image counts once for
    /// every label it has.
    pub fn label_counts(&self, num_classes: usize) -> Vec<usize> {
        if !self.is_multi_label() {
            return self.class_counts(num_classes);
        }
        let mut counts = vec![0; num_classes];
        for &label in self.label_sets.iter().flatten() {
            if let Some(count) = counts.get_mut(usize::from(label)) {
                *count += 1;
            }
        }
        counts
    }

    /// Images of each of `num_classes` classes, in label order.
    pub fn class_counts(&self, num_classes: usize) -> Vec<usize> {
        let mut counts = vec![0; num_classes];
        for &label in &self.labels {
            if let Some(count) = counts.get_mut(usize::from(label)) {
                *count += 1;
            }
        }
        counts
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
    /// Images to choose the model on (best epoch, early stopping); empty when the source has
    /// no validation split of its own, and the engine carves one from `train`.
    pub val: Split,
    /// Held-out images, evaluated once on the model a run keeps; empty when the source has no
    /// test split of its own (a flat image folder), and the engine carves one from `train`.
    pub test: Split,
    /// Files of an image folder that are not in any split, each with its reason.
    pub skipped: Vec<SkippedFile>,
    /// Sentences about the source as a whole that a person should read before trusting a run
    /// on it (a labels file's label column that is all numbers, say); empty for most sources.
    pub notes: Vec<String>,
    /// The sizes and colour modes the images had in their files, before the resize to `shape`,
    /// most common first; empty where the source does not say (a built-in set).
    pub sources: Vec<SourceFormat>,
}

/// How many files of one size and colour mode a data set was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SourceFormat {
    /// Columns of pixels in the file (after EXIF orientation).
    pub width: u32,
    /// Rows of pixels in the file (after EXIF orientation).
    pub height: u32,
    /// The colour mode as a person says it: "grayscale", "RGB", "RGBA", "16-bit RGB", …
    pub colour: String,
    /// Files of this size and mode.
    pub files: usize,
}

impl SourceFormat {
    /// Counts `(width, height, colour)` per file into formats, most files first, then largest.
    pub fn tally<'a>(files: impl IntoIterator<Item = (u32, u32, &'a str)>) -> Vec<Self> {
        let mut counts: std::collections::BTreeMap<(u32, u32, &str), usize> = Default::default();
        for key in files {
            *counts.entry(key).or_default() += 1;
        }
        let mut formats: Vec<Self> = counts
            .into_iter()
            .map(|((width, height, colour), files)| Self {
                width,
                height,
                colour: colour.to_owned(),
                files,
            })
            .collect();
        formats.sort_by_key(|f| {
            std::cmp::Reverse((f.files, u64::from(f.width) * u64::from(f.height)))
        });
        formats
    }
}

/// A file of an image folder that was left out, and why (unreadable, not an image).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SkippedFile {
    /// The file.
    pub path: std::path::PathBuf,
    /// Why it was left out, as a phrase: "it is not an image", or the decoder's complaint.
    pub reason: String,
}

impl ImageDataset {
    /// Number of classes.
    pub fn num_classes(&self) -> usize {
        self.class_names.len()
    }

    /// Training images of each class, in label order.
    pub fn class_counts(&self) -> Vec<usize> {
        self.train.class_counts(self.num_classes())
    }

    /// Whether images have several labels each (a labels file that says so), not one.
    pub fn is_multi_label(&self) -> bool {
        [&self.train, &self.val, &self.test]
            .iter()
            .any(|split| split.is_multi_label())
    }
}

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

/// Largest side an image folder may be resized to; larger sizes would not fit in memory anyway.
pub const MAX_IMAGE_SIZE_PX: u32 = 4096;

/// A unique, empty scratch folder for one test; removed by the test when it is done.
#[cfg(test)]
pub(crate) use kiln_test_support::scratch_dir as test_dir;
