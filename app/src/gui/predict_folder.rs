//! *Predict folder…* in the Predict view: the model opened with *Try…* over a folder of images,
//! as `kiln predict` does it (same decoding, batches, unreadable files kept with their reason),
//! on a named thread with a progress bar; then a table with thumbnails, sorted by class,
//! confidence or file, filtered by class and confidence, and exported as `kiln predict`'s CSV.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use kiln_core::model::ModelCard;
use kiln_core::predict::{
    DEFAULT_BATCH, FilePrediction, Predictor, file_pixels, files_of, label_predictions_csv,
    predictions_csv,
};

use super::background_job::BackgroundJob;

/// How many classes each exported row names, as `kiln predict` does by default.
const EXPORTED_TOP: usize = 3;
/// A table row's height: its thumbnail's.
const ROW_HEIGHT_PX: f32 = 44.0;

/// What the table is ordered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    /// The likeliest class's probability.
    Confidence,
    /// The likeliest class, in the model's class order.
    Class,
    /// The file's path.
    File,
}

impl SortBy {
    const ALL: [Self; 3] = [Self::Confidence, Self::Class, Self::File];

    fn label(self) -> &'static str {
        match self {
            Self::Confidence => "confidence",
            Self::Class => "class",
            Self::File => "file",
        }
    }
}

/// Which rows the table shows, in which order.
#[derive(Debug, Clone, PartialEq)]
pub struct TableView {
    /// The order.
    pub sort: SortBy,
    /// Largest first (for confidence), or Z to A.
    pub descending: bool,
    /// Only images whose likeliest class is this one (a multi-label model's: that it gives
    /// this label, the row then showing that label's probability).
    pub class: Option<usize>,
    /// Only images whose likeliest class has at least this probability.
    pub min_confidence: f32,
}

impl Default for TableView {
    fn default() -> Self {
        Self {
            sort: SortBy::Confidence,
            descending: true,
            class: None,
            min_confidence: 0.0,
        }
    }
}

/// A classified image as the table lists it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    /// Its place among the predictions.
    pub index: usize,
    /// Its likeliest class.
    pub class: usize,
    /// That class's probability.
    pub confidence: f32,
}

impl TableView {
    /// The classified images of `predictions` this view shows, in its order; unreadable files
    /// are listed apart. A multi-label model's `thresholds` make the class filter keep the
    /// images given that label, each ranked by its probability.
    pub fn rows(&self, predictions: &[FilePrediction], thresholds: Option<&[f32]>) -> Vec<Ranked> {
        let mut rows: Vec<Ranked> = predictions
            .iter()
            .enumerate()
            .filter_map(|(index, prediction)| {
                let probabilities = prediction.outcome.as_ref().ok()?;
                if let (Some(thresholds), Some(label)) = (thresholds, self.class) {
                    let confidence = *probabilities.get(label)?;
                    let threshold = thresholds.get(label).copied().unwrap_or(0.5);
                    return (confidence >= threshold).then_some(Ranked {
                        index,
                        class: label,
                        confidence,
                    });
                }
                let (class, confidence) = probabilities
                    .iter()
                    .copied()
                    .enumerate()
                    .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
                Some(Ranked {
                    index,
                    class,
                    confidence,
                })
            })
            .filter(|row| self.class.is_none_or(|class| row.class == class))
            .filter(|row| row.confidence >= self.min_confidence)
            .collect();
        rows.sort_by(|a, b| {
            let order = match self.sort {
                SortBy::Confidence => a.confidence.total_cmp(&b.confidence),
                SortBy::Class => a
                    .class
                    .cmp(&b.class)
                    .then(b.confidence.total_cmp(&a.confidence)),
                SortBy::File => predictions[a.index].path.cmp(&predictions[b.index].path),
            };
            if self.descending {
                order.reverse()
            } else {
                order
            }
        });
        rows
    }
}

