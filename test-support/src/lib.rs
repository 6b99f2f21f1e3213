//! What Kiln's tests share, in one place: a fresh scratch folder per test and small valid
//! data-set files written with kiln-formats' own encoders. Tests write their own data; nothing
//! here reads the network or the shared data sets.

// A failed write here is a failed test, which is what it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use flate2::Compression;
use flate2::write::GzEncoder;
pub use kiln_formats::idx::{encode_idx_images, encode_idx_labels};

/// A new, empty folder for one test, unique to this process and call (tests run in parallel,
/// and several test binaries at once), removed with all it holds when the returned guard drops:
/// at the test's end, passed or failed (a panic unwinds through it). Tests write model files of
/// up to 90 MB; left behind, a few test runs filled the disk CI machines share.
pub fn scratch_dir(name: &str) -> ScratchDir {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("kiln-test-{}-{n}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    ScratchDir(dir)
}

/// A test's scratch folder, read as its path; dropping it removes the folder.
#[derive(Debug)]
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// The folder's path, for what needs an owned one (a thread, a struct).
    pub fn path_buf(&self) -> PathBuf {
        self.0.clone()
    }
}

impl std::ops::Deref for ScratchDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for ScratchDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for ScratchDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Already removed by the test, or held open on Windows: nothing more to do either way.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A path named `name` in a scratch folder of its own, for a test that writes one file; the
/// folder goes when the returned guard drops.
pub fn scratch_file(name: &str) -> ScratchFile {
    let dir = scratch_dir("file");
    let path = dir.join(name);
    ScratchFile { path, _dir: dir }
}

/// One file's path in a [`ScratchDir`] that lives as long as it.
#[derive(Debug)]
pub struct ScratchFile {
    path: PathBuf,
    _dir: ScratchDir,
}

impl std::ops::Deref for ScratchFile {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for ScratchFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// A 4×4 PNG of one grey `shade`, as an image folder or a labels file names it.
pub fn grey_png(shade: u8) -> Vec<u8> {
    let mut bytes = Vec::new();
    image::GrayImage::from_pixel(4, 4, image::Luma([shade]))
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .unwrap();
    bytes
}

/// `bytes` gzip-compressed, as the data set mirrors serve IDX files.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// Writes a small, valid MNIST-like set into `dir`: 12 training and 5 test images of 4×3
/// pixels, labelled 0–9 in turn, under MNIST's file names (gzipped when `gz`).
pub fn write_idx_set(dir: &Path, gz: bool) {
    let (height, width) = (4u32, 3u32);
    let make = |n: u32, seed: u8| -> (Vec<u8>, Vec<u8>) {
        let pixels: Vec<u8> = (0..n * height * width)
            .map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed))
            .collect();
        let labels: Vec<u8> = (0..n).map(|i| (i % 10) as u8).collect();
        (
            encode_idx_images(n, height, width, &pixels),
            encode_idx_labels(&labels),
        )
    };
    let (train_images, train_labels) = make(12, 1);
    let (test_images, test_labels) = make(5, 2);
    for (name, bytes) in [
        ("train-images-idx3-ubyte", train_images),
        ("train-labels-idx1-ubyte", train_labels),
        ("t10k-images-idx3-ubyte", test_images),
        ("t10k-labels-idx1-ubyte", test_labels),
    ] {
        if gz {
            std::fs::write(dir.join(format!("{name}.gz")), gzip(&bytes)).unwrap();
        } else {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
    }
}

/// CIFAR-10 records whose R, G, B planes are i, 100 + i, 200 + i, so the planes stay visible.
pub fn cifar_records(labels: &[u8]) -> Vec<u8> {
    let plane = 32 * 32;
    let images: Vec<u8> = (0..labels.len())
        .flat_map(|i| (0..3u8).flat_map(move |c| std::iter::repeat_n(c * 100 + i as u8, plane)))
        .collect();
    kiln_formats::cifar::encode_cifar_batch(labels, &images)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_folder_goes_with_what_it_holds_when_its_guard_drops() {
        let dir = scratch_dir("guard");
        std::fs::create_dir_all(dir.join("nested")).unwrap();
        std::fs::write(dir.join("nested").join("model.onnx"), [0u8; 1024]).unwrap();
        let path = dir.path_buf();
        drop(dir);
        assert!(!path.exists());
    }

    #[test]
    fn a_failed_test_leaves_no_scratch_folder_behind() {
        let (sender, receiver) = std::sync::mpsc::channel();
        let outcome = std::panic::catch_unwind(move || {
            let file = scratch_file("weights.safetensors");
            std::fs::write(&file, b"written").unwrap();
            sender.send(file.to_path_buf()).unwrap();
            panic!("the test fails after writing");
        });
        assert!(outcome.is_err());
        let path = receiver.recv().unwrap();
        assert!(!path.exists());
        assert!(!path.parent().unwrap().exists());
    }
}
