//! IDX files (MNIST, Fashion-MNIST), raw or gzip-compressed.
//!
//! Every size the header claims is checked against what the file can really hold before any
//! buffer of that size exists, so a corrupt or hostile header cannot exhaust memory. A gzip
//! file's content length is unknown until it is read, so its buffer grows only as decompressed
//! bytes actually arrive.

use std::io::{self, BufRead, Read};
use std::path::{Path, PathBuf};

use flate2::bufread::MultiGzDecoder;

use crate::files::{Disk, FileTree};
use crate::{DataError, ImageDataset, ImageShape, SourceFormat, Split};

/// Magic number of an IDX file of unsigned bytes with 3 dimensions (images).
pub const IDX_IMAGES_MAGIC: u32 = 0x0000_0803;
/// Magic number of an IDX file of unsigned bytes with 1 dimension (labels).
pub const IDX_LABELS_MAGIC: u32 = 0x0000_0801;
/// Largest image side accepted; anything bigger is a corrupt header, not a data set.
const MAX_SIDE_PX: u32 = 4096;
/// Deflate cannot expand data by more than about 1032:1, which bounds what a gzip file can hold.
const MAX_DEFLATE_RATIO: u64 = 1032;
/// Slack for the gzip header and trailer in that bound.
const GZIP_SLACK_BYTES: u64 = 1024;
/// Decompressed bytes are read in pieces of this size, so a short stream costs little memory.
const READ_CHUNK_BYTES: usize = 64 * 1024;
/// First guess of a gzip file's content per compressed byte; the buffer grows past it as needed.
const GZIP_INITIAL_RATIO: usize = 4;

/// The four files of an IDX data set: (stem, kind) as in `train-images-idx3-ubyte`.
pub const IDX_FILES: [(&str, &str); 4] = [
    ("train-images", "idx3"),
    ("train-labels", "idx1"),
    ("t10k-images", "idx3"),
    ("t10k-labels", "idx1"),
];

/// Every name a file of the set may go by: raw or gzip, with `-` or `.` before the kind.
pub fn idx_file_names(stem: &str, kind: &str) -> [String; 4] {
    [
        format!("{stem}-{kind}-ubyte"),
        format!("{stem}-{kind}-ubyte.gz"),
        format!("{stem}.{kind}-ubyte"),
        format!("{stem}.{kind}-ubyte.gz"),
    ]
}

/// The first existing spelling of one IDX file in `dir`.
pub fn find_idx_file(dir: &Path, stem: &str, kind: &str) -> Option<PathBuf> {
    find_idx_file_in(&Disk, dir, stem, kind)
}

/// The first existing spelling of one IDX file in `dir` of `tree`.
pub fn find_idx_file_in(
    tree: &dyn FileTree,
    dir: &Path,
    stem: &str,
    kind: &str,
) -> Option<PathBuf> {
    idx_file_names(stem, kind)
        .into_iter()
        .map(|name| dir.join(name))
        .find(|p| tree.is_file(p))
}

/// Images of one IDX image file, planar (one channel) row-major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdxImages {
    /// Number of images.
    pub count: usize,
    /// Rows of every image.
    pub height_px: usize,
    /// Columns of every image.
    pub width_px: usize,
    /// `count` images of `height_px`×`width_px` bytes, back to back.
    pub pixels: Vec<u8>,
}

/// Writes an IDX image file with exactly the header given, so tests and fuzz seeds can lie.
pub fn encode_idx_images(count: u32, height_px: u32, width_px: u32, pixels: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + pixels.len());
    for word in [IDX_IMAGES_MAGIC, count, height_px, width_px] {
        out.extend_from_slice(&word.to_be_bytes());
    }
    out.extend_from_slice(pixels);
    out
}

/// Writes an IDX label file; more than `u32::MAX` labels cannot be expressed and are cut.
pub fn encode_idx_labels(labels: &[u8]) -> Vec<u8> {
    let count = u32::try_from(labels.len()).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(8 + labels.len());
    out.extend_from_slice(&IDX_LABELS_MAGIC.to_be_bytes());
    out.extend_from_slice(&count.to_be_bytes());
    out.extend(labels.iter().take(count as usize));
    out
}

/// An opened IDX file: its header already read, `body` positioned at the data.
struct Opened<'r> {
    body: Box<dyn Read + 'r>,
    dims: Vec<u32>,
    /// Bytes the body can really hold at most: exact for a raw file, a bound for gzip.
    body_limit_bytes: u64,
    /// Length of the file as stored (compressed for gzip).
    stored_len_bytes: u64,
    gzip: bool,
}

