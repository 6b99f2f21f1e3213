//! The status line at the bottom of the window.

use super::*;

/// The status line: what the run is doing, how fast, and how long it has left.
pub fn status_ui(ui: &mut egui::Ui, session: Option<&Session>) {
    let Some(session) = session else {
        ui.label("Idle.");
        return;
    };
    let mut parts: Vec<String> = Vec::new();
    parts.push(match &session.state {
        SessionState::Preparing(what) => what.clone(),
        SessionState::Running => "training".to_owned(),
        SessionState::Paused => "paused".to_owned(),
        SessionState::Cancelling => "cancelling…".to_owned(),
        SessionState::Finished(outcome) => format!("finished ({outcome:?})").to_lowercase(),
        SessionState::Failed(_) => "failed".to_owned(),
    });
    if let Some(summary) = &session.history.summary {
        if let Some(stop) = &summary.stopped_early {
            parts.push(stop.to_string());
        }
        if let (Some(accuracy), Some(epoch)) = (summary.final_test_accuracy, summary.kept_epoch) {
            parts.push(format!(
                "test {:.2} % on epoch {epoch}'s weights ({})",
                accuracy * 100.0,
                summary.validated_on.label()
            ));
        }
    }
    if let Some(progress) = &session.last_progress {
        parts.push(format!("epoch {}/{}", progress.epoch, session.epochs));
        if let Some(start) = &session.start {
            parts.push(format!("step {}/{}", progress.step, start.steps_per_epoch));
        }
        parts.push(format!("{:.0} samples/s", progress.samples_per_sec));
        parts.push(format!("{:.2} ms/step", progress.step_ms));
    }
    if session.state.is_active()
        && let Some(eta) = session.eta_secs()
    {
        parts.push(format!("ETA {}", duration_text(eta)));
    }
    if let Some(warmup) = session.warmup_secs {
        parts.push(format!("warm-up {warmup:.2} s"));
    }
    if let Some(start) = &session.start {
        parts.push(format!("{} ({})", start.device_name, start.device_id));
    }
    // f32 goes unsaid, as in the runs list.
    if session
        .history
        .config
        .as_ref()
        .is_some_and(|config| config.precision == kiln_core::config::Precision::F16)
    {
        parts.push("f16".to_owned());
    }
    parts.push(format!("elapsed {}", duration_text(session.elapsed_secs())));
    ui.label(parts.join(" · "));
}

pub(super) fn duration_text(secs: f64) -> String {
    let secs = secs.max(0.0).round() as u64;
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, secs % 3600 / 60),
    }
}
