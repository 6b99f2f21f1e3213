//! `kiln predict --sort-into DIR`: each classified image copied or linked into `DIR/<class>/`.
//! The person's files are only read: never moved, renamed or overwritten, and a name already
//! taken in a class folder gets a number rather than replacing what is there.

use std::io;
use std::path::{Path, PathBuf};

use super::files::{FilePrediction, top_k};
use crate::model::ModelCard;

/// How an image lands in its class folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortMode {
    /// A copy of the file.
    Copy,
    /// A link to the file: symbolic on Unix; a hard link on Windows, where symbolic links need
    /// rights a person rarely has (it then needs the same drive).
    Link,
}

/// What [`sort_into`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SortReport {
    /// Images placed, each under its likeliest class (a multi-label model's: under each label
    /// it gives the image).
    pub placed: usize,
    /// Images a multi-label model gave no label, so were not placed.
    pub unlabelled: usize,
    /// Files that could not be classified, so were not placed.
    pub unreadable: usize,
    /// Images that could not be copied or linked, each with the reason.
    pub failed: Vec<(PathBuf, String)>,
}

/// Places every classified image of `predictions` into `dir/<its likeliest class>/` by `mode`
/// (a multi-label model's `card`: into the folder of every label over its threshold), creating
/// the folders. Class names become folder names with the characters no file system
/// takes replaced by `_`.
pub fn sort_into(
    dir: &Path,
    predictions: &[FilePrediction],
    card: &ModelCard,
    mode: SortMode,
) -> SortReport {
    let mut report = SortReport::default();
    for prediction in predictions {
        let Ok(probabilities) = &prediction.outcome else {
            report.unreadable += 1;
            continue;
        };
        let classes: Vec<&str> = match card.labels_given(probabilities) {
            Some(given) => given.into_iter().map(|(name, _)| name).collect(),
            None => top_k(&card.class_names, probabilities, 1)
                .into_iter()
                .map(|(name, _)| name)
                .collect(),
        };
        if classes.is_empty() {
            report.unlabelled += 1;
            continue;
        }
        let placed = classes
            .iter()
            .try_for_each(|class| place(&dir.join(folder_name(class)), &prediction.path, mode));
        match placed {
            Ok(()) => report.placed += 1,
            Err(e) => report.failed.push((prediction.path.clone(), e.to_string())),
        }
    }
    report
}

/// `class` as a folder name: characters Windows or Unix refuse, and a leading dot (hidden),
/// become `_`; an empty name is `_`.
fn folder_name(class: &str) -> String {
    let name: String = class
        .chars()
        .map(|c| match c {
            '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .collect();
    let name = name.trim_end_matches(['.', ' ']).to_owned();
    match name.strip_prefix('.') {
        Some(rest) => format!("_{rest}"),
        None if name.is_empty() => "_".to_owned(),
        None => name,
    }
}

/// Copies or links `source` into `folder` under its own name, or `name-2.ext`, `name-3.ext`…
/// when that is taken; the new name is claimed atomically, so nothing there is ever replaced.
fn place(folder: &Path, source: &Path, mode: SortMode) -> io::Result<()> {
    std::fs::create_dir_all(folder)?;
    let stem = source
        .file_stem()
        .map_or_else(|| "image".into(), |s| s.to_string_lossy().into_owned());
    let extension = source
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    for n in 1..=MAX_NUMBERED {
        let name = match n {
            1 => format!("{stem}{extension}"),
            n => format!("{stem}-{n}{extension}"),
        };
        match claim(&folder.join(name), source, mode) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            done => return done,
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "{} already holds {MAX_NUMBERED} files named {stem}{extension} or numbered after it",
            folder.display()
        ),
    ))
}

/// The most numbered names tried for one file before giving up on it.
const MAX_NUMBERED: usize = 10_000;

/// Makes `target` (which must not exist) a copy of or a link to `source`.
fn claim(target: &Path, source: &Path, mode: SortMode) -> io::Result<()> {
    match mode {
        SortMode::Copy => {
            // create_new fails on an existing name, so a copy never overwrites.
            let mut to = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(target)?;
            let mut from = std::fs::File::open(source)?;
            io::copy(&mut from, &mut to).map(|_| ()).inspect_err(|_| {
                let _ = std::fs::remove_file(target);
            })
        }
        SortMode::Link => link(&std::path::absolute(source)?, target),
    }
}

