//! The central area of each stage's view: the Train view's controls over its plots, the Results
//! and Compare views' panels, the Data report and the Predict view. The setup column (Train
//! only), the runs list and the status line are drawn around it by `KilnApp::ui`.

use super::*;

/// The runs on the plots: the live one first, then the ticked ones.
pub(super) fn plotted_runs<'a>(
    session: &'a Option<Session>,
    runs: &'a RunsPanel,
) -> Vec<&'a RunHistory> {
    let live_path = session.as_ref().map(|s| &s.history.path);
    session
        .iter()
        .map(|s| &s.history)
        .chain(
            runs.selected_runs()
                .into_iter()
                .filter(|r| Some(&r.path) != live_path),
        )
        .collect()
}

/// The runs on the plots with what the plots and the compare table draw of them.
struct Plotted<'a> {
    histories: Vec<&'a RunHistory>,
    /// Each run's legend label: what tells it apart from the others.
    labels: Vec<String>,
    /// The compare table, with two runs or more.
    comparison: Option<Comparison>,
    /// A band of mean ± std for each group of runs that differ only in their seed.
    bands: Vec<SeedBand<'a>>,
}

impl<'a> Plotted<'a> {
    fn of(session: &'a Option<Session>, runs: &'a RunsPanel) -> Self {
        let histories = plotted_runs(session, runs);
        let labels = kiln_core::plot::legend_labels(&histories);
        let comparison = (histories.len() >= 2).then(|| compare(&histories));
        let bands = comparison.as_ref().map_or_else(Vec::new, |comparison| {
            comparison
                .seed_groups
                .iter()
                .map(|group| SeedBand {
                    runs: group.runs.iter().map(|&i| histories[i]).collect(),
                    color: run_color(group.runs[0]),
                })
                .collect()
        });
        Self {
            histories,
            labels,
            comparison,
            bands,
        }
    }
}

/// A sentence in a panel that has nothing to show yet, saying how to give it something.
pub(super) fn empty_panel_ui(ui: &mut egui::Ui, sentence: &str) {
    ui.add(egui::Label::new(egui::RichText::new(sentence).weak()).wrap());
}

/// *Default layout*, at the right of a view's header row: enabled once a panel has moved.
fn reset_layout_ui(ui: &mut egui::Ui, arrangement: &mut Arrangement) {
    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
        if ui
            .add_enabled(
                !arrangement.is_default(),
                egui::Button::new("Default layout"),
            )
            .on_hover_text("Put every panel of this view back where it was at first")
            .on_disabled_hover_text(
                "The panels are where they were at first; drag a tab to move its panel",
            )
            .clicked()
        {
            arrangement.reset();
        }
    });
}

impl KilnApp {
    /// Switches the view; the Data view reads the chosen data set when it has no report yet.
    pub fn set_stage(&mut self, stage: Stage) {
        self.stage = stage;
        if stage == Stage::Data
            && self.data_view.is_none()
            && self.form.check().experiment.is_some()
        {
            self.handle_setup_action(SetupAction::InspectData);
        }
    }

    /// The word after a stage's tab: how many runs the Compare view holds.
    pub(super) fn stage_badge(&self, stage: Stage) -> Option<String> {
        let plotted = plotted_runs(&self.session, &self.runs).len();
        (stage == Stage::Compare && plotted >= 2).then(|| format!("({plotted})"))
    }

    /// The central area of the current stage's view.
    pub(super) fn stage_ui(&mut self, ui: &mut egui::Ui, check: &FormCheck) {
        match self.stage {
            Stage::Data => self.data_stage_ui(ui, check),
            Stage::Train => self.train_stage_ui(ui, check),
            Stage::Results => self.results_stage_ui(ui),
            Stage::Predict => self.predict_stage_ui(ui),
            Stage::Compare => self.compare_stage_ui(ui),
        }
    }

