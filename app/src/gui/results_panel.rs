//! A run's results, one panel each: the confusion matrix, precision, recall and F1 per class,
//! and the surest mistakes.

use super::*;
use kiln_core::results::{ClassMetrics, ClassReport};

/// Each class's precision, recall, F1 and support with their averages on the test split, and,
/// when the run kept one, the same on the validation split (folded), scrolled when long.
pub fn class_report_panel_ui(
    ui: &mut egui::Ui,
    predictions: &TestPredictions,
    validation: Option<&ClassReport>,
) {
    let report = predictions.report();
    egui::ScrollArea::both()
        .id_salt("class-report-scroll")
        .show(ui, |ui| {
            ui.label(accuracy_line("Test", &report));
            class_report_ui(ui, "test", &predictions.class_names, &report);
            if let Some(validation) = validation {
                egui::CollapsingHeader::new(accuracy_line("Validation", validation))
                    .id_salt("validation-report")
                    .show(ui, |ui| {
                        class_report_ui(ui, "validation", &predictions.class_names, validation);
                    });
            }
        });
}

/// Width of one image of the mistakes gallery with its caption.
const MISTAKE_PX: f32 = 100.0;

/// The test images the model got wrong with the most confidence, as many to a row as fit.
pub fn mistakes_ui(ui: &mut egui::Ui, predictions: &TestPredictions) {
    if predictions.gallery.is_empty() {
        ui.label("The surest mistakes are kept for runs trained in this window; a click on a cell of the matrix shows the images of any cell.");
        return;
    }
    let name = |label: u8| {
        predictions
            .class_names
            .get(usize::from(label))
            .map_or("?", String::as_str)
    };
    let per_row = ((ui.available_width() / (MISTAKE_PX + 6.0)) as usize).max(1);
    egui::ScrollArea::vertical()
        .id_salt("mistakes-scroll")
        .show(ui, |ui| {
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
                            ui.set_max_width(MISTAKE_PX);
                            let texture =
                                gallery_texture(ui.ctx(), image, predictions.confidence[index]);
                            ui.add(
                                egui::Image::new(&texture)
                                    .fit_to_exact_size(egui::vec2(56.0, 56.0)),
                            )
                            .on_hover_text(&caption);
                            ui.add(egui::Label::new(egui::RichText::new(caption).small()).wrap());
                        });
                        if n % per_row == per_row - 1 {
                            ui.end_row();
                        }
                    }
                });
        });
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
pub(super) fn metrics_ui(ui: &mut egui::Ui, metrics: &ClassMetrics) {
    for value in [metrics.precision, metrics.recall, metrics.f1] {
        ui.label(format!("{:.1} %", value * 100.0));
    }
    ui.label(metrics.support.to_string());
}

/// The smallest cell of the confusion matrix before it scrolls: a shade can still be told from
/// its neighbours' and hovered, and 100 classes fit a panel of 520 points.
const MIN_CELL_PX: f32 = 4.0;
/// The largest cell: wide enough for a four-digit count.
const MAX_CELL_PX: f32 = 44.0;
/// Room for the "true" and "predicted" captions along the matrix's edges.
const CAPTION_PX: f32 = 16.0;

