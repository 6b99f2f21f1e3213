//! CIFAR-10, binary version: records of 1 label byte + 3072 pixel bytes (R, G, B planes of
//! 32×32, row-major), which is already the planar C×H×W layout Kiln stores.

use std::io::Read;
use std::path::Path;

use crate::files::{Disk, FileTree};
use crate::{CIFAR10_CLASSES, DataError, ImageDataset, ImageShape, SourceFormat, Split};

/// Side of every CIFAR-10 image.
pub const CIFAR10_SIDE_PX: usize = 32;
const PIXELS_PER_IMAGE: usize = 3 * CIFAR10_SIDE_PX * CIFAR10_SIDE_PX;
/// One label byte followed by the image.
pub const RECORD_BYTES: usize = 1 + PIXELS_PER_IMAGE;
/// A real batch holds 10 000 records; far more means the file is not a CIFAR batch.
const MAX_RECORDS_PER_FILE: u64 = 1_000_000;
/// A class-name file larger than this is not CIFAR's `batches.meta.txt`.
const MAX_META_BYTES: u64 = 64 * 1024;

/// Training batches, in order.
pub const CIFAR10_TRAIN_FILES: [&str; 5] = [
    "data_batch_1.bin",
    "data_batch_2.bin",
    "data_batch_3.bin",
    "data_batch_4.bin",
    "data_batch_5.bin",
];
/// The test batch.
pub const CIFAR10_TEST_FILE: &str = "test_batch.bin";
/// Every file a complete copy must have.
pub const CIFAR10_FILES: [&str; 6] = [
    "data_batch_1.bin",
    "data_batch_2.bin",
    "data_batch_3.bin",
    "data_batch_4.bin",
    "data_batch_5.bin",
    CIFAR10_TEST_FILE,
];
/// Optional file with one class name per line.
pub const CIFAR10_META_FILE: &str = "batches.meta.txt";

/// Writes a batch of `labels` and planar images, 3072 bytes each, padding missing pixels with 0.
pub fn encode_cifar_batch(labels: &[u8], images: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(labels.len() * RECORD_BYTES);
    for (i, &label) in labels.iter().enumerate() {
        out.push(label);
        let image = images
            .get(i * PIXELS_PER_IMAGE..)
            .unwrap_or_default()
            .iter()
            .take(PIXELS_PER_IMAGE);
        let start = out.len();
        out.extend(image);
        out.resize(start + PIXELS_PER_IMAGE, 0);
    }
    out
}

/// Number of records in a batch of `len_bytes`, or why that length cannot be a CIFAR-10 batch;
/// checked before anything of that size is read or allocated.
fn record_count(path: &Path, len_bytes: u64) -> Result<usize, DataError> {
    let record = RECORD_BYTES as u64;
    if len_bytes == 0 || !len_bytes.is_multiple_of(record) {
        return Err(DataError::Malformed {
            path: path.to_path_buf(),
            detail: format!(
                "it is {len_bytes} bytes long, not a positive multiple of the {RECORD_BYTES}-byte CIFAR-10 record (1 label byte + 3072 pixel bytes); delete it and download it again"
            ),
        });
    }
    let records = len_bytes / record;
    if records > MAX_RECORDS_PER_FILE {
        return Err(DataError::Malformed {
            path: path.to_path_buf(),
            detail: format!(
                "it would hold {records} records, more than any CIFAR-10 batch; check that it is the right file"
            ),
        });
    }
    // Bounded by MAX_RECORDS_PER_FILE, so the conversion is lossless.
    Ok(records as usize)
}

/// Appends the records of one CIFAR-10 batch held in memory to `split`; `path` names it in
/// errors, and on an error `split` is left as it was.
pub fn parse_cifar_batch(path: &Path, bytes: &[u8], split: &mut Split) -> Result<(), DataError> {
    let records = record_count(path, bytes.len() as u64)?;
    // Every label is checked before anything is appended, so a bad file leaves no half batch.
    let bad_label = bytes
        .chunks_exact(RECORD_BYTES)
        .filter_map(|record| record.first().copied())
        .find(|&label| usize::from(label) >= CIFAR10_CLASSES.len());
    if let Some(label) = bad_label {
        return Err(DataError::LabelOutOfRange {
            path: path.to_path_buf(),
            label,
            num_classes: CIFAR10_CLASSES.len(),
        });
    }
    split.images.reserve(records * PIXELS_PER_IMAGE);
    split.labels.reserve(records);
    for record in bytes.chunks_exact(RECORD_BYTES) {
        if let Some((&label, pixels)) = record.split_first() {
            split.labels.push(label);
            split.images.extend_from_slice(pixels);
        }
    }
    Ok(())
}

/// Appends the records of one batch file to `split`.
pub fn read_cifar_batch(path: &Path, split: &mut Split) -> Result<(), DataError> {
    read_cifar_batch_in(&Disk, path, split)
}

fn read_cifar_batch_in(
    tree: &dyn FileTree,
    path: &Path,
    split: &mut Split,
) -> Result<(), DataError> {
    let read_err = |source| DataError::Read {
        path: path.to_path_buf(),
        source,
    };
    let (mut file, len_bytes) = tree.open(path).map_err(read_err)?;
    let records = record_count(path, len_bytes)?;
    let mut bytes = Vec::with_capacity(records * RECORD_BYTES);
    file.by_ref()
        .take(len_bytes)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() != records * RECORD_BYTES {
        return Err(DataError::Truncated {
            path: path.to_path_buf(),
            detail: format!(
                "it shrank from {len_bytes} to {} bytes while being read",
                bytes.len()
            ),
        });
    }
    parse_cifar_batch(path, &bytes, split)
}