    fn train_stage_ui(&mut self, ui: &mut egui::Ui, check: &FormCheck) {
        self.controls_ui(ui, check);
        ui.separator();
        let Plotted {
            histories,
            labels,
            bands,
            ..
        } = Plotted::of(&self.session, &self.runs);
        let runs = plot_runs(&histories, &labels);
        #[cfg(not(target_arch = "wasm32"))]
        let sweep_running = self.sweep_running();
        #[cfg_attr(target_arch = "wasm32", allow(unused_mut))]
        let mut open_sweep = false;
        ui.horizontal(|ui| {
            if runs.is_empty() {
                ui.label("Press Start to train, or tick past runs on the right to compare them.");
            }
            // Under Start rather than beside it: the controls' row has no room left at 1280.
            #[cfg(not(target_arch = "wasm32"))]
            {
                open_sweep = ui
                    .add_enabled(!sweep_running, egui::Button::new("Sweep…"))
                    .on_hover_text("Run these settings over values of the ones you tick, as trials over seeds, and read them as one table (kiln sweep)")
                    .on_disabled_hover_text("a sweep is running: its progress is in the Compare view")
                    .clicked();
            }
            reset_layout_ui(ui, &mut self.arrangements.train);
        });
        #[cfg(not(target_arch = "wasm32"))]
        if open_sweep {
            // The field itself, not a method on the app: the plotted runs borrow its runs.
            self.sweep_dialog.get_or_insert_with(Default::default);
        }
        #[cfg(target_arch = "wasm32")]
        let _ = open_sweep;
        legend_ui(ui, &runs, &bands);
        let x_axis = self.x_axis;
        per_epoch_note_ui(ui, &runs, x_axis);
        arrangement_ui(ui, &mut self.arrangements.train, &mut |ui, pane| {
            if let Some(chart) = pane.chart() {
                chart_ui(ui, chart, &runs, &bands, &[], x_axis);
            }
        });
    }

    fn compare_stage_ui(&mut self, ui: &mut egui::Ui) {
        let Plotted {
            histories,
            labels,
            comparison,
            bands,
        } = Plotted::of(&self.session, &self.runs);
        let runs = plot_runs(&histories, &labels);
        #[cfg_attr(target_arch = "wasm32", allow(unused_mut))]
        let mut explain = false;
        #[cfg(not(target_arch = "wasm32"))]
        let sweep_running = self.sweep_running();
        ui.horizontal(|ui| {
            ui.label(match histories.len() {
                0 | 1 => "Tick two runs or more on the right to compare their settings, results and curves.".to_owned(),
                n => format!("{n} runs side by side; runs that differ only in their seed are drawn as one band."),
            });
            #[cfg(not(target_arch = "wasm32"))]
            if histories.len() == 2 {
                explain = ui
                    .add_enabled(!sweep_running, egui::Button::new("Explain the difference"))
                    .on_hover_text("Apply each setting in which the second run differs alone to the first, and undo each alone from the second, over 3 seeds: each difference's effect, what is within seed noise, and their interaction (kiln explain)")
                    .on_disabled_hover_text("a sweep is running")
                    .clicked();
            }
            reset_layout_ui(ui, &mut self.arrangements.compare);
        });
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(job) = &mut self.sweep_job {
            egui::ScrollArea::vertical()
                .id_salt("sweep-job-scroll")
                .max_height(ui.available_height() * 0.55)
                .show(ui, |ui| sweep_job::sweep_job_ui(ui, job));
            ui.separator();
        }
        legend_ui(ui, &runs, &bands);
        let x_axis = self.x_axis;
        per_epoch_note_ui(ui, &runs, x_axis);
        let mut compare_action = None;
        arrangement_ui(ui, &mut self.arrangements.compare, &mut |ui, pane| match (
            pane.chart(),
            &comparison,
        ) {
            (Some(chart), comparison) => {
                let partings = comparison
                    .as_ref()
                    .map_or(&[][..], |c| c.partings.as_slice());
                chart_ui(ui, chart, &runs, &bands, partings, x_axis);
            }
            (None, Some(comparison)) => {
                let asked = egui::ScrollArea::both()
                    .id_salt("compare-scroll")
                    .show(ui, |ui| compare_ui(ui, comparison, &histories))
                    .inner;
                compare_action = compare_action.take().or(asked);
            }
            (None, None) => empty_panel_ui(
                ui,
                "The compare table lists what differs between the ticked runs, then their results.",
            ),
        });
        #[cfg(not(target_arch = "wasm32"))]
        if explain {
            self.explain_ticked();
        }
        #[cfg(target_arch = "wasm32")]
        let _ = explain;
        if let Some(action) = compare_action {
            self.handle_compare_action(action);
        }
    }

