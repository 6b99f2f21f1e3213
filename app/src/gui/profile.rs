//! Where a training step's time goes, from the profiling mode, one bar per run.

use egui::{Color32, CornerRadius, Sense, Vec2};
use kiln_core::train::StepProfile;

/// The phases of a profiled step, in the order a step runs them, with their colours.
const PHASES: [(&str, Color32); 5] = [
    ("data", Color32::from_rgb(127, 127, 127)),
    ("forward", Color32::from_rgb(31, 119, 180)),
    ("backward", Color32::from_rgb(255, 127, 14)),
    ("optimizer", Color32::from_rgb(44, 160, 44)),
    ("host sync", Color32::from_rgb(214, 39, 40)),
];

/// Width of the longest bar; the others are drawn to the same milliseconds-per-pixel scale.
const BAR_WIDTH: f32 = 140.0;

/// One profiled run to show.
#[derive(Debug, Clone, Copy)]
pub struct ProfiledRun<'a> {
    /// The run's legend label, as on the plots.
    pub label: &'a str,
    /// The run's colour on the plots.
    pub color: Color32,
    /// The run's medians per phase.
    pub profile: &'a StepProfile,
}

fn phase_ms(profile: &StepProfile) -> [f64; 5] {
    [
        profile.data_ms,
        profile.forward_ms,
        profile.backward_ms,
        profile.optimizer_ms,
        profile.host_sync_ms,
    ]
}

/// A stacked bar and the milliseconds of each phase for every profiled run, all bars on one
/// scale so runs compare at a glance; says what the figures are, since syncing after every phase
/// is what the normal loop avoids.
pub fn step_profile_ui(ui: &mut egui::Ui, runs: &[ProfiledRun<'_>]) {
    let longest_ms = runs
        .iter()
        .map(|run| phase_ms(run.profile).iter().sum::<f64>())
        .fold(0.0_f64, f64::max);
    let px_per_ms = if longest_ms > 0.0 {
        BAR_WIDTH as f64 / longest_ms
    } else {
        0.0
    };
    // Wider than the panel scrolls sideways rather than pushing the plots out of the window.
    egui::ScrollArea::horizontal()
        .id_salt("step-profile-scroll")
        .show(ui, |ui| profile_grid_ui(ui, runs, px_per_ms));
    ui.weak(
        "Median milliseconds over the profiled steps, each phase waited for on its own: the \
         normal loop never waits like this, so these steps are left out of samples/s.",
    );
}

fn profile_grid_ui(ui: &mut egui::Ui, runs: &[ProfiledRun<'_>], px_per_ms: f64) {
    egui::Grid::new("step-profile-grid")
        .striped(true)
        .spacing([10.0, 4.0])
        .show(ui, |ui| {
            ui.label("");
            ui.label("");
            for (name, color) in PHASES {
                ui.colored_label(color, name);
            }
            ui.strong("step");
            ui.end_row();
            for run in runs {
                let ms = phase_ms(run.profile);
                ui.colored_label(run.color, run.label)
                    .on_hover_text(format!("{} steps profiled", run.profile.steps));
                let (rect, _) = ui.allocate_exact_size(Vec2::new(BAR_WIDTH, 14.0), Sense::hover());
                let painter = ui.painter_at(rect);
                let mut left = rect.left();
                for ((_, color), phase) in PHASES.iter().zip(ms) {
                    let width = (phase.max(0.0) * px_per_ms) as f32;
                    let segment = egui::Rect::from_min_size(
                        egui::pos2(left, rect.top()),
                        Vec2::new(width, rect.height()),
                    );
                    painter.rect_filled(segment, CornerRadius::ZERO, *color);
                    left += width;
                }
                for phase in ms {
                    ui.label(format!("{phase:.2}"));
                }
                ui.strong(format!("{:.2}", ms.iter().sum::<f64>()));
                ui.end_row();
            }
        });
}