fn read_err(path: &Path, source: io::Error) -> DataError {
    DataError::Read {
        path: path.to_path_buf(),
        source,
    }
}

/// Maps an error met while reading: from a gzip decoder it means a damaged stream.
fn body_err(path: &Path, gzip: bool, e: io::Error) -> DataError {
    if gzip {
        DataError::CorruptGzip {
            path: path.to_path_buf(),
            detail: e.to_string(),
        }
    } else {
        read_err(path, e)
    }
}

/// Reads until `buf` is full or the stream ends; returns how many bytes arrived.
fn fill(reader: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        let Some(rest) = buf.get_mut(filled..) else {
            break;
        };
        match reader.read(rest) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Reads at most `limit` bytes; memory grows with the bytes that arrive, never past `limit`.
fn read_up_to(reader: &mut dyn Read, limit: usize, initial: usize) -> io::Result<Vec<u8>> {
    let mut data = Vec::with_capacity(initial.min(limit));
    let mut chunk = vec![0u8; READ_CHUNK_BYTES.min(limit.max(1))];
    loop {
        let want = (limit - data.len()).min(chunk.len());
        let Some(piece) = chunk.get_mut(..want) else {
            break;
        };
        if piece.is_empty() {
            break;
        }
        let n = match reader.read(piece) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if data.capacity() - data.len() < n {
            // Doubling keeps honest files fast; the cap keeps a lying header from winning more.
            data.reserve_exact(data.len().max(n).min(limit - data.len()));
        }
        data.extend_from_slice(chunk.get(..n).unwrap_or_default());
    }
    Ok(data)
}

fn open_idx<'r>(
    path: &Path,
    mut reader: impl BufRead + 'r,
    stored_len_bytes: u64,
    magic: u32,
    what: &'static str,
    ndims: usize,
) -> Result<Opened<'r>, DataError> {
    let head = reader.fill_buf().map_err(|e| read_err(path, e))?;
    let gzip = head.starts_with(&[0x1f, 0x8b]);
    let header_len_bytes = 4 + 4 * ndims as u64;
    let (mut body, body_limit_bytes): (Box<dyn Read + 'r>, u64) = if gzip {
        let bound = stored_len_bytes
            .saturating_mul(MAX_DEFLATE_RATIO)
            .saturating_add(GZIP_SLACK_BYTES);
        (Box::new(MultiGzDecoder::new(reader)), bound)
    } else {
        (
            Box::new(reader),
            stored_len_bytes.saturating_sub(header_len_bytes),
        )
    };
    let truncated = || DataError::Truncated {
        path: path.to_path_buf(),
        detail: format!("it ends inside its {header_len_bytes}-byte header"),
    };
    // The magic number is checked on its own first, so a file of the wrong kind is named as
    // such even when it is shorter than this kind's header.
    let mut word = [0u8; 4];
    if fill(&mut body, &mut word).map_err(|e| body_err(path, gzip, e))? < word.len() {
        return Err(truncated());
    }
    let found = u32::from_be_bytes(word);
    if found != magic {
        return Err(DataError::WrongMagic {
            path: path.to_path_buf(),
            found,
            expected: magic,
            what,
        });
    }
    let mut dims = Vec::with_capacity(ndims);
    for _ in 0..ndims {
        if fill(&mut body, &mut word).map_err(|e| body_err(path, gzip, e))? < word.len() {
            return Err(truncated());
        }
        dims.push(u32::from_be_bytes(word));
    }
    Ok(Opened {
        body,
        dims,
        body_limit_bytes,
        stored_len_bytes,
        gzip,
    })
}

