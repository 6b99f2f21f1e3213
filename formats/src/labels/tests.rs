use super::*;
use crate::files::MemoryFiles;

use kiln_test_support::grey_png as png;

/// A tree with `shots/a.png` … of the given shades, and the labels file `text` at `name`.
fn tree_with(images: &[(&str, u8)], name: &str, text: &str) -> MemoryFiles {
    let mut tree = MemoryFiles::new();
    for (path, shade) in images {
        tree.insert(path, png(*shade)).unwrap();
    }
    tree.insert(name, text.as_bytes().to_vec()).unwrap();
    tree
}

fn load(tree: &MemoryFiles, file: &str) -> Result<ImageDataset, DataError> {
    load_labels_file_in(tree, Path::new(file), 2, &LabelColumns::default())
}

fn reasons(data: &ImageDataset) -> Vec<String> {
    data.skipped.iter().map(|s| s.reason.clone()).collect()
}

#[test]
fn a_csv_with_a_header_reads_paths_beside_it_and_keeps_awkward_label_names_exactly() {
    let awkward = ["tabby, orange", "say \"cheese\"", "🐈 cat"];
    let text = format!(
        "image,label\nshots/a.png,\"{}\"\n./shots/b.png,\"{}\"\n/abs/c.png,{}\n",
        awkward[0],
        awkward[1].replace('"', "\"\""),
        awkward[2]
    );
    let mut tree = tree_with(
        &[("set/shots/a.png", 10), ("set/shots/b.png", 20)],
        "set/labels.csv",
        &text,
    );
    // An absolute path is taken as written (the tree keys it from its root).
    tree.insert("/abs/c.png", png(30)).unwrap();
    let data = load(&tree, "set/labels.csv").unwrap();
    let mut expected: Vec<String> = awkward.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(data.class_names, expected);
    assert_eq!(data.name, "labels");
    assert_eq!(data.train.len(), 3);
    assert!(data.skipped.is_empty(), "{:?}", data.skipped);
    assert_eq!(
        data.train.files,
        [
            PathBuf::from("set/shots/a.png"),
            "set/shots/b.png".into(),
            "/abs/c.png".into()
        ]
    );
    // Each image carries the label its row gave it.
    let label_of = |shade: u8| {
        let index = data
            .train
            .images
            .chunks(4)
            .position(|px| px[0] == shade)
            .unwrap();
        data.class_names[data.train.labels[index] as usize].clone()
    };
    assert_eq!(
        [label_of(10), label_of(20), label_of(30)],
        [awkward[0], awkward[1], awkward[2]]
    );
}

#[test]
fn a_csv_without_a_header_takes_the_column_of_image_names_as_the_paths() {
    let tree = tree_with(
        &[("a.png", 10), ("b.jpg.png", 20)],
        "labels.csv",
        "cat,a.png\ndog,b.jpg.png\n",
    );
    let data = load(&tree, "labels.csv").unwrap();
    assert_eq!(data.class_names, ["cat", "dog"]);
    assert_eq!(data.train.labels, [0, 1]);
}

#[test]
fn a_split_column_puts_each_row_in_train_val_or_test_in_any_case() {
    let tree = tree_with(
        &[
            ("a.png", 1),
            ("b.png", 2),
            ("c.png", 3),
            ("d.png", 4),
            ("e.png", 5),
        ],
        "l.csv",
        "file_name,class,Split\na.png,x,TRAIN\nb.png,y,train\nc.png,x,Validation\nd.png,y,test\ne.png,x,\n",
    );
    let data = load(&tree, "l.csv").unwrap();
    assert_eq!(
        (data.train.len(), data.val.len(), data.test.len()),
        (3, 1, 1)
    );
    assert_eq!(data.val.files, [PathBuf::from("c.png")]);
    assert_eq!(data.test.labels, [1]);
}