/// The confusion matrix as a heat map, true class down and predicted class across, each cell
/// shaded by its share of its row, sized to the space given: cells shrink with the class count
/// (counts drawn while they fit, every class name on hover), column names run upwards, and a
/// scroll appears only past the smallest cell that can be read. Returns the cell clicked,
/// whose images the caller shows.
pub fn confusion_matrix_ui(ui: &mut egui::Ui, predictions: &TestPredictions) -> Option<(u8, u8)> {
    let classes = predictions.class_names.len();
    if classes == 0 {
        return None;
    }
    let confusion = predictions.confusion();
    let label_font = egui::FontId::proportional(12.0);
    let widest = predictions
        .class_names
        .iter()
        .map(|name| text_width(ui, name, &label_font))
        .fold(0.0, f32::max);
    let MatrixLayout {
        label_px,
        cell,
        side,
    } = MatrixLayout::new(ui.available_size(), classes, widest);
    let mut clicked = None;
    egui::ScrollArea::both()
        .id_salt("confusion-scroll")
        .show(ui, |ui| {
            let (rect, response) =
                ui.allocate_exact_size(egui::vec2(side, side), egui::Sense::click());
            let origin = rect.min + egui::vec2(CAPTION_PX + label_px, CAPTION_PX + label_px);
            let painter = ui.painter_at(rect);
            let text_color = ui.visuals().text_color();
            let weak = ui.visuals().weak_text_color();
            let caption_font = egui::FontId::proportional(11.0);
            painter.text(
                egui::pos2(origin.x, rect.min.y),
                egui::Align2::LEFT_TOP,
                "predicted",
                caption_font.clone(),
                weak,
            );
            let true_caption = painter.layout_no_wrap("true".to_owned(), caption_font, weak);
            let caption_length = true_caption.size().x;
            painter.add(
                egui::epaint::TextShape::new(
                    egui::pos2(rect.min.x, origin.y + caption_length),
                    true_caption,
                    weak,
                )
                .with_angle(-std::f32::consts::FRAC_PI_2),
            );
            let name_points = name_points(cell);
            // Below 7-point cells, every k-th name.
            let every = (name_points / cell).ceil().max(1.0) as usize;
            let name_font = egui::FontId::proportional(name_points);
            for (class, name) in predictions.class_names.iter().enumerate() {
                if class % every != 0 {
                    continue;
                }
                let short = fit_text(ui, name, &name_font, label_px - 6.0);
                let middle = (class as f32 + 0.5) * cell;
                painter.text(
                    egui::pos2(origin.x - 4.0, origin.y + middle),
                    egui::Align2::RIGHT_CENTER,
                    &short,
                    name_font.clone(),
                    text_color,
                );
                let galley = painter.layout_no_wrap(short, name_font.clone(), text_color);
                let height = galley.size().y;
                painter.add(
                    egui::epaint::TextShape::new(
                        egui::pos2(origin.x + middle - height / 2.0, origin.y - 4.0),
                        galley,
                        text_color,
                    )
                    .with_angle(-std::f32::consts::FRAC_PI_2),
                );
            }
            let base = ui.visuals().selection.bg_fill;
            let count_points = (cell * 0.4).min(12.0);
            for (class, row) in confusion.iter().enumerate() {
                let total = row.iter().sum::<u64>().max(1) as f32;
                for (guess, count) in row.iter().enumerate() {
                    let share = *count as f32 / total;
                    let min = origin + egui::vec2(guess as f32 * cell, class as f32 * cell);
                    let cell_rect = egui::Rect::from_min_size(min, egui::vec2(cell, cell))
                        .shrink(if cell >= 16.0 { 1.0 } else { 0.0 });
                    painter.rect_filled(cell_rect, 1.0, base.gamma_multiply(share.sqrt()));
                    // A count is drawn only where its digits fit the cell.
                    let digits = count.to_string();
                    if count_points >= 7.0 && digits.len() as f32 * count_points * 0.62 < cell {
                        painter.text(
                            cell_rect.center(),
                            egui::Align2::CENTER_CENTER,
                            digits,
                            egui::FontId::monospace(count_points),
                            text_color,
                        );
                    }
                }
            }
            let hovered = response.hover_pos().and_then(|pointer| {
                let at = (pointer - origin) / cell;
                let (class, guess) = (at.y.floor(), at.x.floor());
                let inside = (0.0..classes as f32).contains(&class)
                    && (0.0..classes as f32).contains(&guess);
                inside.then_some((class as usize, guess as usize))
            });
            if let Some((class, guess)) = hovered {
                let name = |class: usize| predictions.class_names[class].as_str();
                let count = confusion[class][guess];
                let share = count as f32 / confusion[class].iter().sum::<u64>().max(1) as f32;
                let outline = egui::Rect::from_min_size(
                    origin + egui::vec2(guess as f32 * cell, class as f32 * cell),
                    egui::vec2(cell, cell),
                );
                painter.rect_stroke(
                    outline,
                    1.0,
                    egui::Stroke::new(1.5, text_color),
                    egui::StrokeKind::Inside,
                );
                let text = format!(
                    "{count} {} images predicted as {} ({:.1} % of {}); click to see them",
                    name(class),
                    name(guess),
                    share * 100.0,
                    name(class)
                );
                let clicked_now = response.clicked();
                response.on_hover_text_at_pointer(text);
                if clicked_now && count > 0 {
                    clicked = Some((class as u8, guess as u8));
                }
            }
        });
    clicked
}

