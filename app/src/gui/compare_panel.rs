//! The Compare table of the runs shown together.

use super::*;
use kiln_core::compare::CauseTest;
use kiln_core::config::{ExperimentDraft, Setting};
use kiln_core::selection::ValidatedOn;

/// What the Compare table asks of the window: a run or a sweep that tests where two curves part.
#[derive(Debug, Clone)]
pub enum CompareAction {
    /// Train this config (a Kiln run under another framework's defaults).
    Train(Box<ExperimentDraft>),
    /// Run `kiln explain` between A and B.
    Explain(Box<ExperimentDraft>, Box<ExperimentDraft>),
}

/// The runs side by side: where the curves part first, each parting with the runs that would
/// test its likely cause (what a person came to find), then the settings that differ, the final
/// figures and speed with their difference to the first run, and the spread over seeds.
pub fn compare_ui(
    ui: &mut egui::Ui,
    comparison: &Comparison,
    runs: &[&RunHistory],
) -> Option<CompareAction> {
    let mut action = None;
    for (parting, tests) in comparison.partings.iter().zip(&comparison.cause_tests) {
        ui.label(format!(
            "Where the curves part (dotted on the accuracy chart): {}.",
            parting.describe(&comparison.labels)
        ));
        for test in tests {
            if let Some(asked) = cause_test_ui(ui, test, runs) {
                action = Some(asked);
            }
        }
    }
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
    action
}

/// The buttons that start a parting's cause test, with the command line on hover.
fn cause_test_ui(
    ui: &mut egui::Ui,
    test: &CauseTest,
    runs: &[&RunHistory],
) -> Option<CompareAction> {
    // A page runs no sweeps: between two Kiln runs it has nothing to offer.
    if cfg!(target_arch = "wasm32") && matches!(test, CauseTest::Explain { .. }) {
        return None;
    }
    let commands = test.commands().join("\n");
    let mut action = None;
    ui.horizontal_wrapped(|ui| {
        ui.label("To test its likely cause:");
        match test {
            CauseTest::Flavour {
                base,
                flavoured,
                flavour,
                changes,
                ..
            } => {
                let train = ui
                    .button(format!("Train with {}'s defaults", flavour.name()))
                    .on_hover_text(format!(
                        "Train the Kiln run again with {}'s defaults ({}); if its curve then meets the other run's, the defaults made the gap.\n{commands}",
                        flavour.name(),
                        changes.join(", ")
                    ));
                if train.clicked() {
                    action = Some(CompareAction::Train(flavoured.clone()));
                }
                #[cfg(not(target_arch = "wasm32"))]
                if ui
                    .button(format!("Explain {}'s defaults", flavour.name()))
                    .on_hover_text("Each default alone and undone alone, over 3 seeds: which of them make the gap (kiln explain --flavour)")
                    .clicked()
                {
                    action = Some(CompareAction::Explain(base.clone(), flavoured.clone()));
                }
                #[cfg(target_arch = "wasm32")]
                let _ = base;
            }
            CauseTest::Explain { a, b } => {
                let config = |path: &PathBuf| {
                    runs.iter()
                        .find(|r| r.path == *path)
                        .and_then(|r| r.config.clone())
                };
                #[cfg(not(target_arch = "wasm32"))]
                if let (Some(a), Some(b)) = (config(a), config(b))
                    && ui
                        .button("Explain where they part")
                        .on_hover_text(format!("Each setting in which the runs differ alone and undone alone, over 3 seeds.\n{commands}"))
                        .clicked()
                {
                    action = Some(CompareAction::Explain(Box::new(a), Box::new(b)));
                }
                #[cfg(target_arch = "wasm32")]
                let _ = (config, a, b);
            }
        }
    });
    action
}