/// The panel's state: one folder's predictions, under way or done, and how they are shown.
pub struct FolderPredictions {
    /// The folder predicted.
    pub folder: PathBuf,
    /// The run folder whose model predicts.
    pub run: PathBuf,
    /// The model's card: its classes, image shape and (multi-label) thresholds.
    card: ModelCard,
    done: Arc<AtomicUsize>,
    total: Arc<AtomicUsize>,
    job: BackgroundJob<Vec<FilePrediction>>,
    /// Which rows are shown, in which order.
    pub view: TableView,
    thumbnails: HashMap<usize, egui::TextureHandle>,
    /// What the last export did.
    notice: Option<Result<String, String>>,
}

impl FolderPredictions {
    /// Predicts every file under `folder` with `run`'s model (class names and shape from
    /// `predictor`) on the CPU, on a thread named `kiln-predict`; `wake` redraws the window
    /// after each batch.
    pub fn start(
        predictor: &Predictor,
        run: &Path,
        folder: PathBuf,
        wake: impl Fn() + Send + Sync + Clone + 'static,
    ) -> Self {
        let (done, total) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let work = {
            let (done, total, run, folder, wake) = (
                done.clone(),
                total.clone(),
                run.to_owned(),
                folder.clone(),
                wake.clone(),
            );
            move || {
                let files = files_of(std::slice::from_ref(&folder))?;
                total.store(files.len(), Ordering::Relaxed);
                let predictor = Predictor::load(&run).map_err(|e| e.to_string())?;
                Ok(predictor.predict_files(&files, DEFAULT_BATCH, &mut |n| {
                    done.store(n, Ordering::Relaxed);
                    wake();
                }))
            }
        };
        Self {
            folder,
            run: run.to_owned(),
            card: predictor.card().clone(),
            done,
            total,
            job: BackgroundJob::start("kiln-predict", work, wake),
            view: TableView::default(),
            thumbnails: HashMap::new(),
            notice: None,
        }
    }

    /// Every file's prediction, in file order, once the last is done.
    pub fn predictions(&mut self) -> Option<&[FilePrediction]> {
        self.job.poll();
        match &self.job {
            BackgroundJob::Ready(predictions) => Some(predictions),
            _ => None,
        }
    }

    /// `kiln predict`'s CSV of every prediction, in file order.
    pub fn csv(&self, predictions: &[FilePrediction]) -> String {
        if self.card.thresholds.is_some() {
            return label_predictions_csv(predictions, &self.card, &self.run);
        }
        let k = EXPORTED_TOP.min(self.card.class_names.len());
        predictions_csv(predictions, &self.card.class_names, k, &self.run)
    }
}

