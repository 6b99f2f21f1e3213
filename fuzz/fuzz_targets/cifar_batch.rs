//! Any bytes as a CIFAR-10 binary batch.
#![no_main]

use std::path::Path;

use kiln_formats::Split;
use kiln_formats::cifar::{RECORD_BYTES, parse_cifar_batch};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut split = Split::default();
    match parse_cifar_batch(Path::new("fuzz.bin"), data, &mut split) {
        Ok(()) => {
            assert_eq!(split.len() * RECORD_BYTES, data.len());
            assert!(split.labels.iter().all(|&l| l < 10));
        }
        // A refused batch leaves nothing half-appended.
        Err(_) => assert!(split.is_empty() && split.images.is_empty()),
    }
});