    /// The run the Results view shows: the one picked there while it is still live or ticked,
    /// else the live run once it has its test predictions, else the first ticked run.
    pub(super) fn results_run(&self) -> Option<PathBuf> {
        let live = self
            .session
            .as_ref()
            .filter(|s| s.has_test_predictions())
            .map(|s| &s.history.path);
        let ticked = self.runs.selected_runs();
        let offered = |path: &PathBuf| live == Some(path) || ticked.iter().any(|r| r.path == *path);
        match &self.results_of {
            Some(picked) if offered(picked) => Some(picked.clone()),
            _ => live.or(ticked.first().map(|r| &r.path)).cloned(),
        }
    }

    fn results_stage_ui(&mut self, ui: &mut egui::Ui) {
        self.refresh_past_predictions();
        let shown = self.results_run();
        let live = self
            .session
            .as_ref()
            .filter(|s| s.has_test_predictions() && Some(&s.history.path) == shown.as_ref());
        let (predictions, label_predictions) = match live {
            Some(session) => (
                session.predictions.as_ref(),
                session.label_predictions.as_deref(),
            ),
            None => (
                self.past_predictions.as_ref().and_then(|(_, p)| p.as_ref()),
                self.past_label_predictions.as_ref(),
            ),
        };
        let histories = plotted_runs(&self.session, &self.runs);
        let labels = kiln_core::plot::legend_labels(&histories);
        let validation = histories
            .iter()
            .find(|h| Some(&h.path) == shown.as_ref())
            .and_then(|h| h.summary.as_ref())
            .and_then(|s| s.val_report.as_ref());
        let mut picked = None;
        ui.horizontal(|ui| {
            // The legend's label alone can be the same for several runs ("default"); the
            // folder's name tells them apart.
            let name_of = |path: &Path| {
                let folder = path
                    .file_name()
                    .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
                match histories.iter().zip(&labels).find(|(h, _)| h.path == path) {
                    Some((_, label)) if !folder.ends_with(label.as_str()) => format!("{folder} ({label})"),
                    _ => folder,
                }
            };
            match &shown {
                None => {
                    ui.label("Results of a run appear here once it has tested its model; tick a finished run on the right to read its results.");
                }
                Some(path) => {
                    ui.label("Results of");
                    egui::ComboBox::from_id_salt("results-of")
                        .selected_text(name_of(path))
                        .show_ui(ui, |ui| {
                            for history in &histories {
                                let chosen = history.path == *path;
                                if ui.selectable_label(chosen, name_of(&history.path)).clicked() {
                                    picked = Some(history.path.clone());
                                }
                            }
                        })
                        .response
                        .on_hover_text("The live run or any ticked run");
                }
            }
            reset_layout_ui(ui, &mut self.arrangements.results);
        });
        let profiled: Vec<ProfiledRun<'_>> = histories
            .iter()
            .zip(&labels)
            .enumerate()
            .filter_map(|(i, (history, label))| {
                let profile = history.summary.as_ref()?.profile.as_ref()?;
                Some(ProfiledRun {
                    label,
                    color: run_color(i),
                    profile,
                })
            })
            .collect();
        let config = self.predictions_config();
        let mut opened = None;
        // A cell's images belong to the run they were read for.
        if self
            .cell_images
            .as_ref()
            .is_some_and(|cell| cell.run != shown)
        {
            self.cell_images = None;
        }
        let cell_images = &mut self.cell_images;
        self.arrangements
            .results
            .set_per_label(predictions.is_none() && label_predictions.is_some());
        let no_predictions = "This panel fills in when the shown run has tested its model (the test split's predictions are in its folder).";
        arrangement_ui(
            ui,
            &mut self.arrangements.results,
            &mut |ui, pane| match (pane, predictions) {
                (Pane::StepProfile, _) if profiled.is_empty() => empty_panel_ui(
                    ui,
                    "Train with Profile steps above 0 (Setup, Speed) to see where each step's time goes.",
                ),
                (Pane::StepProfile, _) => step_profile_ui(ui, &profiled),
                (_, None) if label_predictions.is_some() => {
                    let Some(labels) = label_predictions else {
                        return;
                    };
                    let label = label_results::label_pane_ui(ui, pane, labels, cell_images);
                    // Only the bars' pane answers a click; the panes drawn after it keep it.
                    if let (Some(label), Some(config)) = (label, config.clone()) {
                        let ctx = ui.ctx().clone();
                        let cell =
                            CellImages::open_label(config, labels, label, move || wake(&ctx));
                        opened = Some(cell.of_run(shown.clone()));
                    }
                }
                (_, None) => empty_panel_ui(ui, no_predictions),
                (Pane::CellImages, Some(_)) => match cell_images.as_mut() {
                    Some(cell) => cell_images_ui(ui, cell),
                    None => empty_panel_ui(
                        ui,
                        "Click a cell of the confusion matrix to see its test images here.",
                    ),
                },
                (Pane::ConfusionMatrix, Some(predictions)) => {
                    let cell = confusion_matrix_ui(ui, predictions);
                    opened = cell.zip(config.clone()).map(|(cell, config)| {
                        let ctx = ui.ctx().clone();
                        let cell = CellImages::open(config, predictions, cell, move || wake(&ctx));
                        cell.of_run(shown.clone())
                    });
                }
                (Pane::ClassReport, Some(predictions)) => {
                    class_report_panel_ui(ui, predictions, validation);
                }
                (Pane::Mistakes, Some(predictions)) => mistakes_ui(ui, predictions),
                _ => {}
            },
        );
        if opened.is_some() {
            self.cell_images = opened;
            self.arrangements.results.show(Pane::CellImages);
        }
        if picked.is_some() {
            self.results_of = picked;
        }
    }