/// Where the confusion matrix's parts go in the space it is given.
#[derive(Debug, Clone, Copy, PartialEq)]
struct MatrixLayout {
    /// Room for the class names, down the left and along the top.
    label_px: f32,
    /// The side of one cell.
    cell: f32,
    /// The side of the whole matrix with its names and captions.
    side: f32,
}

impl MatrixLayout {
    /// Class names take at most a fifth of the smaller side (longer ones are cut with "…") at
    /// the size the cells leave them, and the cells share the rest, between their smallest and
    /// largest. `widest_name_px` is the widest name at 12 points.
    fn new(available: egui::Vec2, classes: usize, widest_name_px: f32) -> Self {
        let side = available.min_elem();
        let cells = classes.max(1) as f32;
        let label_px = |name_points: f32| {
            (widest_name_px * name_points / 12.0).clamp(24.0, (side / 5.0).max(48.0)) + 6.0
        };
        let cell_for = |label_px: f32| {
            ((side - label_px - CAPTION_PX) / cells).clamp(MIN_CELL_PX, MAX_CELL_PX)
        };
        // Names shrink with the cells they label, so the room for them is found in two steps.
        let first = cell_for(label_px(12.0));
        let label_px = label_px(name_points(first));
        let cell = cell_for(label_px);
        Self {
            label_px,
            cell,
            side: CAPTION_PX + label_px + cell * classes as f32,
        }
    }
}

/// Class names as large as their cells allow, from 7 to 12 points.
fn name_points(cell: f32) -> f32 {
    (cell * 0.8).clamp(7.0, 12.0)
}

/// How wide `text` is drawn in `font`.
fn text_width(ui: &egui::Ui, text: &str, font: &egui::FontId) -> f32 {
    ui.painter()
        .layout_no_wrap(text.to_owned(), font.clone(), egui::Color32::WHITE)
        .size()
        .x
}

/// `text`, cut with "…" to fit `width` when drawn in `font`.
pub(super) fn fit_text(ui: &egui::Ui, text: &str, font: &egui::FontId, width: f32) -> String {
    if text_width(ui, text, font) <= width {
        return text.to_owned();
    }
    let chars: Vec<char> = text.chars().collect();
    (1..chars.len())
        .rev()
        .map(|keep| format!("{}…", chars[..keep].iter().collect::<String>()))
        .find(|cut| text_width(ui, cut, font) <= width)
        .unwrap_or_else(|| "…".to_owned())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_confusion_matrix_of_up_to_100_classes_fits_the_results_panel_at_1280_by_800() {
        // The matrix's panel in the Results view's default arrangement at 1280×800: 1.2 of
        // 2 shares of the 960 points beside the runs list, less the gaps and the tab bar.
        let panel = egui::vec2(570.0, 640.0);
        for (classes, widest_name_px) in [(2, 40.0), (10, 70.0), (47, 90.0), (100, 160.0)] {
            let layout = MatrixLayout::new(panel, classes, widest_name_px);
            assert!(
                layout.side <= panel.min_elem() + 0.01,
                "{classes}: {layout:?}"
            );
            assert!(layout.cell >= MIN_CELL_PX);
        }
        let ten = MatrixLayout::new(panel, 10, 70.0);
        assert_eq!(
            ten.cell, MAX_CELL_PX,
            "ten classes get cells wide enough for counts"
        );
        assert_eq!(
            ten.label_px, 76.0,
            "whole names of ten classes, at 12 points"
        );
        // Past the smallest readable cell the matrix keeps its cells and scrolls.
        let crowded = MatrixLayout::new(egui::vec2(300.0, 300.0), 100, 160.0);
        assert_eq!(crowded.cell, MIN_CELL_PX);
        assert!(crowded.side > 300.0);
    }
}
