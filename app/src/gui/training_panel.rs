//! The training controls (Start, Pause, Cancel, Resume, exports) and the central area: plots,
//! step profiles, comparison and results of the runs shown.

use super::*;

impl KilnApp {
    pub(super) fn controls_ui(&mut self, ui: &mut egui::Ui, check: &FormCheck) {
        let ctx = ui.ctx().clone();
        let training = self.is_training();
        let blocked = self.start_blocker(check);
        ui.horizontal(|ui| {
            let start = ui
                .add_enabled(
                    !training && blocked.is_none(),
                    egui::Button::new("▶ Start")
                        .shortcut_text(ctx.format_shortcut(&START_SHORTCUT)),
                )
                .on_hover_text(format!(
                    "Train with these settings ({})",
                    ctx.format_shortcut(&START_SHORTCUT)
                ))
                .on_disabled_hover_text(
                    blocked
                        .clone()
                        .unwrap_or_else(|| "a run is going".to_owned()),
                );
            if start.clicked() {
                self.start();
            }
            let state = self.session.as_ref().map(|s| s.state.clone());
            let paused = state == Some(SessionState::Paused);
            let pause_text = if paused { "⏵ Resume" } else { "⏸ Pause" };
            let can_pause = matches!(state, Some(SessionState::Running | SessionState::Paused));
            if ui
                .add_enabled(can_pause, egui::Button::new(pause_text))
                .on_hover_text(format!(
                    "Hold or continue the run at a step boundary ({})",
                    ctx.format_shortcut(&PAUSE_SHORTCUT)
                ))
                .clicked()
            {
                self.toggle_pause();
            }
            if ui
                .add_enabled(training, egui::Button::new("⏹ Cancel"))
                .on_hover_text(format!(
                    "Stop the run; its folder keeps every row so far ({})",
                    ctx.format_shortcut(&CANCEL_SHORTCUT)
                ))
                .clicked()
            {
                self.cancel();
            }
            ui.separator();
            let mut wall = self.x_axis == XAxis::WallSecs;
            ui.label("x axis:");
            if ui
                .selectable_label(!wall, "steps")
                .on_hover_text("Plot against optimizer steps.")
                .clicked()
            {
                wall = false;
            }
            if ui
                .selectable_label(wall, "wall time")
                .on_hover_text("Plot against seconds since the run started.")
                .clicked()
            {
                wall = true;
            }
            self.x_axis = if wall { XAxis::WallSecs } else { XAxis::Steps };
        });
        // On its own wrapped line: a long reason in the button row would widen the panel.
        if let Some(reason) = blocked.filter(|_| !training) {
            ui.add(
                egui::Label::new(
                    egui::RichText::new(format!("Start is disabled: {reason}"))
                        .color(ui.visuals().error_fg_color),
                )
                .wrap(),
            );
        } else if let Some(notice) = &self.notice {
            ui.add(egui::Label::new(notice.as_str()).wrap());
        }
        if let Some(session) = &self.session {
            for warning in &session.warnings {
                ui.colored_label(ui.visuals().warn_fg_color, format!("⚠ {warning}"));
            }
            if let SessionState::Failed(reason) = &session.state {
                ui.colored_label(
                    ui.visuals().error_fg_color,
                    format!("The run failed: {reason}"),
                );
            }
        }
    }

    pub(super) fn central_ui(&mut self, ui: &mut egui::Ui, check: &FormCheck) {
        ui.heading("Training");
        self.controls_ui(ui, check);
        ui.separator();
        self.refresh_past_predictions();
        let histories = self.plotted();
        let labels = kiln_core::plot::legend_labels(&histories);
        let predictions = self
            .session
            .as_ref()
            .and_then(|s| s.predictions.as_ref())
            .or_else(|| self.past_predictions.as_ref().and_then(|(_, p)| p.as_ref()));
        // The validation report of the run whose predictions are shown: the live one, else the
        // past run they were read from.
        let shown_path = match (&self.session, &self.past_predictions) {
            (Some(session), _) if session.predictions.is_some() => Some(&session.history.path),
            (_, Some((path, _))) => Some(path),
            _ => None,
        };
        let validation = histories
            .iter()
            .find(|h| Some(&h.path) == shown_path)
            .and_then(|h| h.summary.as_ref())
            .and_then(|s| s.val_report.as_ref());
        let mut opened = None;
        if let Some(predictions) = predictions {
            egui::CollapsingHeader::new("Per-class results")
                .id_salt("per-class")
                .show(ui, |ui| {
                    // Ten classes do not fit beside the plots; scroll rather than push them out.
                    egui::ScrollArea::both()
                        .id_salt("per-class-scroll")
                        .max_height(ui.available_height() * 0.5)
                        .show(ui, |ui| {
                            let cell = confusion_ui(ui, predictions, validation);
                            let config = self.predictions_config();
                            opened = cell.zip(config).map(|(cell, config)| {
                                let ctx = ui.ctx().clone();
                                CellImages::open(config, predictions, cell, move || wake(&ctx))
                            });
                        });
                });
        }
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
        if !profiled.is_empty() {
            egui::CollapsingHeader::new("Where a step's time goes (profiling mode)")
                .id_salt("step-profile")
                .default_open(true)
                .show(ui, |ui| step_profile_ui(ui, &profiled));
        }
        let mut bands = Vec::new();
        if histories.len() >= 2 {
            let comparison = compare(&histories);
            egui::CollapsingHeader::new("Compare runs")
                .id_salt("compare")
                .show(ui, |ui| compare_ui(ui, &comparison));
            bands = comparison
                .seed_groups
                .iter()
                .map(|group| SeedBand {
                    runs: group.runs.iter().map(|&i| histories[i]).collect(),
                    color: run_color(group.runs[0]),
                })
                .collect();
        }
        let plot_runs = plots::plot_runs(&histories, &labels);
        if plot_runs.is_empty() {
            ui.label("Press Start to train, or tick past runs on the right to compare them.");
        }
        plots_ui(ui, &plot_runs, &bands, self.x_axis);
        if opened.is_some() {
            self.cell_images = opened;
        }
    }
}
