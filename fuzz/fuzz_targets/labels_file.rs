//! Any bytes as a labels file, read both as CSV and as JSON lines, beside two small images.
#![no_main]

use std::path::Path;

use kiln_formats::files::MemoryFiles;
use kiln_formats::labels::{LabelColumns, load_labels_file_in};
use libfuzzer_sys::fuzz_target;

/// A 2×2 grey PNG, as a labels file's rows may name it.
fn png(shade: u8) -> Vec<u8> {
    let mut bytes = Vec::new();
    image::GrayImage::from_pixel(2, 2, image::Luma([shade]))
        .write_to(&mut std::io::Cursor::new(&mut bytes), image::ImageFormat::Png)
        .unwrap();
    bytes
}

fuzz_target!(|data: &[u8]| {
    for name in ["labels.csv", "labels.jsonl"] {
        let mut tree = MemoryFiles::new();
        tree.insert("a.png", png(10)).unwrap();
        tree.insert("b.png", png(200)).unwrap();
        tree.insert(name, data.to_vec()).unwrap();
        if let Ok(set) = load_labels_file_in(&tree, Path::new(name), 2, &LabelColumns::default()) {
            // Whatever it reads, every image has a class and every class a distinct name.
            let classes = set.class_names.len();
            for split in [&set.train, &set.val, &set.test] {
                assert!(split.labels.iter().all(|&l| (l as usize) < classes));
                assert_eq!(split.files.len(), split.labels.len());
            }
            let mut names = set.class_names.clone();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), classes);
        }
    }
});
