//! The gzip path of the IDX parsers with well-formed compression around hostile content, which
//! a fuzzer could hardly synthesize byte by byte: the first byte picks images or labels and
//! where to cut the compressed stream, the rest is the file's content.
#![no_main]

use std::io::Write;
use std::path::Path;

use flate2::Compression;
use flate2::write::GzEncoder;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&control, content)) = data.split_first() else {
        return;
    };
    let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
    if enc.write_all(content).is_err() {
        return;
    }
    let Ok(mut gz) = enc.finish() else {
        return;
    };
    // Bits 1..: cut that many bytes off the end (0 keeps the stream whole).
    let cut = usize::from(control >> 1).min(gz.len());
    gz.truncate(gz.len() - cut);
    let path = Path::new("fuzz.idx.gz");
    if control & 1 == 0 {
        let parsed = kiln_formats::idx::parse_idx_images(path, &gz);
        if cut > 0 {
            assert!(parsed.is_err(), "a cut gzip stream parsed");
        }
    } else {
        let parsed = kiln_formats::idx::parse_idx_labels(path, &gz);
        if cut > 0 {
            assert!(parsed.is_err(), "a cut gzip stream parsed");
        }
    }
});
