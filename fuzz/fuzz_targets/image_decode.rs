//! Any bytes as one image of an image folder, decoded and resized as folder loading does. The
//! first byte picks the target side (1..=64), so resizing up and down is exercised too.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&side, bytes)) = data.split_first() else {
        return;
    };
    let side = u32::from(side % 64) + 1;
    if let Ok(decoded) = kiln_formats::folder::decode_image(Path::new("fuzz.png"), bytes, side) {
        assert_eq!(decoded.planar_rgb.len(), 3 * (side * side) as usize);
    }
});
