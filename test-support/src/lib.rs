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
/// and several test binaries at once); the test removes it when it is done.
pub fn scratch_dir(name: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("kiln-test-{}-{n}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
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
