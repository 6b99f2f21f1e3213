//! The training controls over the Train view's plots: Start, Pause, Cancel, the x axis, and the
//! sentence that says why Start is disabled or what the last action did.

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
            ui.label("x axis:");
            for (axis, name, tip) in [
                (XAxis::Steps, "steps", "Plot against optimizer steps."),
                (
                    XAxis::WallSecs,
                    "wall time",
                    "Plot against seconds since the run started.",
                ),
                (
                    XAxis::Epochs,
                    "epochs",
                    "Plot against epochs: runs of different batch sizes line up, and runs imported from other frameworks' logs, which hold figures per epoch only, show.",
                ),
            ] {
                if ui
                    .selectable_label(self.x_axis == axis, name)
                    .on_hover_text(tip)
                    .clicked()
                {
                    self.x_axis = axis;
                }
            }
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
}
