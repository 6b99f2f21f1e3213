//! A trained model over many image files (`kiln predict`): the files and folders a person names,
//! each image decoded as a folder data set decodes it (EXIF orientation, size limits, a crash in
//! a decoder caught) and classified in batches on the model's device. A file that cannot be
//! read becomes a prediction with its reason, never a stop.

use std::path::{Path, PathBuf};

use super::Predictor;

/// The images classified per forward pass when the caller does not say.
pub const DEFAULT_BATCH: usize = 64;

/// What the model made of one file: a probability per class (in the card's class order), or
/// why the file could not be classified.
#[derive(Debug, Clone, PartialEq)]
pub struct FilePrediction {
    /// The file, as found.
    pub path: PathBuf,
    /// Probabilities per class, or the reason in a sentence.
    pub outcome: Result<Vec<f32>, String>,
}

/// Every file `inputs` name: a file as given (whatever its extension: a misnamed photo is still
/// tried), a folder's files at any depth, sorted by path, hidden files and the junk photo tools
/// leave (`Thumbs.db`, `desktop.ini`) aside. A file of a folder that is not an image by its
/// extension is kept, to be reported as such. An input that does not exist is an error.
pub fn files_of(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    for input in inputs {
        let meta = std::fs::metadata(input)
            .map_err(|e| format!("{} cannot be read ({e}); check the path", input.display()))?;
        if meta.is_dir() {
            let mut under = Vec::new();
            walk(input, &mut under)?;
            under.sort();
            found.extend(under);
        } else {
            found.push(input.clone());
        }
    }
    Ok(found)
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("the folder {} cannot be read ({e})", dir.display()))?;
    for entry in entries.flatten() {
        if kiln_formats::folder::is_ignored_name(&entry.file_name()) {
            continue;
        }
        let path = entry.path();
        // A link is followed for files, not for folders, so a link back up cannot loop.
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => walk(&path, found)?,
            Ok(_) if path.is_file() => found.push(path),
            _ => {}
        }
    }
    Ok(())
}

impl Predictor {
    /// Planar C×H×W bytes of the image file at `path` for this model ([`file_pixels`]), or why
    /// the file cannot be read.
    pub fn pixels_of_file(&self, path: &Path) -> Result<Vec<u8>, String> {
        file_pixels(self.card.shape, self.resize, path)
    }

    /// Classifies the files at `paths` in batches of `batch` on the model's device, in order:
    /// decoding on every core, one forward pass and one read-back per batch. `on_batch` hears
    /// how many files are done after each batch.
    pub fn predict_files(
        &self,
        paths: &[PathBuf],
        batch: usize,
        on_batch: &mut dyn FnMut(usize),
    ) -> Vec<FilePrediction> {
        let mut predictions = Vec::with_capacity(paths.len());
        for chunk in paths.chunks(batch.max(1)) {
            let pixels = self.decode_on_all_cores(chunk);
            let readable: Vec<&[u8]> = pixels.iter().filter_map(|p| p.as_deref().ok()).collect();
            let mut probabilities = match readable.is_empty() {
                true => Ok(Vec::new()),
                false => self.probabilities_of(&readable),
            }
            .map(Vec::into_iter);
            for (path, pixels) in chunk.iter().zip(pixels) {
                let outcome = pixels.and_then(|_| match &mut probabilities {
                    Ok(rows) => rows
                        .next()
                        .ok_or_else(|| "the device returned fewer results than images".to_owned()),
                    Err(reason) => Err(reason.clone()),
                });
                predictions.push(FilePrediction {
                    path: path.clone(),
                    outcome,
                });
            }
            on_batch(predictions.len());
        }
        predictions
    }

    /// Each file of `chunk` decoded, the files shared among the cores.
    fn decode_on_all_cores(&self, chunk: &[PathBuf]) -> Vec<Result<Vec<u8>, String>> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let per_thread = chunk.len().div_ceil(threads).max(1);
        std::thread::scope(|scope| {
            let (shape, resize) = (self.card.shape, self.resize);
            let handles: Vec<_> = chunk
                .chunks(per_thread)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|path| file_pixels(shape, resize, path))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|handle| {
                    handle.join().unwrap_or_else(|_| {
                        vec![Err("the image decoder crashed".to_owned()); per_thread]
                    })
                })
                .take(chunk.len())
                .collect()
        })
    }
}