#[cfg(unix)]
fn link(source: &Path, target: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(source, target)
}

#[cfg(not(unix))]
fn link(source: &Path, target: &Path) -> io::Result<()> {
    std::fs::hard_link(source, target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_become_folder_names_any_file_system_takes() {
        assert_eq!(folder_name("cat"), "cat");
        assert_eq!(folder_name("T-shirt/top"), "T-shirt_top");
        assert_eq!(folder_name("a:b*c?\"d\"<e>|f\\g"), "a_b_c__d__e__f_g");
        assert_eq!(folder_name(".hidden"), "_hidden");
        assert_eq!(folder_name("dots..."), "dots");
        assert_eq!(folder_name(""), "_");
        assert_eq!(folder_name("🐈 chat, noir"), "🐈 chat, noir");
    }

    #[test]
    fn sorting_copies_or_links_each_image_under_its_class_and_never_touches_or_replaces_a_file() {
        let dir = crate::data::test_dir("predict-sort");
        let photos = dir.join("photos");
        std::fs::create_dir_all(photos.join("deep")).unwrap();
        let (a, b) = (photos.join("a.png"), photos.join("deep").join("a.png"));
        std::fs::write(&a, b"first").unwrap();
        std::fs::write(&b, b"second").unwrap();
        let card = ModelCard {
            shape: [1, 4, 4],
            class_names: ["T-shirt/top", "bag"].map(String::from).to_vec(),
            offset: vec![0.0],
            scale: vec![1.0],
            thresholds: None,
        };
        let predictions = [
            FilePrediction {
                path: a.clone(),
                outcome: Ok(vec![0.9, 0.1]),
            },
            FilePrediction {
                path: b.clone(),
                outcome: Ok(vec![0.8, 0.2]),
            },
            FilePrediction {
                path: photos.join("broken.png"),
                outcome: Err("not an image".to_owned()),
            },
        ];
        for mode in [SortMode::Copy, SortMode::Link] {
            let sorted = dir.join(format!("{mode:?}"));
            // Something of the person's own already in the class folder.
            std::fs::create_dir_all(sorted.join("T-shirt_top")).unwrap();
            std::fs::write(sorted.join("T-shirt_top").join("a.png"), b"mine").unwrap();
            let report = sort_into(&sorted, &predictions, &card, mode);
            assert_eq!((report.placed, report.unreadable), (2, 1), "{report:?}");
            assert!(report.failed.is_empty(), "{report:?}");
            let class = sorted.join("T-shirt_top");
            assert_eq!(std::fs::read(class.join("a.png")).unwrap(), b"mine");
            assert_eq!(std::fs::read(class.join("a-2.png")).unwrap(), b"first");
            assert_eq!(std::fs::read(class.join("a-3.png")).unwrap(), b"second");
        }
        // The originals are where they were, as they were.
        assert_eq!(std::fs::read(&a).unwrap(), b"first");
        assert_eq!(std::fs::read(&b).unwrap(), b"second");
    }

    #[test]
    fn a_multi_label_model_places_an_image_under_every_label_it_gives_and_none_under_no_label() {
        let dir = std::env::temp_dir().join(format!("kiln-sort-labels-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (beach, field) = (dir.join("beach.png"), dir.join("field.png"));
        std::fs::write(&beach, b"beach").unwrap();
        std::fs::write(&field, b"field").unwrap();
        let card = ModelCard {
            shape: [1, 4, 4],
            class_names: ["sea", "sky", "boat"].map(String::from).to_vec(),
            offset: vec![0.0],
            scale: vec![1.0],
            thresholds: Some(vec![0.5, 0.5, 0.3]),
        };
        let predictions = [
            FilePrediction {
                path: beach.clone(),
                outcome: Ok(vec![0.9, 0.6, 0.35]),
            },
            FilePrediction {
                path: field.clone(),
                outcome: Ok(vec![0.1, 0.2, 0.1]),
            },
        ];
        let sorted = dir.join("sorted");
        let report = sort_into(&sorted, &predictions, &card, SortMode::Copy);
        assert_eq!((report.placed, report.unlabelled), (1, 1), "{report:?}");
        for label in ["sea", "sky", "boat"] {
            assert_eq!(
                std::fs::read(sorted.join(label).join("beach.png")).unwrap(),
                b"beach"
            );
        }
        assert!(!sorted.join("sea").join("field.png").exists());
        assert_eq!(std::fs::read(&field).unwrap(), b"field");
    }
}