#[test]
fn rows_that_cannot_be_used_are_listed_with_their_reason_and_the_rest_trains() {
    let mut tree = tree_with(
        &[("a.png", 1), ("b.png", 2), ("c.png", 3)],
        "l.csv",
        "path,label,split\n\
         a.png,cat,train\n\
         missing.png,cat,train\n\
         b.png,,train\n\
         a.png,dog,train\n\
         c.png,dog,holdout\n\
         broken.png,dog,train\n\
         c.png,dog\n\
         ,dog,train\n\
         b.png,dog,train\n",
    );
    tree.insert("broken.png", b"not a png".to_vec()).unwrap();
    let data = load(&tree, "l.csv").unwrap();
    assert_eq!(data.train.files, [PathBuf::from("a.png"), "b.png".into()]);
    assert_eq!(data.class_names, ["cat", "dog"]);
    let reasons = reasons(&data);
    for expected in [
        "not found (line 3 of l.csv)",
        "line 4 of l.csv gives it no label",
        "line 5 of l.csv lists it again (first on line 2); only the first row counts",
        "line 6 of l.csv puts it in split `holdout`, not train, val or test",
        "line 8 of l.csv has 2 cells where the header has 3",
        "line 9 of l.csv names no image",
    ] {
        assert!(
            reasons.iter().any(|r| r == expected),
            "{expected:?} in {reasons:#?}"
        );
    }
    // The broken image is named by the decoder, as an image folder's would be.
    let broken = data
        .skipped
        .iter()
        .find(|s| s.path == Path::new("broken.png"));
    assert!(broken.is_some(), "{reasons:#?}");
    assert_eq!(data.skipped.len(), 7);
}

#[test]
fn labels_that_are_all_numbers_are_ordered_by_value_and_named_in_a_note() {
    let images: Vec<(String, u8)> = (0..11).map(|i| (format!("{i}.png"), i as u8)).collect();
    let text: String = std::iter::once("file,label\n".to_string())
        .chain((0..11).map(|i| format!("{i}.png,{}\n", (i * 7) % 11)))
        .collect();
    let refs: Vec<(&str, u8)> = images.iter().map(|(p, s)| (p.as_str(), *s)).collect();
    let data = load(&tree_with(&refs, "n.csv", &text), "n.csv").unwrap();
    let expected: Vec<String> = (0..11).map(|i| i.to_string()).collect();
    assert_eq!(data.class_names, expected);
    assert_eq!(data.notes.len(), 1);
    assert!(
        data.notes[0].starts_with("every label is a number (0 to 10)"),
        "{:?}",
        data.notes
    );
}

#[test]
fn named_columns_are_read_and_a_column_it_lacks_is_refused_with_the_columns_it_has() {
    let tree = tree_with(
        &[("a.png", 1), ("b.png", 2)],
        "l.csv",
        "id,where,kind,colour\n1,a.png,cat,red\n2,b.png,dog,blue\n",
    );
    let columns = |path: &str, label: &str| LabelColumns {
        path: Some(path.into()),
        label: Some(label.into()),
        ..LabelColumns::default()
    };
    let data =
        load_labels_file_in(&tree, Path::new("l.csv"), 2, &columns("where", "COLOUR")).unwrap();
    assert_eq!(data.class_names, ["blue", "red"]);
    let error = load_labels_file_in(&tree, Path::new("l.csv"), 2, &columns("where", "breed"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "labels file l.csv: it has no column `breed` (--label-column); its columns are `id`, `where`, `kind`, `colour`"
    );
    // Without names, two candidate label columns are a question, not a guess.
    let error = load(&tree, "l.csv").unwrap_err().to_string();
    assert!(
        error.ends_with("which of its columns (`id`, `kind`, `colour`) holds the labels? name it with --label-column"),
        "{error}"
    );
}

#[test]
fn json_lines_read_as_csv_does_and_a_line_that_is_not_an_object_is_listed() {
    let tree = tree_with(
        &[("a.png", 1), ("b.png", 2), ("c.png", 3)],
        "l.jsonl",
        "{\"file_name\": \"a.png\", \"label\": \"cat\", \"score\": 0.5}\n\
         \n\
         {\"file_name\": \"b.png\", \"label\": [\"dog\"]}\n\
         [1, 2]\n\
         {\"file_name\": \"c.png\", \"label\": [\"dog\", \"outdoor\"]}\n\
         {\"file_name\": \"a.png\n",
    );
    let data = load(&tree, "l.jsonl").unwrap();
    // An array of labels makes the set multi-label; an array of one is one label.
    assert_eq!(data.class_names, ["cat", "dog", "outdoor"]);
    assert_eq!(data.train.label_sets, [vec![0], vec![1], vec![1, 2]]);
    let reasons = reasons(&data);
    assert!(reasons.contains(&"line 4 of l.jsonl: it is not a JSON object".to_string()));
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("line 6 of l.jsonl: it is not JSON (")),
        "{reasons:#?}"
    );
}

