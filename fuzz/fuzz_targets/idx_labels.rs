//! Any bytes as an IDX label file (raw, or gzip when they start with its magic), then checked
//! against ten classes as the MNIST loaders do.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz.idx1");
    if let Ok(labels) = kiln_formats::idx::parse_idx_labels(path, data) {
        assert!(!labels.is_empty());
        let _ = kiln_formats::idx::check_labels(path, &labels, 10);
    }
});
