//! Image folders: one sub-folder of PNG/JPEG images per class.
//!
//! Layout: either `ROOT/train/<class>/…` with `ROOT/val/<class>/…` and/or
//! `ROOT/test/<class>/…`, used as given, or a flat `ROOT/<class>/…`, which loads as training
//! images only (the engine carves stratified validation and test splits from it). Split
//! folders are found in any case, and validation also as `valid/` or `validation/`. Classes
//! are the sub-folder names in sorted order; a file outside every class folder is listed as
//! skipped. Images are stretched to a square of the requested side, by the caller's
//! [`ResizeFilter`] (antialiased bilinear unless told otherwise). The
//! data set is grayscale (1 channel) when every image is grayscale, else RGB: grayscale scans then cost a third of the memory and match MNIST-style
//! models, while one colour image is enough to keep colour for all.

use std::ffi::OsString;
use std::io::{BufRead, Cursor, Seek};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use image::imageops::FilterType;
use image::{ColorType, DynamicImage, ImageDecoder, ImageReader, Limits, Rgb, RgbImage};

use crate::files::{Disk, FileTree};
use crate::{
    DataError, ImageDataset, ImageShape, MAX_IMAGE_SIZE_PX, SkippedFile, SourceFormat, Split,
};

/// Labels are one byte.
const MAX_CLASSES: usize = 256;
/// Widest or tallest source image accepted; a header beyond it is corrupt or hostile.
const MAX_SOURCE_SIDE_PX: u32 = 16_384;
/// Most memory one decoder may ask for; up to 16 decode at once, so this bounds the total too.
const MAX_DECODE_ALLOC_BYTES: u64 = 256 << 20;
/// Most pixels one byte of PNG or JPEG can stand for: deflate's 1032:1 on 1-bit PNG rows (a
/// complete JPEG needs at least a bit per 8×8 block, far less). A header claiming more than its
/// file's length times this describes pixels that are not there, and decoding and resizing
/// them would cost seconds for a few hundred bytes.
const MAX_PIXELS_PER_FILE_BYTE: u64 = 8 * 1032;

fn bad_folder(path: &Path, problem: impl Into<String>) -> DataError {
    DataError::BadFolder {
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}

fn is_hidden(name: &OsString) -> bool {
    name.to_string_lossy().starts_with('.')
}

/// Entries of `dir`, sorted by name, hidden ones skipped, filtered by `keep`.
fn sorted_entries(
    tree: &dyn FileTree,
    dir: &Path,
    keep: impl Fn(bool) -> bool,
) -> Result<Vec<(OsString, PathBuf)>, DataError> {
    let entries = tree.entries(dir).map_err(|source| DataError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut out: Vec<(OsString, PathBuf)> = entries
        .into_iter()
        .filter(|(name, is_dir)| !is_hidden(name) && keep(*is_dir))
        .map(|(name, _)| {
            let path = dir.join(&name);
            (name, path)
        })
        .collect();
    out.sort();
    Ok(out)
}

/// Extensions of the formats the `image` crate decodes here, lower case.
pub const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "webp", "bmp", "gif", "tif", "tiff"];

/// Files operating systems and photo tools leave beside images, ignored without a word.
const SYSTEM_JUNK: &[&str] = &["thumbs.db", "desktop.ini", "ehthumbs.db", "icon\r"];

fn is_junk(name: &OsString) -> bool {
    SYSTEM_JUNK.contains(&name.to_string_lossy().to_ascii_lowercase().as_str())
}

/// Whether a folder walk passes over the entry `name` without a word: hidden (a leading dot) or
/// the junk photo tools leave (`Thumbs.db`, `desktop.ini`), as folder data sets do.
pub fn is_ignored_name(name: &std::ffi::OsStr) -> bool {
    let name = name.to_os_string();
    is_hidden(&name) || is_junk(&name)
}

/// Whether `path`'s extension is one of [`IMAGE_EXTENSIONS`], in any case.
pub fn has_image_extension(path: &Path) -> bool {
    path.extension().is_some_and(|e| {
        IMAGE_EXTENSIONS.contains(&e.to_string_lossy().to_ascii_lowercase().as_str())
    })
}

/// Files directly in `dir`, where a class sub-folder would give them a class: listed as
/// skipped (system junk aside), so a stray photo beside the class folders is not lost unseen.
fn loose_files(
    tree: &dyn FileTree,
    dir: &Path,
    skipped: &mut Vec<SkippedFile>,
) -> Result<(), DataError> {
    for (name, path) in sorted_entries(tree, dir, |is_dir| !is_dir)? {
        if !is_junk(&name) {
            skipped.push(SkippedFile {
                path,
                reason:
                    "it is outside every class sub-folder, so it has no class; move it into one"
                        .to_owned(),
            });
        }
    }
    Ok(())
}

/// The names a split's sub-folder may have, in any case: Keras's `validation/` and
/// Roboflow's `valid/` as well as `val/`.
const SPLIT_FOLDERS: [&[&str]; 3] = [&["train"], &["val", "valid", "validation"], &["test"]];

/// Of `root`'s sub-folders `dirs`, the one for the split named by `names`, whatever its case;
/// two of them (say `val/` and `validation/`) are refused, since either choice would drop the
/// other's images.
fn split_dir(
    root: &Path,
    dirs: &[(String, PathBuf)],
    names: &[&str],
) -> Result<Option<PathBuf>, DataError> {
    let found: Vec<&(String, PathBuf)> = dirs
        .iter()
        .filter(|(name, _)| names.contains(&name.to_ascii_lowercase().as_str()))
        .collect();
    match found.as_slice() {
        [] => Ok(None),
        [(_, dir)] => Ok(Some(dir.clone())),
        [(first, _), (second, _), ..] => Err(bad_folder(
            root,
            format!("it has both {first}/ and {second}/ for one split; merge them into one"),
        )),
    }
}

fn is_image_file(tree: &dyn FileTree, path: &Path) -> bool {
    tree.is_file(path) && has_image_extension(path)
}

/// Every image file under `dir`, nested sub-folders included (a phone's `2024/June/` export is
/// still that class), sorted by path; other files are listed in `skipped`, junk is not.
fn images_under(
    tree: &dyn FileTree,
    dir: &Path,
    skipped: &mut Vec<SkippedFile>,
) -> Result<Vec<PathBuf>, DataError> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for (name, path) in sorted_entries(tree, &folder, |_| true)? {
            if tree.is_dir(&path) {
                pending.push(path);
            } else if is_image_file(tree, &path) {
                found.push(path);
            } else if !is_junk(&name) {
                skipped.push(SkippedFile {
                    path,
                    reason: format!(
                        "it is not an image Kiln reads ({})",
                        IMAGE_EXTENSIONS.join(", ")
                    ),
                });
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Class sub-folders of `dir`: (name, path), sorted.
fn class_dirs(tree: &dyn FileTree, dir: &Path) -> Result<Vec<(String, PathBuf)>, DataError> {
    Ok(sorted_entries(tree, dir, |is_dir| is_dir)?
        .into_iter()
        .map(|(n, p)| (n.to_string_lossy().into_owned(), p))
        .collect())
}

fn check_class_count(root: &Path, classes: &[(String, PathBuf)]) -> Result<(), DataError> {
    if classes.len() < 2 {
        return Err(bad_folder(
            root,
            format!(
                "it has {} class sub-folder(s) but a classifier needs at least 2; put each class's images in its own sub-folder",
                classes.len()
            ),
        ));
    }
    if classes.len() > MAX_CLASSES {
        return Err(bad_folder(
            root,
            format!(
                "it has {} class sub-folders, more than the {MAX_CLASSES} Kiln supports; merge or remove classes",
                classes.len()
            ),
        ));
    }
    Ok(())
}

/// Image files of one class folder, sorted; an empty class is an error.
fn class_images(
    tree: &dyn FileTree,
    dir: &Path,
    skipped: &mut Vec<SkippedFile>,
) -> Result<Vec<PathBuf>, DataError> {
    let files = images_under(tree, dir, skipped)?;
    if files.is_empty() {
        return Err(empty_class(dir));
    }
    Ok(files)
}

fn empty_class(dir: &Path) -> DataError {
    bad_folder(
        dir,
        format!(
            "this class folder holds no image Kiln can read ({}); add images or remove the folder",
            IMAGE_EXTENSIONS.join(", ")
        ),
    )
}

/// How an image is brought to the training side: as torchvision does or as Keras does, so a
/// model sees its pixels as the framework it comes from or is compared with would show them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResizeFilter {
    /// Bilinear whose reach widens with the shrink so every source pixel counts (PIL's and
    /// torchvision's, the `image` crate's Triangle filter): shrinking never aliases.
    #[default]
    Antialiased,
    /// TensorFlow's bilinear without antialiasing (`tf.image.resize`'s default, which Keras's
    /// `image_dataset_from_directory` uses): the two nearest source pixels per axis, so
    /// shrinking skips the pixels between them.
    Bilinear,
    /// TensorFlow's nearest neighbour with half-pixel centres: one source pixel each.
    Nearest,
}

/// A square side to resize images to and the filter that does it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resize {
    /// Width and height of every resized image, in 1..=[`MAX_IMAGE_SIZE_PX`].
    pub side_px: u32,
    /// How the source pixels are weighed into each resized one.
    pub filter: ResizeFilter,
}

/// A bare side means the antialiased filter folder loading has always used, so callers that
/// name only a size keep the pixels they had.
impl From<u32> for Resize {
    fn from(side_px: u32) -> Self {
        Self {
            side_px,
            filter: ResizeFilter::default(),
        }
    }
}

/// One decoded image: planar RGB at the target size, and what its source was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedImage {
    /// R, G and B planes of `side_px`×`side_px`, one after the other.
    pub planar_rgb: Vec<u8>,
    /// True when the source had no colour, so the data set may stay one-channel.
    pub grayscale: bool,
    /// The file's `(width, height, colour mode)`, after EXIF orientation.
    pub source: (u32, u32, &'static str),
}

/// A colour mode as a person says it.
fn colour_name(colour: ColorType) -> &'static str {
    match colour {
        ColorType::L8 => "grayscale",
        ColorType::La8 => "grayscale + alpha",
        ColorType::Rgb8 => "RGB",
        ColorType::Rgba8 => "RGBA",
        ColorType::L16 => "16-bit grayscale",
        ColorType::La16 => "16-bit grayscale + alpha",
        ColorType::Rgb16 => "16-bit RGB",
        ColorType::Rgba16 => "16-bit RGBA",
        ColorType::Rgb32F => "float RGB",
        ColorType::Rgba32F => "float RGBA",
        _ => "another colour mode",
    }
}