/// Reads exactly `expected_bytes` of body, or explains why the file does not hold them.
fn read_body(
    path: &Path,
    opened: Opened<'_>,
    expected_bytes: u64,
    promise: &str,
) -> Result<Vec<u8>, DataError> {
    let Opened {
        mut body,
        body_limit_bytes,
        stored_len_bytes,
        gzip,
        ..
    } = opened;
    // Checked before allocating: a header claiming 2^32 images fails here, not in malloc.
    if expected_bytes > body_limit_bytes {
        let detail = if gzip {
            format!(
                "the header promises {promise} ({expected_bytes} bytes) but a gzip file of this size can hold at most {body_limit_bytes} bytes"
            )
        } else {
            format!(
                "the header promises {promise} ({expected_bytes} bytes) but only {body_limit_bytes} bytes follow"
            )
        };
        return Err(DataError::Truncated {
            path: path.to_path_buf(),
            detail,
        });
    }
    if !gzip && body_limit_bytes > expected_bytes {
        return Err(DataError::Malformed {
            path: path.to_path_buf(),
            detail: format!(
                "{} bytes follow the {promise} ({expected_bytes} bytes) its header promises; check that it is a real IDX file",
                body_limit_bytes - expected_bytes
            ),
        });
    }
    let expected = usize::try_from(expected_bytes).map_err(|_| DataError::Malformed {
        path: path.to_path_buf(),
        detail: format!("{promise} ({expected_bytes} bytes) do not fit in this machine's memory"),
    })?;
    // A raw file's length backs its header, so its buffer is allocated once; a gzip file's
    // header is only a claim until the bytes decompress.
    let initial = if gzip {
        usize::try_from(stored_len_bytes)
            .unwrap_or(usize::MAX)
            .saturating_mul(GZIP_INITIAL_RATIO)
    } else {
        expected
    };
    let data = read_up_to(&mut body, expected, initial).map_err(|e| body_err(path, gzip, e))?;
    let got_bytes = data.len() as u64;
    if got_bytes < expected_bytes {
        return Err(DataError::Truncated {
            path: path.to_path_buf(),
            detail: format!(
                "the header promises {promise} ({expected_bytes} bytes) but only {got_bytes} bytes follow"
            ),
        });
    }
    // One byte more reveals trailing data without reading a bomb to its end, and makes a gzip
    // decoder check its trailer (CRC, length) so damage there is noticed.
    let mut probe = [0u8; 1];
    if fill(&mut body, &mut probe).map_err(|e| body_err(path, gzip, e))? > 0 {
        return Err(DataError::Malformed {
            path: path.to_path_buf(),
            detail: format!(
                "more data follows the {promise} ({expected_bytes} bytes) its header promises; check that it is a real IDX file"
            ),
        });
    }
    Ok(data)
}

/// Parses an IDX image file (magic 0x00000803, raw or gzip) held in memory; `path` names it in
/// errors.
pub fn parse_idx_images(path: &Path, bytes: &[u8]) -> Result<IdxImages, DataError> {
    read_idx_images_from(path, bytes, bytes.len() as u64)
}

/// Reads an IDX image file from `reader`, whose stored length `len_bytes` bounds every size its
/// header may claim; `path` names it in errors.
pub fn read_idx_images_from(
    path: &Path,
    reader: impl BufRead,
    len_bytes: u64,
) -> Result<IdxImages, DataError> {
    let opened = open_idx(
        path,
        reader,
        len_bytes,
        IDX_IMAGES_MAGIC,
        "an IDX image file",
        3,
    )?;
    let (count, height, width) = match opened.dims[..] {
        [c, h, w] => (c, h, w),
        _ => (0, 0, 0),
    };
    for (side, name) in [(height, "height"), (width, "width")] {
        if side == 0 || side > MAX_SIDE_PX {
            return Err(DataError::Malformed {
                path: path.to_path_buf(),
                detail: format!(
                    "its header gives an image {name} of {side} pixels, outside 1..={MAX_SIDE_PX}; the header is corrupt"
                ),
            });
        }
    }
    if count == 0 {
        return Err(DataError::Malformed {
            path: path.to_path_buf(),
            detail: "its header says it holds no images; use a complete copy of the data set"
                .into(),
        });
    }
    let expected_bytes = u64::from(count) * u64::from(height) * u64::from(width);
    let promise = format!("{count} images of {height}×{width}");
    let pixels = read_body(path, opened, expected_bytes, &promise)?;
    Ok(IdxImages {
        count: count as usize,
        height_px: height as usize,
        width_px: width as usize,
        pixels,
    })
}

/// Parses an IDX label file (magic 0x00000801, raw or gzip) held in memory; `path` names it in
/// errors.
pub fn parse_idx_labels(path: &Path, bytes: &[u8]) -> Result<Vec<u8>, DataError> {
    read_idx_labels_from(path, bytes, bytes.len() as u64)
}