#[test]
fn a_folder_with_hugging_face_metadata_loads_its_rows_rather_than_its_sub_folders() {
    let tree = tree_with(
        &[
            ("hf/train/x/a.png", 1),
            ("hf/train/x/b.png", 2),
            ("hf/test/c.png", 3),
        ],
        "hf/train/metadata.csv",
        "file_name,label\nx/a.png,cat\nx/b.png,dog\n",
    );
    let mut tree = tree;
    tree.insert(
        "hf/test/metadata.jsonl",
        b"{\"file_name\": \"c.png\", \"label\": \"dog\"}\n".to_vec(),
    )
    .unwrap();
    let data = crate::folder::load_image_folder_in(&tree, Path::new("hf"), 2).unwrap();
    assert_eq!(data.name, "hf");
    assert_eq!(data.class_names, ["cat", "dog"]);
    assert_eq!(
        (data.train.len(), data.val.len(), data.test.len()),
        (2, 0, 1)
    );
    assert_eq!(data.test.files, [PathBuf::from("hf/test/c.png")]);
    // One metadata file at the root, with a split column, serves as well.
    let root = tree_with(
        &[("r/a.png", 1), ("r/b.png", 2), ("r/c.png", 3)],
        "r/metadata.csv",
        "file_name,label,split\na.png,cat,train\nb.png,dog,train\nc.png,dog,val\n",
    );
    let data = crate::folder::load_image_folder_in(&root, Path::new("r"), 2).unwrap();
    assert_eq!((data.train.len(), data.val.len()), (2, 1));
}

#[test]
fn the_delimiter_is_the_one_the_first_line_uses() {
    let file = Path::new("x.csv");
    assert_eq!(delimiter_of(file, "path;label\na.png;1"), ';');
    assert_eq!(delimiter_of(file, "path\tlabel"), '\t');
    assert_eq!(delimiter_of(Path::new("x.tsv"), "a,b\tc"), '\t');
    assert_eq!(delimiter_of(file, "path,labels\na.png,cat;dog"), ',');
    let tree = tree_with(&[("a.png", 1)], "l.csv", "path,label\na.png,\"cat\n");
    let error = load(&tree, "l.csv").unwrap_err().to_string();
    assert_eq!(
        error,
        "labels file l.csv: the quoted cell opened on line 2 is never closed; close its quote"
    );
}

#[test]
fn a_labels_file_that_cannot_serve_is_refused_in_one_sentence() {
    let cases: [(&[u8], &str); 5] = [
        (
            b"",
            "it is empty; write one row per image: its path and its label",
        ),
        (
            b"path,label\n",
            "no row names an image that exists (0 left out)",
        ),
        (
            b"path,label\nnone.png,cat\n",
            "no row names an image that exists (1 left out; the first left out: none.png (not found (line 2 of l.csv)))",
        ),
        (
            b"path,label\n\xff.png,cat\n",
            "it is not UTF-8 text (byte 11 is not); save it as UTF-8 CSV",
        ),
        (
            b"name,notes\nx,y\n",
            "none of its columns (`name`, `notes`) holds image file names (ending in .png, .jpg, …); name the column with --path-column",
        ),
    ];
    for (bytes, expected) in cases {
        let mut tree = MemoryFiles::new();
        tree.insert("l.csv", bytes.to_vec()).unwrap();
        let error = load(&tree, "l.csv").unwrap_err().to_string();
        assert_eq!(error, format!("labels file l.csv: {expected}"));
    }
    let missing = load(&MemoryFiles::new(), "gone.csv")
        .unwrap_err()
        .to_string();
    assert!(
        missing.contains("it does not exist or is not a file"),
        "{missing}"
    );
}

/// Pieces labels files are made of, so that random files often get past the header.
const PIECES: &[&str] = &[
    "a.png",
    "b.png",
    "gone.png",
    ",",
    ";",
    "\t",
    "\"",
    "\n",
    "\r\n",
    "label",
    "file_name",
    "split",
    "train",
    "TEST",
    "val",
    "cat",
    "🐈",
    "{",
    "}",
    "[",
    "]",
    ":",
    "\"file_name\"",
    "\"label\"",
    "\"a.png\"",
    "1",
    "2.5",
    " ",
    "",
];

