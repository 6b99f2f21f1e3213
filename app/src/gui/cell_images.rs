//! The test images behind one cell of a confusion matrix ("Shirt taken for T-shirt"), or behind
//! one label of a multi-label run (its false positives, then its false negatives). A run
//! keeps no pixels, so they are read back from the data set its config names, split as the run
//! split it (the test split is carved with a fixed seed, so it is the same images), on a named
//! thread; past runs work as well as the one just trained.

use kiln_core::config::ExperimentDraft;
use kiln_core::data;
use kiln_core::pixels::planar_to_rgba;
use kiln_core::results::TestPredictions;
use kiln_core::results::multi_label::LabelPredictions;

use super::background_job::BackgroundJob;

/// Most images one cell shows.
const MAX_SHOWN: usize = 48;
/// Width of a thumbnail's place in the grid, caption and gap included.
const THUMBNAIL_SLOT_PX: f32 = 72.0;

/// One test image: its position in the test split, side and RGBA pixels.
type CellImage = (usize, [usize; 2], Vec<u8>);

/// The panel's state: which cell of which run, and its images once read.
pub struct CellImages {
    /// "12 Shirt images taken for T-shirt/top".
    pub title: String,
    /// The run folder whose predictions the cell is of, where known.
    pub run: Option<std::path::PathBuf>,
    /// Images of the cell beyond those shown.
    hidden: usize,
    /// Each shown image's caption beyond its test index, where it has one ("false positive,
    /// 91 %").
    captions: std::collections::HashMap<usize, String>,
    images: BackgroundJob<Vec<CellImage>>,
    /// The images as textures, made on the UI thread once they came.
    textures: Option<Vec<(usize, egui::TextureHandle)>>,
}

impl CellImages {
    /// Reads the test images that `predictions` put in cell (`truth`, `guess`), from the data
    /// set `config` names, on a thread named `kiln-cell`.
    pub fn open(
        config: ExperimentDraft,
        predictions: &TestPredictions,
        (truth, guess): (u8, u8),
        wake: impl Fn() + Send + 'static,
    ) -> Self {
        let indices: Vec<usize> = (0..predictions.labels.len())
            .filter(|&i| predictions.labels[i] == truth && predictions.predicted[i] == guess)
            .collect();
        let name = |class: u8| {
            predictions
                .class_names
                .get(usize::from(class))
                .cloned()
                .unwrap_or_default()
        };
        let title = match truth == guess {
            true => format!("{} {} images, classified right", indices.len(), name(truth)),
            false => format!(
                "{} {} images taken for {}",
                indices.len(),
                name(truth),
                name(guess)
            ),
        };
        let hidden = indices.len().saturating_sub(MAX_SHOWN);
        let shown: Vec<usize> = indices.into_iter().take(MAX_SHOWN).collect();
        let expected = Truth::Classes(predictions.labels.clone());
        let work = move || read_test_images(config, &expected, &shown);
        Self {
            title,
            run: None,
            hidden,
            captions: std::collections::HashMap::new(),
            images: BackgroundJob::start("kiln-cell", work, wake),
            textures: None,
        }
    }
}

impl CellImages {
    /// Reads the test images that a multi-label run's `predictions` get wrong on `label`: those
    /// given it without having it (false positives, surest first), then those having it and not
    /// given it (false negatives, most missed first), from the data set `config` names.
    pub fn open_label(
        config: ExperimentDraft,
        predictions: &LabelPredictions,
        label: usize,
        wake: impl Fn() + Send + 'static,
    ) -> Self {
        let scores = &predictions.scores;
        let threshold = predictions.thresholds.get(label).copied().unwrap_or(0.5);
        let p = |image: usize| scores.probabilities[image * scores.labels + label];
        let has = |image: usize| scores.truth[image].contains(&(label as u8));
        let mut false_pos: Vec<usize> = (0..scores.images())
            .filter(|&i| p(i) >= threshold && !has(i))
            .collect();
        let mut false_neg: Vec<usize> = (0..scores.images())
            .filter(|&i| p(i) < threshold && has(i))
            .collect();
        false_pos.sort_by(|&a, &b| p(b).total_cmp(&p(a)));
        false_neg.sort_by(|&a, &b| p(a).total_cmp(&p(b)));
        let name = predictions
            .label_names
            .get(label)
            .cloned()
            .unwrap_or_default();
        let title = format!(
            "{name}: {} false positive(s), then {} false negative(s), at threshold {threshold:.3}",
            false_pos.len(),
            false_neg.len()
        );
        let mut captions = std::collections::HashMap::new();
        for &i in &false_pos {
            captions.insert(i, format!("FP {:.0} %", p(i) * 100.0));
        }
        for &i in &false_neg {
            captions.insert(i, format!("FN {:.0} %", p(i) * 100.0));
        }
        let indices: Vec<usize> = false_pos.into_iter().chain(false_neg).collect();
        let hidden = indices.len().saturating_sub(MAX_SHOWN);
        let shown: Vec<usize> = indices.into_iter().take(MAX_SHOWN).collect();
        let expected = Truth::Sets(scores.truth.clone());
        let work = move || read_test_images(config, &expected, &shown);
        Self {
            title,
            run: None,
            hidden,
            captions,
            images: BackgroundJob::start("kiln-cell", work, wake),
            textures: None,
        }
    }