    fn data_stage_ui(&mut self, ui: &mut egui::Ui, check: &FormCheck) {
        let mut read = false;
        ui.horizontal(|ui| {
            let title = self.data_view.as_ref().map(|view| view.title.clone());
            match title {
                Some(title) => ui.strong(format!("Data: {title}")),
                None => ui.label("What the data set chosen in Train's setup holds: its counts per split, samples, the augmentation as training draws it, and files left out."),
            };
            read = ui
                .add_enabled(check.experiment.is_some(), egui::Button::new("Read the data set"))
                .on_hover_text("Read the data set the setup names now")
                .on_disabled_hover_text(check.blocking_reason().unwrap_or_default())
                .clicked();
        });
        ui.separator();
        if read {
            self.handle_setup_action(SetupAction::InspectData);
        }
        if let Some(view) = &mut self.data_view {
            data_view_ui(ui, view);
        }
    }

    fn predict_stage_ui(&mut self, ui: &mut egui::Ui) {
        match &mut self.try_model {
            Some(try_model) => try_model_ui(ui, try_model),
            None => {
                empty_panel_ui(
                    ui,
                    "Press Try… on a finished run in the runs list to classify images of your own with its model.",
                );
                return;
            }
        }
        #[cfg(not(target_arch = "wasm32"))]
        self.folder_predictions_ui(ui);
    }

    /// *Predict folder…* and, once a folder is chosen, its predictions.
    #[cfg(not(target_arch = "wasm32"))]
    fn folder_predictions_ui(&mut self, ui: &mut egui::Ui) {
        ui.separator();
        let pick = ui
            .button("Predict folder…")
            .on_hover_text("Classify every image in a folder (at any depth) with this model, as `kiln predict` does.")
            .clicked();
        if pick
            && let Ok(Some(folder)) = super::files::pick_folder("Folder of images to predict", None)
        {
            self.predict_folder(folder);
        }
        if let Some(predictions) = &mut self.folder_predictions {
            folder_predictions_ui(ui, predictions);
        }
    }

    /// Classifies every image under `folder` with the model opened in the Predict view, on a
    /// thread; nothing happens while no model is open.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn predict_folder(&mut self, folder: PathBuf) {
        let Some(try_model) = &self.try_model else {
            return;
        };
        let Some(predictor) = try_model.predictor() else {
            return;
        };
        let ctx = self.ctx.clone();
        self.folder_predictions = Some(FolderPredictions::start(
            predictor,
            &try_model.run,
            folder,
            move || wake(&ctx),
        ));
    }
}