proptest::proptest! {
    #[test]
    fn any_labels_file_ends_in_a_data_set_or_a_sentence(
        pieces in proptest::collection::vec(0..PIECES.len(), 0..60),
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
        json in proptest::prelude::any::<bool>(),
    ) {
        let mut text: Vec<u8> = pieces.iter().flat_map(|&i| PIECES[i].bytes()).collect();
        text.extend(bytes);
        let name = if json { "l.jsonl" } else { "l.csv" };
        let mut tree = MemoryFiles::new();
        tree.insert("a.png", png(1)).unwrap();
        tree.insert("b.png", png(2)).unwrap();
        tree.insert(name, text).unwrap();
        match load(&tree, name) {
            Ok(data) => {
                let classes = data.class_names.len();
                for split in [&data.train, &data.val, &data.test] {
                    proptest::prop_assert!(split.labels.iter().all(|&l| (l as usize) < classes));
                    proptest::prop_assert_eq!(split.files.len(), split.labels.len());
                }
            }
            Err(error) => proptest::prop_assert!(!error.to_string().is_empty()),
        }
    }
}

#[test]
fn several_labels_in_a_cell_make_a_multi_label_set_and_single_label_files_stay_as_they_were() {
    let tree = tree_with(
        &[("a.png", 1), ("b.png", 2), ("c.png", 3)],
        "l.csv",
        "path,tags\na.png,cat;outdoor\nb.png, dog ;cat;cat\nc.png,outdoor\n",
    );
    let data = load(&tree, "l.csv").unwrap();
    assert!(data.is_multi_label());
    assert_eq!(data.class_names, ["cat", "dog", "outdoor"]);
    // Each set sorted, a label given twice kept once; `labels` keeps each set's first.
    assert_eq!(data.train.label_sets, [vec![0, 2], vec![0, 1], vec![2]]);
    assert_eq!(data.train.labels, [0, 0, 2]);
    assert_eq!(data.train.label_counts(3), [2, 1, 2]);

    // Another separator, named; and a single-label file read as before.
    let tree = tree_with(
        &[("a.png", 1), ("b.png", 2)],
        "l.csv",
        "path,tags\na.png,cat|sky\nb.png,dog\n",
    );
    let columns = LabelColumns {
        separator: Some("|".into()),
        ..LabelColumns::default()
    };
    let data = load_labels_file_in(&tree, Path::new("l.csv"), 2, &columns).unwrap();
    assert_eq!(data.train.label_sets, [vec![0, 2], vec![1]]);
    let tree = tree_with(
        &[("a.png", 1), ("b.png", 2)],
        "l.csv",
        "path,label\na.png,cat\nb.png,dog\n",
    );
    let data = load(&tree, "l.csv").unwrap();
    assert!(!data.is_multi_label());
    assert!(data.train.label_sets.is_empty());
    // Unless the person asks for sets: each image's one label is then a set of one.
    let columns = LabelColumns {
        multi_label: true,
        ..LabelColumns::default()
    };
    let data = load_labels_file_in(&tree, Path::new("l.csv"), 2, &columns).unwrap();
    assert_eq!(data.train.label_sets, [vec![0], vec![1]]);
}

#[test]
fn one_zero_or_one_column_per_label_is_a_multi_label_file_and_a_stray_cell_is_named() {
    let names: Vec<String> = (0..10).map(|i| format!("{i}.png")).collect();
    let files: Vec<(&str, u8)> = names.iter().map(|n| (n.as_str(), 1)).collect();
    let mut text =
        "file_name,sky,water,person\n0.png,1,0,1\n1.png,0,0,0\n2.png,0,0,yes\n".to_owned();
    for name in &names[3..] {
        text.push_str(&format!("{name},1,0,0\n"));
    }
    let tree = tree_with(&files, "l.csv", &text);
    let data = load(&tree, "l.csv").unwrap();
    assert!(data.is_multi_label());
    // The columns in file order are the labels, one no image has too; an image may have none.
    assert_eq!(data.class_names, ["sky", "water", "person"]);
    assert_eq!(data.train.label_sets[..2], [vec![0, 2], vec![]]);
    assert_eq!(data.train.len(), 9);
    let reasons = reasons(&data);
    assert!(
        reasons.contains(&"line 4 of l.csv has `yes` in the 0/1 column `person`".to_string()),
        "{reasons:?}"
    );
}