/// Class names from `batches.meta.txt` when it lists exactly ten, else the built-in ones.
fn class_names(tree: &dyn FileTree, dir: &Path) -> Vec<String> {
    let builtin = || CIFAR10_CLASSES.iter().map(|s| s.to_string()).collect();
    let path = dir.join(CIFAR10_META_FILE);
    let Ok((file, _)) = tree.open(&path) else {
        return builtin();
    };
    // Read through a limit rather than trusting the file's length: it may be a pipe or growing.
    let mut text = String::new();
    if file
        .take(MAX_META_BYTES + 1)
        .read_to_string(&mut text)
        .is_err()
        || text.len() as u64 > MAX_META_BYTES
    {
        return builtin();
    }
    let names: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    if names.len() == CIFAR10_CLASSES.len() {
        names
    } else {
        builtin()
    }
}

/// Loads CIFAR-10 from the folder holding its `.bin` files.
pub fn load_cifar10(dir: &Path) -> Result<ImageDataset, DataError> {
    load_cifar10_in(&Disk, dir)
}

/// Loads CIFAR-10 from the folder `dir` of `tree` holding its `.bin` files.
pub fn load_cifar10_in(tree: &dyn FileTree, dir: &Path) -> Result<ImageDataset, DataError> {
    let mut train = Split::default();
    for name in CIFAR10_TRAIN_FILES {
        read_cifar_batch_in(tree, &dir.join(name), &mut train)?;
    }
    let mut test = Split::default();
    read_cifar_batch_in(tree, &dir.join(CIFAR10_TEST_FILE), &mut test)?;
    let sources = vec![SourceFormat {
        width: CIFAR10_SIDE_PX as u32,
        height: CIFAR10_SIDE_PX as u32,
        colour: "RGB".into(),
        files: train.len() + test.len(),
    }];
    Ok(ImageDataset {
        name: "CIFAR-10".into(),
        shape: ImageShape {
            channels: 3,
            height: CIFAR10_SIDE_PX,
            width: CIFAR10_SIDE_PX,
        },
        class_names: class_names(tree, dir),
        train,
        val: Default::default(),
        test,
        skipped: Vec::new(),
        notes: Vec::new(),
        sources,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::test_dir;

    pub(crate) fn cifar_records(labels: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, &l) in labels.iter().enumerate() {
            out.push(l);
            // R plane = i, G plane = 100 + i, B plane = 200 + i: checks the planes stay planar.
            for plane in 0..3u8 {
                out.extend(std::iter::repeat_n(
                    plane * 100 + i as u8,
                    CIFAR10_SIDE_PX * CIFAR10_SIDE_PX,
                ));
            }
        }
        out
    }

    pub(crate) fn write_cifar(dir: &Path) {
        for (k, name) in CIFAR10_TRAIN_FILES.iter().enumerate() {
            std::fs::write(dir.join(name), cifar_records(&[k as u8, 9])).unwrap();
        }
        std::fs::write(dir.join(CIFAR10_TEST_FILE), cifar_records(&[3, 4, 5])).unwrap();
    }

    #[test]
    fn cifar_valid() {
        let dir = test_dir("cifar-valid");
        write_cifar(&dir);
        let ds = load_cifar10(&dir).unwrap();
        assert_eq!(ds.shape.pixels_per_image(), 3072);
        assert_eq!(ds.train.len(), 10);
        assert_eq!(ds.test.labels, vec![3, 4, 5]);
        assert_eq!(ds.train.labels[..4], [0, 9, 1, 9]);
        let second_test = &ds.test.images[3072..6144];
        assert_eq!(second_test[0], 1);
        assert_eq!(second_test[1024], 101);
        assert_eq!(second_test[3071], 201);
        assert_eq!(ds.class_names[0], "airplane");
        std::fs::write(
            dir.join(CIFAR10_META_FILE),
            "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n\n",
        )
        .unwrap();
        assert_eq!(load_cifar10(&dir).unwrap().class_names[9], "j");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cifar_short_and_bad_label() {
        let dir = test_dir("cifar-bad");
        write_cifar(&dir);
        let path = dir.join(CIFAR10_TEST_FILE);
        let mut bytes = cifar_records(&[1, 2]);
        bytes.truncate(bytes.len() - 10);
        std::fs::write(&path, &bytes).unwrap();
        let err = load_cifar10(&dir).unwrap_err();
        assert!(matches!(err, DataError::Malformed { .. }), "{err}");
        assert!(err.to_string().contains("6136 bytes long"), "{err}");
        std::fs::write(&path, b"").unwrap();
        assert!(matches!(
            load_cifar10(&dir).unwrap_err(),
            DataError::Malformed { .. }
        ));
        std::fs::write(&path, cifar_records(&[1, 10])).unwrap();
        let err = load_cifar10(&dir).unwrap_err();
        assert!(
            matches!(err, DataError::LabelOutOfRange { label: 10, .. }),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cifar_held_in_memory_loads_as_on_disk_with_its_meta_names() {
        let dir = test_dir("cifar-memory");
        write_cifar(&dir);
        let names = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
        std::fs::write(dir.join(CIFAR10_META_FILE), names).unwrap();
        let on_disk = load_cifar10(&dir).unwrap();
        let tree = crate::files::memory_copy(&dir);
        let in_memory = load_cifar10_in(&tree, Path::new(dir.file_name().unwrap())).unwrap();
        assert_eq!(in_memory.class_names, on_disk.class_names);
        assert_eq!(in_memory.class_names[9], "j");
        assert_eq!(
            (in_memory.train, in_memory.test),
            (on_disk.train, on_disk.test)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