/// Planar C×H×W bytes of the image file at `path` for a model of `shape` trained on images
/// brought to its side by `resize`, decoded as the window's *Try* decodes an image
/// ([`super::model_pixels`]); or why the file cannot be read. A crash inside a decoder is a
/// reason like any other.
pub fn file_pixels(
    shape: [usize; 3],
    resize: crate::config::ResizeFilter,
    path: &Path,
) -> Result<Vec<u8>, String> {
    let resize = resize.at(super::square_side(shape)?);
    let decoded = kiln_formats::folder::decode_guarded(&kiln_formats::files::Disk, path, resize)
        .map_err(|e| match kiln_formats::folder::has_image_extension(path) {
            true => e.to_string(),
            false => format!(
                "{e} (it is not an image Kiln reads: {})",
                kiln_formats::folder::IMAGE_EXTENSIONS.join(", ")
            ),
        })?;
    Ok(super::model_pixels(shape, decoded.planar_rgb))
}

/// The `k` likeliest classes of `probabilities` with their probabilities, likeliest first (ties
/// in class order).
pub fn top_k<'a>(
    class_names: &'a [String],
    probabilities: &[f32],
    k: usize,
) -> Vec<(&'a str, f32)> {
    let mut ranked: Vec<(&str, f32)> = class_names
        .iter()
        .map(String::as_str)
        .zip(probabilities.iter().copied())
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    ranked.truncate(k);
    ranked
}

/// The CSV header of `k` ranked classes: `path,label_1,probability_1,…,run,error`.
pub fn csv_header(k: usize) -> String {
    let mut header = String::from("path");
    for rank in 1..=k {
        header.push_str(&format!(",label_{rank},probability_{rank}"));
    }
    header.push_str(",run,error");
    header
}

/// One prediction as a CSV line (with its newline) under [`csv_header`]: names with commas,
/// quotes or line breaks quoted as RFC 4180 says, an unreadable file's cells empty but its
/// reason.
pub fn csv_line(
    prediction: &FilePrediction,
    class_names: &[String],
    k: usize,
    run: &str,
) -> String {
    let mut cells = vec![csv_cell(&prediction.path.display().to_string())];
    let ranked = match &prediction.outcome {
        Ok(probabilities) => top_k(class_names, probabilities, k),
        Err(_) => Vec::new(),
    };
    for rank in 0..k {
        match ranked.get(rank) {
            Some((name, p)) => {
                cells.push(csv_cell(name));
                cells.push(format!("{p:.6}"));
            }
            None => cells.extend([String::new(), String::new()]),
        }
    }
    cells.push(csv_cell(run));
    cells.push(match &prediction.outcome {
        Ok(_) => String::new(),
        Err(reason) => csv_cell(reason),
    });
    format!("{}\n", cells.join(","))
}

