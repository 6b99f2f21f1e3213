//! The *Find lr…* window: the learning-rate range test on the Setup form's workload, run on a
//! named thread while the window stays live, drawn as the loss against the rate, with the
//! suggested rate one click away from Setup's learning rate.

use egui_plot::{HoverPosition, Line, Plot, PlotPoints, VLine};
use kiln_core::config::Experiment;
use kiln_core::train::lr_find::{self, LrFindOptions, LrFindReport};

use super::background_job::BackgroundJob;

/// The test of one workload, and the window showing it.
pub struct LrFinder {
    /// The workload's name, for the window's first line.
    workload: String,
    job: BackgroundJob<LrFindReport>,
}

/// What the person did in the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LrFinderAction {
    /// Take this rate into Setup's learning rate.
    UseRate(f64),
    /// Close the window.
    Close,
}

impl LrFinder {
    /// Starts the test of `experiment` with the default range; `wake` redraws once it ends.
    pub fn start(experiment: Experiment, wake: impl Fn() + Send + 'static) -> Self {
        let workload = experiment.name.clone();
        let job = BackgroundJob::start(
            "kiln-lr-find",
            move || range_test(&experiment).map_err(|e| format!("{e:#}")),
            wake,
        );
        Self { workload, job }
    }

    /// The window, while open; what the person chose in it.
    pub fn window_ui(&mut self, ctx: &egui::Context) -> Option<LrFinderAction> {
        self.job.poll();
        let mut open = true;
        let mut action = None;
        egui::Window::new("Find a learning rate")
            .open(&mut open)
            .collapsible(false)
            .default_size([560.0, 380.0])
            .show(ctx, |ui| {
                action = lr_finder_ui(ui, &self.workload, &self.job)
            });
        if !open {
            return Some(LrFinderAction::Close);
        }
        action
    }
}

/// Loads the workload's data and device as a run would, and runs the test.
fn range_test(experiment: &Experiment) -> anyhow::Result<LrFindReport> {
    let (data, target) = kiln_core::run::data_and_devices(experiment)?;
    let options = LrFindOptions::default();
    Ok(lr_find::lr_find(experiment, &data, &target, &options)?)
}

/// The window's contents: waiting, the reason it failed, or the chart and the suggestion.
fn lr_finder_ui(
    ui: &mut egui::Ui,
    workload: &str,
    job: &BackgroundJob<LrFindReport>,
) -> Option<LrFinderAction> {
    let report = match job {
        BackgroundJob::Waiting(_) => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!(
                    "training a fresh {workload} while the rate grows from 1e-7 until the loss diverges…"
                ));
            });
            return None;
        }
        BackgroundJob::Failed(reason) => {
            ui.colored_label(ui.visuals().error_fg_color, reason);
            return None;
        }
        BackgroundJob::Ready(report) => report,
    };
    ui.label(report.describe().trim_end());
    let mut action = None;
    ui.horizontal(|ui| {
        if let Some(lr) = report.suggested_lr
            && ui
                .button(format!("Use {lr:.2e}"))
                .on_hover_text("Set Setup's learning rate to the suggestion")
                .clicked()
        {
            action = Some(LrFinderAction::UseRate(lr));
        }
        if ui.button("Close").clicked() {
            action = Some(LrFinderAction::Close);
        }
    });
    loss_plot_ui(ui, report);
    action
}

/// The loss and its smoothed line against the rate's log, the suggestion as a vertical line.
fn loss_plot_ui(ui: &mut egui::Ui, report: &LrFindReport) {
    // Clipped as the exported chart clips them: the diverging end would flatten the rest.
    let (bottom, top) = report.loss_range().unwrap_or((0.0, 1.0));
    let finite = report
        .points
        .iter()
        .filter(|p| p.loss.is_finite() && p.smoothed_loss.is_finite());
    let clip = |loss: f64| loss.clamp(bottom, top);
    let raw: PlotPoints = finite
        .clone()
        .map(|p| [p.lr.log10(), clip(p.loss)])
        .collect();
    let smoothed: PlotPoints = finite
        .map(|p| [p.lr.log10(), clip(p.smoothed_loss)])
        .collect();
    Plot::new("lr-find")
        .height(ui.available_height().max(200.0))
        .x_axis_label("learning rate (log10)")
        .y_axis_label("training loss")
        .x_axis_formatter(|mark, _| format!("{:.0e}", 10f64.powf(mark.value)))
        .label_formatter(|hover| {
            let point = match hover {
                HoverPosition::NearDataPoint { position, .. } => position,
                HoverPosition::Elsewhere { position } => position,
            };
            Some(format!(
                "lr {:.2e}\nloss {:.4}",
                10f64.powf(point.x),
                point.y
            ))
        })
        .show(ui, |plot| {
            plot.line(Line::new("loss", raw).width(1.0));
            plot.line(Line::new("smoothed", smoothed).width(2.0));
            if let Some(lr) = report.suggested_lr {
                plot.vline(VLine::new("suggested", lr.log10()));
            }
        });
}