/// The panel: the progress bar while the folder is predicted, then the controls and the table.
pub fn folder_predictions_ui(ui: &mut egui::Ui, state: &mut FolderPredictions) {
    state.job.poll();
    ui.strong(format!("Predictions of {}", state.folder.display()));
    let predictions = match &state.job {
        BackgroundJob::Waiting(_) => {
            let (done, total) = (
                state.done.load(Ordering::Relaxed),
                state.total.load(Ordering::Relaxed),
            );
            let fraction = if total == 0 {
                0.0
            } else {
                done as f32 / total as f32
            };
            ui.add(
                egui::ProgressBar::new(fraction)
                    .desired_width(320.0)
                    .text(format!("predicting: {done} of {total} files")),
            );
            return;
        }
        BackgroundJob::Failed(reason) => {
            ui.colored_label(ui.visuals().error_fg_color, reason);
            return;
        }
        BackgroundJob::Ready(predictions) => predictions,
    };
    let unreadable: Vec<&FilePrediction> =
        predictions.iter().filter(|p| p.outcome.is_err()).collect();
    let export = ui
        .horizontal(|ui| {
            ui.label(format!(
                "{} image(s) classified, {} file(s) could not be read.",
                predictions.len() - unreadable.len(),
                unreadable.len()
            ));
            ui.button("Export CSV…")
                .on_hover_text(
                    "Every file's three likeliest classes, as `kiln predict` writes them.",
                )
                .clicked()
        })
        .inner;
    if export {
        state.notice = export_csv(&state.csv(predictions));
    }
    match &state.notice {
        Some(Ok(done)) => {
            ui.label(done);
        }
        Some(Err(reason)) => {
            ui.colored_label(ui.visuals().error_fg_color, reason);
        }
        None => {}
    }
    view_controls_ui(ui, &mut state.view, &state.card.class_names);
    let rows = state
        .view
        .rows(predictions, state.card.thresholds.as_deref());
    ui.label(format!("{} shown", rows.len()));
    egui::ScrollArea::vertical()
        .id_salt("folder-predictions")
        .max_height((ui.available_height() - 60.0).max(ROW_HEIGHT_PX * 3.0))
        .auto_shrink([false, true])
        .show_rows(ui, ROW_HEIGHT_PX, rows.len(), |ui, range| {
            for row in &rows[range] {
                let prediction = &predictions[row.index];
                ui.horizontal(|ui| {
                    thumbnail_ui(
                        ui,
                        &mut state.thumbnails,
                        state.card.shape,
                        row.index,
                        &prediction.path,
                    );
                    ui.add(
                        egui::ProgressBar::new(row.confidence)
                            .desired_width(220.0)
                            .text(format!(
                                "{}: {:.1} %",
                                state
                                    .card
                                    .class_names
                                    .get(row.class)
                                    .map_or("", String::as_str),
                                row.confidence * 100.0
                            )),
                    );
                    if let Some(given) = prediction
                        .outcome
                        .as_ref()
                        .ok()
                        .and_then(|p| state.card.labels_given(p))
                    {
                        let names: Vec<String> = given
                            .iter()
                            .map(|(name, p)| format!("{name} {:.0} %", p * 100.0))
                            .collect();
                        ui.label(match names.is_empty() {
                            true => "no label over its threshold".to_owned(),
                            false => names.join(", "),
                        });
                    }
                    ui.add(egui::Label::new(prediction.path.display().to_string()).truncate());
                });
            }
        });
    if !unreadable.is_empty() {
        egui::CollapsingHeader::new(format!("{} file(s) could not be read", unreadable.len()))
            .id_salt("folder-unreadable")
            .show(ui, |ui| {
                for file in unreadable {
                    if let Err(reason) = &file.outcome {
                        // Most reasons name their file already.
                        let path = file.path.display().to_string();
                        match reason.contains(&path) {
                            true => ui.label(reason),
                            false => ui.label(format!("{path}: {reason}")),
                        };
                    }
                }
            });
    }
}

/// The class and confidence filters and the order.
fn view_controls_ui(ui: &mut egui::Ui, view: &mut TableView, class_names: &[String]) {
    ui.horizontal_wrapped(|ui| {
        let label = ui.label("Class");
        egui::ComboBox::from_id_salt("folder-class")
            .selected_text(
                view.class
                    .and_then(|c| class_names.get(c))
                    .map_or("all", String::as_str),
            )
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut view.class, None, "all");
                for (index, name) in class_names.iter().enumerate() {
                    ui.selectable_value(&mut view.class, Some(index), name);
                }
            })
            .response
            .labelled_by(label.id);
        let label = ui.label("confidence at least");
        let mut percent = view.min_confidence * 100.0;
        ui.add(egui::Slider::new(&mut percent, 0.0..=100.0).show_value(false))
            .labelled_by(label.id);
        ui.label(format!("{percent:.0} %"));
        view.min_confidence = percent / 100.0;
        let label = ui.label("sorted by");
        egui::ComboBox::from_id_salt("folder-sort")
            .selected_text(view.sort.label())
            .show_ui(ui, |ui| {
                for sort in SortBy::ALL {
                    ui.selectable_value(&mut view.sort, sort, sort.label());
                }
            })
            .response
            .labelled_by(label.id);
        let arrow = if view.descending {
            "⬇ descending"
        } else {
            "⬆ ascending"
        };
        if ui.button(arrow).clicked() {
            view.descending = !view.descending;
        }
    });
}

