//! A run's results: the confusion matrix, precision, recall and F1 per class, and the surest
//! mistakes.

use super::*;
use kiln_core::results::{ClassMetrics, ClassReport};

/// The confusion matrix as a heat map (each cell shaded by its share of the true class), under
/// it each class's precision, recall, F1 and support with their averages on the test split (and,
/// when the run kept one, the same on the validation split), and the test images the model got
/// wrong with the most confidence. Returns the (true, predicted) cell clicked, whose images the
/// caller shows.
pub fn confusion_ui(
    ui: &mut egui::Ui,
    predictions: &TestPredictions,
    validation: Option<&ClassReport>,
) -> Option<(u8, u8)> {
    let report = predictions.report();
    let mut clicked = None;
    ui.vertical(|ui| {
        clicked = matrix_ui(ui, predictions);
        ui.add_space(4.0);
        class_report_ui(ui, "test", &predictions.class_names, &report);
        ui.label(accuracy_line("Test", &report));
        if let Some(validation) = validation {
            egui::CollapsingHeader::new(accuracy_line("Validation", validation))
                .id_salt("validation-report")
                .show(ui, |ui| {
                    class_report_ui(ui, "validation", &predictions.class_names, validation);
                });
        }
        ui.add_space(6.0);
        ui.vertical(|ui| {
            ui.strong("Most confidently wrong");
            let name = |label: u8| {
                predictions
                    .class_names
                    .get(usize::from(label))
                    .map_or("?", String::as_str)
            };
            egui::Grid::new("gallery")
                .spacing([6.0, 4.0])
                .show(ui, |ui| {
                    for (n, image) in predictions.gallery.iter().enumerate() {
                        let index = image.index;
                        let caption = format!(
                            "#{index}: {} taken for {} ({:.1} %)",
                            name(predictions.labels[index]),
                            name(predictions.predicted[index]),
                            predictions.confidence[index] * 100.0
                        );
                        ui.vertical(|ui| {
                            ui.set_max_width(96.0);
                            let texture =
                                gallery_texture(ui.ctx(), image, predictions.confidence[index]);
                            ui.add(
                                egui::Image::new(&texture)
                                    .fit_to_exact_size(egui::vec2(56.0, 56.0)),
                            )
                            .on_hover_text(&caption);
                            ui.add(egui::Label::new(egui::RichText::new(caption).small()).wrap());
                        });
                        if n % 4 == 3 {
                            ui.end_row();
                        }
                    }
                });
        });
    });
    clicked
}

/// The texture of a gallery image, made once and kept in egui's memory; the key includes the
/// confidence so the images of a new run never show an old run's texture.
pub(super) fn gallery_texture(
    ctx: &egui::Context,
    image: &kiln_core::results::GalleryImage,
    confidence: f32,
) -> egui::TextureHandle {
    let id = egui::Id::unique(("gallery", image.index, confidence.to_bits()));
    if let Some(texture) = ctx.data(|d| d.get_temp::<egui::TextureHandle>(id)) {
        return texture;
    }
    let [_, height, width] = image.shape;
    let pixels = egui::ColorImage::from_rgba_unmultiplied([width, height], &image.to_rgba());
    let texture = ctx.load_texture(
        format!("gallery-{}", image.index),
        pixels,
        egui::TextureOptions::NEAREST,
    );
    ctx.data_mut(|d| d.insert_temp(id, texture.clone()));
    texture
}

/// Precision, recall and F1 in percent, then the support.
fn metrics_ui(ui: &mut egui::Ui, metrics: &ClassMetrics) {
    for value in [metrics.precision, metrics.recall, metrics.f1] {
        ui.label(format!("{:.1} %", value * 100.0));
    }
    ui.label(metrics.support.to_string());
}

/// A class name cut to fit a column; the tooltip has it whole.
fn short(name: &str) -> String {
    name.chars().take(9).collect()
}

/// True class down, predicted class across, each cell shaded by its share of its row; returns
/// the cell clicked.
fn matrix_ui(ui: &mut egui::Ui, predictions: &TestPredictions) -> Option<(u8, u8)> {
    let mut clicked = None;
    let base = ui.visuals().selection.bg_fill;
    let name_of = |class: usize| {
        predictions
            .class_names
            .get(class)
            .map_or("", String::as_str)
    };
    egui::Grid::new("confusion")
        .spacing([2.0, 2.0])
        .show(ui, |ui| {
            ui.label("true \\ predicted");
            for name in &predictions.class_names {
                ui.label(short(name)).on_hover_text(name);
            }
            ui.end_row();
            for (class, row) in predictions.confusion().iter().enumerate() {
                let name = name_of(class);
                ui.label(short(name)).on_hover_text(name);
                let total = row.iter().sum::<u64>().max(1) as f32;
                for (guess, count) in row.iter().enumerate() {
                    let share = *count as f32 / total;
                    let (rect, response) =
                        ui.allocate_exact_size(egui::vec2(44.0, 20.0), egui::Sense::click());
                    ui.painter()
                        .rect_filled(rect, 2.0, base.gamma_multiply(share.sqrt()));
                    ui.painter().text(
                        rect.center(),
                        egui::Align2::CENTER_CENTER,
                        count.to_string(),
                        egui::FontId::monospace(12.0),
                        ui.visuals().text_color(),
                    );
                    let response = response.on_hover_text(format!(
                        "{count} {name} images predicted as {} ({:.1} % of {name}); click to see them",
                        name_of(guess),
                        share * 100.0
                    ));
                    if response.clicked() && *count > 0 {
                        clicked = Some((class as u8, guess as u8));
                    }
                }
                ui.end_row();
            }
        });
    clicked
}

/// "Test accuracy 91.20 %, top-5 accuracy 99.80 %." for `split`'s report.
fn accuracy_line(split: &str, report: &ClassReport) -> String {
    let top_5 = report.top_5_accuracy.map_or_else(String::new, |t| {
        format!(", top-5 accuracy {:.2} %", t * 100.0)
    });
    format!("{split} accuracy {:.2} %{top_5}.", report.accuracy * 100.0)
}

/// Precision, recall, F1 and support per class of `split`, then the macro and weighted averages.
fn class_report_ui(ui: &mut egui::Ui, split: &str, class_names: &[String], report: &ClassReport) {
    egui::Grid::new(format!("class-report-{split}"))
        .striped(true)
        .spacing([14.0, 2.0])
        .show(ui, |ui| {
            ui.label("class");
            for (column, meaning) in [
                (
                    "precision",
                    "Of the images given this class, the share that are of it.",
                ),
                (
                    "recall",
                    "Of this class's images, the share given this class.",
                ),
                ("F1", "The harmonic mean of precision and recall."),
                ("support", "Images of this class in the split."),
            ] {
                ui.label(column).on_hover_text(meaning);
            }
            ui.end_row();
            for (name, metrics) in class_names.iter().zip(&report.classes) {
                ui.label(name);
                metrics_ui(ui, metrics);
                ui.end_row();
            }
            for (name, meaning, metrics) in [
                (
                    "macro avg",
                    "Every class counts the same.",
                    &report.macro_average,
                ),
                (
                    "weighted avg",
                    "Classes count by their number of images in the split.",
                    &report.weighted_average,
                ),
            ] {
                ui.label(name).on_hover_text(meaning);
                metrics_ui(ui, metrics);
                ui.end_row();
            }
        });
}