/// `kiln predict`'s whole CSV: [`csv_header`], then a [`csv_line`] per prediction, each naming
/// the run folder `run` by its folder name.
pub fn predictions_csv(
    predictions: &[FilePrediction],
    class_names: &[String],
    k: usize,
    run: &Path,
) -> String {
    let run = run.file_name().map_or_else(
        || run.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut text = format!("{}\n", csv_header(k));
    for prediction in predictions {
        text.push_str(&csv_line(prediction, class_names, k, &run));
    }
    text
}

/// `kiln predict`'s CSV for a multi-label model (`card` has thresholds): per file its path,
/// the labels over their thresholds (joined by `; `), each label's probability (columns
/// `p NAME`), the run and an unreadable file's reason.
pub fn label_predictions_csv(
    predictions: &[FilePrediction],
    card: &crate::model::ModelCard,
    run: &Path,
) -> String {
    let run = run.file_name().map_or_else(
        || run.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut text = String::from("path,labels");
    for name in &card.class_names {
        text.push(',');
        text.push_str(&csv_cell(&format!("p {name}")));
    }
    text.push_str(",run,error\n");
    for prediction in predictions {
        let mut cells = vec![csv_cell(&prediction.path.display().to_string())];
        match &prediction.outcome {
            Ok(probabilities) => {
                let given = card.labels_given(probabilities).unwrap_or_default();
                let names: Vec<&str> = given.iter().map(|(name, _)| *name).collect();
                cells.push(csv_cell(&names.join("; ")));
                cells.extend(probabilities.iter().map(|p| format!("{p:.6}")));
            }
            Err(_) => cells.extend(vec![String::new(); card.class_names.len() + 1]),
        }
        cells.push(csv_cell(&run));
        cells.push(match &prediction.outcome {
            Ok(_) => String::new(),
            Err(reason) => csv_cell(reason),
        });
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    text
}

fn csv_cell(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multi_label_csv_names_every_label_over_its_threshold_and_each_probability() {
        let card = crate::model::ModelCard {
            shape: [1, 4, 4],
            class_names: ["sea", "sky, clear"].map(String::from).to_vec(),
            offset: vec![0.0],
            scale: vec![1.0],
            thresholds: Some(vec![0.5, 0.25]),
        };
        let predictions = [
            FilePrediction {
                path: PathBuf::from("a.png"),
                outcome: Ok(vec![0.75, 0.3]),
            },
            FilePrediction {
                path: PathBuf::from("b.png"),
                outcome: Ok(vec![0.25, 0.125]),
            },
            FilePrediction {
                path: PathBuf::from("c.png"),
                outcome: Err("not an image".to_owned()),
            },
        ];
        let text = label_predictions_csv(&predictions, &card, Path::new("/runs/r1"));
        assert_eq!(
            text,
            "path,labels,p sea,\"p sky, clear\",run,error\n\
             a.png,\"sea; sky, clear\",0.750000,0.300000,r1,\n\
             b.png,,0.250000,0.125000,r1,\n\
             c.png,,,,r1,not an image\n"
        );
    }

    #[test]
    fn top_k_ranks_the_likeliest_first_and_keeps_class_order_on_ties() {
        let names: Vec<String> = ["cat", "dog", "fox"].map(String::from).to_vec();
        assert_eq!(
            top_k(&names, &[0.2, 0.6, 0.2], 3),
            vec![("dog", 0.6), ("cat", 0.2), ("fox", 0.2)]
        );
        assert_eq!(top_k(&names, &[0.2, 0.6, 0.2], 1), vec![("dog", 0.6)]);
    }

    #[test]
    fn a_csv_line_quotes_awkward_names_and_leaves_an_unreadable_files_cells_empty_but_its_reason() {
        let names: Vec<String> = ["plain", "with, comma", "say \"hi\" 🐈"]
            .map(String::from)
            .to_vec();
        let read = FilePrediction {
            path: PathBuf::from("photos/a,b.png"),
            outcome: Ok(vec![0.1, 0.7, 0.2]),
        };
        assert_eq!(
            csv_header(2),
            "path,label_1,probability_1,label_2,probability_2,run,error"
        );
        assert_eq!(
            csv_line(&read, &names, 2, "20261206-run"),
            "\"photos/a,b.png\",\"with, comma\",0.700000,\"say \"\"hi\"\" 🐈\",0.200000,20261206-run,\n"
        );
        let broken = FilePrediction {
            path: PathBuf::from("broken.png"),
            outcome: Err("it is truncated, or not a PNG".to_owned()),
        };
        assert_eq!(
            csv_line(&broken, &names, 2, "r"),
            "broken.png,,,,,r,\"it is truncated, or not a PNG\"\n"
        );
    }

    #[test]
    fn files_of_a_folder_are_found_at_any_depth_in_path_order_without_hidden_files_or_junk() {
        let dir = crate::data::test_dir("predict-files-of");
        for file in [
            "b.png",
            "a/z.jpg",
            "a/deeper/c.png",
            "notes.txt",
            ".hidden.png",
            "Thumbs.db",
        ] {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, b"x").unwrap();
        }
        let found = files_of(&[dir.path_buf()]).unwrap();
        let relative: Vec<String> = found
            .iter()
            .map(|p| {
                p.strip_prefix(&dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect();
        assert_eq!(
            relative,
            ["a/deeper/c.png", "a/z.jpg", "b.png", "notes.txt"]
        );
        let missing = files_of(&[dir.join("nowhere")]).unwrap_err();
        assert!(
            missing.contains("nowhere") && missing.contains("check the path"),
            "{missing}"
        );
    }
}