/// Reads an IDX label file from `reader`, whose stored length `len_bytes` bounds the count its
/// header may claim; `path` names it in errors.
pub fn read_idx_labels_from(
    path: &Path,
    reader: impl BufRead,
    len_bytes: u64,
) -> Result<Vec<u8>, DataError> {
    let opened = open_idx(
        path,
        reader,
        len_bytes,
        IDX_LABELS_MAGIC,
        "an IDX label file",
        1,
    )?;
    let count = opened.dims.first().copied().unwrap_or(0);
    if count == 0 {
        return Err(DataError::Malformed {
            path: path.to_path_buf(),
            detail: "its header says it holds no labels; use a complete copy of the data set"
                .into(),
        });
    }
    read_body(path, opened, u64::from(count), &format!("{count} labels"))
}

/// Reads an IDX image file (magic 0x00000803), raw or gzip.
pub fn read_idx_images(path: &Path) -> Result<IdxImages, DataError> {
    read_idx_images_in(&Disk, path)
}

/// Reads an IDX label file (magic 0x00000801), raw or gzip.
pub fn read_idx_labels(path: &Path) -> Result<Vec<u8>, DataError> {
    read_idx_labels_in(&Disk, path)
}

fn read_idx_images_in(tree: &dyn FileTree, path: &Path) -> Result<IdxImages, DataError> {
    let (reader, len_bytes) = tree.open(path).map_err(|e| read_err(path, e))?;
    read_idx_images_from(path, reader, len_bytes)
}

fn read_idx_labels_in(tree: &dyn FileTree, path: &Path) -> Result<Vec<u8>, DataError> {
    let (reader, len_bytes) = tree.open(path).map_err(|e| read_err(path, e))?;
    read_idx_labels_from(path, reader, len_bytes)
}

/// Fails on the first label that is not a class index.
pub fn check_labels(path: &Path, labels: &[u8], num_classes: usize) -> Result<(), DataError> {
    match labels.iter().find(|&&l| usize::from(l) >= num_classes) {
        Some(&label) => Err(DataError::LabelOutOfRange {
            path: path.to_path_buf(),
            label,
            num_classes,
        }),
        None => Ok(()),
    }
}

fn read_split(
    tree: &dyn FileTree,
    images_path: &Path,
    labels_path: &Path,
    num_classes: usize,
) -> Result<(IdxImages, Vec<u8>), DataError> {
    let images = read_idx_images_in(tree, images_path)?;
    let labels = read_idx_labels_in(tree, labels_path)?;
    if images.count != labels.len() {
        return Err(DataError::Malformed {
            path: labels_path.to_path_buf(),
            detail: format!(
                "it holds {} labels but {} holds {} images; both must come from the same release",
                labels.len(),
                images_path.display(),
                images.count
            ),
        });
    }
    check_labels(labels_path, &labels, num_classes)?;
    Ok((images, labels))
}

/// Loads the four IDX files of an MNIST-like data set from `dir`.
pub fn load_idx_set(
    dir: &Path,
    name: &str,
    class_names: &[&str],
) -> Result<ImageDataset, DataError> {
    load_idx_set_in(&Disk, dir, name, class_names)
}