/// Decodes an image (PNG, JPEG, WebP, BMP, GIF or TIFF) held in memory and resizes it as folder
/// loading does; `path` names it in errors. The side must be in 1..=[`MAX_IMAGE_SIZE_PX`].
pub fn decode_image(
    path: &Path,
    bytes: &[u8],
    resize: impl Into<Resize>,
) -> Result<DecodedImage, DataError> {
    decode_from(path, Cursor::new(bytes), bytes.len() as u64, resize.into())
}

/// Decodes and resizes the image file at `path`.
pub fn decode_image_file(
    path: &Path,
    resize: impl Into<Resize>,
) -> Result<DecodedImage, DataError> {
    decode_image_in(&Disk, path, resize)
}

/// Decodes and resizes the image at `path` in `tree`.
pub fn decode_image_in(
    tree: &dyn FileTree,
    path: &Path,
    resize: impl Into<Resize>,
) -> Result<DecodedImage, DataError> {
    let (reader, len_bytes) = tree.open(path).map_err(|source| DataError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    decode_from(path, reader, len_bytes, resize.into())
}

fn decode_from(
    path: &Path,
    reader: impl BufRead + Seek,
    len_bytes: u64,
    resize: Resize,
) -> Result<DecodedImage, DataError> {
    let side_px = resize.side_px;
    let bad = |detail: String| DataError::BadImage {
        path: path.to_path_buf(),
        detail,
    };
    if side_px == 0 || side_px > MAX_IMAGE_SIZE_PX {
        return Err(DataError::BadSpec(format!(
            "image size {side_px} for {} must be between 1 and {MAX_IMAGE_SIZE_PX} pixels",
            path.display()
        )));
    }
    if len_bytes == 0 {
        // The decoder would say it cannot tell the format; the truth is simpler.
        return Err(bad("the file is empty (0 bytes)".to_owned()));
    }
    // The content decides the format, not the extension: photos are often misnamed.
    let mut reader = ImageReader::new(reader)
        .with_guessed_format()
        .map_err(|source| DataError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    // Explicit limits, so a hostile header is refused before its pixel buffer is allocated.
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SOURCE_SIDE_PX);
    limits.max_image_height = Some(MAX_SOURCE_SIDE_PX);
    limits.max_alloc = Some(MAX_DECODE_ALLOC_BYTES);
    reader.limits(limits);
    let mut decoder = reader.into_decoder().map_err(|e| bad(e.to_string()))?;
    // A phone stores its photos as the sensor saw them and says in EXIF how to turn them.
    let orientation = decoder
        .orientation()
        .unwrap_or(image::metadata::Orientation::NoTransforms);
    let (width, height) = decoder.dimensions();
    let pixels = u64::from(width) * u64::from(height);
    if pixels > len_bytes.saturating_mul(MAX_PIXELS_PER_FILE_BYTE) {
        return Err(bad(format!(
            "its header claims {width}×{height} pixels, more than a file of {len_bytes} bytes can hold, so it is truncated or corrupt"
        )));
    }
    if decoder.total_bytes() > MAX_DECODE_ALLOC_BYTES {
        return Err(bad(format!(
            "at {width}×{height} pixels it would take {} MiB to decode, more than the {} MiB allowed per image",
            decoder.total_bytes().div_ceil(1 << 20),
            MAX_DECODE_ALLOC_BYTES >> 20
        )));
    }
    let mut img = DynamicImage::from_decoder(decoder).map_err(|e| bad(e.to_string()))?;
    img.apply_orientation(orientation);
    if img.width() == 0 || img.height() == 0 {
        return Err(bad(format!(
            "it is {}×{} pixels, with nothing to resize",
            img.width(),
            img.height()
        )));
    }
    let grayscale = matches!(
        img.color(),
        ColorType::L8 | ColorType::La8 | ColorType::L16 | ColorType::La16
    );
    // An image already of the size is kept as it is: at scale 1 the triangle filter weighs
    // only the pixel itself and TensorFlow's filters land on it exactly, so resizing would cost
    // time and change nothing.
    let rgb = img.to_rgb8();
    let rgb = match rgb.dimensions() == (side_px, side_px) {
        true => rgb,
        false => match resize.filter {
            ResizeFilter::Antialiased => {
                image::imageops::resize(&rgb, side_px, side_px, FilterType::Triangle)
            }
            ResizeFilter::Bilinear => resize_half_pixel(&rgb, side_px, false),
            ResizeFilter::Nearest => resize_half_pixel(&rgb, side_px, true),
        },
    };
    let plane = (side_px as usize) * (side_px as usize);
    let mut planar_rgb = vec![0u8; 3 * plane];
    for (i, px) in rgb.pixels().enumerate() {
        for (c, &v) in px.0.iter().enumerate() {
            if let Some(slot) = planar_rgb.get_mut(c * plane + i) {
                *slot = v;
            }
        }
    }
    Ok(DecodedImage {
        planar_rgb,
        grayscale,
        source: (img.width(), img.height(), colour_name(img.color())),
    })
}

/// Per output index along an axis of `len_in` source pixels stretched to `len_out`: the two
/// source indices to blend and the weight of the second, where TensorFlow's half-pixel-centred
/// resize finds them (the nearest one twice with weight 0 for `nearest`). `len_in` is at least 1.
fn half_pixel_taps(len_in: u32, len_out: u32, nearest: bool) -> Vec<(usize, usize, f32)> {
    // In f32, as TensorFlow's kernels compute it, so a sample point on the edge between two
    // pixels falls on the same side as there.
    let scale = len_in as f32 / len_out as f32;
    let last = len_in.saturating_sub(1) as usize;
    (0..len_out)
        .map(|x| {
            let centre = (x as f32 + 0.5) * scale;
            if nearest {
                let i = (centre.floor() as usize).min(last);
                return (i, i, 0.0);
            }
            let source = (centre - 0.5).clamp(0.0, last as f32);
            let low = source.floor();
            let i = low as usize;
            (i, (i + 1).min(last), source - low)
        })
        .collect()
}

/// `image` stretched to `side`×`side` as TensorFlow's `tf.image.resize` does without
/// antialiasing, bilinear or (`nearest`) nearest neighbour, rounded to the nearest byte.
fn resize_half_pixel(image: &RgbImage, side: u32, nearest: bool) -> RgbImage {
    let (width, height) = image.dimensions();
    let columns = half_pixel_taps(width, side, nearest);
    let rows = half_pixel_taps(height, side, nearest);
    let stride = 3 * side as usize;
    // Across first, kept in f32, then down: TensorFlow's own order of the same arithmetic, so
    // only the final value is rounded and it is the byte TensorFlow's float rounds to.
    let mut across = Vec::with_capacity(height as usize * stride);
    for row in image.as_raw().chunks_exact(3 * width as usize) {
        for &(left, right, t) in &columns {
            for c in 0..3 {
                let (a, b) = (row[3 * left + c], row[3 * right + c]);
                across.push(f32::from(a) + (f32::from(b) - f32::from(a)) * t);
            }
        }
    }
    RgbImage::from_fn(side, side, |x, y| {
        let (top, bottom, t) = rows[y as usize];
        let at = |row: usize, c: usize| across[row * stride + 3 * x as usize + c];
        Rgb(std::array::from_fn(|c| {
            let (a, b) = (at(top, c), at(bottom, c));
            (a + (b - a) * t).round().clamp(0.0, 255.0) as u8
        }))
    })
}

/// Decodes and resizes one file of `tree` ([`decode_image_in`]); a panic inside a decoder
/// becomes an error naming the file.
pub fn decode_guarded(
    tree: &dyn FileTree,
    path: &Path,
    resize: impl Into<Resize>,
) -> Result<DecodedImage, DataError> {
    let resize = resize.into();
    catch_unwind(AssertUnwindSafe(|| decode_image_in(tree, path, resize))).unwrap_or_else(|_| {
        Err(DataError::BadImage {
            path: path.to_path_buf(),
            detail: "the image decoder crashed on it".into(),
        })
    })
}

/// A zeroed buffer for `count` planar RGB images of `side`×`side`, or an error naming the folder
/// when that much memory cannot be had; asked for before any image is decoded.
fn image_buffer(root: &Path, count: usize, side: usize) -> Result<Vec<u8>, DataError> {
    let too_big = |bytes: Option<usize>| {
        let size = bytes.map_or_else(
            || "more bytes than this machine can address".to_string(),
            |b| format!("{} MiB", b.div_ceil(1 << 20)),
        );
        bad_folder(
            root,
            format!(
                "its {count} images at {side}×{side} pixels need {size} in memory, more than can be allocated; choose a smaller image size"
            ),
        )
    };
    let bytes = count
        .checked_mul(3)
        .and_then(|n| n.checked_mul(side))
        .and_then(|n| n.checked_mul(side))
        .ok_or_else(|| too_big(None))?;
    let mut buffer = Vec::new();
    buffer
        .try_reserve_exact(bytes)
        .map_err(|_| too_big(Some(bytes)))?;
    buffer.resize(bytes, 0);
    Ok(buffer)
}

/// What `decode_all` keeps of one file: whether it was grayscale, and its size and colour mode.
type Decoded = (bool, (u32, u32, &'static str));

/// Decodes every file on all cores into `out` (one planar RGB image after another, in the
/// order of `files`); per file, whether its source was grayscale and its size and colour mode,
/// or why it could not be read. With one core (a browser page has one thread and cannot start
/// another) the files decode on the caller's thread.
fn decode_all(
    tree: &dyn FileTree,
    root: &Path,
    files: &[PathBuf],
    resize: Resize,
    out: &mut [u8],
) -> Result<Vec<Result<Decoded, DataError>>, DataError> {
    let per_image = 3 * (resize.side_px as usize) * (resize.side_px as usize);
    let decode_part = |part: &[PathBuf], slots: &mut [u8]| -> Vec<Result<Decoded, DataError>> {
        part.iter()
            .zip(slots.chunks_exact_mut(per_image))
            .map(|(path, slot)| {
                let decoded = decode_guarded(tree, path, resize)?;
                slot.copy_from_slice(&decoded.planar_rgb);
                Ok((decoded.grayscale, decoded.source))
            })
            .collect()
    };
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 16);
    if workers == 1 {
        return Ok(decode_part(files, out));
    }
    let chunk = files.len().div_ceil(workers).max(1);
    let results: Vec<Result<Vec<Result<Decoded, DataError>>, DataError>> = std::thread::scope(
        |s| {
            let handles: Vec<_> = files
                .chunks(chunk)
                .zip(out.chunks_mut(chunk * per_image))
                .enumerate()
                .map(|(i, (part, slots))| {
                    std::thread::Builder::new()
                        .name(format!("kiln-decode-{i}"))
                        .spawn_scoped(s, move || decode_part(part, slots))
                })
                .collect();
            handles
            .into_iter()
            .map(|handle| match handle {
                // Panics inside a decoder are caught per file and name it; this is the rest.
                Ok(handle) => handle
                    .join()
                    .map_err(|_| bad_folder(root, "an image decoder thread crashed")),
                Err(e) => Err(bad_folder(
                    root,
                    format!(
                        "no thread could be started to decode its images ({e}); close other programs and try again"
                    ),
                )),
            })
            .collect()
        },
    );
    let mut per_file = Vec::with_capacity(files.len());
    for r in results {
        per_file.extend(r?);
    }
    Ok(per_file)
}

/// Loads an image folder, every image resized to a square as `resize` says.
pub fn load_image_folder(
    root: &Path,
    resize: impl Into<Resize>,
) -> Result<ImageDataset, DataError> {
    load_image_folder_in(&Disk, root, resize)
}

/// Loads the image folder at `root` in `tree`, as [`load_image_folder`] does from the disk.
pub fn load_image_folder_in(
    tree: &dyn FileTree,
    root: &Path,
    resize: impl Into<Resize>,
) -> Result<ImageDataset, DataError> {
    let resize = resize.into();
    check_image_size(root, resize.side_px)?;
    if !tree.is_dir(root) {
        return Err(bad_folder(
            root,
            "it does not exist or is not a folder; pass the folder that holds one sub-folder per class",
        ));
    }
    let metadata = crate::labels::metadata_files(tree, root);
    if !metadata.is_empty() {
        return crate::labels::load_metadata_folder_in(tree, root, &metadata, resize);
    }
    let (class_names, files, skipped) = gather_files(tree, root)?;
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| root.display().to_string());
    assemble(
        tree,
        root,
        Gathered {
            name,
            class_names,
            files,
            label_sets: None,
            skipped,
            notes: Vec::new(),
            problem: |root, problem| bad_folder(root, problem),
        },
        resize,
    )
}

/// An error naming `source` unless `image_size` is a side images can be resized to.
pub(crate) fn check_image_size(source: &Path, image_size: u32) -> Result<(), DataError> {
    if image_size == 0 || image_size > MAX_IMAGE_SIZE_PX {
        return Err(DataError::BadSpec(format!(
            "image size {image_size} for {} must be between 1 and {MAX_IMAGE_SIZE_PX} pixels",
            source.display()
        )));
    }
    Ok(())
}

/// What a folder walk or a labels file found, before any image is decoded.
pub(crate) struct Gathered {
    /// The data set's name.
    pub name: String,
    /// One name per class, in label order.
    pub class_names: Vec<String>,
    /// (file, label) of every image, per split (train, validation, test).
    pub files: SplitFiles,
    /// For a multi-label set, each file's labels, in the order of `files`.
    pub label_sets: Option<[Vec<Vec<u8>>; 3]>,
    /// What was left out already, each with its reason.
    pub skipped: Vec<SkippedFile>,
    /// Sentences about the source as a whole.
    pub notes: Vec<String>,
    /// The error for a problem of the source as a whole (an image folder's, a labels file's).
    pub problem: fn(&Path, String) -> DataError,
}

/// Decodes every file `gathered` lists, resized as `resize` says, leaves out and lists those
/// that do not decode, and makes the data set; `root` names the source in errors.
pub(crate) fn assemble(
    tree: &dyn FileTree,
    root: &Path,
    gathered: Gathered,
    resize: Resize,
) -> Result<ImageDataset, DataError> {
    let Gathered {
        name,
        class_names,
        files,
        label_sets,
        mut skipped,
        notes,
        problem: gathered_problem,
    } = gathered;
    let all: Vec<PathBuf> = files.iter().flatten().map(|(p, _)| p.clone()).collect();
    let side = resize.side_px as usize;
    let plane = side * side;
    let mut pixels = image_buffer(root, all.len(), side)?;
    let decoded = decode_all(tree, root, &all, resize, &mut pixels)?;
    // What did not decode is left out and listed; the rest moves up to close the gaps.
    let mut labels: [Vec<u8>; 3] = Default::default();
    let mut kept_files: [Vec<PathBuf>; 3] = Default::default();
    let mut kept_sets: [Vec<Vec<u8>>; 3] = Default::default();
    let (mut kept, mut grayscale) = (0, true);
    let mut sources = Vec::new();
    let outcomes = files
        .iter()
        .enumerate()
        .flat_map(|(split, list)| {
            list.iter()
                .enumerate()
                .map(move |(at, file)| (split, at, file))
        })
        .zip(decoded);
    for (index, ((split, at, (path, label)), outcome)) in outcomes.enumerate() {
        match outcome {
            Ok((gray, source)) => {
                sources.push(source);
                pixels.copy_within(3 * plane * index..3 * plane * (index + 1), 3 * plane * kept);
                labels[split].push(*label);
                if let Some(sets) = &label_sets {
                    kept_sets[split].push(sets[split].get(at).cloned().unwrap_or_default());
                }
                kept_files[split].push(path.clone());
                grayscale &= gray;
                kept += 1;
            }
            Err(e) => skipped.push(SkippedFile {
                path: path.clone(),
                reason: match e {
                    DataError::BadImage { detail, .. } => detail,
                    other => other.to_string(),
                },
            }),
        }
    }
    pixels.truncate(3 * plane * kept);
    for (class, name) in class_names.iter().enumerate() {
        // A label of a multi-label set no training image has is still a label (it is learned
        // as absent); `kiln data inspect` warns about it.
        if label_sets.is_none() && !labels[0].contains(&(class as u8)) {
            return Err((gathered_problem)(
                root,
                format!(
                    "no training image of class `{name}` could be read ({} skipped); fix or remove its files",
                    skipped.len()
                ),
            ));
        }
    }
    let channels = if grayscale { 1 } else { 3 };
    if grayscale {
        // A grayscale image expanded to RGB has three equal planes; the first one is the image.
        for i in 0..kept {
            pixels.copy_within(3 * plane * i..3 * plane * i + plane, plane * i);
        }
        pixels.truncate(plane * kept);
    }
    let per_image = channels * plane;
    let [train_labels, val_labels, test_labels] = labels;
    let test_images = pixels.split_off((train_labels.len() + val_labels.len()) * per_image);
    let val_images = pixels.split_off(train_labels.len() * per_image);
    pixels.shrink_to_fit();
    let [train_files, val_files, test_files] = kept_files;
    let [train_sets, val_sets, test_sets] = kept_sets;
    let split = |images, labels, files, label_sets| Split {
        images,
        labels,
        files,
        label_sets,
    };
    let (train, val, test) = (
        split(pixels, train_labels, train_files, train_sets),
        split(val_images, val_labels, val_files, val_sets),
        split(test_images, test_labels, test_files, test_sets),
    );
    Ok(ImageDataset {
        name,
        shape: ImageShape {
            channels,
            height: side,
            width: side,
        },
        class_names,
        train,
        val,
        test,
        skipped,
        notes,
        sources: SourceFormat::tally(sources),
    })
}

/// (file, label) of every image, per split.
pub(crate) type SplitFiles = [Vec<(PathBuf, u8)>; 3];

/// The class names, the files of each split (train, validation, test): as the `train/`,
/// `val/` and `test/` sub-folders give them, or all in train for a flat folder; and the files
/// that are not images or lie outside every class folder.
fn gather_files(
    tree: &dyn FileTree,
    root: &Path,
) -> Result<(Vec<String>, SplitFiles, Vec<SkippedFile>), DataError> {
    let mut files: SplitFiles = Default::default();
    let mut skipped = Vec::new();
    let root_dirs = class_dirs(tree, root)?;
    let mut split_dirs: [Option<PathBuf>; 3] = Default::default();
    for (slot, names) in split_dirs.iter_mut().zip(SPLIT_FOLDERS) {
        *slot = split_dir(root, &root_dirs, names)?;
    }
    let [train_dir, val_dir, test_dir] = split_dirs;
    let given: Vec<(PathBuf, usize)> = [(val_dir, 1), (test_dir, 2)]
        .into_iter()
        .filter_map(|(dir, slot)| dir.map(|dir| (dir, slot)))
        .collect();
    let classes = match train_dir {
        Some(train_dir) if !given.is_empty() => train_dir,
        _ => root.to_owned(),
    };
    loose_files(tree, root, &mut skipped)?;
    if classes != root {
        loose_files(tree, &classes, &mut skipped)?;
        for (dir, _) in &given {
            loose_files(tree, dir, &mut skipped)?;
        }
    }
    let class_list = if classes == root {
        root_dirs
    } else {
        class_dirs(tree, &classes)?
    };
    check_class_count(&classes, &class_list)?;
    for (label, (_, dir)) in class_list.iter().enumerate() {
        let label = label as u8;
        let images = class_images(tree, dir, &mut skipped)?;
        files[0].extend(images.into_iter().map(|p| (p, label)));
    }
    if classes != root {
        for (dir, slot) in &given {
            for (name, class_dir) in class_dirs(tree, dir)? {
                let Some(label) = class_list.iter().position(|(n, _)| *n == name) else {
                    return Err(bad_folder(
                        dir,
                        format!(
                            "class `{name}` is not in train/; every split must have the classes of train/"
                        ),
                    ));
                };
                // An empty class folder in val/ or test/ is as much a mistake as one in train/;
                // a class with no folder there is only absent from that split.
                let found = class_images(tree, &class_dir, &mut skipped)?;
                files[*slot].extend(found.into_iter().map(|p| (p, label as u8)));
            }
        }
    }
    let names = class_list.into_iter().map(|(n, _)| n).collect();
    Ok((names, files, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_dir;
    use image::{GrayImage, Luma, Rgb, RgbImage};

    fn write_rgb(path: &Path, color: [u8; 3]) {
        RgbImage::from_pixel(8, 6, Rgb(color)).save(path).unwrap();
    }

    /// A 5×5 grey image of value `v` at `dir/name`, the folder made first.
    fn write_grey(dir: &Path, name: &str, v: u8) {
        std::fs::create_dir_all(dir).unwrap();
        GrayImage::from_pixel(5, 5, Luma([v]))
            .save(dir.join(name))
            .unwrap();
    }

    #[test]
    fn a_flat_folder_loads_every_image_for_training_and_leaves_the_holdouts_to_the_engine() {
        let root = test_dir("folder-valid");
        for (class, color) in [("cat", [200, 10, 10]), ("dog", [10, 10, 200])] {
            std::fs::create_dir_all(root.join(class)).unwrap();
            for i in 0..7 {
                write_rgb(&root.join(class).join(format!("{i:02}.png")), color);
            }
        }
        std::fs::write(root.join("cat").join("notes.txt"), "ignored").unwrap();
        let ds = load_image_folder(&root, 4).unwrap();
        assert_eq!(ds.class_names, vec!["cat", "dog"]);
        assert_eq!(
            ds.shape,
            ImageShape {
                channels: 3,
                height: 4,
                width: 4
            }
        );
        assert_eq!(ds.train.len(), 14);
        assert_eq!(ds.train.labels, [vec![0; 7], vec![1; 7]].concat());
        assert!(ds.val.is_empty() && ds.test.is_empty());
        // Planar: the whole red plane first.
        assert!(ds.train.images[..16].iter().all(|&v| v == 200));
        assert!(ds.train.images[16..48].iter().all(|&v| v == 10));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn an_image_already_of_the_size_decodes_to_what_resizing_it_would_give() {
        let img = image::RgbImage::from_fn(6, 6, |x, y| {
            image::Rgb([(x * 41 + y * 7) as u8, (y * 37) as u8, ((x ^ y) * 29) as u8])
        });
        let mut png = Vec::new();
        img.write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        for filter in [
            ResizeFilter::Antialiased,
            ResizeFilter::Bilinear,
            ResizeFilter::Nearest,
        ] {
            let resize = Resize { side_px: 6, filter };
            let decoded = decode_image(Path::new("six.png"), &png, resize).unwrap();
            let resized = match filter {
                ResizeFilter::Antialiased => {
                    image::imageops::resize(&img, 6, 6, FilterType::Triangle)
                }
                ResizeFilter::Bilinear => resize_half_pixel(&img, 6, false),
                ResizeFilter::Nearest => resize_half_pixel(&img, 6, true),
            };
            assert_eq!(decoded.planar_rgb, planar(&resized), "{filter:?}");
            assert_eq!(resized, img, "{filter:?}");
        }
    }

    /// `image`'s R, G and B planes one after the other, as [`DecodedImage`] holds them.
    fn planar(image: &RgbImage) -> Vec<u8> {
        (0..3)
            .flat_map(|c| image.pixels().map(move |p| p.0[c]))
            .collect()
    }

    /// `image` encoded as a PNG.
    fn png_of(image: &RgbImage) -> Vec<u8> {
        let mut png = Vec::new();
        image
            .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        png
    }

    /// A `side`×`side` checkerboard of one-pixel black and white squares, white at the corner.
    fn checkerboard(side: u32) -> RgbImage {
        RgbImage::from_fn(side, side, |x, y| Rgb([255 * ((x + y + 1) % 2) as u8; 3]))
    }

    #[test]
    fn shrinking_a_fine_checkerboard_aliases_with_bilinear_and_averages_to_grey_antialiased() {
        // A third of the side: TensorFlow's sample points then fall on source pixel centres, so
        // its bilinear copies them and skips the two between (a halving would land between two
        // pixels and average them by chance).
        let png = png_of(&checkerboard(9));
        let path = Path::new("board.png");
        let bilinear = Resize {
            side_px: 3,
            filter: ResizeFilter::Bilinear,
        };
        let aliased = decode_image(path, &png, bilinear).unwrap();
        assert_eq!(
            aliased.planar_rgb,
            [255, 0, 255, 0, 255, 0, 255, 0, 255].repeat(3)
        );
        let antialiased = Resize {
            side_px: 3,
            filter: ResizeFilter::Antialiased,
        };
        let smooth = decode_image(path, &png, antialiased).unwrap();
        assert!(
            smooth.planar_rgb.iter().all(|v| (100..=155).contains(v)),
            "{:?}",
            smooth.planar_rgb
        );
    }

    #[test]
    fn bilinear_upscaling_gives_tensorflows_half_pixel_values() {
        // Red 0, 100 over 200, 40; green its complement, blue flat. On 4 pixels the half-pixel
        // sample points of 2 are -0.25 (clamped to 0), 0.25, 0.75 and 1.25 (clamped to 1).
        let red = [[0u8, 100], [200, 40]];
        let source = RgbImage::from_fn(2, 2, |x, y| {
            let r = red[y as usize][x as usize];
            Rgb([r, 255 - r, 7])
        });
        let resize = Resize {
            side_px: 4,
            filter: ResizeFilter::Bilinear,
        };
        let decoded = decode_image(Path::new("two.png"), &png_of(&source), resize).unwrap();
        #[rustfmt::skip]
        let expected_red: [u8; 16] = [
            0, 25, 75, 100,
            50, 59, 76, 85, // 58.75 and 76.25 rounded
            150, 126, 79, 55, // 126.25 and 78.75 rounded
            200, 160, 80, 40,
        ];
        let expected_green = expected_red.map(|r| 255 - r);
        assert_eq!(decoded.planar_rgb[..16], expected_red);
        assert_eq!(decoded.planar_rgb[16..32], expected_green);
        assert_eq!(decoded.planar_rgb[32..], [7; 16]);
    }

    #[test]
    fn nearest_picks_the_source_pixel_under_each_half_pixel_centre() {
        // 5 wide to 2: centres 1.25 and 3.75 fall in columns 1 and 3; 3 tall to 2: 0.75 and
        // 2.25 fall in rows 0 and 2.
        let source = RgbImage::from_fn(5, 3, |x, y| Rgb([(10 * y + x) as u8, 0, 0]));
        let resize = Resize {
            side_px: 2,
            filter: ResizeFilter::Nearest,
        };
        let shrunk = decode_image(Path::new("wide.png"), &png_of(&source), resize).unwrap();
        assert_eq!(shrunk.planar_rgb[..4], [1, 3, 21, 23]);
        // Doubled, each pixel is copied twice along each axis.
        let grown = resize_half_pixel(&RgbImage::from_fn(2, 1, |x, _| Rgb([x as u8; 3])), 4, true);
        let red: Vec<u8> = grown.pixels().map(|p| p.0[0]).collect();
        assert_eq!(red, [[0, 0, 1, 1]; 4].concat());
    }

    #[test]
    fn a_bare_side_still_resizes_antialiased() {
        assert_eq!(
            Resize::from(5),
            Resize {
                side_px: 5,
                filter: ResizeFilter::Antialiased
            }
        );
        let source = checkerboard(9);
        let png = png_of(&source);
        let decoded = decode_image(Path::new("board.png"), &png, 4).unwrap();
        let triangle = image::imageops::resize(&source, 4, 4, FilterType::Triangle);
        assert_eq!(decoded.planar_rgb, planar(&triangle));
    }

    #[test]
    fn folders_and_labels_files_resize_with_the_filter_they_are_given() {
        let mut tree = crate::files::MemoryFiles::new();
        let board = png_of(&checkerboard(9));
        for file in ["set/a/1.png", "set/b/1.png"] {
            tree.insert(file, board.clone()).unwrap();
        }
        tree.insert(
            "labels.csv",
            b"file,label\nset/a/1.png,a\nset/b/1.png,b\n".to_vec(),
        )
        .unwrap();
        let aliased = [255, 0, 255, 0, 255, 0, 255, 0, 255].repeat(3 * 2);
        for filter in [ResizeFilter::Bilinear, ResizeFilter::Nearest] {
            let resize = Resize { side_px: 3, filter };
            let folder = load_image_folder_in(&tree, Path::new("set"), resize).unwrap();
            assert_eq!(folder.train.images, aliased, "{filter:?}");
            let columns = crate::labels::LabelColumns::default();
            let listed = crate::labels::load_labels_file_in(
                &tree,
                Path::new("labels.csv"),
                resize,
                &columns,
            )
            .unwrap();
            assert_eq!(listed.train.images, aliased, "{filter:?}");
        }
        let smooth = load_image_folder_in(&tree, Path::new("set"), 3).unwrap();
        assert_ne!(smooth.train.images, aliased);
    }

    #[test]
    fn folder_train_test_layout_grayscale() {
        let root = test_dir("folder-split");
        for split in ["train", "test"] {
            for (class, v) in [("a", 30u8), ("b", 220u8)] {
                write_grey(&root.join(split).join(class), "x.png", v);
            }
        }
        let ds = load_image_folder(&root, 3).unwrap();
        assert_eq!(ds.shape.channels, 1);
        assert_eq!(ds.train.images, [vec![30u8; 9], vec![220u8; 9]].concat());
        assert_eq!(ds.test.labels, vec![0, 1]);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn train_val_test_sub_folders_are_used_as_given() {
        let root = test_dir("folder-three");
        for (split, count) in [("train", 3), ("val", 2), ("test", 1)] {
            for (class, v) in [("a", 30u8), ("b", 220u8)] {
                for i in 0..count {
                    write_grey(&root.join(split).join(class), &format!("{i}.png"), v);
                }
            }
        }
        let ds = load_image_folder(&root, 3).unwrap();
        assert_eq!(ds.train.labels, vec![0, 0, 0, 1, 1, 1]);
        assert_eq!(ds.val.labels, vec![0, 0, 1, 1]);
        assert_eq!(ds.test.labels, vec![0, 1]);
        assert_eq!(ds.val.images, [vec![30u8; 18], vec![220u8; 18]].concat());

        std::fs::create_dir_all(root.join("val").join("c")).unwrap();
        let err = load_image_folder(&root, 3).unwrap_err();
        assert!(
            err.to_string().contains("class `c` is not in train/"),
            "{err}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn split_folders_are_found_by_their_usual_names_in_any_case() {
        let root = test_dir("folder-split-names");
        for (split, v) in [("Train", 30u8), ("validation", 120), ("TEST", 220)] {
            for class in ["a", "b"] {
                write_grey(&root.join(split).join(class), "x.png", v);
            }
        }
        let ds = load_image_folder(&root, 3).unwrap();
        assert_eq!(ds.class_names, vec!["a", "b"]);
        assert_eq!(
            [&ds.train, &ds.val, &ds.test].map(|s| s.images[0]),
            [30, 120, 220]
        );
        assert_eq!(
            ds.val.file(1),
            Some(root.join("validation/b/x.png").as_path())
        );
        // Two folders for one split: either choice would drop the other's images.
        std::fs::create_dir_all(root.join("val").join("a")).unwrap();
        let err = load_image_folder(&root, 3).unwrap_err().to_string();
        assert!(
            err.contains("both val/ and validation/ for one split"),
            "{err}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn files_beside_the_class_folders_are_listed_as_skipped_not_lost() {
        let root = test_dir("folder-loose");
        for class in ["cat", "dog"] {
            std::fs::create_dir_all(root.join(class)).unwrap();
            write_rgb(&root.join(class).join("1.png"), [9, 9, 9]);
        }
        write_rgb(&root.join("stray.png"), [1, 2, 3]);
        std::fs::write(root.join("README.txt"), "photos of pets").unwrap();
        std::fs::write(root.join("Thumbs.db"), "junk").unwrap();
        let ds = load_image_folder(&root, 4).unwrap();
        assert_eq!(ds.train.len(), 2);
        let skipped: Vec<_> = ds.skipped.iter().map(|s| s.path.clone()).collect();
        assert_eq!(skipped, [root.join("README.txt"), root.join("stray.png")]);
        assert!(
            ds.skipped[0]
                .reason
                .contains("outside every class sub-folder")
        );
        assert_eq!(ds.train.file(0), Some(root.join("cat/1.png").as_path()));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn photo_folders_load_every_format_nested_folders_and_list_what_they_skip() {
        let root = test_dir("folder-photos");
        let cats = root.join("cats");
        let dogs = root.join("dogs");
        std::fs::create_dir_all(cats.join("2024").join("June")).unwrap();
        std::fs::create_dir_all(&dogs).unwrap();
        for name in ["a.png", "b.webp", "c.bmp", "2024/June/d.gif"] {
            write_rgb(&cats.join(name), [200, 10, 10]);
        }
        for name in ["e.tif", "f.TIFF", "g.jpg"] {
            write_rgb(&dogs.join(name), [10, 10, 200]);
        }
        std::fs::write(dogs.join("Thumbs.db"), b"junk").unwrap();
        std::fs::write(cats.join(".DS_Store"), b"junk").unwrap();
        std::fs::write(dogs.join("notes.txt"), b"a note").unwrap();
        std::fs::write(dogs.join("broken.png"), b"\x89PNG\r\n\x1a\n cut short").unwrap();
        let ds = load_image_folder(&root, 4).unwrap();
        assert_eq!(ds.train.labels, vec![0, 0, 0, 0, 1, 1, 1]);
        // Every format decoded to its colour (JPEG only roughly).
        for (i, &label) in ds.train.labels.iter().enumerate() {
            let red = ds.train.images[i * 48];
            assert_eq!(red > 100, label == 0, "image {i}");
        }
        let mut skipped: Vec<String> = ds
            .skipped
            .iter()
            .map(|s| s.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        skipped.sort();
        assert_eq!(skipped, ["broken.png", "notes.txt"], "{:?}", ds.skipped);
        // The files' own sizes and colour modes, most common first; the broken one is not counted.
        let sources: Vec<(u32, u32, &str, usize)> = ds
            .sources
            .iter()
            .map(|s| (s.width, s.height, s.colour.as_str(), s.files))
            .collect();
        assert_eq!(
            sources,
            [(8, 6, "RGB", 6), (8, 6, "RGBA", 1)],
            "{sources:?}"
        );
        let note = ds
            .skipped
            .iter()
            .find(|s| s.path.ends_with("notes.txt"))
            .unwrap();
        assert!(
            note.reason.starts_with("it is not an image Kiln reads"),
            "{}",
            note.reason
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// A PNG of `image` with an EXIF chunk saying it must be shown turned by `orientation`.
    fn png_with_exif_orientation(image: &RgbImage, orientation: u8) -> Vec<u8> {
        let mut png = Vec::new();
        image
            .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        // Big-endian TIFF header, one IFD entry: tag 0x0112 (orientation), SHORT, count 1.
        let exif: Vec<u8> = [
            &b"MM\0\x2a\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01\0"[..],
            &[orientation, 0, 0, 0, 0, 0, 0],
        ]
        .concat();
        let mut crc = flate2::Crc::new();
        crc.update(b"eXIf");
        crc.update(&exif);
        let chunk: Vec<u8> = [
            &(exif.len() as u32).to_be_bytes()[..],
            b"eXIf",
            &exif,
            &crc.sum().to_be_bytes(),
        ]
        .concat();
        // After the signature (8 bytes) and IHDR (25 bytes).
        png.splice(33..33, chunk);
        png
    }

    #[test]
    fn a_phone_photo_is_turned_upright_by_its_exif_orientation() {
        // Two pixels side by side, red then blue, stored as a sensor would: EXIF 6 says the
        // picture is to be turned 90° clockwise, so red ends on top.
        let mut sideways = RgbImage::new(2, 1);
        sideways.put_pixel(0, 0, Rgb([255, 0, 0]));
        sideways.put_pixel(1, 0, Rgb([0, 0, 255]));
        let path = Path::new("phone.png");
        let plain = decode_image(path, &png_with_exif_orientation(&sideways, 1), 2).unwrap();
        let turned = decode_image(path, &png_with_exif_orientation(&sideways, 6), 2).unwrap();
        // Planar R then G then B, each 2×2 row by row: [top-left, top-right, bottom-left, ...].
        let red_blue = |d: &DecodedImage| (d.planar_rgb[..4].to_vec(), d.planar_rgb[8..].to_vec());
        let (plain_red, _) = red_blue(&plain);
        let (turned_red, turned_blue) = red_blue(&turned);
        assert!(
            plain_red[0] > plain_red[1],
            "as stored, red is on the left: {plain_red:?}"
        );
        assert!(
            turned_red[0] > turned_red[2] && turned_red[1] > turned_red[3],
            "{turned_red:?}"
        );
        assert!(turned_blue[2] > turned_blue[0], "{turned_blue:?}");
    }

    /// Fuzzing found it (a timeout): 350 bytes of JPEG whose header claims 8196×10756 pixels
    /// decoded as 88 megapixels of filler and took seconds to resize.
    #[test]
    fn regression_tiny_jpeg_claiming_megapixels_is_refused() {
        let bytes = include_bytes!("../testdata/jpeg-350-bytes-claims-8196x10756.jpg");
        let path = Path::new("scan.jpg");
        let start = std::time::Instant::now();
        let err = decode_image(path, bytes, 32).unwrap_err();
        assert!(matches!(err, DataError::BadImage { .. }), "{err}");
        assert!(
            err.to_string()
                .contains("claims 8196×10756 pixels, more than a file of 350 bytes can hold"),
            "{err}"
        );
        assert!(start.elapsed().as_millis() < 500);
    }

    #[test]
    fn folder_too_big_for_memory_is_refused_before_decoding() {
        let root = Path::new("/photos");
        // More than isize::MAX bytes: refused by the reservation itself, on any machine.
        let err = image_buffer(root, usize::MAX / 4, 1).unwrap_err();
        assert!(matches!(err, DataError::BadFolder { .. }), "{err}");
        let msg = err.to_string();
        assert!(msg.starts_with("image folder /photos: its "), "{msg}");
        assert!(msg.contains("choose a smaller image size"), "{msg}");
        // So large the size does not even fit in a usize.
        let err = image_buffer(root, usize::MAX / 2, 4096).unwrap_err();
        assert!(
            err.to_string()
                .contains("more bytes than this machine can address"),
            "{err}"
        );
        assert_eq!(image_buffer(root, 2, 3).unwrap(), vec![0u8; 54]);
    }

    #[test]
    fn folder_undecodable_one_class_empty_class() {
        let root = test_dir("folder-bad");
        std::fs::create_dir_all(root.join("a")).unwrap();
        for i in 0..6 {
            write_rgb(&root.join("a").join(format!("{i}.png")), [1, 2, 3]);
        }
        let err = load_image_folder(&root, 8).unwrap_err();
        assert!(matches!(err, DataError::BadFolder { .. }), "{err}");
        assert!(err.to_string().contains("at least 2"), "{err}");

        std::fs::create_dir_all(root.join("b")).unwrap();
        let err = load_image_folder(&root, 8).unwrap_err();
        assert!(
            err.to_string().contains("holds no image Kiln can read"),
            "{err}"
        );

        // A class whose only image is unreadable has nothing to train on.
        let broken = root.join("b").join("broken.jpg");
        std::fs::write(&broken, b"\xff\xd8\xff\xe0 definitely not a jpeg").unwrap();
        let err = load_image_folder(&root, 8).unwrap_err();
        assert!(
            err.to_string()
                .contains("no training image of class `b` could be read (1 skipped)"),
            "{err}"
        );
        assert!(load_image_folder(&root.join("nope"), 8).is_err());
        assert!(load_image_folder(&root, 0).is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn an_empty_class_folder_in_a_given_split_is_refused_and_an_absent_one_is_not() {
        let root = test_dir("folder-empty-test-class");
        for class in ["a", "b"] {
            for i in 0..3 {
                let dir = root.join("train").join(class);
                std::fs::create_dir_all(&dir).unwrap();
                write_rgb(&dir.join(format!("{i}.png")), [i * 50, 2, 3]);
            }
        }
        std::fs::create_dir_all(root.join("test").join("a")).unwrap();
        write_rgb(&root.join("test").join("a").join("0.png"), [9, 9, 9]);
        let data = load_image_folder(&root, 8).expect("class b is only absent from test/");
        assert_eq!(data.test.labels, [0]);
        std::fs::create_dir_all(root.join("test").join("b")).unwrap();
        let err = load_image_folder(&root, 8).unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains("holds no image Kiln can read"),
            "{message}"
        );
        assert!(
            message.contains(&root.join("test").join("b").display().to_string()),
            "{message}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_folder_held_in_memory_loads_as_the_same_folder_on_disk() {
        let root = test_dir("folder-memory");
        for (split, shade) in [("train", 40u8), ("Validation", 120), ("test", 220)] {
            for class in ["cat", "dog"] {
                write_grey(&root.join(split).join(class), "1.png", shade);
                write_grey(
                    &root.join(split).join(class).join("2024"),
                    "2.png",
                    shade / 2,
                );
            }
        }
        write_rgb(
            &root.join("train").join("cat").join("colour.png"),
            [200, 10, 10],
        );
        std::fs::write(root.join("train").join("dog").join("notes.txt"), b"a note").unwrap();
        std::fs::write(
            root.join("train").join("dog").join("cut.png"),
            b"\x89PNG\r\n",
        )
        .unwrap();
        std::fs::write(root.join("stray.png"), b"not in a class").unwrap();
        std::fs::write(root.join("train").join("Thumbs.db"), b"junk").unwrap();
        let on_disk = load_image_folder(&root, 4).unwrap();
        let name = root.file_name().unwrap();
        let in_memory =
            load_image_folder_in(&crate::files::memory_copy(&root), Path::new(name), 4).unwrap();
        let relative = |paths: Vec<PathBuf>, base: &Path| -> Vec<PathBuf> {
            paths
                .iter()
                .map(|p| p.strip_prefix(base).unwrap().to_path_buf())
                .collect()
        };
        assert_eq!(in_memory.name, on_disk.name);
        assert_eq!(
            (&in_memory.class_names, in_memory.shape, &in_memory.sources),
            (&on_disk.class_names, on_disk.shape, &on_disk.sources)
        );
        let parent = root.parent().unwrap();
        for (memory, disk) in [
            (&in_memory.train, &on_disk.train),
            (&in_memory.val, &on_disk.val),
            (&in_memory.test, &on_disk.test),
        ] {
            assert_eq!(
                (&memory.images, &memory.labels),
                (&disk.images, &disk.labels)
            );
            assert_eq!(memory.files, relative(disk.files.clone(), parent));
        }
        let skipped = |ds: &ImageDataset, base: &Path| -> Vec<(PathBuf, String)> {
            ds.skipped
                .iter()
                .map(|s| {
                    (
                        s.path.strip_prefix(base).unwrap().to_path_buf(),
                        s.reason.clone(),
                    )
                })
                .collect()
        };
        assert_eq!(
            skipped(&in_memory, Path::new("")),
            skipped(&on_disk, parent)
        );
        assert_eq!(on_disk.skipped.len(), 3, "{:?}", on_disk.skipped);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_folder_held_in_memory_is_refused_with_the_disks_sentences() {
        let mut tree = crate::files::MemoryFiles::new();
        let mut png = Vec::new();
        GrayImage::from_pixel(3, 3, Luma([9]))
            .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        tree.insert("pets/cat/1.png", png).unwrap();
        let one_class = load_image_folder_in(&tree, Path::new("pets"), 4).unwrap_err();
        assert!(one_class.to_string().contains("at least 2"), "{one_class}");
        let missing = load_image_folder_in(&tree, Path::new("cars"), 4).unwrap_err();
        assert!(
            missing
                .to_string()
                .contains("does not exist or is not a folder"),
            "{missing}"
        );
    }
}
