//! The results of a run on a data set of several labels per image, in the panels a run of one
//! class per image fills with its confusion matrix and class report: a bar per label (its
//! average precision, its F1 marked) whose click opens the label's false positives and false
//! negatives, and the per-label table with the averages and the whole-set figures.

use kiln_core::results::multi_label::{LabelPredictions, LabelReport};

use super::arrangement::Pane;
use super::cell_images::{CellImages, cell_images_ui};
use super::results_panel::{fit_text, metrics_ui};
use super::views::empty_panel_ui;

/// Draws `pane` of the Results view for a multi-label run: the bars in the matrix's place, the
/// per-label table in the class report's, a clicked label's images; returns the label whose
/// bar was clicked, whose images the caller opens.
pub fn label_pane_ui(
    ui: &mut egui::Ui,
    pane: Pane,
    predictions: &LabelPredictions,
    cell_images: &mut Option<CellImages>,
) -> Option<usize> {
    match pane {
        Pane::ConfusionMatrix => return label_bars_ui(ui, predictions),
        Pane::ClassReport => label_report_panel_ui(ui, predictions),
        Pane::CellImages => match cell_images.as_mut() {
            Some(cell) => cell_images_ui(ui, cell),
            None => empty_panel_ui(
                ui,
                "Click a label's bar to see the test images it gets wrong here.",
            ),
        },
        _ => empty_panel_ui(
            ui,
            "A run of several labels per image has no single surest mistake: click a label's bar for its false positives and false negatives.",
        ),
    }
    None
}

/// Height of one label's bar row.
const BAR_ROW_PX: f32 = 20.0;
/// Width kept for a label's name left of its bar.
const NAME_PX: f32 = 140.0;

/// One bar per label: its average precision as the bar, its F1 at the run's threshold as a
/// tick, scrolled when the labels outgrow the panel. Returns the label clicked, whose wrong
/// images the caller shows.
pub fn label_bars_ui(ui: &mut egui::Ui, predictions: &LabelPredictions) -> Option<usize> {
    let report = predictions.report();
    ui.label(summary_line(&report))
        .on_hover_text("Bars: average precision per label. Ticks: F1 at the label's threshold. Click a label for the test images it gets wrong.");
    let mut clicked = None;
    egui::ScrollArea::vertical()
        .id_salt("label-bars-scroll")
        .show(ui, |ui| {
            for (label, metrics) in report.per_label.iter().enumerate() {
                let name = predictions
                    .label_names
                    .get(label)
                    .map_or("", String::as_str);
                let width = ui.available_width();
                let (rect, response) = ui.allocate_exact_size(
                    egui::vec2(width, BAR_ROW_PX),
                    egui::Sense::click(),
                );
                let painter = ui.painter_at(rect);
                let visuals = ui.visuals();
                let font = egui::TextStyle::Body.resolve(ui.style());
                let shown = fit_text(ui, name, &font, NAME_PX - 6.0);
                painter.text(
                    rect.left_center(),
                    egui::Align2::LEFT_CENTER,
                    shown,
                    font.clone(),
                    visuals.text_color(),
                );
                let track = egui::Rect::from_min_max(
                    egui::pos2(rect.left() + NAME_PX, rect.top() + 3.0),
                    egui::pos2(rect.right() - 60.0, rect.bottom() - 3.0),
                );
                painter.rect_filled(track, 2.0, visuals.faint_bg_color);
                let ap = metrics.average_precision.unwrap_or(0.0) as f32;
                let bar = egui::Rect::from_min_size(
                    track.min,
                    egui::vec2(track.width() * ap.clamp(0.0, 1.0), track.height()),
                );
                painter.rect_filled(bar, 2.0, visuals.selection.bg_fill);
                let f1_x = track.left() + track.width() * metrics.at_threshold.f1 as f32;
                painter.line_segment(
                    [
                        egui::pos2(f1_x, rect.top() + 1.0),
                        egui::pos2(f1_x, rect.bottom() - 1.0),
                    ],
                    egui::Stroke::new(2.0, visuals.strong_text_color()),
                );
                let figure = match metrics.average_precision {
                    Some(ap) => format!("{ap:.3}"),
                    None => "no image".to_owned(),
                };
                painter.text(
                    egui::pos2(rect.right(), rect.center().y),
                    egui::Align2::RIGHT_CENTER,
                    figure,
                    font,
                    visuals.text_color(),
                );
                let spoken = format!("{name}: average precision");
                response.widget_info(|| {
                    egui::WidgetInfo::labeled(egui::Role::Button, true, &spoken)
                });
                let response = response.on_hover_text(format!(
                    "{name}: average precision {}, F1 {:.3} at threshold {:.3}, {} test image(s) have it. Click for its false positives and false negatives.",
                    metrics
                        .average_precision
                        .map_or_else(|| "— (no test image has it)".to_owned(), |ap| format!("{ap:.3}")),
                    metrics.at_threshold.f1,
                    metrics.threshold,
                    metrics.at_threshold.support
                ));
                if response.clicked() {
                    clicked = Some(label);
                }
            }
        });
    clicked
}

/// "Test mAP 0.912, micro F1 0.874, subset accuracy 61.3 %, Hamming loss 0.052."
fn summary_line(report: &LabelReport) -> String {
    format!(
        "Test mAP {:.3}, micro F1 {:.3}, subset accuracy {:.1} %, Hamming loss {:.3}.",
        report.mean_average_precision,
        report.micro_avg.f1,
        report.subset_accuracy * 100.0,
        report.hamming_loss
    )
}

/// Each label's precision, recall, F1 (at its threshold), support, average precision and
/// threshold on the test split, then the micro, macro and weighted averages.
pub fn label_report_panel_ui(ui: &mut egui::Ui, predictions: &LabelPredictions) {
    let report = predictions.report();
    egui::ScrollArea::both()
        .id_salt("label-report-scroll")
        .show(ui, |ui| {
            ui.label(summary_line(&report));
            egui::Grid::new("label-report")
                .striped(true)
                .spacing([14.0, 2.0])
                .show(ui, |ui| {
                    ui.label("label");
                    for (column, meaning) in [
                        ("precision", "Of the images given this label, the share that have it."),
                        ("recall", "Of the images that have this label, the share given it."),
                        ("F1", "The harmonic mean of precision and recall."),
                        ("support", "Test images that have this label."),
                        ("avg precision", "The area under the label's precision-recall curve, over every threshold (scikit-learn's average_precision_score)."),
                        ("threshold", "The probability at or above which an image is given the label."),
                    ] {
                        ui.label(column).on_hover_text(meaning);
                    }
                    ui.end_row();
                    for (name, label) in predictions.label_names.iter().zip(&report.per_label) {
                        ui.label(name);
                        metrics_ui(ui, &label.at_threshold);
                        ui.label(
                            label
                                .average_precision
                                .map_or_else(|| "—".to_owned(), |ap| format!("{ap:.3}")),
                        );
                        ui.label(format!("{:.3}", label.threshold));
                        ui.end_row();
                    }
                    for (name, meaning, metrics) in [
                        ("micro avg", "Every (image, label) decision pooled.", &report.micro_avg),
                        ("macro avg", "Every label counts the same.", &report.macro_avg),
                        ("weighted avg", "Labels count by their test images.", &report.weighted_avg),
                    ] {
                        ui.label(name).on_hover_text(meaning);
                        metrics_ui(ui, metrics);
                        ui.end_row();
                    }
                });
        });
}
