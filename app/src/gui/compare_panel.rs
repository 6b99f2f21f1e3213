//! The Compare table of the runs shown together.

use super::*;
use kiln_core::config::Setting;
use kiln_core::selection::ValidatedOn;

/// The runs side by side: settings that differ, then final figures and speed with their
/// difference to the first run, then the spread over seeds.
pub fn compare_ui(ui: &mut egui::Ui, comparison: &Comparison) {
    egui::ScrollArea::horizontal()
        .id_salt("compare-scroll")
        .show(ui, |ui| {
            egui::Grid::new("compare-grid")
                .striped(true)
                .spacing([16.0, 2.0])
                .show(ui, |ui| {
                    ui.label("");
                    for (i, label) in comparison.labels.iter().enumerate() {
                        ui.colored_label(run_color(i), label)
                            .on_hover_text(&comparison.folders[i]);
                    }
                    ui.end_row();
                    ui.label(kiln_core::compare::EVALUATED_ON);
                    for validated_on in &comparison.validated_on {
                        match validated_on {
                            ValidatedOn::Test => {
                                ui.colored_label(ui.visuals().warn_fg_color, validated_on.label())
                            }
                            _ => ui.label(validated_on.label()),
                        }
                        .on_hover_text(Setting::Validation.help());
                    }
                    ui.end_row();
                    for (name, values) in &comparison.settings {
                        ui.label(name);
                        for value in values {
                            ui.label(value);
                        }
                        ui.end_row();
                    }
                    for figure in &comparison.figures {
                        ui.label(figure.name);
                        for i in 0..figure.values.len() {
                            ui.label(figure.cell(i));
                        }
                        ui.end_row();
                    }
                });
        });
    for group in &comparison.seed_groups {
        let names: Vec<&str> = group
            .runs
            .iter()
            .map(|&i| comparison.labels[i].as_str())
            .collect();
        ui.label(format!(
            "Seeds only differ between {}: final test accuracy {:.2} ± {:.2} % (mean ± std).",
            names.join(", "),
            group.mean_accuracy_pct,
            group.std_accuracy_pct
        ));
    }
    for parting in &comparison.partings {
        ui.label(format!(
            "Where the curves part (dotted on the accuracy chart): {}.",
            parting.describe(&comparison.labels)
        ));
    }
}