/// A row's thumbnail: the image as the model sees it, decoded the first time its row is shown.
fn thumbnail_ui(
    ui: &mut egui::Ui,
    thumbnails: &mut HashMap<usize, egui::TextureHandle>,
    shape: [usize; 3],
    index: usize,
    path: &Path,
) {
    let size = egui::vec2(ROW_HEIGHT_PX - 4.0, ROW_HEIGHT_PX - 4.0);
    if !thumbnails.contains_key(&index)
        && let Ok(pixels) = file_pixels(shape, Default::default(), path)
    {
        let [_, height, width] = shape;
        let rgba = kiln_core::pixels::planar_to_rgba(shape, &pixels);
        let image = egui::ColorImage::from_rgba_unmultiplied([width, height], &rgba);
        let texture = ui.ctx().load_texture(
            format!("folder-thumbnail-{index}"),
            image,
            egui::TextureOptions::LINEAR,
        );
        thumbnails.insert(index, texture);
    }
    match thumbnails.get(&index) {
        Some(texture) => {
            ui.add(egui::Image::new(texture).fit_to_exact_size(size));
        }
        None => {
            ui.allocate_exact_size(size, egui::Sense::hover());
        }
    }
}

/// Asks where to save `text` and writes it there; what happened, in a sentence.
fn export_csv(text: &str) -> Option<Result<String, String>> {
    let path = super::files::save_as(
        "Save the predictions",
        &[("CSV", &["csv"])],
        "predictions.csv",
    )?;
    Some(
        kiln_core::atomic_file::write_atomically(&path, text.as_bytes())
            .map(|()| format!("wrote {}", path.display()))
            .map_err(|e| format!("could not write {}: {e}", path.display())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn predictions() -> Vec<FilePrediction> {
        let at = |path: &str, outcome: Result<Vec<f32>, String>| FilePrediction {
            path: PathBuf::from(path),
            outcome,
        };
        vec![
            at("b.png", Ok(vec![0.7, 0.3])),
            at("a.png", Ok(vec![0.2, 0.8])),
            at("broken.png", Err("not an image".to_owned())),
            at("c.png", Ok(vec![0.55, 0.45])),
        ]
    }

    #[test]
    fn the_table_sorts_by_confidence_class_or_file_and_filters_by_class_and_confidence() {
        let predictions = predictions();
        let order = |view: TableView| -> Vec<usize> {
            view.rows(&predictions, None)
                .iter()
                .map(|row| row.index)
                .collect()
        };
        // Most confident first, the unreadable file apart.
        assert_eq!(order(TableView::default()), [1, 0, 3]);
        let ascending = TableView {
            descending: false,
            ..TableView::default()
        };
        assert_eq!(order(ascending), [3, 0, 1]);
        let by_class = TableView {
            sort: SortBy::Class,
            descending: false,
            ..TableView::default()
        };
        assert_eq!(order(by_class), [0, 3, 1]);
        let by_file = TableView {
            sort: SortBy::File,
            descending: false,
            ..TableView::default()
        };
        assert_eq!(order(by_file), [1, 0, 3]);
        let first_class = TableView {
            class: Some(0),
            ..TableView::default()
        };
        assert_eq!(order(first_class), [0, 3]);
        let sure = TableView {
            min_confidence: 0.6,
            ..TableView::default()
        };
        assert_eq!(order(sure), [1, 0]);
    }

    #[test]
    fn a_multi_label_models_class_filter_keeps_the_images_given_that_label() {
        let predictions = predictions();
        let thresholds = [0.5, 0.4];
        let given = |label: usize| -> Vec<(usize, f32)> {
            let view = TableView {
                class: Some(label),
                ..TableView::default()
            };
            view.rows(&predictions, Some(&thresholds))
                .iter()
                .map(|row| (row.index, row.confidence))
                .collect()
        };
        // Label 1 at 0.4: a.png (0.8) and c.png (0.45), though c's likeliest label is 0.
        assert_eq!(given(1), [(1, 0.8), (3, 0.45)]);
        assert_eq!(given(0), [(0, 0.7), (3, 0.55)]);
    }
}