    /// The same cell, known to be of the run folder `run`.
    pub fn of_run(self, run: Option<std::path::PathBuf>) -> Self {
        Self { run, ..self }
    }
}

/// What the predictions say the test split's images are, to check the split read again is it.
enum Truth {
    /// One class per image.
    Classes(Vec<u8>),
    /// A multi-label set's label sets.
    Sets(Vec<Vec<u8>>),
}

/// The test split's images at `indices`, after checking that it is the split the predictions
/// were made on (same labels in the same order).
fn read_test_images(
    config: ExperimentDraft,
    expected: &Truth,
    indices: &[usize],
) -> Result<Vec<CellImage>, String> {
    let experiment = config.validate().map_err(|e| e.to_string())?;
    let loaded = data::load(
        &experiment.dataset,
        experiment.data_dir.as_deref(),
        experiment.resize,
    )
    .map_err(|e| format!("the data set could not be read again: {e}"))?;
    let data = data::make_splits(loaded, &experiment).map_err(|e| e.to_string())?;
    let same = match expected {
        Truth::Classes(labels) => data.test.labels == *labels,
        Truth::Sets(sets) => data.test.label_sets == *sets,
    };
    if !same {
        return Err(
            "the data set changed since this run (its test images are not those it was tested on)"
                .to_owned(),
        );
    }
    let shape = data.shape.chw();
    let per_image = data.shape.pixels_per_image();
    Ok(indices
        .iter()
        .map(|&index| {
            let pixels = data.test.image(index, per_image);
            (index, [shape[2], shape[1]], planar_to_rgba(shape, pixels))
        })
        .collect())
}

/// The cell's title over its images, a grid of thumbnails each captioned with its test index,
/// as many to a row as the panel's width holds.
pub fn cell_images_ui(ui: &mut egui::Ui, view: &mut CellImages) {
    ui.strong(&view.title);
    view.images.poll();
    match &view.images {
        BackgroundJob::Waiting(_) => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("reading the images from the data set…");
            });
        }
        BackgroundJob::Failed(reason) => {
            ui.colored_label(ui.visuals().error_fg_color, reason);
        }
        BackgroundJob::Ready(images) => {
            let textures = view.textures.get_or_insert_with(|| {
                images
                    .iter()
                    .map(|(index, size, rgba)| {
                        let image = egui::ColorImage::from_rgba_unmultiplied(*size, rgba);
                        let name = format!("cell-image-{index}");
                        let options = egui::TextureOptions::NEAREST;
                        (*index, ui.ctx().load_texture(name, image, options))
                    })
                    .collect()
            });
            let columns = ((ui.available_width() / THUMBNAIL_SLOT_PX) as usize).max(1);
            egui::ScrollArea::vertical()
                .id_salt("cell-images-scroll")
                .show(ui, |ui| {
                    egui::Grid::new("cell-images-grid")
                        .spacing([6.0, 6.0])
                        .show(ui, |ui| {
                            for (n, (index, texture)) in textures.iter().enumerate() {
                                let scale = (64.0 / texture.size_vec2().x).clamp(1.0, 4.0);
                                ui.vertical(|ui| {
                                    ui.image((texture.id(), texture.size_vec2() * scale));
                                    match view.captions.get(index) {
                                        Some(caption) => ui.small(format!("#{index} {caption}")),
                                        None => ui.small(format!("#{index}")),
                                    };
                                });
                                if n % columns == columns - 1 {
                                    ui.end_row();
                                }
                            }
                        });
                    if view.hidden > 0 {
                        ui.label(format!("… and {} more", view.hidden));
                    }
                });
        }
    }
}
