//! Any bytes as an IDX image file (raw, or gzip when they start with its magic).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(images) = kiln_formats::idx::parse_idx_images(Path::new("fuzz.idx3"), data) {
        // What the engine relies on: the header's shape describes the pixels exactly.
        assert_eq!(
            images.pixels.len(),
            images.count * images.height_px * images.width_px
        );
    }
});