/// Loads the four IDX files of an MNIST-like data set from `dir` in `tree`.
pub fn load_idx_set_in(
    tree: &dyn FileTree,
    dir: &Path,
    name: &str,
    class_names: &[&str],
) -> Result<ImageDataset, DataError> {
    let mut paths = Vec::with_capacity(IDX_FILES.len());
    for (stem, kind) in IDX_FILES {
        let path = find_idx_file_in(tree, dir, stem, kind).ok_or_else(|| DataError::Read {
            path: dir.join(format!("{stem}-{kind}-ubyte[.gz]")),
            source: io::Error::new(io::ErrorKind::NotFound, "no such file"),
        })?;
        paths.push(path);
    }
    let [train_images, train_labels, test_images, test_labels] = &paths[..] else {
        return Err(DataError::Malformed {
            path: dir.to_path_buf(),
            detail: "the IDX file list is incomplete".into(),
        });
    };
    let (train, train_y) = read_split(tree, train_images, train_labels, class_names.len())?;
    let (test, test_y) = read_split(tree, test_images, test_labels, class_names.len())?;
    if (train.height_px, train.width_px) != (test.height_px, test.width_px) {
        return Err(DataError::Malformed {
            path: test_images.clone(),
            detail: format!(
                "its images are {}×{} but those of {} are {}×{}; both must come from the same data set",
                test.height_px,
                test.width_px,
                train_images.display(),
                train.height_px,
                train.width_px
            ),
        });
    }
    let sources = vec![SourceFormat {
        width: train.width_px as u32,
        height: train.height_px as u32,
        colour: "grayscale".into(),
        files: train_y.len() + test_y.len(),
    }];
    Ok(ImageDataset {
        name: name.to_string(),
        shape: ImageShape {
            channels: 1,
            height: train.height_px,
            width: train.width_px,
        },
        class_names: class_names.iter().map(|s| s.to_string()).collect(),
        train: Split {
            images: train.pixels,
            labels: train_y,
            files: Vec::new(),
            label_sets: Vec::new(),
        },
        val: Default::default(),
        test: Split {
            images: test.pixels,
            labels: test_y,
            files: Vec::new(),
            label_sets: Vec::new(),
        },
        skipped: Vec::new(),
        notes: Vec::new(),
        sources,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::test_dir;
    pub(crate) use kiln_test_support::{
        encode_idx_images as idx_images_bytes, encode_idx_labels as idx_labels_bytes, gzip,
        write_idx_set,
    };

    #[test]
    fn idx_raw_and_gzip_round_trip() {
        for gz in [false, true] {
            let dir = test_dir("idx-roundtrip");
            write_idx_set(&dir, gz);
            let ds = load_idx_set(&dir, "MNIST", &crate::MNIST_CLASSES).unwrap();
            assert_eq!(
                ds.shape,
                ImageShape {
                    channels: 1,
                    height: 4,
                    width: 3
                }
            );
            assert_eq!(ds.train.len(), 12);
            assert_eq!(ds.test.len(), 5);
            assert_eq!(ds.train.images.len(), 12 * 12);
            assert_eq!(ds.train.images[5], 5u8.wrapping_mul(7).wrapping_add(1));
            assert_eq!(ds.test.labels, vec![0, 1, 2, 3, 4]);
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn idx_accepts_dot_spelling() {
        let dir = test_dir("idx-dot");
        let px = [9u8; 6];
        std::fs::write(
            dir.join("train-images.idx3-ubyte"),
            idx_images_bytes(1, 2, 3, &px),
        )
        .unwrap();
        assert!(find_idx_file(&dir, "train-images", "idx3").is_some());
        assert_eq!(
            read_idx_images(&find_idx_file(&dir, "train-images", "idx3").unwrap())
                .unwrap()
                .pixels,
            px
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn idx_wrong_magic() {
        let dir = test_dir("idx-magic");
        let path = dir.join("x");
        std::fs::write(&path, [0u8; 64]).unwrap();
        let err = read_idx_images(&path).unwrap_err();
        assert!(
            matches!(err, DataError::WrongMagic { found: 0, .. }),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("wrong magic number 0x00000000, expected 0x00000803 (an IDX image file)"),
            "{err}"
        );
        // A label file where images are expected is named as such.
        std::fs::write(&path, idx_labels_bytes(&[1, 2])).unwrap();
        assert!(matches!(
            read_idx_images(&path).unwrap_err(),
            DataError::WrongMagic { found: 0x801, .. }
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn idx_truncated_body_and_header() {
        let dir = test_dir("idx-trunc");
        let path = dir.join("train-images-idx3-ubyte");
        let mut bytes = idx_images_bytes(100, 28, 28, &[0u8; 1200]);
        std::fs::write(&path, &bytes).unwrap();
        let err = read_idx_images(&path).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, DataError::Truncated { .. }), "{msg}");
        assert!(
            msg.contains("promises 100 images of 28×28 (78400 bytes) but only 1200 bytes follow"),
            "{msg}"
        );
        // Trailing garbage is rejected too.
        bytes = idx_images_bytes(1, 2, 2, &[0u8; 5]);
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(
            read_idx_images(&path).unwrap_err(),
            DataError::Malformed { .. }
        ));
        // Cut inside the header.
        std::fs::write(&path, IDX_IMAGES_MAGIC.to_be_bytes()).unwrap();
        assert!(matches!(
            read_idx_images(&path).unwrap_err(),
            DataError::Truncated { .. }
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn idx_huge_header_fails_fast_without_allocating() {
        let dir = test_dir("idx-huge");
        let path = dir.join("a");
        // u32::MAX images of 4096×4096 would be 2^56 bytes; the check must come before allocation.
        std::fs::write(&path, idx_images_bytes(u32::MAX, 4096, 4096, &[0u8; 100])).unwrap();
        let start = std::time::Instant::now();
        assert!(matches!(
            read_idx_images(&path).unwrap_err(),
            DataError::Truncated { .. }
        ));
        let gz_path = dir.join("a.gz");
        std::fs::write(
            &gz_path,
            gzip(&idx_images_bytes(u32::MAX, 28, 28, &[0u8; 100])),
        )
        .unwrap();
        let err = read_idx_images(&gz_path).unwrap_err();
        assert!(matches!(err, DataError::Truncated { .. }), "{err}");
        std::fs::write(
            &path,
            idx_labels_bytes(&[1])
                .iter()
                .take(4)
                .chain(&u32::MAX.to_be_bytes())
                .copied()
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert!(matches!(
            read_idx_labels(&path).unwrap_err(),
            DataError::Truncated { .. }
        ));
        assert!(start.elapsed().as_millis() < 500);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn idx_absurd_dims() {
        let dir = test_dir("idx-dims");
        let path = dir.join("a");
        for (h, w) in [(0, 28), (28, 0), (5000, 28), (28, 4097)] {
            std::fs::write(&path, idx_images_bytes(1, h, w, &[])).unwrap();
            assert!(
                matches!(
                    read_idx_images(&path).unwrap_err(),
                    DataError::Malformed { .. }
                ),
                "{h}×{w}"
            );
        }
        std::fs::write(&path, idx_images_bytes(0, 28, 28, &[])).unwrap();
        assert!(matches!(
            read_idx_images(&path).unwrap_err(),
            DataError::Malformed { .. }
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn idx_truncated_and_corrupt_gzip() {
        let dir = test_dir("idx-gz");
        let path = dir.join("a.gz");
        let px: Vec<u8> = (0..50 * 28 * 28).map(|i| (i * 31 % 251) as u8).collect();
        let gz = gzip(&idx_images_bytes(50, 28, 28, &px));
        std::fs::write(&path, &gz[..gz.len() / 2]).unwrap();
        let err = read_idx_images(&path).unwrap_err();
        assert!(
            matches!(
                err,
                DataError::CorruptGzip { .. } | DataError::Truncated { .. }
            ),
            "{err}"
        );
        // Cut inside the 8-byte trailer: all data decodes, the CRC/length check must still fail.
        std::fs::write(&path, &gz[..gz.len() - 3]).unwrap();
        assert!(matches!(
            read_idx_images(&path).unwrap_err(),
            DataError::CorruptGzip { .. }
        ));
        // Corrupt deflate data.
        let mut bad = gz.clone();
        for b in bad.iter_mut().skip(20).take(40) {
            *b ^= 0x5a;
        }
        std::fs::write(&path, &bad).unwrap();
        assert!(read_idx_images(&path).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn idx_count_mismatch_and_label_range() {
        let dir = test_dir("idx-mismatch");
        write_idx_set(&dir, false);
        std::fs::write(
            dir.join("train-labels-idx1-ubyte"),
            idx_labels_bytes(&[0; 11]),
        )
        .unwrap();
        let err = load_idx_set(&dir, "MNIST", &crate::MNIST_CLASSES).unwrap_err();
        assert!(matches!(err, DataError::Malformed { .. }), "{err}");
        assert!(err.to_string().contains("holds 11 labels"), "{err}");
        let mut labels = vec![0u8; 12];
        labels[7] = 12;
        std::fs::write(
            dir.join("train-labels-idx1-ubyte"),
            idx_labels_bytes(&labels),
        )
        .unwrap();
        let err = load_idx_set(&dir, "MNIST", &crate::MNIST_CLASSES).unwrap_err();
        assert!(
            matches!(
                err,
                DataError::LabelOutOfRange {
                    label: 12,
                    num_classes: 10,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().starts_with("label 12 in "), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_idx_set_held_in_memory_loads_as_on_disk_and_says_what_it_lacks() {
        let dir = test_dir("idx-memory");
        write_idx_set(&dir, true);
        let on_disk = load_idx_set(&dir, "MNIST", &crate::MNIST_CLASSES).unwrap();
        let mut tree = crate::files::memory_copy(&dir);
        let name = Path::new(dir.file_name().unwrap());
        let in_memory = load_idx_set_in(&tree, name, "MNIST", &crate::MNIST_CLASSES).unwrap();
        assert_eq!(
            (in_memory.train, in_memory.test),
            (on_disk.train, on_disk.test)
        );
        assert_eq!(in_memory.shape, on_disk.shape);
        tree.remove(&name.join("t10k-labels-idx1-ubyte.gz"));
        let lacking = load_idx_set_in(&tree, name, "MNIST", &crate::MNIST_CLASSES).unwrap_err();
        assert!(
            lacking.to_string().contains("t10k-labels-idx1-ubyte"),
            "{lacking}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
